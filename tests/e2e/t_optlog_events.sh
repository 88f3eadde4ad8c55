#!/usr/bin/env bash
# Re-assessments and stops reach OPT_LOG.md: on the demo project, after a
# stall the re-assessment, and later each stop, is listed under the table
# (one line each, in the order of the rows), a row logged after it goes
# into the table above them, a person's edits (a Direction, a section
# after the table) survive every write, the file reads back with no
# problem and no extra row (import, view), and a file an older optloop
# wrote without the section gets it on the next write, edits kept.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/guards_lib.sh"
d="$T_TMP/demo"
demo_ws "$d"
cd "$d" || exit 1
ws=profile/chunk_linear_attn-opt
log=$ws/OPT_LOG.md
iter() { # iter CHUNK STATUS AXIS: one whole iteration
	set_chunk "$1"
	"$OPTLOOP" verify >/dev/null 2>&1
	"$OPTLOOP" log --direction "chunk size $1" --status "$2" --axis "$3" >/dev/null &&
		"$OPTLOOP" commit >/dev/null
}
# line LITERAL: the number of the first line of OPT_LOG.md that starts so
line() { grep -n -F -- "$1" "$log" | head -n 1 | cut -d: -f1; }
heading='### Re-assessments and stops'

"$OPTLOOP" verify >/dev/null 2>&1
"$OPTLOOP" log --direction baseline >/dev/null && "$OPTLOOP" commit >/dev/null
iter 16 revert "chunk size"
iter 128 drop "chunk size"
iter 8 drop "loop order"
t_is "three rows without a win: stalled" "$(state)" stalled
sqlite3 $ws/optloop.db "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
cp $ws/optloop.db "$T_TMP/stalled.db" # a copy from before the re-assessment
t_unlike "nothing listed before a re-assessment" "$(cat $log)" 'Re-assessments'

# a person's edits: a Direction, and a section after the table
sed -i 's/^| 2 | chunk size 128 |/| 2 | chunk size 128 (spills) |/' $log
printf '\n## Notes\n\nthe L1 hit rate is the question\n' >>$log

perf_report "intra-chunk dot products" >$ws/trace/perf-after-stall.txt
t_ok "reassess" "$OPTLOOP" reassess --profile $ws/trace/perf-after-stall.txt \
	--axes "chunk size, loop order" --techniques "register blocking" \
	--next "block the state update 4x4"
t_like "the re-assessment is listed under the table" "$(cat $log)" \
	'^- After iteration 3: \*\*re-assessed\*\*; axes tried: chunk size, loop order; next direction: block the state update 4x4$'
t_is "  under its heading, right below the last row" \
	"$(($(line '| 3 | chunk size 8 |') + 2))" "$(line "$heading")"
t_like "the edited Direction survives" "$(cat $log)" '^\| 2 \| chunk size 128 \(spills\) \|'
t_like "the section after the table survives" "$(cat $log)" 'the L1 hit rate is the question'
t_ok "  below the re-assessments" test "$(line '## Notes')" -gt "$(line '- After iteration 3')"

iter 4 revert "vector width"
t_ok "a row logged after it goes into the table" test "$(line '| 4 | chunk size 4 |')" -lt "$(line "$heading")"
t_is "  the table's last row, right above the heading" \
	"$(($(line '| 4 | chunk size 4 |') + 2))" "$(line "$heading")"
t_like "  the re-assessment still listed" "$(cat $log)" '^- After iteration 3: \*\*re-assessed\*\*'

t_ok "stop for directions" "$OPTLOOP" stop --reason directions
t_ok "stop at a floor" "$OPTLOOP" stop --reason floor --bound "memory bandwidth: 11.2 of 12.8 GB/s"
t_is "the stops are listed after the re-assessment, in order" \
	"$(sed -n "/^$heading\$/,/^## /p" $log | grep '^- ')" \
	"- After iteration 3: **re-assessed**; axes tried: chunk size, loop order; next direction: block the state update 4x4
- After iteration 4: **stopped**, three or more directions tried
- After iteration 4: **stopped**, at a floor: memory bandwidth: 11.2 of 12.8 GB/s"
t_like "the edits survive the stops" "$(cat $log)" '^\| 2 \| chunk size 128 \(spills\) \|'
t_like "  and the notes" "$(cat $log)" 'the L1 hit rate is the question'

# the file reads back: five rows, the events, no problem
j=$("$OPTLOOP" import --json --strict $log); rc=$?
t_is "import --strict reads it without a problem" "$rc" 0
t_is "  five rows, none of them a listed event" \
	"$(printf '%s' "$j" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d["rows"]), [r["iter"] for r in d["rows"]])')" \
	"5 [0, 1, 2, 3, 4]"
t_is "  the events read back" \
	"$(printf '%s' "$j" | python3 -c 'import json,sys; d=json.load(sys.stdin); print([(e["after_iter"], e["kind"], e.get("reason") or e.get("next")) for e in d["events"]])')" \
	"[(3, 'reassess', 'block the state update 4x4'), (4, 'stop', 'directions'), (4, 'stop', 'floor')]"
t_like "import's text lists them" "$("$OPTLOOP" import $log)" \
	'after iteration 4: stopped \(floor\): memory bandwidth: 11.2 of 12.8 GB/s'
t_is "status names no problem with the file" "$("$OPTLOOP" status --json | jget problems)" null

# ---- a database replaced by an older copy: repair --rebuild takes the
# row and the re-assessment and stops back from the file ----------------------
cp $log "$T_TMP/OPT_LOG.saved"
rm -f $ws/optloop.db-wal $ws/optloop.db-shm
cp "$T_TMP/stalled.db" $ws/optloop.db
t_like "status says a row was lost" "$("$OPTLOOP" status 2>&1)" 'holds 1 row the database does not'
out=$("$OPTLOOP" repair --rebuild 2>&1)
t_like "repair --rebuild takes row 4 back" "$out" 'row 4 taken back from OPT_LOG.md'
t_like "  and the re-assessment" "$out" 're-assessment after iteration 3 taken back from OPT_LOG.md'
t_is "  and both stops" "$(printf '%s\n' "$out" | grep -c 'stop after iteration 4 taken back')" 2
t_is "the database lists them as the file does" \
	"$(sqlite3 $ws/optloop.db "SELECT after_iter, next, axes FROM guards_reassess; SELECT iter, reason, coalesce(bound, '-') FROM guards_stop ORDER BY id")" \
	"3|block the state update 4x4|chunk size, loop order
4|directions|-
4|floor|memory bandwidth: 11.2 of 12.8 GB/s"
# (the Env line names the newest run the database holds: row 4 has none now)
t_is "OPT_LOG.md is unchanged but for the Env line" "$(grep -v '^Env:' $log)" "$(grep -v '^Env:' "$T_TMP/OPT_LOG.saved")"
t_like "the loop is stopped again: verify is refused, naming the last stop" \
	"$("$OPTLOOP" verify 2>&1)" 'verify refused: the loop was stopped \(reason: floor; bound: memory bandwidth: 11.2 of 12.8 GB/s\)'
t_is "  and no problem" "$("$OPTLOOP" status --json | jget problems)" null
t_exit "rebuilding again has nothing to take back (exit 3)" 3 "$OPTLOOP" repair --rebuild
# an older copy that has the re-assessment already, its next direction on
# two lines (the file shows a line break as a space): the same event, so
# only the row and the stops come back
sqlite3 "$T_TMP/stalled.db" "INSERT INTO guards_reassess(after_iter, t, axes, next)
	VALUES (3, 0, 'chunk size, loop order', 'block the state' || char(10) || 'update 4x4')"
rm -f $ws/optloop.db-wal $ws/optloop.db-shm
cp "$T_TMP/stalled.db" $ws/optloop.db
out=$("$OPTLOOP" repair --rebuild 2>&1)
t_like "an older copy with the re-assessment: row 4 back" "$out" 'row 4 taken back from OPT_LOG.md'
t_unlike "  the re-assessment it had is not taken back again" "$out" 're-assessment after iteration 3'
t_is "  one re-assessment and two stops in the database" \
	"$(sqlite3 $ws/optloop.db "SELECT (SELECT count(*) FROM guards_reassess) || ' ' || (SELECT count(*) FROM guards_stop)")" "1 2"

# ---- a file an older optloop wrote: no section, edits of a person -----------
# (the section taken out, and the record of the last write dropped, as an
# optloop that kept no such record would leave it)
sed -i "/^$heading\$/,/^- After iteration 4: \*\*stopped\*\*, at a floor/d" $log
sed -i '/^| 4 | chunk size 4 |/{n;/^$/d}' $log
sqlite3 $ws/optloop.db "DELETE FROM meta WHERE key IN ('optlog_written', 'optlog_merged')"
t_unlike "the older file lists nothing" "$(cat $log)" 'After iteration'
before=$(cat $log)
out=$("$OPTLOOP" status 2>&1)
t_like "status says the file lacks them" "$out" 'the re-assessments and stops are not in the file'
t_is "  and leaves the file as it is" "$(cat $log)" "$before"
t_ok "repair writes the file" "$OPTLOOP" repair
t_is "the section is back, in order" \
	"$(sed -n "/^$heading\$/,/^## /p" $log | grep -c '^- After iteration')" 3
t_like "the edited Direction is kept" "$(cat $log)" '^\| 2 \| chunk size 128 \(spills\) \|'
t_like "the notes are kept" "$(cat $log)" 'the L1 hit rate is the question'
t_is "status is clean again" "$("$OPTLOOP" status --json | jget problems)" null

# the same where nobody edited the file: no word about it, and the next
# write renders it with the section
sed -i 's/^| 2 | chunk size 128 (spills) |/| 2 | chunk size 128 |/; /^## Notes$/,$d' $log
python3 -c 'import sys; p=sys.argv[1]; t=open(p).read(); open(p,"w").write(t.rstrip("\n")+"\n")' $log
"$OPTLOOP" repair >/dev/null
t_is "without the edits, the file is optloop's rendering" "$(grep -c 'spills\|Notes' $log)" 0
sed -i "/^$heading\$/,\$d" $log
python3 -c 'import sys; p=sys.argv[1]; t=open(p).read(); open(p,"w").write(t.rstrip("\n")+"\n")' $log
sqlite3 $ws/optloop.db "DELETE FROM meta WHERE key IN ('optlog_written', 'optlog_merged')"
t_unlike "an unedited older file is no problem" "$("$OPTLOOP" status 2>&1)" 'edited by hand|differs from the database|not in the file'
"$OPTLOOP" repair >/dev/null
t_is "  the next write lists the re-assessment and the stops" "$(grep -c '^- After iteration' $log)" 3
t_is "status is clean" "$("$OPTLOOP" status --json | jget problems)" null
t_done
