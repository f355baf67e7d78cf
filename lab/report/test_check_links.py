#!/usr/bin/env python3
"""Tests of check-links.py: python3 lab/report/test_check_links.py (standard library only)."""
import importlib.util
import os
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("check_links", os.path.join(HERE, "check-links.py"))
cl = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cl)


class CheckLinksTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.root = self.dir.name
        os.makedirs(os.path.join(self.root, "docs", "journal"))
        self.write("docs/journal/round-08.md", "## Round 8 (2026-11-23, from 17:13 UTC)\n\n### before\n\n### before\n")
        cl._anchors.clear()

    def tearDown(self):
        self.dir.cleanup()

    def write(self, rel, text):
        with open(os.path.join(self.root, rel), "w") as f:
            f.write(text)
        return os.path.join(self.root, rel)

    def test_slug_as_github_makes_it(self):
        self.assertEqual("system-a-five-designs-side-by-side-weft-demo---full--weft-lab-system-a",
                         cl.slug("System A: five designs side by side (`weft demo --full` = `weft lab system-a`)"))
        self.assertEqual("backlogs-at-the-lanes-speed-issue-16-weft-lab-dispatch---backlog-n",
                         cl.slug("Backlogs at the lane's speed (issue 16; `weft lab dispatch --backlog N`)"))

    def test_a_good_link_and_anchor_pass(self):
        page = self.write("docs/a.md", "[r8](journal/round-08.md#round-8-2026-11-23-from-1713-utc) "
                                       "[again](journal/round-08.md#before-1)\n")
        self.assertEqual([], cl.check(page))

    def test_a_missing_file_is_reported_with_its_line(self):
        page = self.write("docs/a.md", "line one\nsee [gone](benchmarks.md)\n")
        problems = cl.check(page)
        self.assertEqual(1, len(problems))
        self.assertIn("a.md:2: benchmarks.md: no such file", problems[0])

    def test_a_missing_anchor_is_reported(self):
        page = self.write("docs/a.md", "[r8](journal/round-08.md#round-9)\n")
        self.assertIn("has no heading #round-9", cl.check(page)[0])

    def test_code_and_urls_are_not_links(self):
        page = self.write("docs/a.md", "`[x](nowhere.md)` [web](https://example.com/x.md)\n```\n[y](nowhere.md)\n```\n")
        self.assertEqual([], cl.check(page))


if __name__ == "__main__":
    unittest.main()
