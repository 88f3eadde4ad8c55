#!/usr/bin/env bash
# Noise dataset and interleaved pairs for flash-linear-attention's
# chunk_linear_attn forward (bf16) on a GPU: one shape per process, each
# process FLA's own benchmarks/ops/run.py, unchanged, with --json (so the
# printed table and the per-result median/p20/p80 come from the same
# process).
#
#   STATE=/tmp/dev15 BUNDLE=... DEADLINE=EPOCH CALL=N tests/device/noise.sh
#
# Two FLA trees under STATE, made from BUNDLE/fla once: fla-base (upstream,
# unchanged) and fla-norm (the one-line normalize change committed on its
# main branch, so run.py's git label tells the two apart and no --base is
# auto-selected).  The schedule repeats blocks of 8 rounds:
#   rounds 1-4: base kernel, shapes s1 s2 s3 in turn;
#   rounds 5-8: pairs, s1 base, s1 norm, s2 base, s2 norm, s3 base, s3 norm.
# So one block gives 8 base runs and 4 base/norm pairs per shape.
# Resumable: STATE/res/noise/next holds the next entry; each run starts only
# when RUN_MIN seconds are left before DEADLINE and is itself cut off
# (recorded with its exit status 124) before DEADLINE.
set -uo pipefail
state=${STATE:?}
bundle=${BUNDLE:?}
deadline=${DEADLINE:?}
call=${CALL:-0}
res=$state/res/noise
mkdir -p "$res/logs" "$res/json"
left() { echo $((deadline - $(date +%s))); }

shapes=(B8_T8192_H16_D64 B16_T4096_H32_D64 B4_T2048_H16_D64)
shape_json() { # KEY -> {"KEY": {"B":..,"T":..,"H":..,"D":..}}
	local k=$1 b t h d
	IFS=_ read -r b t h d <<<"$k"
	printf '{"%s": {"B": %d, "T": %d, "H": %d, "D": %d}}' "$k" "${b#B}" "${t#T}" "${h#H}" "${d#D}"
}
norm_sed='s/denom = (q \* scale \* k_cum).sum(-1, keepdim=True) + 1e-10/denom = (q * k_cum).sum(-1, keepdim=True) * scale + 1e-10/'

tree() { # NAME: a copy of the bundle's FLA clone, normalize change in fla-norm
	local t=$state/$1
	[ -d "$t/.git" ] && return 0
	rm -rf "$t.tmp"
	cp -a "$bundle/fla" "$t.tmp" || return 1
	if [ "$1" = fla-norm ]; then
		sed -i "$norm_sed" "$t.tmp/fla/ops/linear_attn/utils.py"
		git -C "$t.tmp" diff --quiet && { echo "!! the normalize sed changed nothing"; return 1; }
		git -C "$t.tmp" -c user.name=optloop -c user.email=session@optloop.invalid \
			commit -qam "normalize: scale the [B,T,H,1] dot product, not q"
	fi
	mv "$t.tmp" "$t"
}
tree fla-base && tree fla-norm || exit 1

runs=$res/runs.tsv
[ -f "$runs" ] || printf 'seq\tcall\tround\tstart\tend\twall_s\tshape\tkernel\texit\tmedian_ms\tmedian_json_ms\tp20_ms\tp80_ms\tlog\n' >"$runs"
probes=$res/probes.csv
[ -f "$probes" ] || echo "seq,phase,$(nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,temperature.gpu,power.draw,pstate,utilization.gpu --format=csv | head -1)" >"$probes"
probe() { echo "$1,$2,$(nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,temperature.gpu,power.draw,pstate,utilization.gpu --format=csv,noheader 2>&1 | head -1)" >>"$probes"; }

# entry I -> round, shape, kernel
entry() {
	local i=$1 b o
	b=$(((i - 1) / 36)) o=$(((i - 1) % 36))
	if [ $o -lt 12 ]; then
		round=$((b * 8 + o / 3 + 1)) shape=${shapes[$((o % 3))]} kernel=base
	else
		o=$((o - 12))
		round=$((b * 8 + 4 + o / 6 + 1)) shape=${shapes[$(((o % 6) / 2))]}
		if [ $((o % 2)) = 0 ]; then kernel=base; else kernel=norm; fi
	fi
}

seq=$(cat "$res/next" 2>/dev/null || echo 1)
while :; do
	entry "$seq"
	if [ "$(left)" -lt "${RUN_MIN:-40}" ]; then
		echo "== noise: stop before entry $seq ($(left)s left)"
		break
	fi
	name=$(printf '%03d-%s-%s' "$seq" "$shape" "$kernel")
	t=$state/fla-$kernel
	lim=$(($(left) - 8))
	[ "$lim" -gt 300 ] && lim=300
	probe "$seq" before
	s=$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ) s0=$(date +%s.%N)
	(cd "$t" && rm -f run.json && PYTHONPATH=$t timeout "$lim" python3 benchmarks/ops/run.py \
		--op chunk_linear_attn --custom-shapes "$(shape_json "$shape")" --modes fwd \
		--json run.json) >"$res/logs/$name.log" 2>&1
	rc=$?
	e=$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ) e0=$(date +%s.%N)
	[ -f "$t/run.json" ] && mv "$t/run.json" "$res/json/$name.json"
	optloop parse "$res/logs/$name.log" --exit-status "$rc" --json >"$res/json/$name.parse.json" 2>/dev/null
	row=$(python3 - "$res/json/$name.parse.json" "$res/json/$name.json" <<'PY'
import json, sys
med = key = ""
try:
    p = json.load(open(sys.argv[1]))
    if len(p["rows"]) == 1:
        r = p["rows"][0]
        med = repr(r["new_ms"])
        key = " ".join([r["mode"] or "-"] + [f"{a}={r[a]}" for a in "BTHD"] + [r["op"] or ""])
except Exception:
    pass
mj = p20 = p80 = ""
try:
    j = json.load(open(sys.argv[2]))["results"]
    if len(j) == 1:
        mj, p20, p80 = (repr(j[0][k]) for k in ("median_ms", "p20_ms", "p80_ms"))
except Exception:
    pass
print("|".join([key, med, mj, p20, p80]))
PY
)
	IFS="|" read -r key med mj p20 p80 <<<"$row"
	[ -n "$key" ] || key=$shape
	wall=$(python3 -c "print(f'{$e0 - $s0:.2f}')")
	printf '%d\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n' "$seq" "$call" "$round" "$s" "$e" \
		"$wall" "$key" "$kernel" "$rc" "$med" "$mj" "$p20" "$p80" "logs/$name.log" >>"$runs"
	echo "   $name exit $rc ${wall}s median $med (json $mj, p20 $p20, p80 $p80)"
	seq=$((seq + 1))
	echo "$seq" >"$res/next"
done
probe "$seq" end
