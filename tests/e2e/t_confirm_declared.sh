#!/usr/bin/env bash
# Confirm pairs by itself from the first confirm where the contract says the
# harness pairs: a benchmark command that is the validation command with
# --base REF (init writes one for FLA's verify and the demo's; environment
# assignments before either do not count).  Elsewhere
# init writes the validation command as the benchmark command and confirm
# measures in turns; a benchmark command that passes --base to a harness
# printing no base column is refused, saying what to set.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/confirm_lib.sh"
jq_() { python3 -c 'import json,sys; j=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }
bench_of() { sed -n '/^## Benchmark command/,/^## [A-Z]/p' "$1" | sed -n '/^```sh$/,/^```$/p' | sed -n 2p; }

# ---- the demo made by optloop demo: its contract declares the pair ---------
export DEMO_BENCH_WARMUP_MS=1 DEMO_BENCH_REP_MS=5
"$OPTLOOP" demo "$T_TMP/la" >/dev/null 2>&1 || t_fail "optloop demo"
cd "$T_TMP/la" || exit 1
t_is "the demo's benchmark command is its validation command with --base" \
	"$(bench_of profile/chunk_linear_attn-opt/docs/draft.md)" "./verify --op chunk_linear_attn --base HEAD"
"$OPTLOOP" verify >/dev/null 2>&1
"$OPTLOOP" log --direction baseline --commit >/dev/null
best=$(git rev-parse HEAD)
sed -i 's/CHUNK_SIZE 64/CHUNK_SIZE 48/' ops/linear_attn/chunk.c
"$OPTLOOP" verify >/dev/null 2>&1
out=$("$OPTLOOP" confirm --max-pairs 2 --json 2>"$T_TMP/err"); rc=$?
echo "# exit $rc"; grep -E "optloop:|after pair" "$T_TMP/err" | sed 's/^/# /'
t_like "the first confirm pairs by itself and says why" "$(cat "$T_TMP/err")" \
	"paired by itself: the contract's benchmark command passes --base"
t_is "  --json: paired by itself, one run a pair" \
	"$(printf '%s' "$out" | jq_ 'j["paired_by_itself"], j["runs"] == j["pairs"] >= 1')" "(True, True)"
t_like "  each run timed the best's commit beside the candidate" \
	"$(sqlite3 profile/chunk_linear_attn-opt/optloop.db "SELECT command FROM runs WHERE kind = 'confirm' ORDER BY id DESC LIMIT 1")" \
	"--no-gate --base $best\$"
out=$("$OPTLOOP" confirm --no-paired --max-pairs 1 --json 2>"$T_TMP/err")
t_is "  --no-paired measures in turns" \
	"$(printf '%s' "$out" | jq_ 'j["paired_by_itself"], j["runs"]')" "(False, 2)"
t_unlike "  and does not say it paired" "$(cat "$T_TMP/err")" 'paired by itself'

# ---- the demo's kernel with a harness init does not know: in turns ----------
cd "$T_TMP" || exit 1
SETUP_REP_MS=5 confirm_setup
t_is "init writes the validation command as the benchmark command of a harness it does not know" \
	"$(bench_of profile/chunk_linear_attn-opt/docs/draft.md)" "./verify --op chunk_linear_attn"
"$OPTLOOP" verify >/dev/null 2>&1
out=$("$OPTLOOP" confirm --max-pairs 1 --json 2>"$T_TMP/err")
t_is "  its first confirm measures in turns" \
	"$(printf '%s' "$out" | jq_ 'j["paired_by_itself"], j["runs"]')" "(False, 2)"
t_unlike "  and does not say it paired" "$(cat "$T_TMP/err")" 'paired by itself'
"$OPTLOOP" contract --set "benchmark=./verify --op chunk_linear_attn --base main" >/dev/null
out=$("$OPTLOOP" confirm --max-pairs 1 --json 2>"$T_TMP/err")
t_like "  the user's benchmark command with --base makes it pair, from then on" "$(cat "$T_TMP/err")" \
	"paired by itself: the contract's benchmark command passes --base"
t_is "  one run a pair" "$(printf '%s' "$out" | jq_ 'j["paired_by_itself"], j["runs"]')" "(True, 1)"
# init --gate-workers puts PYTEST_ADDOPTS='-n N' before the validation
# command only: the benchmark command still declares the pair
"$OPTLOOP" contract --set "validation=PYTEST_ADDOPTS='-n 2' ./verify --op chunk_linear_attn" >/dev/null
out=$("$OPTLOOP" confirm --max-pairs 1 --json 2>"$T_TMP/err")
t_like "  a validation command after environment assignments pairs the same" "$(cat "$T_TMP/err")" \
	"paired by itself: the contract's benchmark command passes --base"

# ---- a harness that prints no base column, declared to pair: refused -------
tiny="$T_TMP/tiny"
"$OPTLOOP_ROOT/tests/fixtures/make_tiny_project.sh" "$tiny" >/dev/null
cd "$tiny" || exit 1
"$OPTLOOP" init --op tiny --kernel kernel --test-file tests/test_compute.sh \
	--naive ref/naive.sh --verify ./verify >/dev/null
"$OPTLOOP" contract --set "target=N up to 50, 2x" --set languages=sh \
	--set "promotion=full gate, confirmed win" >/dev/null
t_is "the tiny project's benchmark command is its validation command" \
	"$(bench_of profile/tiny-opt/docs/draft.md)" "./verify"
"$OPTLOOP" verify >/dev/null 2>&1
"$OPTLOOP" log --direction baseline --commit >/dev/null
printf '# a comment\n' >>kernel/compute.sh
"$OPTLOOP" verify >/dev/null 2>&1
"$OPTLOOP" contract --set "benchmark=./verify --base main" >/dev/null
out=$("$OPTLOOP" confirm --max-pairs 1 2>&1); rc=$?
t_is "a pair with no base column is refused (exit 4, the harness)" "$rc" 4
t_like "  saying the contract declared the pair and what to set" "$out" \
	"printed no base time .*though the contract's benchmark command passes --base .*optloop contract --set benchmark=CMD\\), or confirm --no-paired"
t_is "  nothing is judged: the iteration is still measured" \
	"$("$OPTLOOP" status --json | jq_ 'j["state"]')" measured
out=$("$OPTLOOP" confirm --no-paired --max-pairs 1 --json 2>/dev/null)
t_is "  --no-paired measures it in turns" "$(printf '%s' "$out" | jq_ 'j["runs"]')" 2

t_done
