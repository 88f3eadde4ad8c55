#!/usr/bin/env bash
# Test runner: runs every unit-test binary given on the command line and every
# end-to-end script tests/e2e/t_*.sh, reads their TAP output, and ends with
# one line "N passed, N failed, N skipped".  Exits 1 on any failure.
#
# Environment: OPTLOOP (the binary under test), BUILD (build dir),
# TESTS_FILTER (substrings, space-separated; run only suites matching one), TESTS_JOBS (parallel suites).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
export OPTLOOP="${OPTLOOP:-$root/optloop}"
export OPTLOOP_ROOT="$root"
export CMOCKA_MESSAGE_OUTPUT=TAP
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
logdir="$root/${BUILD:-build/rel}/test-logs"
# Longest suites first, by the last run's times, else by tests/timings.tsv
# (a suite not timed either way counts as long): the run ends when its
# longest suite does, not after it.
declare -A last_ms=()
while IFS=$'\t' read -r name ms; do
	[ -n "$name" ] && last_ms[$name]=$ms
done <"$root/tests/timings.tsv" 2>/dev/null
for f in "$logdir"/*.log.ms; do
	[ -f "$f" ] && last_ms[$(basename "$f" .log.ms)]=$(cat "$f")
done
rm -rf "$logdir"
mkdir -p "$logdir"

suites=("$@")
for t in "$root"/tests/e2e/t_*.sh; do
	[ -e "$t" ] && suites+=("$t")
done

run_one() {
	local s=$1 name log rc t0
	name=$(basename "$s")
	log="$logdir/$name.log"
	t0=$(date +%s%N)
	if [[ "$s" == *.sh ]]; then
		(cd "$root" && timeout "${TEST_TIMEOUT:-900}" bash "$s") >"$log" 2>&1
	else
		(cd "$root" && timeout "${TEST_TIMEOUT:-900}" "$s") >"$log" 2>&1
	fi
	rc=$?
	echo "$rc" >"$log.rc"
	echo $((($(date +%s%N) - t0) / 1000000)) >"$log.ms"
}

# TESTS_FILTER: one or more substrings, separated by spaces; a suite runs
# when its name holds any of them.
wanted() {
	local f
	[ -n "${TESTS_FILTER:-}" ] || return 0
	for f in $TESTS_FILTER; do
		[[ "$(basename "$1")" == *"$f"* ]] && return 0
	done
	return 1
}
filtered=()
for s in "${suites[@]}"; do
	wanted "$s" && filtered+=("$s")
done

ordered=()
while IFS=$'\t' read -r _ s; do
	ordered+=("$s")
done < <(for s in "${filtered[@]}"; do
	printf '%s\t%s\n' "${last_ms[$(basename "$s")]:-999999}" "$s"
done | sort -t$'\t' -k1,1nr)

# One more suite than cores: many suites spend their time waiting (a tmux
# screen, the Slurm daemons, a child's sleep), so the cores stay busy.
jobs=${TESTS_JOBS:-$(($(nproc 2>/dev/null || echo 2) + 1))}
running=0
for s in "${ordered[@]}"; do
	run_one "$s" &
	running=$((running + 1))
	if [ "$running" -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
done
wait

pass=0 fail=0 skip=0
for s in "${filtered[@]}"; do
	name=$(basename "$s")
	log="$logdir/$name.log"
	rc=$(cat "$log.rc" 2>/dev/null || echo 99)
	p=$(grep -cE '^ok [0-9]+' "$log" | head -1)
	sk=$(grep -cE '^ok [0-9]+.*# SKIP' "$log" | head -1)
	f=$(grep -cE '^not ok [0-9]+' "$log" | head -1)
	p=$((p - sk))
	status="ok"
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		# Crashed or exited non-zero without reporting a failing case.
		f=1
		status="crashed (exit $rc)"
	fi
	[ "$f" -gt 0 ] && [ "$status" = ok ] && status="FAILED"
	ms=$(cat "$log.ms" 2>/dev/null || echo 0)
	printf '%-32s %4d passed %3d failed %3d skipped %6.1fs  %s\n' "$name" "$p" "$f" "$sk" \
		"$((ms / 1000)).$((ms % 1000 / 100))" "$status"
	if [ "$f" -gt 0 ]; then
		echo "---- $name (log: $log) ----"
		grep -vE '^ok [0-9]+' "$log" | tail -n 60
		echo "----"
	fi
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + sk))
done

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
