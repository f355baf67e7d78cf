#!/usr/bin/env python3
"""Turns a `weft demo` run's results.json into Markdown: a stamp (command, commit, machine, run), the table
and Weft's throughput ratio to each other model. Standard library only.

  lab/report/readme-table.py results/<time>/results.json                      # print it
  lab/report/readme-table.py results/<time>/results.json --commit 1a2b3c4 \\
      --into README.md --into docs/results/README.md --note "the machine was shared"

--into (repeatable) rewrites what lies between the lines `<!-- results:begin -->` and `<!-- results:end -->`
of that file (both must be there, once each); without it the Markdown goes to stdout. The commit is the one the jars that ran
were built from: results.json's own `commit` when it has one, else --commit, else this checkout's HEAD
(with a warning on stderr, since the run may be older than HEAD). The format read is what
weft-lab's Demo.run and SystemALab.Row.json write.
"""
import argparse
import decimal
import json
import os
import subprocess
import sys

BEGIN = "<!-- results:begin -->"
END = "<!-- results:end -->"

COLUMNS = [
    # (heading, field, format, right-aligned)
    ("backend latency", "latency_ms", None, False),
    ("model", "model", None, False),
    ("req/s", "throughput", "{:.0f}", True),
    ("p50 ms", "p50_ms", "{:.1f}", True),
    ("p99 ms", "p99_ms", "{:.1f}", True),
    ("errors", "errors", "{:d}", True),
    ("service CPU s", "cpu_s", "{:.1f}", True),
    ("service peak RSS MB", "rss_mb", "{:d}", True),
    ("service OS threads", "threads", "{:d}", True),
    ("backends CPU s", "backends_cpu_s", "{:.1f}", True),
    ("load CPU s", "load_cpu_s", "{:.1f}", True),
]


class BadResults(Exception):
    pass


def latency(ms):
    """As Durations.format writes it: 0, 100ms, 1s, 1500ms."""
    if ms == 0:
        return "0"
    if ms % 1000 == 0:
        return "%ds" % (ms // 1000)
    return "%dms" % ms


def cell(value, fmt):
    if value is None:
        return "n/a"
    if fmt is None:
        return str(value)
    if fmt == "{:d}":
        return fmt.format(int(value))
    # half up, as Java's %.0f/%.1f print it (Python's format rounds half to even: 2030.5 would print 2030)
    places = decimal.Decimal(1).scaleb(-int(fmt[fmt.index(".") + 1]))
    return str(decimal.Decimal(str(value)).quantize(places, rounding=decimal.ROUND_HALF_UP))


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        raise BadResults("%s: %s" % (path, e))
    if not isinstance(data, dict) or not isinstance(data.get("results"), list) or not data["results"]:
        raise BadResults("%s: no 'results' list (is it a weft demo results.json?)" % path)
    for i, r in enumerate(data["results"]):
        missing = [c[1] for c in COLUMNS if c[1] not in r]
        if missing:
            raise BadResults("%s: results[%d] lacks %s" % (path, i, ", ".join(missing)))
    return data


def head_commit():
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def ratios(rows):
    """Weft's throughput over each other model's, per latency, in the order the rows came."""
    by = {}
    latencies = []
    for r in rows:
        by.setdefault(r["model"], {})[r["latency_ms"]] = r["throughput"]
        if r["latency_ms"] not in latencies:
            latencies.append(r["latency_ms"])
    if "weft" not in by:
        return []
    lines = []
    for model, t in by.items():
        if model == "weft":
            continue
        parts = []
        for ms in latencies:
            w, x = by["weft"].get(ms), t.get(ms)
            if w is None or x is None or x == 0:
                continue
            parts.append("%s %.2fx" % (latency(ms), w / x))
        lines.append("- weft / %s: %s" % (model, ", ".join(parts)))
    return lines


def run_name(path):
    """results/<yyyyMMdd-HHmmss>/results.json: the folder names when the run started (UTC)."""
    stamp = os.path.basename(os.path.dirname(os.path.abspath(path)))
    if len(stamp) == 15 and stamp[8] == "-" and (stamp[:8] + stamp[9:]).isdigit():
        return "%s-%s-%s %s:%s UTC" % (stamp[:4], stamp[4:6], stamp[6:8], stamp[9:11], stamp[11:13])
    return None


def render(data, commit, source, note=None):
    rows = data["results"]
    started = run_name(source)
    out = []
    stamp = "`%s` at commit `%s`%s, on %s" % (
        data.get("command", "weft demo"), commit, (", started " + started) if started else "",
        data.get("machine", "an unnamed machine"))
    out.append(stamp + ".")
    run = []
    if "run" in data:
        run.append("%s run" % data["run"])
    if "concurrency" in data:
        run.append("%s requests in flight" % format(data["concurrency"], ","))
    if "warmup_s" in data and "duration_s" in data:
        run.append("%g s warm-up + %g s measured per row, each model in a fresh process"
                   % (data["warmup_s"], data["duration_s"]))
    if run:
        out.append(" ".join(["Run:", "; ".join(run) + "."]))
    for extra in (data.get("_note"), note):
        if extra:
            out.append(extra)
    out.append("")
    out.append("| " + " | ".join(c[0] for c in COLUMNS) + " |")
    out.append("|" + "|".join("---:" if c[3] else "---" for c in COLUMNS) + "|")
    for r in rows:
        cells = []
        for heading, field, fmt, _ in COLUMNS:
            if field == "latency_ms":
                cells.append(latency(r[field]))
            elif field == "errors" and r[field]:
                reasons = r.get("errors_by_reason") or {}
                detail = ", ".join("%s %s" % (k, v) for k, v in reasons.items())
                cells.append("%d%s" % (r[field], (" (" + detail + ")") if detail else ""))
            else:
                cells.append(cell(r[field], fmt))
        out.append("| " + " | ".join(cells) + " |")
    skipped = data.get("skipped") or {}
    if skipped:
        out.append("")
        for model, why in skipped.items():
            out.append("Skipped %s: %s" % (model, why))
    lines = ratios(rows)
    if lines:
        out.append("")
        out.append("Weft against each model, throughput ratio at each latency (above 1: Weft ahead):")
        out.append("")
        out.extend(lines)
    out.append("")
    out.append("<sub>Generated by `lab/report/readme-table.py` from `%s`; ratios compare rows of this one run.</sub>"
               % os.path.relpath(source))
    return "\n".join(out) + "\n"


def replace_between(text, block, path):
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        raise BadResults("%s: needs the lines %s and %s, once each and in that order" % (path, BEGIN, END))
    before = text[:text.index(BEGIN) + len(BEGIN)]
    after = text[text.index(END):]
    return before + "\n" + block + after


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("results", help="a results.json written by `weft demo`")
    p.add_argument("--commit", help="the commit the measured jars were built from (default: results.json's, else HEAD)")
    p.add_argument("--into", action="append", default=[], metavar="FILE",
                   help="a file whose text between the results markers is replaced (repeatable)")
    p.add_argument("--note", help="one more line under the stamp (who else used the machine, ...)")
    a = p.parse_args(argv)
    try:
        data = load(a.results)
        commit = data.get("commit") or a.commit
        if not commit:
            commit = head_commit() or "unknown"
            print("readme-table: results.json names no commit and --commit was not given; stamping HEAD (%s)" % commit,
                  file=sys.stderr)
        block = render(data, commit, a.results, a.note)
        texts = {}
        for path in a.into:  # check every file before writing any
            try:
                with open(path, encoding="utf-8") as f:
                    texts[path] = replace_between(f.read(), block, path)
            except OSError as e:
                raise BadResults("%s: %s" % (path, e))
        for path, text in texts.items():
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        if not a.into:
            sys.stdout.write(block)
    except BadResults as e:
        print("readme-table: %s" % e, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
