#!/usr/bin/env bash
# Full-gate wall times on the device, and init's scope decisions, for two
# real flash-linear-attention ops: chunk_retention (its reference wraps
# fla/ops/common/fused_recurrent.py) and chunk_linear_attn.
#
#   tests/device/gate_times.sh [JOB...]
#
# Run on the device machine from the root of this repository after
# tests/device/bundle.sh made BUNDLE (default build/devb).  State lives in
# STATE (default /tmp/gate-times, outside the repository copy, which is
# rebuilt on every call), so a second call on the still-warm machine goes on
# where the first stopped: each job leaves a marker.  Each pytest run is
# capped at CAP seconds (default 270) and reports how far it got.  Results:
# $OUT/gate_times.tsv, the init outputs and each run's log.
set -uo pipefail
root=$(pwd)
bundle=${BUNDLE:-build/devb}
case $bundle in /*) ;; *) bundle=$root/$bundle ;; esac
state=${STATE:-/tmp/gate-times}
cap=${CAP:-270}
budget=${BUDGET:-560}
t0=$(date +%s)
out=${OUT:-$state/out}
mkdir -p "$state/done" "$out"
export PATH="$bundle/bin:$PATH" LD_LIBRARY_PATH="$bundle/lib" OPTLOOP_ASSETS="$root/assets"
export PIP_NO_INDEX=1 PYTHONUNBUFFERED=1
# a private copy of the FLA tree: inits write profile/ into it
if [ ! -d "$state/fla/.git" ]; then
	cp -a "$bundle/fla" "$state/fla"
	git -C "$state/fla" config user.name "optloop device"
	git -C "$state/fla" config user.email "device@optloop.invalid"
fi
export PYTHONPATH="$state/fla"
cd "$state/fla" || exit 1
tsv=$out/gate_times.tsv
[ -f "$tsv" ] || printf 'op\trun\tworkers\tcache\tseconds\texit\tsummary\n' >"$tsv"
left() { echo $((budget - ($(date +%s) - t0))); }

# init OP: init as a user would, taking the safe choice when asked (freeze
# what both the op and its reference run).
job_init() {
	local op=$1 o cmd
	o=$(optloop init --op "$op" 2>&1)
	echo "$o" >"$out/init-$op.first.txt"
	cmd=$(printf '%s\n' "$o" | grep -A1 '^freeze them' | tail -1 | sed 's/^ *optloop //')
	if [ -n "$cmd" ]; then
		# shellcheck disable=SC2086
		optloop $cmd >"$out/init-$op.txt" 2>&1
	else
		echo "$o" >"$out/init-$op.txt"
	fi
	optloop --op "$op" status --json >"$out/status-$op.json" 2>&1
}

# gate OP TEST WORKERS CACHE: the full gate as verify runs it (pytest -q on
# the unmodified test file), serial (1) or with pytest-xdist.
job_gate() {
	local op=$1 test=$2 workers=$3 cache=$4 kind=$5 log s e rc sum
	log=$out/gate-$op-w$workers-$kind.log
	export TRITON_CACHE_DIR="$state/cache-$op-$cache"
	local args=(-q -p no:cacheprovider)
	[ "$workers" -gt 1 ] && args+=(-n "$workers")
	s=$(date +%s.%N)
	timeout "$cap" python3 -m pytest "tests/ops/$test" "${args[@]}" >"$log" 2>&1
	rc=$?
	e=$(date +%s.%N)
	sum=$(grep -E '^=* ?[0-9]+ (passed|failed)|[0-9]+ passed' "$log" | tail -1 | tr -d '=' | sed 's/^ *//')
	[ -n "$sum" ] || sum="cut at ${cap}s: $(grep -oE '\[ *[0-9]+%\]' "$log" | tail -1) $(grep -c PASSED "$log") PASSED lines"
	printf '%s\t%s\t%s\t%s\t%s\t%d\t%s\n' "$op" "$kind" "$workers" "$cache" \
		"$(python3 -c "print(f'{$e - $s:.1f}')")" "$rc" "$sum" >>"$tsv"
}

job_probe() {
	{
		nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv
		python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
		python3 -c 'import xdist; print("pytest-xdist", xdist.__version__)' 2>&1 | tail -1
		python3 -m pytest --version 2>&1
		nproc
	} >"$out/probe.txt" 2>&1
}

run() {
	local name=$1 need=$2
	shift 2
	[ -e "$state/done/$name" ] && return 0
	if [ "$(left)" -lt "$need" ]; then
		echo "== out of time before $name ($(left)s left)"
		return 1
	fi
	echo "== $name ($(left)s left)"
	"$@" && touch "$state/done/$name"
}

jobs=("$@")
[ ${#jobs[@]} -gt 0 ] || jobs=(probe init)
for j in "${jobs[@]}"; do
	case $j in
	probe) run probe 10 job_probe ;;
	init) run init-ret 20 job_init chunk_retention && run init-la 20 job_init chunk_linear_attn ;;
	ret-par) run ret-par-cold $((cap + 10)) job_gate chunk_retention test_retention.py 16 par cold &&
		run ret-par-warm $((cap + 10)) job_gate chunk_retention test_retention.py 16 par warm ;;
	ret-ser) run ret-ser-warm $((cap + 10)) job_gate chunk_retention test_retention.py 1 par warm ;;
	ret-ser-cold) run ret-ser-cold $((cap + 10)) job_gate chunk_retention test_retention.py 1 ser cold ;;
	la-par) run la-par-cold $((cap + 10)) job_gate chunk_linear_attn test_linear_attn.py 16 par cold &&
		run la-par-warm $((cap + 10)) job_gate chunk_linear_attn test_linear_attn.py 16 par warm ;;
	la-ser) run la-ser-warm $((cap + 10)) job_gate chunk_linear_attn test_linear_attn.py 1 par warm ;;
	# one run each, for a driver that sizes every cap itself
	ret-par-cold) run ret-par-cold $((cap + 10)) job_gate chunk_retention test_retention.py 16 par cold ;;
	ret-par-warm) run ret-par-warm $((cap + 10)) job_gate chunk_retention test_retention.py 16 par warm ;;
	la-par-cold) run la-par-cold $((cap + 10)) job_gate chunk_linear_attn test_linear_attn.py 16 par cold ;;
	la-par-warm) run la-par-warm $((cap + 10)) job_gate chunk_linear_attn test_linear_attn.py 16 par warm ;;
	*) echo "unknown job $j" ;;
	esac
done
cp "$tsv" "$out/" 2>/dev/null
cat "$tsv"
