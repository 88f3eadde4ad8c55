"""Summary tables of a noise dataset recorded by tests/device/noise.sh.

    python3 tests/device/noise_summary.py tests/fixtures/fla-h200-noise/runs.tsv

Prints Markdown: per shape, over the unchanged kernel's processes, the
median, min and max of the per-process median and the spread of
log(median) across processes (sample std, and MAD x 1.4826), both from the
median as printed (three decimals: what optloop's parser reads) and from
run.py's --json (full precision); the within-run spread from the same
JSON (p20/p80 of the timed repetitions of one process); and for the
interleaved pairs (same round and shape, unchanged kernel first) the log
ratio norm/base per pair with its mean and spread.
"""
import csv
import math
import statistics
import sys


def mad(xs):
    m = statistics.median(xs)
    return 1.4826 * statistics.median(abs(x - m) for x in xs)


def spread(xs):
    logs = [math.log(x) for x in xs]
    return statistics.stdev(logs), mad(logs)


rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
rows = [r for r in rows if r["exit"] == "0" and r["median_ms"]]
shapes = list(dict.fromkeys(r["shape"] for r in rows))

print("### Unchanged kernel (base), one process per run\n")
print("| shape | n | median ms | min | max | std log | MAD×1.4826 log | std log (json) | MAD×1.4826 log (json) | within-run log(p80/p20), median [min, max] |")
print("|---|---|---|---|---|---|---|---|---|---|")
for s in shapes:
    b = [r for r in rows if r["shape"] == s and r["kernel"] == "base"]
    med = [float(r["median_ms"]) for r in b]
    mj = [float(r["median_json_ms"]) for r in b]
    w = [math.log(float(r["p80_ms"]) / float(r["p20_ms"])) for r in b]
    sd, rm = spread(med)
    sdj, rmj = spread(mj)
    print(f"| {s} | {len(b)} | {statistics.median(med):.3f} | {min(med):.3f} | {max(med):.3f} "
          f"| {sd:.4f} | {rm:.4f} | {sdj:.4f} | {rmj:.4f} "
          f"| {statistics.median(w):.4f} [{min(w):.4f}, {max(w):.4f}] |")

print("\n### Interleaved pairs: log(norm / base), base process first, same round\n")
print("| shape | pairs | per-pair log ratio (printed medians) | mean | std | MAD×1.4826 | mean (json) | std (json) |")
print("|---|---|---|---|---|---|---|---|")
for s in shapes:
    by = {}
    for r in rows:
        if r["shape"] == s:
            by.setdefault(r["round"], {})[r["kernel"]] = r
    pairs = [v for k, v in sorted(by.items(), key=lambda kv: int(kv[0])) if "base" in v and "norm" in v]
    if not pairs:
        continue
    lr = [math.log(float(p["norm"]["median_ms"]) / float(p["base"]["median_ms"])) for p in pairs]
    lj = [math.log(float(p["norm"]["median_json_ms"]) / float(p["base"]["median_json_ms"])) for p in pairs]
    sd = statistics.stdev(lr) if len(lr) > 1 else float("nan")
    print(f"| {s} | {len(pairs)} | {', '.join(f'{x:+.4f}' for x in lr)} | {statistics.mean(lr):+.4f} "
          f"| {sd:.4f} | {mad(lr):.4f} | {statistics.mean(lj):+.4f} | {statistics.stdev(lj):.4f} |")

print("\n### Wall time of one benchmark-only process (s)\n")
walls = [float(r["wall_s"]) for r in rows]
print(f"n {len(walls)}, median {statistics.median(walls):.1f}, min {min(walls):.1f}, max {max(walls):.1f}")
