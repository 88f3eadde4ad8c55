#!/usr/bin/env bash
# A paired run must have measured the best: with a harness whose times are
# exact (the tiny project, its verify replaced by one that reads each
# kernel's time from a "# ms=" line, of the work tree and of --base REF), a
# base column that measured the work tree instead of REF reads no change
# where the candidate's verify read one beyond the noise, and is refused;
# a harness that printed no base column is refused; nothing is judged from
# either, and the candidate stays in the tree.
. "$(dirname "$0")/lib.sh"
d="$T_TMP/tiny"
"$OPTLOOP_ROOT/tests/fixtures/make_tiny_project.sh" "$d"
cd "$d" || exit 1
cat >verify <<'SH'
#!/bin/sh
# verify [--no-gate] [--base REF]: the gate, then a table whose times are
# the kernels' "# ms=" lines (1.000 without one) times a small spread by run;
# with --base, REF's kernel in a base column (WRONG=1: the work tree's).
gate=1 base=""
while [ $# -gt 0 ]; do
	case "$1" in --no-gate) gate=0; shift ;; --base) base=$2; shift 2 ;; *) shift ;; esac
done
ms_of() { v=$(sed -n 's/^# ms=//p'); echo "${v:-1.000}"; }
n=$(cat .git/run-count 2>/dev/null || echo 0); n=$((n + 1)); echo "$n" >.git/run-count
case $((n % 4)) in 0) f=1.002 ;; 1) f=0.999 ;; 2) f=0.998 ;; *) f=1.001 ;; esac
eq=$(printf '%78s' '' | tr ' ' '=')
if [ $gate = 1 ]; then
	printf '\n%s\n  Correctness gate: tests/test_compute.sh (full)\n%s\n\n' "$eq" "$eq"
	sh tests/test_compute.sh || exit 1
	printf '%s\n\n  GATE PASSED.\n' "============================== 4 passed in 0.01s ==============================="
fi
new=$(ms_of <kernel/compute.sh)
printf '%s\n  Machine: tiny | CPU sh 1\n%s\n' "$eq" "$eq"
if [ -n "$base" ]; then
	if [ -n "${WRONG:-}" ]; then old=$new; else old=$(git show "$base:kernel/compute.sh" | ms_of); fi
	printf '  fwd        B      T    H    D  op                            main[%.7s](ms) new[0000000](ms)  speedup\n' "$base"
else
	printf '  fwd        B      T    H    D  op                            main[0000000](ms)\n'
fi
for t in 64 128; do
	printf '          ----------------------------------------------------------------------\n'
	v=$(awk -v m="$new" -v f="$f" -v t="$t" 'BEGIN { printf "%.4f", m * f * t / 64 }')
	if [ -n "$base" ]; then
		o=$(awk -v m="$old" -v f="$f" -v t="$t" 'BEGIN { printf "%.4f", m * f * t / 64 }')
		printf '             1  %5d    1   16  compute                                  %s  %s  %.2fx\n' "$t" "$o" "$v" \
			"$(awk -v a="$o" -v b="$v" 'BEGIN { print a / b }')"
	else
		printf '             1  %5d    1   16  compute                                  %s\n' "$t" "$v"
	fi
done
printf '%s\n' "$eq"
SH
git add -A && git commit -qm "tiny project, exact harness" >/dev/null
"$OPTLOOP" init --op tiny --kernel kernel --test-file tests/test_compute.sh --naive ref/naive.sh \
	--verify ./verify >/dev/null
"$OPTLOOP" contract --set "target=N up to 50, 2x" --set languages=sh --set "promotion=confirmed" >/dev/null
"$OPTLOOP" verify >/dev/null 2>&1
"$OPTLOOP" log --direction baseline >/dev/null && "$OPTLOOP" commit >/dev/null
best=$(git rev-parse HEAD)
t_ok "the best measured again in a session of its own" "$OPTLOOP" noise --runs 3
printf '# ms=0.800\n' >>kernel/compute.sh
cand=$(sha1sum kernel/compute.sh)
"$OPTLOOP" verify >/dev/null 2>&1
db=profile/tiny-opt/optloop.db

out=$(WRONG=1 "$OPTLOOP" confirm --paired 2>&1); rc=$?
t_is "a base column that measured the work tree stops the confirm (exit 4)" "$rc" 4
t_like "saying it did not measure the best's commit" "$out" \
	"paired run 1 reads \+0\.0% \(its base column against the work tree\), 2[0-9]\.[0-9]% away from what the candidate's verify read .* beyond the threshold and the noise: its base column did not measure the best's commit ${best:0:12}"
t_is "no verdict was recorded" "$(sqlite3 "$db" "SELECT count(*) FROM stats_confirms WHERE verdict IS NOT NULL")" 0
t_is "the candidate is in the tree" "$(sha1sum kernel/compute.sh)" "$cand"

out=$("$OPTLOOP" confirm --cmd "./verify --no-gate #{best}" 2>&1); rc=$?
t_is "a paired run with no base column stops the confirm (exit 4)" "$rc" 4
t_like "naming the shape" "$out" 'printed no base time for fwd B=1 T=64 H=1 D=16 compute'
t_is "still no verdict" "$(sqlite3 "$db" "SELECT count(*) FROM stats_confirms WHERE verdict IS NOT NULL")" 0

out=$("$OPTLOOP" confirm --paired --json 2>/dev/null); rc=$?
t_is "the honest harness: a paired confirm of a 1.25x win promotes" \
	"$rc $(printf '%s' "$out" | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["verdict"], round(j["speedup"], 2), j["runs"] == j["pairs"])')" \
	"0 fast 1.25 True"
t_is "and the candidate never left the tree" "$(sha1sum kernel/compute.sh)" "$cand"
t_done
