#!/usr/bin/env python3
"""How much `weft demo`'s ratios move between runs: the spread of each Weft / model ratio over N runs.

Usage: python3 lab/report/demo-spread.py RUN_DIR_OR_RESULTS_JSON... [--base weft]

Each argument is a `results.json` written by `weft demo` (or the directory holding it). For every other model and
backend latency it prints the ratio base/model of each run, and the spread: (max - min) / mean of those ratios.
Then the same for each model's own throughput. Runs must share the demo's plan (quick or full); a run that is
missing a row is named and left out of that cell, never silently averaged in.
"""
import json
import os
import sys


def load(path):
    if os.path.isdir(path):
        path = os.path.join(path, "results.json")
    with open(path) as f:
        d = json.load(f)
    rows = {(r["model"], r["latency_ms"]): r for r in d["results"]}
    return path, d, rows


def label(ms):
    return "0" if ms == 0 else (f"{ms // 1000}s" if ms % 1000 == 0 else f"{ms}ms")


def spread(values):
    mean = sum(values) / len(values)
    return (max(values) - min(values)) / mean if mean else float("nan")


def main(argv):
    base = "weft"
    paths = []
    i = 0
    while i < len(argv):
        if argv[i] == "--base":
            base = argv[i + 1]
            i += 2
            continue
        if argv[i] in ("-h", "--help"):
            print(__doc__)
            return 0
        paths.append(argv[i])
        i += 1
    if len(paths) < 2:
        print("demo-spread: give at least two runs (results.json or their directories)", file=sys.stderr)
        return 2
    runs = [load(p) for p in paths]
    plans = {(d["run"], d["concurrency"], d["warmup_s"], d["duration_s"]) for _, d, _ in runs}
    if len(plans) > 1:
        print(f"demo-spread: the runs have different plans: {sorted(plans)}", file=sys.stderr)
        return 2
    models = []
    latencies = []
    for _, _, rows in runs:
        for (m, l) in rows:
            if m not in models:
                models.append(m)
            if l not in latencies:
                latencies.append(l)
    latencies.sort()
    plan = next(iter(plans))
    print(f"{len(runs)} runs of the {plan[0]} plan ({plan[1]} in flight, {plan[2]:g} s warm-up + {plan[3]:g} s "
          f"measured per row):")
    for p, d, _ in runs:
        print(f"- {p}: {d['command']}")
    print()
    print(f"Ratio {base} / model at each latency, one column per run, and the spread (max - min) / mean:")
    print()
    print("| model | latency | " + " | ".join(f"run {k + 1}" for k in range(len(runs))) + " | spread |")
    print("|---|---|" + "---:|" * (len(runs) + 1))
    worst = 0.0
    for m in models:
        if m == base:
            continue
        for l in latencies:
            ratios = []
            cells = []
            for p, _, rows in runs:
                a, b = rows.get((base, l)), rows.get((m, l))
                if a is None or b is None or not b["throughput"]:
                    cells.append("missing")
                    continue
                r = a["throughput"] / b["throughput"]
                ratios.append(r)
                cells.append(f"{r:.2f}x")
            s = spread(ratios) if len(ratios) >= 2 else float("nan")
            worst = max(worst, s) if s == s else worst
            print(f"| {m} | {label(l)} | " + " | ".join(cells) + f" | {s * 100:.1f}% |")
    print()
    print("Each model's throughput (req/s) and its spread:")
    print()
    print("| model | latency | " + " | ".join(f"run {k + 1}" for k in range(len(runs))) + " | spread |")
    print("|---|---|" + "---:|" * (len(runs) + 1))
    for m in models:
        for l in latencies:
            vals = [rows[(m, l)]["throughput"] for _, _, rows in runs if (m, l) in rows]
            cells = [f"{rows[(m, l)]['throughput']:.0f}" if (m, l) in rows else "missing" for _, _, rows in runs]
            s = spread(vals) if len(vals) >= 2 else float("nan")
            print(f"| {m} | {label(l)} | " + " | ".join(cells) + f" | {s * 100:.1f}% |")
    print()
    print(f"Widest ratio spread: {worst * 100:.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
