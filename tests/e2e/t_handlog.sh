#!/usr/bin/env bash
# Hand-edited OPT_LOG.md files: every row of the summary table is read or
# named as a problem (a stray line between rows does not end the table
# silently), and a file a person edited is never silently replaced: the
# read-only commands leave it byte for byte and say what differs, a writing
# command keeps the extra columns, the sections and the edited cells.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tui_lib.sh"

# --- 1. stray lines between table rows --------------------------------------
log="$T_TMP/OPT_LOG.md"
cat >"$log" <<'MD'
# Optimization log — chunk_gla

Env: NVIDIA H200 | CUDA 12.4 | PyTorch 2.5.1 | Triton 3.1.0 | opt-a[1a2b3c4]
Baseline (main): 1.000 ms
Target: 1.3x

## Summary

| Iter | Direction (one line) | Gate | Bench (median ms) | vs best | Status |
|---|---|---|---|---|---|
| 0 | baseline | pass | 1.000 | — | base |
| 1 | tile 64 | pass | 0.900 | +10% | keep |

| 2 | unroll two | pass | 0.950 | -6% | revert |
<!-- tried again below -->
| 3 | mask early | FAIL | — | — | drop |
retried after a reboot
| 4 | swizzle | pass | 0.800 | +11% | keep |

## Notes

Plain text, and a table of its own:

| Shape | ms |
|---|---|
| 1 | 0.8 |

### Later

| 5 | left below a heading | pass | 0.790 | +1% | keep |
MD

out=$("$OPTLOOP" import "$log"); rc=$?
t_is "import of a log with stray lines between rows exits 0" "$rc" 0
t_like "every row before and after the stray lines is read" "$out" 'op chunk_gla, 5 rows'
t_like "  row 2, after a blank line" "$out" '^ +2  pass +0\.950 +-6% +revert +unroll two$'
t_like "  row 3, after a comment line" "$out" '^ +3  FAIL +— +— +drop +mask early$'
t_like "  row 4, after a line of text" "$out" '^ +4  pass +0\.800 +\+11% +keep +swizzle$'
t_like "the blank line is named with its line number" "$out" 'OPT_LOG.md:13: a blank line inside the summary table'
t_like "the comment line is named" "$out" 'OPT_LOG.md:15: .*not a table row.*inside the summary table'
t_like "the line of text is named" "$out" 'OPT_LOG.md:17: .*not a table row.*inside the summary table'
t_like "a row left below a heading is named, not dropped silently" "$out" \
	"OPT_LOG.md:30: .*row of the summary table \(iteration 5\).*not read"
t_unlike "the other section's own table is not a problem" "$out" 'OPT_LOG.md:2[67]:'
json=$("$OPTLOOP" import --json "$log")
t_is "--json: the five rows in order" \
	"$(python3 -c 'import json,sys; print([r["iter"] for r in json.loads(sys.argv[1])["rows"]])' "$json")" \
	"[0, 1, 2, 3, 4]"
t_is "--json: one problem per stray line and one for the row apart" \
	"$(python3 -c 'import json,sys; print([p["line"] for p in json.loads(sys.argv[1])["problems"]])' "$json")" \
	"[13, 15, 17, 30]"

# view: the same rows in the timeline, the same problems behind p
tui_start 120 30 LANG=C.UTF-8 -- "$OPTLOOP" view --no-follow "$log"
t_screen "view lists the row after the stray lines" '4 swizzle +pass'
t_screen "view says it read five rows" 'read-only view of .* 5 rows'
t_screen "view announces the problems" '4 problems \(p\)'
tui_keys p
t_screen "p names the blank line" 'line 13: a blank line inside the summary table'
t_screen "p names the row left apart" 'line 30: .*iteration 5'
tui_keys Escape q
t_is "view quits cleanly" "$(tui_exit_status 10)" 0
tui_stop

# --- 2. a hand-edited OPT_LOG.md in a workspace ------------------------------
mk="$OPTLOOP_ROOT/tests/fixtures/make_tiny_project.sh"
d="$T_TMP/tiny"
"$mk" "$d" >/dev/null
cd "$d" || exit 1
"$OPTLOOP" init --op tiny --kernel kernel --test-file tests/test_compute.sh --naive ref/naive.sh \
	--verify ./verify --target 2x --languages sh --promotion "full gate" >/dev/null
"$OPTLOOP" verify >/dev/null 2>&1 && "$OPTLOOP" log --direction baseline --commit >/dev/null ||
	t_fail "the baseline is logged and committed"
sed -i 's/\$(( \$1 \* 2 ))/$(( $1 << 1 ))/' kernel/compute.sh
"$OPTLOOP" verify >/dev/null 2>&1
explain_noise
"$OPTLOOP" log --direction "shift instead of multiply" --status keep --unconfirmed "one run only" \
	--commit >/dev/null || t_fail "iteration 1 is logged and committed"
f=profile/tiny-opt/OPT_LOG.md
bench0=$(grep -E '^\| 0 \|' $f | cut -d'|' -f5 | tr -d ' ')

# The edit: a Notes column (per-shape notes joined by <br>), a section
# under the table, row 1's Direction reworded, and row 0's Bench typed over.
python3 - "$f" <<'PYEDIT'
import sys
p = sys.argv[1]
out = []
for line in open(p, encoding="utf-8").read().split("\n"):
    if line.startswith("| Iter |"):
        line += " Notes |"
    elif line.startswith("|---|"):
        line += "---|"
    elif line.startswith("| 0 |"):
        cells = line.split(" | ")
        cells[3] = "9.999"
        line = " | ".join(cells) + " T64: warm<br>T128: cold |"
    elif line.startswith("| 1 |"):
        line = line.replace("shift instead of multiply", "shift instead of multiply (one op fewer)")
        line += " T64: 2 ops<br>T128: 1 op |"
    out.append(line)
text = "\n".join(out).rstrip("\n") + "\n\n### Iter 1 analysis\n\nThe shift saves a multiply on every element.\n"
open(p, "w", encoding="utf-8").write(text)
PYEDIT
cp $f "$T_TMP/edited.md"

out=$("$OPTLOOP" status 2>&1); rc=$?
t_is "status on a hand-edited OPT_LOG.md exits 0" "$rc" 0
t_ok "status leaves the edited file byte for byte" cmp -s $f "$T_TMP/edited.md"
t_like "status names what differs: the extra column" "$out" 'OPT_LOG.md .*an extra column Notes'
t_like "  the section after the table" "$out" 'OPT_LOG.md .*a section after the table'
t_like "  the edited Direction" "$out" "OPT_LOG.md .*row 1's Direction"
t_like "  the Bench typed over, and whose figure counts" "$out" \
	"OPT_LOG.md .*row 0's Bench reads 9.999 where the database has $bench0"
t_like "  and what to do" "$out" 'OPT_LOG.md .*next optloop log.*optloop repair'
j=$("$OPTLOOP" status --json 2>&1)
t_like "status --json carries the same problem line" "$(printf '%s' "$j" | jget problems)" \
	'OPT_LOG.md .*an extra column Notes'
# a reader while a writer is at work (its lock held) leaves the file to the
# writer: a log's row is in the database before it is in the file
out=$(flock "$(dirname $f)/optloop.db.lock" "$OPTLOOP" status 2>&1)
t_unlike "a reader while a writer works says nothing of the file" "$out" 'OPT_LOG.md'
t_ok "  and leaves it byte for byte" cmp -s $f "$T_TMP/edited.md"
for c in "report" "export --json" "chart --json" "status --json"; do
	$OPTLOOP $c >/dev/null 2>&1
	t_ok "after $c the edited file is byte for byte the same" cmp -s $f "$T_TMP/edited.md"
done

# One more iteration, logged and committed: the edit survives the write.
sed -i 's/<< 1/+ $1/' kernel/compute.sh
"$OPTLOOP" verify >/dev/null 2>&1
out=$("$OPTLOOP" log --direction "add instead of shift" --status revert --commit 2>&1); rc=$?
t_is "log --commit on a hand-edited OPT_LOG.md" "$rc" 0
t_like "log says what of the edit it kept" "$out" 'OPT_LOG.md: kept .*an extra column Notes'
t_like "the new row is there, with an empty Notes cell" "$(cat $f)" \
	'^\| 2 \| add instead of shift \| pass \| [0-9.]+ \| [-+0-9.%]+ \| revert \|  \|$'
t_like "the Notes column's header survives" "$(cat $f)" \
	'^\| Iter \| Direction \(one line\) \| Gate \| Bench \(median ms\) \| vs best \| Status \| Notes \|$'
t_like "row 0's notes survive, its Bench is the database's again" "$(cat $f)" \
	"^\| 0 \| baseline \| pass \| $bench0 \| — \| base \| T64: warm<br>T128: cold \|\$"
t_like "row 1's edited Direction and notes survive" "$(cat $f)" \
	'^\| 1 \| shift instead of multiply \(one op fewer\) \| pass \| .* \| keep \(unconfirmed\) \| T64: 2 ops<br>T128: 1 op \|$'
t_like "the section after the table survives, after the new row" \
	"$(sed -n '/^| 2 |/,$p' $f)" '### Iter 1 analysis'
t_like "  with its text" "$(cat $f)" 'The shift saves a multiply on every element\.'
t_is "the file has three rows" "$(grep -cE '^\| [0-9]+ \|' $f)" 3
t_is "the database has three rows" "$(sqlite3 profile/tiny-opt/optloop.db 'SELECT count(*) FROM iterations')" 3
t_like "the row is committed" "$(git log -3 --format=%B)" 'Optloop-Iter: 2' 
json=$("$OPTLOOP" import --json $f)
t_is "import still reads the per-shape notes" \
	"$(python3 -c 'import json,sys; r=json.loads(sys.argv[1])["rows"]; print(repr(r[0]["notes"]), repr(r[1]["notes"]), r[2]["notes"])' "$json")" \
	"'T64: warm\\nT128: cold' 'T64: 2 ops\\nT128: 1 op' None"
t_is "import reads the file without a problem" \
	"$(python3 -c 'import json,sys; print(len(json.loads(sys.argv[1])["problems"]))' "$json")" 0
out=$("$OPTLOOP" status 2>&1)
t_unlike "status is quiet about the file optloop merged" "$out" 'OPT_LOG.md'

# A file optloop cannot merge safely (a line between its rows): the next
# write keeps a copy and says where.
sed -i 's/^| 1 |/<!-- a note -->\n| 1 |/' $f
cp $f "$T_TMP/stray.md"
out=$("$OPTLOOP" status 2>&1)
t_ok "status leaves it alone too" cmp -s $f "$T_TMP/stray.md"
t_like "and says the next write keeps a copy" "$out" 'OPT_LOG.md .*cannot be merged.*a copy'
sed -i 's/<< 1/+ $1/' kernel/compute.sh
"$OPTLOOP" verify >/dev/null 2>&1
out=$("$OPTLOOP" log --direction "add again" --status revert --commit 2>&1); rc=$?
t_is "log --commit on a file it cannot merge" "$rc" 0
copy=$(ls profile/tiny-opt/ | grep '^OPT_LOG\.md\.orig-' | head -n 1)
t_like "a copy of the edited file is kept" "$copy" '^OPT_LOG\.md\.orig-'
t_ok "  byte for byte" cmp -s "profile/tiny-opt/$copy" "$T_TMP/stray.md"
t_like "log says so, naming the copy" "$out" "OPT_LOG.md .*kept as .*$copy"
t_is "the new file has every row" "$(grep -cE '^\| [0-9]+ \|' $f)" 4

# A file found current is not read again while its stat stays the same;
# an edit that keeps its size and puts its modification time back still
# moves its change time, and is seen.
out=$("$OPTLOOP" status 2>&1)
t_unlike "the file optloop wrote is current" "$out" 'OPT_LOG.md'
t_is "its stat is recorded" \
	"$(sqlite3 profile/tiny-opt/optloop.db "SELECT count(*) FROM meta WHERE key = 'optlog_stat'")" 1
m=$(stat -c %y $f)
size=$(stat -c %s $f)
sed -i 's/| add again |/| add AGAIN |/' $f
touch -d "$m" $f
t_is "an edit of the same size" "$(stat -c %s $f)" "$size"
t_is "  with the same modification time" "$(stat -c %y $f)" "$m"
out=$("$OPTLOOP" status 2>&1)
t_like "is still seen" "$out" "OPT_LOG.md .*row 3's Direction"

tui_check_stderr
t_done
