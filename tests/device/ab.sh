#!/usr/bin/env bash
# In-process A/A and A/B of flash-linear-attention's chunk_linear_attn
# forward (bf16) through assets/bench/optloop_ab.py, eager and CUDA-graph
# replay, at a launch-bound and a GPU-bound shape: the dataset issue 28's
# device work asks for (6+ processes each, clock probes, raw logs).
#
#   STATE=/tmp/ab BUNDLE=... DEADLINE=EPOCH CALL=N tests/device/ab.sh
#
# Trees under STATE, made from BUNDLE/fla once (as noise.sh makes them):
# fla-pair holds upstream at HEAD~1 and the normalize change at HEAD, so
# `--base HEAD~1` is A/B and `--base HEAD --aa` is A/A of the changed
# kernel.  The schedule alternates A/A and A/B processes, one shape per
# process, B4-T2048-H16-D64 and B8-T8192-H16-D64 in turn; each process
# prints both timings.  Resumable: STATE/res/ab/next holds the next entry;
# a process starts only when RUN_MIN seconds are left before DEADLINE, and
# none starts once AB_MAX entries (if set) are done; one cut at DEADLINE is
# not recorded (its log is kept as *.log.cut-callN) and runs again next call.
# Output: STATE/res/ab/{runs.tsv,probes.csv,logs/,json/}; runs.tsv one row
# per process and timing: seq, call, kind (aa|ab), shape, timing, exit,
# base_ms, new_ms, log_ratio, se, quads, class, basis, start (UTC), wall_s
# (the whole process, Python's start and the warm-up included).
set -uo pipefail
state=${STATE:?}
bundle=${BUNDLE:?}
deadline=${DEADLINE:?}
call=${CALL:-0}
run_min=${RUN_MIN:-40}
ab_max=${AB_MAX:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
res=$state/res/ab
mkdir -p "$res/logs" "$res/json"
norm_sed='s/denom = (q \* scale \* k_cum).sum(-1, keepdim=True) + 1e-10/denom = (q * k_cum).sum(-1, keepdim=True) * scale + 1e-10/'
t=$state/fla-pair
if [ ! -d "$t/.git" ]; then
	rm -rf "$t.tmp" && cp -a "$bundle/fla" "$t.tmp" || exit 1
	sed -i "$norm_sed" "$t.tmp/fla/ops/linear_attn/utils.py"
	git -C "$t.tmp" diff --quiet && { echo "!! the normalize sed changed nothing"; exit 1; }
	git -C "$t.tmp" -c user.name=optloop -c user.email=session@optloop.invalid \
		commit -qam "normalize: scale the [B,T,H,1] dot product, not q" || exit 1
	mv "$t.tmp" "$t"
fi
runs=$res/runs.tsv
[ -f "$runs" ] || printf 'seq\tcall\tkind\tshape\ttiming\texit\tbase_ms\tnew_ms\tlog_ratio\tse\tquads\tclass\tbasis\tstart\twall_s\n' >"$runs"
probes=$res/probes.csv
q=timestamp,clocks.sm,clocks.mem,temperature.gpu,power.draw,pstate,utilization.gpu
[ -f "$probes" ] || echo "seq,phase,$(nvidia-smi --query-gpu=$q --format=csv | head -1)" >"$probes"
probe() { echo "$1,$2,$(nvidia-smi --query-gpu=$q --format=csv,noheader 2>&1 | head -1)" >>"$probes"; }
shapes=(B4_T2048_H16_D64 B8_T8192_H16_D64)
next=$(cat "$res/next" 2>/dev/null || echo 0)
while [ $((deadline - $(date +%s))) -ge "$run_min" ]; do
	[ -n "$ab_max" ] && [ "$next" -ge "$ab_max" ] && break
	i=$next
	shape=${shapes[$((i % 2))]}
	if [ $(((i / 2) % 2)) = 0 ]; then kind=aa; base=(--base HEAD --aa); else kind=ab; base=(--base HEAD~1); fi
	IFS=_ read -r b tt h d <<<"$shape"
	js=$(printf '{"%s": {"B": %d, "T": %d, "H": %d, "D": %d}}' "$shape" "${b#B}" "${tt#T}" "${h#H}" "${d#D}")
	seq=$(printf '%03d' $((i + 1)))
	log=$res/logs/$seq-$shape-$kind.log json=$res/json/$seq-$shape-$kind.json
	probe "$seq" before
	start=$(date -u +%FT%TZ) s0=$(date +%s.%N)
	(cd "$t" && timeout $((deadline - $(date +%s) - 5)) python3 "$root/assets/bench/optloop_ab.py" \
		--op chunk_linear_attn --shapes "$js" --modes fwd "${base[@]}" --json "$json") >"$log" 2>&1
	rc=$?
	if [ "$rc" = 124 ]; then
		# cut at the call's deadline: keep the log aside, the entry runs again
		mv "$log" "$log.cut-call$call"
		rm -f "$json"
		echo "== ab $seq cut at the deadline; it runs again in the next call"
		break
	fi
	wall=$(python3 -c "print(f'{$(date +%s.%N) - $s0:.1f}')")
	probe "$seq" after
	python3 - "$json" "$seq" "$call" "$kind" "$shape" "$rc" "$start" "$wall" >>"$runs" <<'PY'
import json, sys
p, seq, call, kind, shape, rc, start, wall = sys.argv[1:]
try:
    rows = json.load(open(p))["results"]
except Exception:
    rows = []
if not rows:
    print("\t".join([seq, call, kind, shape, "-", rc] + ["-"] * 7 + [start, wall]))
for r in rows:
    for timing in ("eager", "graph"):
        x = r.get(timing)
        if x:
            print("\t".join([seq, call, kind, shape, timing, rc, repr(x["base_ms"]), repr(x["new_ms"]),
                             repr(x["log_ratio"]), repr(x["se"]), str(x["quads"]), r["class"], r["basis"],
                             start, wall]))
PY
	echo "== ab $seq $kind $shape exit $rc, ${wall}s: $(awk -F'\t' -v s="$seq" '$1 == s {printf "%s %s/%s ", $5, $7, $8}' "$runs")"
	next=$((i + 1))
	echo "$next" >"$res/next"
done
