#!/usr/bin/env bash
# Benchmark harness: runs every compiled bench binary given on the command
# line and every tests/bench/b_*.sh script; each prints its own figures as
# "bench <name>: <figure> ... [target ...] PASS|MISS".  The harness prints a
# summary and exits 1 when a target was missed.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
export OPTLOOP="${OPTLOOP:-$root/optloop}" OPTLOOP_ROOT="$root"
export BENCH_TMP=$(mktemp -d "${TMPDIR:-/tmp}/optloop-bench.XXXXXX")
trap 'rm -rf "$BENCH_TMP"' EXIT
out="$BENCH_TMP/all.log"
: >"$out"
for b in "$@" "$root"/tests/bench/b_*.sh; do
	[ -e "$b" ] || continue
	[ -n "${BENCH_FILTER:-}" ] && [[ "$(basename "$b")" != *"$BENCH_FILTER"* ]] && continue
	echo "== $(basename "$b")"
	if [[ "$b" == *.sh ]]; then bash "$b"; else "$b"; fi 2>&1 | tee -a "$out"
done
miss=$(grep -c ' MISS$' "$out")
hit=$(grep -c ' PASS$' "$out")
echo "benchmarks: $hit targets met, $miss missed"
[ "$miss" -eq 0 ]
