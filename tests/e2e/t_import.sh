#!/usr/bin/env bash
# optloop import: reads rendered and hand-written OPT_LOG.md files, prints
# the rows, lists what it could not read with line numbers, and exits 0 when
# a summary table was read (1 when none, or with --strict on any problem).
. "$(dirname "$0")/lib.sh"

log="$T_TMP/OPT_LOG.md"
cat >"$log" <<'MD'
# Optimization log — chunk_gla

Env: NVIDIA H200 | CUDA 12.4 | PyTorch 2.5.1 | Triton 3.1.0 | opt-a[1a2b3c4]
Baseline (main): 0.973 ms
Target: 1.3x

## Summary

| Iter | Direction (one line) | Gate | Bench (median ms) | vs best | Status |
|---|---|---|---|---|---|
| 0 | baseline | pass | 0.973 | — | base |
| 1 | tile `BT|BK` = 64 | pass | 0.857 | +12% | keep |
| 2 | drop the mask | FAIL | — | — | revert |
| two | typo | pass | 1.0 | — | keep |
| 3 | retry with \| escaped | pass (-k) | fast | — | Drop |
MD

out=$("$OPTLOOP" import "$log"); rc=$?
t_is "import exits 0 when the table was read, problems or not" "$rc" 0
t_like "header shows the op and the row count" "$out" 'op chunk_gla, 4 rows'
t_like "env line is shown" "$out" '^Env: NVIDIA H200 \| CUDA 12.4'
t_like "baseline row" "$out" '^ +0  pass +0\.973 +— +base +baseline$'
t_like "code span keeps its pipe" "$out" '^ +1  pass +0\.857 +\+12% +keep +tile `BT\|BK` = 64$'
t_like "failed row has no bench" "$out" '^ +2  FAIL +— +— +revert +drop the mask$'
t_like "escaped pipe is a pipe; -k shown" "$out" '^ +3  pass \(-k\) +— +— +drop +retry with \| escaped$'
t_like "unreadable iter reported with its line" "$out" "OPT_LOG.md:14: row skipped: Iter cell 'two'"
t_like "unreadable bench reported with its line" "$out" "OPT_LOG.md:15: Bench cell 'fast'"
t_exit "--strict fails on problems" 1 "$OPTLOOP" import --strict "$log"

json=$("$OPTLOOP" import --json "$log")
t_ok "--json is one JSON object" python3 -c 'import json,sys; json.loads(sys.argv[1])' "$json"
got=$(python3 -c '
import json, sys
d = json.loads(sys.argv[1])
r = d["rows"]
print(d["op"], d["target"], len(r), r[1]["bench_ms"], r[1]["vs_best"], r[2]["bench_ms"], r[2]["status"],
      r[3]["gate_scope"], [ (p["line"], p["message"].split(":")[0]) for p in d["problems"] ])
' "$json")
t_is "--json numbers are numbers, missing ones null, problems with lines" "$got" \
	"chunk_gla 1.3x 4 0.857 0.12 None revert subset [(14, 'row skipped'), (15, \"Bench cell 'fast' is not a time in ms (write e.g. 0.973, or — when there is none)\")]"

# A hand-written log: other column names and order, no vs best, CRLF.
printf '# my notes\r\n\r\n| # | Status | Median (ms) | What | Gate |\r\n|--|--|--|--|--|\r\n| 0 | BASELINE | 2.0 | start | ok |\r\n| 1 | kept | 1.5 | unroll | passed |\r\n' >"$T_TMP/hand.md"
out=$("$OPTLOOP" import "$T_TMP/hand.md"); rc=$?
t_is "hand-written log imports cleanly" "$rc" 0
t_like "vs best is computed when the column is missing" "$out" '^ +1  pass +1\.500 +\+25% +keep +unroll$'
t_unlike "no problems for a clean hand-written log" "$out" 'problem'

# Bytes that are not UTF-8 still give valid JSON (replaced by U+FFFD).
printf '| Iter | Direction |\n|---|---|\n| 0 | bad \377 byte "quoted" \\ tab\there |\n' >"$T_TMP/bytes.md"
json=$("$OPTLOOP" import --json "$T_TMP/bytes.md")
got=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["rows"][0]["direction"])' "$json" 2>&1)
t_is "invalid UTF-8 and quotes survive as valid JSON" "$got" "$(printf 'bad \357\277\275 byte "quoted" \\ tab\there')"

# A pipe works as well as a file.
out=$(cat "$log" | "$OPTLOOP" import /dev/stdin)
t_like "reads from a pipe" "$out" 'op chunk_gla, 4 rows'

printf '# Nothing here\n\nJust prose.\n' >"$T_TMP/none.md"
t_exit "no summary table exits 1" 1 "$OPTLOOP" import "$T_TMP/none.md"
err=$("$OPTLOOP" import "$T_TMP/none.md" 2>&1)
t_like "and says what was expected" "$err" 'no summary table found'
t_exit "a missing file is a usage error (exit 2)" 2 "$OPTLOOP" import "$T_TMP/absent.md"
t_exit "no file is a usage error" 2 "$OPTLOOP" import
t_exit "unknown option is a usage error" 2 "$OPTLOOP" import --frobnicate "$log"

# a Notes column (per-shape numbers, line breaks as <br>) survives import
cat >"$T_TMP/notes.md" <<'MD'
# Optimization log — chunk_gla

| Iter | Direction | Gate | Bench (ms) | vs best | Status | Notes |
|---|---|---|---|---|---|---|
| 0 | baseline | pass | 0.973 | — | base | B8-T8192: 1.041<br>B16-T4096: 1.934 |
| 1 | BT 64 | pass | 0.915 | +6% | keep | B8-T8192: 0.978 (+6.0%)<br>B16-T4096: 1.807 |
MD
out=$("$OPTLOOP" import "$T_TMP/notes.md"); rc=$?
t_is "a log with a Notes column imports" "$rc" 0
t_like "the notes are shown under their row" "$out" '^ +notes: B8-T8192: 0.978 \(\+6.0%\)$'
t_like "each line of the cell on its own line" "$out" '^ +notes: B16-T4096: 1.807$'
t_unlike "no problem is reported for the column" "$out" 'problem'
j=$("$OPTLOOP" import --json "$T_TMP/notes.md")
t_like "JSON carries the notes" "$j" '"notes": "B8-T8192: 1.041\\nB16-T4096: 1.934"'
t_done
