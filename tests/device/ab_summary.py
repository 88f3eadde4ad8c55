#!/usr/bin/env python3
"""Summarise tests/device/ab.sh's runs.tsv: per shape and timing (eager,
graph), the A/A processes' spread and the A/B processes' ratio.

    python3 tests/device/ab_summary.py runs.tsv

A process's log ratio is log(base_ms / new_ms) of its ABBA blocks (the
helper's own estimate).  For A/A the true ratio is 1, so the spread of these
ratios across processes is what one in-process pair is worth: sd is the
sample standard deviation, rms the root mean square about 0 (bias
included), max the largest |ratio|; se the median of the processes' own
standard errors.  All in percent.  For A/B, mean and sd of the ratio as a
speedup of the new side (positive: faster).
"""
import csv
import math
import statistics
import sys


def main():
    rows = [r for r in csv.DictReader(open(sys.argv[1]), delimiter="\t") if r["timing"] in ("eager", "graph")
            and r["exit"] == "0"]
    print("| kind | shape | timing | n | mean % | sd % | rms % | max abs % | median se % | base ms (median) | eager/graph class |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for kind in ("aa", "ab"):
        for shape in sorted({r["shape"] for r in rows}):
            for timing in ("eager", "graph"):
                g = [r for r in rows if r["kind"] == kind and r["shape"] == shape and r["timing"] == timing]
                if not g:
                    continue
                lr = [float(r["log_ratio"]) for r in g]
                sp = [100 * math.expm1(x) for x in lr]
                sd = 100 * statistics.stdev(lr) if len(lr) > 1 else float("nan")
                rms = 100 * math.sqrt(sum(x * x for x in lr) / len(lr))
                mx = max(abs(x) for x in sp)
                se = 100 * statistics.median(float(r["se"]) for r in g)
                base = statistics.median(float(r["base_ms"]) for r in g)
                cls = ",".join(sorted({r["class"] for r in g}))
                print(f"| {kind} | {shape} | {timing} | {len(g)} | {statistics.mean(sp):+.3f} | {sd:.3f} | "
                      f"{rms:.3f} | {mx:.3f} | {se:.3f} | {base:.4f} | {cls} |")


if __name__ == "__main__":
    main()
