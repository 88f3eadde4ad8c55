# deps_lib.sh — an FLA-shaped repository whose best changed a kernel file
# other ops and test files also run, for the dependents and warmup tests
# (after lib.sh):
#   deps_workspace DIR  the FLA tree (tests/fixtures/make_fla_tree.sh) in DIR,
#                   cd'd into, with a stand-in for FLA's verify that needs no
#                   GPU (./verify-sh: its gate and table as FLA prints them),
#                   the chunk_ret workspace made on it, its baseline logged
#                   and committed, and a change to the common kernel
#                   fla/ops/common/chunk_h.py kept as the best (iteration 1):
#                   tests/ops/test_sgla.py is then a dependent whose gate
#                   `dependents --run` runs.
deps_workspace() {
	"$OPTLOOP_ROOT/tests/fixtures/make_fla_tree.sh" "$1" >/dev/null
	cd "$1" || exit 1
	git config user.name "optloop test" && git config user.email "test@optloop.invalid"
	# the time from how long the op's Python takes
	cat >verify-sh <<'SH'
#!/bin/sh
eq=$(printf '%78s' '' | tr ' ' '=')
printf '\n%s\n  Correctness gate: tests/ops/test_ret.py (full)\n%s\n\n' "$eq" "$eq"
printf '%s\n' "============================== 4 passed in 0.01s ==============================="
printf '\n  GATE PASSED.\n'
sha=$(git rev-parse --short=7 HEAD)
printf '\n  Machine: tiny | CPU sh 1 | main[%s]\n\n' "$sha"
a=$(date +%s%N); cat fla/ops/common/chunk_h.py fla/ops/sgla/chunk.py >/dev/null; b=$(date +%s%N)
ms=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", (b - a) / 1e6 + 1 }')
printf '%s\n  Machine: tiny | CPU sh 1\n%s\n' "$eq" "$eq"
printf '  fwd        B      T    H    D  op                            main[%s](ms)\n' "$sha"
printf '          ----------------------------------------------------------------------\n'
printf '             4   2048   16  128  chunk_ret                                %s\n' "$ms"
printf '%s\n' "$eq"
SH
	chmod +x verify-sh && git add verify-sh && git commit -qm "a stand-in harness"
	"$OPTLOOP" init --op chunk_ret --verify ./verify-sh --target "1.1x geomean" --languages Triton \
		--promotion "full gate" >/dev/null
	"$OPTLOOP" verify >/dev/null 2>&1 && "$OPTLOOP" log --direction baseline --commit >/dev/null
	t_is "the baseline is logged" "$("$OPTLOOP" status --json | jget state)" ready

	printf '\n\ndef chunk_fwd_h_fast(k, v):\n    return k.clone()\n' >>fla/ops/common/chunk_h.py
	"$OPTLOOP" verify >/dev/null 2>&1
	explain_noise
	"$OPTLOOP" log --direction "a faster chunk_h" --status keep --unconfirmed "one run" --commit >/dev/null
	t_is "a change to a common kernel is kept" "$("$OPTLOOP" status --json | jget best.iter)" 1
}
