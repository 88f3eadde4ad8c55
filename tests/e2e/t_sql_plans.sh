#!/usr/bin/env bash
# The statements a command runs on every iteration read the tables that grow
# with the history (runs, samples, iterations, events, the confirms, verdicts,
# probes, kept costs and trees, ...: `growing` below) through an index, never
# by a scan of every row: the store writes each statement it ran with its
# query plan (OPTLOOP_SQL_PLAN), and every "SCAN" of one of those tables must
# be a bounded partial index or named in tests/sql_scans.allow with why.
# The loop's commands on the tiny project: status, verify, log and commit,
# noise, confirm, status --json.  T_KEEP_PLANS=FILE keeps a copy of the plans
# read, to see what a new statement does.
. "$(dirname "$0")/lib.sh"
d="$T_TMP/tiny"
"$OPTLOOP_ROOT/tests/fixtures/make_tiny_project.sh" "$d" >/dev/null
cd "$d" || exit 1
git config user.name "optloop test" && git config user.email "test@optloop.invalid"
"$OPTLOOP" init --op tiny --kernel kernel --test-file tests/test_compute.sh --naive ref/naive.sh \
	--verify ./verify >/dev/null
"$OPTLOOP" contract --set "target=2x" --set languages=sh --set "promotion=full gate, confirmed win" >/dev/null
export OPTLOOP_SQL_PLAN="$T_TMP/plans.txt"
"$OPTLOOP" verify >/dev/null 2>&1
"$OPTLOOP" log --direction baseline --commit >/dev/null
"$OPTLOOP" noise --runs 2 >/dev/null 2>&1
printf '# a comment\n' >>kernel/compute.sh
"$OPTLOOP" verify >/dev/null 2>&1
"$OPTLOOP" confirm --max-pairs 2 >/dev/null 2>&1
"$OPTLOOP" status >/dev/null
"$OPTLOOP" status --json >/dev/null
"$OPTLOOP" log --direction "a comment" --status revert >/dev/null
"$OPTLOOP" commit >/dev/null
"$OPTLOOP" status >/dev/null
unset OPTLOOP_SQL_PLAN
t_is "the commands ran" "$("$OPTLOOP" status --json | jget iteration)" 2
t_like "the store wrote the statements it ran, with their plans" "$(cat "$T_TMP/plans.txt")" '^PLAN SEARCH runs'
n=$(grep -c '^SQL ' "$T_TMP/plans.txt")
t_like "  many of them ($n)" "$n" '^[0-9]{2,}$'
out=$(python3 - "$T_TMP/plans.txt" "$OPTLOOP_ROOT/tests/sql_scans.allow" <<'PY'
import re, sys
growing = {"runs", "samples", "iterations", "events", "tree_intents", "stats_runs", "stats_verdicts",
           "stats_confirms", "stats_probes", "run_costs", "run_trees", "guards_findings", "aside"}
# partial indexes over the few rows still open (and a paired confirm's runs)
bounded = {"runs_unfinished", "runs_no_change", "tree_intents_open", "run_trees_spread", "aside_open",
           "stats_confirms_open", "stats_runs_pair"}
allow = []
for line in open(sys.argv[2], encoding="utf-8"):
    if line.strip() and not line.startswith("#"):
        allow.append(line.split("\t")[0].strip())
def table_of(sql, name):
    """the table an alias in a plan line stands for"""
    if name in growing:
        return name
    m = re.search(r"\b(\w+)\s+(?:AS\s+)?%s\b" % re.escape(name), sql)
    return m.group(1) if m else name
found, used = [], set()
sql = None
for line in open(sys.argv[1], encoding="utf-8"):
    line = line.rstrip("\n")
    if line.startswith("SQL "):
        sql = line[4:]
        continue
    m = re.match(r"PLAN (?:SCAN|SCAN TABLE) (\w+)(.*)", line)
    if not m or not sql:
        continue
    t = table_of(sql, m.group(1))
    if t not in growing:
        continue
    idx = re.search(r"USING (?:COVERING )?INDEX (\w+)", m.group(2))
    if idx and idx.group(1) in bounded:
        continue
    hit = [a for a in allow if sql.startswith(a)]
    if hit:
        used.update(hit)
        continue
    found.append("%s: %s" % (line[5:], sql[:160]))
for f in sorted(set(found)):
    print("scan:", f)
for a in allow:
    if a not in used:
        print("allowed but not seen (take it out of tests/sql_scans.allow):", a[:120])
PY
)
t_is "no statement scans a growing table outside the allow-list" "$out" ""
[ -n "${T_KEEP_PLANS:-}" ] && cp "$T_TMP/plans.txt" "$T_KEEP_PLANS"
t_done
