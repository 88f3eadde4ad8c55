#!/usr/bin/env bash
# The cost of the roofline arithmetic per run (tests/bench/roofline_cost.c:
# an H200's peaks row, the cost row and the arithmetic of three shapes, the
# JSON kept with the verdict; best of 5 averages over 2,000 runs) against
# verify's own overhead: `optloop verify` on a workspace whose validation
# command only prints a recorded H200 verify log (cat), so what it costs is
# optloop's (probe, parse, store, verdict, lints; median wall over the
# baseline and three iterations, each logged as drop with --commit between).  Target: the
# arithmetic under 1 % of that overhead.
set -u
root=${OPTLOOP_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
helper="$root/${BUILD:-build/rel}/bench/roofline_cost"
rounds=3 # three drops in a row stall the loop
tmp=$(mktemp -d "${BENCH_TMP:-/tmp}/roofline.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export HOME="$tmp/home" && mkdir -p "$HOME"
git config --global user.name "optloop bench" && git config --global user.email bench@optloop.invalid
[ -x "$helper" ] || { echo "bench roofline: $helper is missing (make bench builds it) MISS"; exit 0; }
us=$(OPTLOOP_ROOT="$root" "$helper") || { echo "bench roofline: the helper failed MISS"; exit 0; }

d="$tmp/demo"
cp -R "$root/assets/demo" "$d" && rm -rf "$d/build"
cd "$d" || exit 1
git init -q -b main . && git add -A && git commit -qm demo
log="$root/tests/fixtures/fla-h200-session2/trace/iter-0.log" # a full gate, then a table
export OPTLOOP_PROBE="true" OPTLOOP_PROBE_APPS="" # no GPU here: the probe costs nothing
"$OPTLOOP" init --op chunk_linear_attn --kernel ops/linear_attn/chunk.c \
	--test-file tests/ops/test_linear_attn.c --naive ops/linear_attn/naive.c \
	--verify "cat $log" >/dev/null &&
	"$OPTLOOP" contract --set "target=1.2x" --set languages=C --set "promotion=a confirmed win" >/dev/null ||
	{ echo "bench roofline: the workspace could not be made MISS"; exit 0; }
times=()
for i in $(seq 0 "$rounds"); do
	[ "$i" -gt 0 ] && echo "/* $i */" >>ops/linear_attn/chunk.c
	s=$(date +%s%N)
	"$OPTLOOP" verify >"$tmp/verify.out" 2>&1 || { echo "bench roofline: verify failed MISS"; tail -n 3 "$tmp/verify.out"; exit 0; }
	e=$(date +%s%N)
	times+=($(((e - s) / 1000)))
	if [ "$i" -eq 0 ]; then
		"$OPTLOOP" log --direction baseline --commit >/dev/null 2>&1
	else
		"$OPTLOOP" log --direction "comment $i" --status drop --commit >/dev/null 2>&1
	fi || { echo "bench roofline: log failed MISS"; exit 0; }
done
med=$(printf '%s\n' "${times[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
pct=$(awk -v a="$us" -v b="$med" 'BEGIN { printf "%.3f", 100 * a / b }')
ok=$(awk -v p="$pct" 'BEGIN { print (p < 1) ? "PASS" : "MISS" }')
echo "bench roofline: ${us} us of roofline arithmetic per run, ${pct}% of verify's own overhead (median ${med} us wall over $((rounds + 1)) verifies of a recorded H200 log; load $(cut -d' ' -f1 /proc/loadavg)) [target < 1%] $ok"
