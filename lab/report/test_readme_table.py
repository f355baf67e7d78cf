#!/usr/bin/env python3
"""Tests of readme-table.py: python3 lab/report/test_readme_table.py (standard library only)."""
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "readme-table.py")
FIXTURE = os.path.join(HERE, "testdata", "results-bbb3b0c.json")

spec = importlib.util.spec_from_file_location("readme_table", SCRIPT)
rt = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rt)

# The rows SystemALab.line printed for that run (the README's table at bbb3b0c), verbatim.
PRINTED_BY_JAVA = """\
| 0 | weft | 7342 | 588.3 | 1930.2 | 0 | 21.2 | 888 | 25 | 12.1 | 6.8 |
| 1s | pool-200 | 200 | 24051.7 | 24084.5 | 0 | 3.2 | 387 | 225 | 2.4 | 1.1 |
| 500ms | go | 3604 | 1341.4 | 2121.7 | 0 | 25.6 | 838 | 8 | 11.3 | 4.4 |"""


def run(*args):
    return subprocess.run([sys.executable, SCRIPT] + list(args), capture_output=True, text=True)


class ReadmeTableTest(unittest.TestCase):
    def test_rows_as_the_lab_prints_them(self):
        out = rt.render(rt.load(FIXTURE), "bbb3b0c", FIXTURE)
        for line in PRINTED_BY_JAVA.split("\n"):
            self.assertIn(line, out.split("\n"))
        self.assertEqual(20, len([l for l in out.split("\n") if re.match(r"^\| (0|\d+ms|\d+s) \|", l)]))

    def test_stamp_names_commit_and_machine(self):
        out = rt.render(rt.load(FIXTURE), "bbb3b0c", FIXTURE)
        first = out.split("\n")[0]
        self.assertIn("`bbb3b0c`", first)
        self.assertIn("2 cores (AMD EPYC)", first)

    def test_ratios_match_the_lab_summary(self):
        # SystemALab.summary printed these for that run
        out = rt.render(rt.load(FIXTURE), "x", FIXTURE)
        self.assertIn("- weft / pool-200: 0 1.00x, 100ms 3.27x, 500ms 16.48x, 1s 20.64x", out)
        self.assertIn("- weft / go: 0 1.74x, 100ms 1.62x, 500ms 1.83x, 1s 1.39x", out)

    def test_halves_round_up_as_java_prints_them(self):
        # results.json holds 2030.5 for a row the lab printed as 2031 (docs/results/runs/20261127-014446)
        self.assertEqual("2031", rt.cell(2030.5, "{:.0f}"))
        self.assertEqual("1315.8", rt.cell(1315.75, "{:.1f}"))
        self.assertEqual("n/a", rt.cell(None, "{:.1f}"))

    def test_errors_show_their_reasons(self):
        data = rt.load(FIXTURE)
        data["results"][0]["errors"] = 3
        data["results"][0]["errors_by_reason"] = {"timeout-headers": 2, "reset": 1}
        self.assertIn("| 3 (timeout-headers 2, reset 1) |", rt.render(data, "x", FIXTURE))

    def test_rewrites_only_between_the_markers(self):
        with tempfile.TemporaryDirectory() as d:
            readme = os.path.join(d, "README.md")
            with open(readme, "w") as f:
                f.write("# Title\n\nbefore\n" + rt.BEGIN + "\nold table\n" + rt.END + "\nafter\n")
            r = run(FIXTURE, "--into", readme)
            self.assertEqual(0, r.returncode, r.stderr)
            text = open(readme).read()
            self.assertTrue(text.startswith("# Title\n\nbefore\n" + rt.BEGIN + "\n"))
            self.assertTrue(text.endswith(rt.END + "\nafter\n"))
            self.assertNotIn("old table", text)
            self.assertIn("| 1s | weft | 4127 |", text)
            # a second run gives the same file
            self.assertEqual(0, run(FIXTURE, "--into", readme).returncode)
            self.assertEqual(text, open(readme).read())

    def test_a_file_without_markers_is_refused_and_left_alone(self):
        with tempfile.TemporaryDirectory() as d:
            readme = os.path.join(d, "README.md")
            with open(readme, "w") as f:
                f.write("no markers\n")
            r = run(FIXTURE, "--into", readme)
            self.assertEqual(2, r.returncode)
            self.assertIn("results:begin", r.stderr)
            self.assertEqual("no markers\n", open(readme).read())

    def test_not_a_results_file(self):
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "results.json")
            with open(bad, "w") as f:
                json.dump({"results": [{"model": "weft"}]}, f)
            r = run(bad)
            self.assertEqual(2, r.returncode)
            self.assertIn("lacks latency_ms", r.stderr)

    def test_commit_from_the_json_wins(self):
        r = run(FIXTURE, "--commit", "ignored")
        self.assertEqual(0, r.returncode, r.stderr)
        self.assertIn("at commit `bbb3b0c`", r.stdout)

    def test_run_folder_names_the_start(self):
        self.assertEqual("2026-11-27 01:45 UTC", rt.run_name("results/20261127-014512/results.json"))
        self.assertIsNone(rt.run_name("lab/report/testdata/results.json"))


if __name__ == "__main__":
    unittest.main()
