#!/usr/bin/env bash
# The in-process A/A and A/B dataset recorded on an NVIDIA H100
# (tests/fixtures/fla-h100-ab/ by tests/device/ab.sh through call41.sh),
# replayed on a machine without a GPU:
#   1. every process's raw log through `optloop parse` gives the two columns
#      and the time its --json file and runs.tsv hold (the basis timing:
#      graph replay at the launch-bound shape, eager at the GPU-bound one),
#      on the shape runs.tsv names, on the card the fixture is named for;
#   2. the dataset is what its README says: the processes per kind and
#      shape, a clock probe before and after each, and the figures the
#      README reports (A/A spread, the A/B speedup);
#   3. the engine on the recorded A/A runs: noise --paired over them gives
#      one pair's spread per shape;
#   4. the Nsight Compute probe of the same machine (ncu --csv) is what
#      promote --attach recognises as a profiler reading.
. "$(dirname "$0")/lib.sh"
fx="$OPTLOOP_ROOT/tests/fixtures/fla-h100-ab"
export FX="$fx"

# ---- 1. each process's raw log ----
out=$(python3 - "$OPTLOOP" <<'PY'
import csv, json, os, subprocess, sys
fx = os.environ["FX"]
rows = list(csv.DictReader(open(os.path.join(fx, "runs.tsv")), delimiter="\t"))
procs = {}
for r in rows:
    procs.setdefault(r["seq"], []).append(r)

def fmt(ms):  # how optloop_ab.py prints a time in its table
    return float(f"{ms:.5g}" if ms < 1 else f"{ms:.4f}")

for seq, rs in sorted(procs.items()):
    kind, shape = rs[0]["kind"], rs[0]["shape"]
    name = f"{seq}-{shape}-{kind}"
    j = json.loads(subprocess.run([sys.argv[1], "parse", os.path.join(fx, "logs", name + ".log"),
                                   "--json", "--exit-status", rs[0]["exit"]],
                                  capture_output=True, text=True).stdout)
    res = json.load(open(os.path.join(fx, "json", name + ".json")))
    ok = len(j["rows"]) == 1 and j["complete"] and j["gate"] == "none" and len(res["results"]) == 1
    if ok:
        p, x = j["rows"][0], res["results"][0]
        b, t, h, d = (int(v[1:]) for v in shape.split("_"))
        ok = (p["B"], p["T"], p["H"], p["D"], p["mode"]) == (b, t, h, d, "fwd") == \
             (x["B"], x["T"], x["H"], x["D"], x["mode"])
        basis = x["basis"]
        ok = ok and p["op"] == "chunk_linear_attn" + (":graph" if basis == "graph" else "")
        ok = ok and p["base_ms"] == fmt(x[basis]["base_ms"]) and p["new_ms"] == fmt(x[basis]["new_ms"])
        ok = ok and j["env"]["device"] == "NVIDIA H100 80GB HBM3"
        # runs.tsv: one row per timing, the JSON's numbers at full precision
        ok = ok and sorted(r["timing"] for r in rs) == ["eager", "graph"]
        for r in rs:
            y = x[r["timing"]]
            ok = ok and all(repr(y[k]) == r[k] for k in ("base_ms", "new_ms", "log_ratio", "se"))
            ok = ok and (r["class"], r["basis"]) == (x["class"], basis) and r["quads"] == str(y["quads"])
        print(f"columns {kind} {j['columns']['base']} {j['columns']['new']} {res['aa']}")
        print(f"class {shape} {x['class']} {basis}")
    print(f"{'ok' if ok else 'MISMATCH'} seq {seq} {kind} {shape}")
logs = sorted(os.listdir(os.path.join(fx, "logs")))
print("logs-listed", logs == sorted(f"{s}-{rs[0]['shape']}-{rs[0]['kind']}.log" for s, rs in procs.items()))
PY
)
t_is "every process of runs.tsv was replayed" "$(printf '%s\n' "$out" | grep -c ' seq ')" 17
t_unlike "each raw log parses to its --json file's basis time, shape and card; runs.tsv agrees" "$out" MISMATCH
t_is "every raw log is in runs.tsv" "$(printf '%s\n' "$out" | grep logs-listed)" "logs-listed True"
t_is "A/A: both sides are the normalize commit; A/B: upstream against it" \
	"$(printf '%s\n' "$out" | grep '^columns' | sort -u)" "columns aa aa-1[9b86f0d] aa-2[9b86f0d] True
columns ab base[ac0af30] work[9b86f0d] False"
t_is "the launch-bound shape reads graph replay, the GPU-bound one eager" \
	"$(printf '%s\n' "$out" | grep '^class' | sort -u)" "class B4_T2048_H16_D64 launch-bound graph
class B8_T8192_H16_D64 gpu-bound eager"

# ---- 2. what the dataset holds ----
t_is "processes per kind and shape (device time ran out before 6 each)" \
	"$(awk -F'\t' 'NR > 1 && $5 == "graph" {print $3, $4}' "$fx/runs.tsv" | sort | uniq -c | awk '{print $2, $3, $1}')" \
	"aa B4_T2048_H16_D64 5
aa B8_T8192_H16_D64 4
ab B4_T2048_H16_D64 4
ab B8_T8192_H16_D64 4"
t_is "a clock probe before and after each process" \
	"$(awk -F, 'NR > 1 {print $1}' "$fx/probes.csv" | sort | uniq -c | awk '$1 == 2' | wc -l)" 17
t_is "  the SM clock at 1980 MHz before each, but the first of the second call (idle, 345 MHz)" \
	"$(awk -F', *' '$2 == "before" && $4 != "1980 MHz" {print $1, $4}' "$fx/probes.csv")" "016 345 MHz"
t_like "the cut process is kept aside, not in runs.tsv" "$(ls "$fx/cut")" '^018-B8_T8192_H16_D64-aa\.log\.cut-call2$'
sum=$(python3 "$OPTLOOP_ROOT/tests/device/ab_summary.py" "$fx/runs.tsv")
t_is "the summary script reads runs.tsv: 2 kinds x 2 shapes x 2 timings" "$(printf '%s\n' "$sum" | grep -c '^| a[ab] |')" 8
figures=$(python3 - <<'PY'
import csv, math, os, statistics
rows = [r for r in csv.DictReader(open(os.path.join(os.environ["FX"], "runs.tsv")), delimiter="\t")]
def lr(kind, shape, timing):
    return [float(r["log_ratio"]) for r in rows if (r["kind"], r["shape"], r["timing"]) == (kind, shape, timing)]
s4, s8 = "B4_T2048_H16_D64", "B8_T8192_H16_D64"
# the goals: A/A <= 2 % eager and <= 0.5 % graph at the launch-bound shape
print("aa-graph-B4 every process within 0.5%:", all(abs(x) <= math.log(1.005) for x in lr("aa", s4, "graph")))
print("aa-eager-B4 sd within 2%:", statistics.stdev(lr("aa", s4, "eager")) <= 0.02,
      "every process:", all(abs(x) <= math.log(1.02) for x in lr("aa", s4, "eager")))
print("aa-B8 every process within 0.1%:", all(abs(x) <= math.log(1.001) for t in ("eager", "graph") for x in lr("aa", s8, t)))
# the normalize change: faster by 6.9-8.1 % of the GPU's work at both shapes
print("ab-graph speedups:", sorted({f"{100 * math.expm1(x):.0f}" for s in (s4, s8) for x in lr("ab", s, "graph")}))
PY
)
t_is "the recorded figures" "$figures" "aa-graph-B4 every process within 0.5%: True
aa-eager-B4 sd within 2%: True every process: False
aa-B8 every process within 0.1%: True
ab-graph speedups: ['7', '8']"

# ---- 3. the engine: noise --paired over the recorded A/A runs ----
# A workspace whose best is the A/A runs' kernel: its baseline verify reads
# the shape's first A/A log behind a green gate line (the runs were timed
# without a gate), then noise --paired replays the shape's A/A logs in order.
export OPTLOOP_PROBE=true OPTLOOP_PROBE_APPS=true OPTLOOP_PROBE_SETTLE=0
pair_noise() { # SHAPE -> "n pair_median pair_noise" of noise --paired --json
	local shape=$1 repo="$T_TMP/ws-$1" logs
	mkdir -p "$repo/fla/ops/linear_attn" "$repo/tests/ops"
	(
		cd "$repo" || exit 1
		git init -q
		echo "denom = (q * k_cum).sum(-1, keepdim=True) * scale + 1e-10" >fla/ops/linear_attn/utils.py
		echo "def test_normalize(): pass" >tests/ops/test_linear_attn.py
		echo "def naive(): pass" >fla/ops/linear_attn/naive.py
		git add -A && git commit -qm "normalize: scale the [B,T,H,1] dot product, not q"
		logs=$(ls "$FX"/logs/*-"$shape"-aa.log)
		{ printf '\n  GATE PASSED.\n'; cat "$(printf '%s\n' "$logs" | head -1)"; } >"$T_TMP/base-$shape.log"
		printf '%s\n' "$logs" >"$T_TMP/list-$shape"
		echo 1 >"$T_TMP/next-$shape"
		cat >"$T_TMP/replay-$shape" <<EOF
#!/bin/sh
n=\$(cat "$T_TMP/next-$shape"); echo \$((n + 1)) >"$T_TMP/next-$shape"
f=\$(sed -n "\${n}p" "$T_TMP/list-$shape"); [ -n "\$f" ] || exit 1
cat "\$f"
EOF
		chmod +x "$T_TMP/replay-$shape"
		"$OPTLOOP" init --op chunk_linear_attn --kernel fla/ops/linear_attn/utils.py \
			--test-file tests/ops/test_linear_attn.py --naive fla/ops/linear_attn/naive.py \
			--verify 'cat "$REPLAY_LOG"' >/dev/null 2>&1
		"$OPTLOOP" contract --set "target=chunk_linear_attn fwd (bf16), >= 3 %" --set languages=Triton \
			--set "promotion=full gate" >/dev/null
		REPLAY_LOG="$T_TMP/base-$shape.log" "$OPTLOOP" verify >/dev/null 2>&1
		"$OPTLOOP" log --direction "the A/A runs' kernel" >/dev/null && "$OPTLOOP" commit >/dev/null
		"$OPTLOOP" noise --paired --runs "$(printf '%s\n' "$logs" | wc -l)" --cmd "$T_TMP/replay-$shape" \
			--json 2>/dev/null | python3 -c 'import json,sys
j = json.load(sys.stdin)
for s in j["shapes"]:
    print(s["shape"], s["n"], "%+.2f" % (100 * s["pair_median"]), "%.2f" % (100 * s["pair_noise"]), j["env"])'
	)
}
t_is "noise --paired at B4-T2048-H16-D64 (graph replay): 5 pairs, median +0.09 %, one pair 0.07 %" \
	"$(pair_noise B4_T2048_H16_D64)" \
	"fwd B=4 T=2048 H=16 D=64 chunk_linear_attn:graph 5 +0.09 0.07 NVIDIA H100 80GB HBM3 | CUDA 13.0 | PyTorch 2.11.0+cu130 | Triton 3.6.0"
t_is "noise --paired at B8-T8192-H16-D64 (eager): 4 pairs, median +0.03 %, one pair 0.04 %" \
	"$(pair_noise B8_T8192_H16_D64)" \
	"fwd B=8 T=8192 H=16 D=64 chunk_linear_attn 4 +0.03 0.04 NVIDIA H100 80GB HBM3 | CUDA 13.0 | PyTorch 2.11.0+cu130 | Triton 3.6.0"

# ---- 4. the machine's ncu --csv is a profiler reading ----
cd "$T_TMP/ws-B4_T2048_H16_D64" || exit 1
cp "$fx/ncu-probe.csv" profile/chunk_linear_attn-opt/trace/
t_like "promote --attach recognises ncu --csv from the device" \
	"$("$OPTLOOP" promote --attach profile/chunk_linear_attn-opt/trace/ncu-probe.csv 2>&1)" \
	'^attached to iteration 0: .*ncu-probe\.csv \(recognised: Nsight Compute export\)$'
t_done
