#!/usr/bin/env bash
# The demo project's costs, with the default benchmark budgets:
#   optloop demo (copy + git init + commit)        target < 1 s
#   ./verify, full gate + benchmark, pristine      target < 10 s (first run and next)
#   ./verify --base HEAD~1 after a committed edit  reported (two kernels measured)
# and the real win a one-line edit gives (CHUNK_SIZE 64 -> 32), read from the
# --base table's speedup column.  The machine is shared, so targets are
# checked on CPU seconds (the command and all its children); wall clock and
# the load average are printed beside them.
set -u
tmp="${BENCH_TMP:-$(mktemp -d)}/demo"
mkdir -p "$tmp"
export GIT_AUTHOR_NAME="optloop bench" GIT_AUTHOR_EMAIL="bench@optloop.invalid"
export GIT_COMMITTER_NAME="$GIT_AUTHOR_NAME" GIT_COMMITTER_EMAIL="$GIT_AUTHOR_EMAIL"
TIMEFORMAT='%R %U %S'

# timed NAME CMD...: runs CMD, sets wall and cpu (seconds)
timed() {
	local t
	{ time "$@" >"$tmp/out" 2>&1; } 2>"$tmp/time"
	read -r wall u s <"$tmp/time"
	cpu=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
}
load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null)
verdict() { awk -v x="$1" -v t="$2" 'BEGIN { print (x < t) ? "PASS" : "MISS" }'; }

timed "$OPTLOOP" demo "$tmp/p"
echo "bench demo_create: ${cpu} s cpu, ${wall} s wall (load ${load}) per 'optloop demo DIR' [target < 1 s cpu] $(verdict "$cpu" 1)"

cd "$tmp/p" || exit 1
timed ./verify --op chunk_linear_attn
grep -q 'GATE PASSED' "$tmp/out" || { echo "bench demo_verify: verify failed MISS"; exit 0; }
echo "bench demo_verify_cold: ${cpu} s cpu, ${wall} s wall (load ${load}) per first full verify of the pristine kernel (nothing compiled yet) [target < 10 s cpu] $(verdict "$cpu" 10)"
timed ./verify --op chunk_linear_attn
echo "bench demo_verify: ${cpu} s cpu, ${wall} s wall (load ${load}) per full verify of the pristine kernel (frozen files already compiled) [target < 10 s cpu] $(verdict "$cpu" 10)"

sed -i 's/^#define CHUNK_SIZE 64$/#define CHUNK_SIZE 32/' ops/linear_attn/chunk.c
git commit -qam "chunk size 32"
timed ./verify --op chunk_linear_attn --base HEAD~1
speedups=$(grep -oE '[0-9]+\.[0-9]{2}x$' "$tmp/out" | tr '\n' ' ')
echo "bench demo_verify_base: ${cpu} s cpu, ${wall} s wall (load ${load}) per verify --base HEAD~1; CHUNK_SIZE 64->32 speedups: ${speedups}[target < 10 s cpu] $(verdict "$cpu" 10)"
