#!/usr/bin/env python3
"""Checks that every relative link in README.md and docs/**/*.md resolves: the file (or folder) exists, and a
#fragment names a heading of the Markdown file it points into (GitHub's anchor rules). Standard library only.

  lab/report/check-links.py            # from the repository's root; exit 1 and one line per broken link
  lab/report/check-links.py FILE...    # only these files

Links with a scheme (http:, https:, mailto:) are not fetched. Links inside code spans and fenced code blocks
are not links and are skipped.
"""
import glob
import os
import re
import sys

LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")


def strip_code(line):
    """The line without its `code spans`."""
    return re.sub(r"(`+)(?:(?!\1).)+\1", "", line)


def lines_outside_fences(text):
    fenced = False
    for number, line in enumerate(text.split("\n"), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield number, line


def slug(heading):
    """GitHub's anchor for a heading: lower case, markup dropped, punctuation but - and _ removed, spaces to -."""
    h = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    h = h.replace("`", "").replace("*", "")
    h = h.strip().lower()
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


_anchors = {}


def anchors(path):
    if path not in _anchors:
        seen = {}
        found = set()
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for _, line in lines_outside_fences(text):
            m = HEADING.match(line)
            if m:
                base = slug(m.group(2))
                n = seen.get(base, 0)
                found.add(base if n == 0 else "%s-%d" % (base, n))
                seen[base] = n + 1
        for m in re.finditer(r"<a\s+(?:name|id)=\"([^\"]+)\"", text):
            found.add(m.group(1))
        _anchors[path] = found
    return _anchors[path]


def check(path):
    problems = []
    with open(path, encoding="utf-8") as f:
        text = f.read()
    for number, line in lines_outside_fences(text):
        for m in LINK.finditer(strip_code(line)):
            target = m.group(1)
            if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):
                continue
            file_part, _, fragment = target.partition("#")
            resolved = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            if not os.path.exists(resolved):
                problems.append("%s:%d: %s: no such file %s" % (path, number, target, resolved))
            elif fragment and resolved.endswith(".md") and os.path.isfile(resolved):
                if fragment not in anchors(resolved):
                    problems.append("%s:%d: %s: %s has no heading #%s" % (path, number, target, resolved, fragment))
    return problems


def main(argv):
    files = argv or (["README.md"] + sorted(glob.glob("docs/**/*.md", recursive=True)))
    problems = []
    for path in files:
        problems.extend(check(path))
    for p in problems:
        print(p)
    print("check-links: %d files, %d broken links" % (len(files), len(problems)), file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
