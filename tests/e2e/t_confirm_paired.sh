#!/usr/bin/env bash
# The harness's own paired run (demo project, whose verify takes --base REF
# as FLA's does): confirm --paired runs the candidate only, each run
# measuring the best's commit in its base column beside the work tree, so
# one run is one pair; the cost counts it as two measurements.  A base
# column that did not measure the best (no column, or another kernel) is
# refused, and nothing is judged from it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/confirm_lib.sh"

# every run with the same benchmark settings: the base column is checked
# against the best's own runs
SETUP_REP_MS=20 confirm_setup
# four times over to twice: a 2x win, clear of the demo's timing noise on a
# loaded machine (and flagged implausible: held back, not promoted)
python3 -c 'import sys; p=sys.argv[1]; s=open(p).read(); a="rep < 3;"; assert a in s; open(p,"w").write(s.replace(a,"rep < 2;",1))' "$kernel"
cand=$(sha1sum "$kernel")
export DEMO_BENCH_WARMUP_MS=1 DEMO_BENCH_REP_MS=20
"$OPTLOOP" verify >/dev/null 2>&1
best=$(git rev-parse HEAD)
jq_() { python3 -c 'import json,sys; j=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }

# (up to 16 pairs: on a machine loaded by the rest of the suite a demo run
# moves by a third)
out=$("$OPTLOOP" confirm --paired --max-pairs 16 --json 2>"$T_TMP/err"); rc=$?
sed 's/^/# /' "$T_TMP/err" | grep -E "after pair|optloop:"
t_is "a paired confirm of a 2x win: fast, held back as implausible (exit 1)" \
	"$rc $(printf '%s' "$out" | jq_ 'j["verdict"], j["promoted"], "implausible" in j["flags"]')" "1 ('fast', False, True)"
t_is "one run is one pair" "$(printf '%s' "$out" | jq_ 'j["runs"] == j["pairs"] >= 1')" True
t_is "every run measured both kernels in its own session" \
	"$(sqlite3 "$db" "SELECT group_concat(DISTINCT role) FROM stats_runs WHERE session = $(printf '%s' "$out" | jq_ 'j["session"]')")" pair
t_like "the command carried the best's commit" \
	"$(sqlite3 "$db" "SELECT command FROM runs WHERE kind = 'confirm' ORDER BY id DESC LIMIT 1")" \
	"--no-gate --base $best\$"
t_is "the candidate never left the work tree" "$(sha1sum "$kernel")" "$cand"
t_is "no swap was recorded: nothing to put back" "$(sqlite3 "$db" "SELECT count(*) FROM tree_intents WHERE kind = 'swap'")" 0
t_like "the base column is the best: the confirm reads the 4-to-2 win" \
	"$(printf '%s' "$out" | jq_ 'round(j["speedup"], 1)')" '^(1\.[6-9]|2\.[0-4])$'
cost=$("$OPTLOOP" status --json | jq_ 'j["cost"]["iteration"]')
t_like "the cost counts a paired run as two measurements" "$cost" "'measurements': $(($(printf '%s' "$out" | jq_ 'j["runs"]') * 2 + 1)),"

# ---- a second confirm of the same candidate: paired by itself, and counted -
out=$("$OPTLOOP" confirm --max-pairs 16 --json 2>"$T_TMP/err2"); rc=$?
echo "# exit $rc"; grep -E "optloop:|after pair" "$T_TMP/err2" | sed 's/^/# /'
t_like "once a paired confirm of this command reached a verdict, confirm pairs by itself and says so" \
	"$(cat "$T_TMP/err2")" 'paired by itself: an earlier paired confirm of this command reached a verdict'
t_is "  --json: paired by itself, one run a pair" \
	"$(printf '%s' "$out" | jq_ 'j["paired_by_itself"], j["runs"] == j["pairs"]')" "(True, True)"
t_is "  it is the candidate's second confirm: it decides at half the alpha" \
	"$(printf '%s' "$out" | jq_ 'j["confirms"], j["sequential"]["confirms_before"], j["sequential"]["alpha"]')" \
	"(2, 1, 0.0025)"
t_like "  the command carried the best's commit" \
	"$(sqlite3 "$db" "SELECT command FROM runs WHERE kind = 'confirm' ORDER BY id DESC LIMIT 1")" \
	"--no-gate --base $best\$"
out=$("$OPTLOOP" confirm --no-paired --max-pairs 1 --json 2>/dev/null)
t_is "--no-paired measures in turns (the third confirm, a quarter of the alpha)" \
	"$(printf '%s' "$out" | jq_ 'j["paired_by_itself"], j["runs"], j["confirms"], j["sequential"]["alpha"]')" \
	"(False, 2, 3, 0.00125)"
"$OPTLOOP" promote --explain "four repetitions to two: half the work, measured" >/dev/null
# (the last confirm, one pair in turns, decided nothing: kept --unconfirmed)
t_ok "logged" "$OPTLOOP" log --direction "two repetitions" --status keep \
	--unconfirmed "the last confirm ran one pair only" --commit
t_like "the commit counts every confirm of the iteration" "$(git log -n 1 --format=%B HEAD)" 'Optloop-Confirms: 3'

t_done
