#!/usr/bin/env bash
# A noise run from the workbench (tmux, demo project): b measures the best
# five times in one session in the live pane, with the best checked out for
# the runs and the candidate back afterwards, recorded as optloop noise
# records it; x cancels it (the cut run kept as incomplete, no spread, the
# candidate back); q during a noise asks first, and quitting puts the
# candidate back too.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tui_lib.sh"
. "$(dirname "$0")/confirm_lib.sh"

confirm_bench
# each benchmark run sleeps as long as bench-sleep says (1 s by default)
python3 - "$T_TMP/bench" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
assert "\nsleep 1\n" in s
s = s.replace("\nsleep 1\n", '\nsleep "$(cat "$(dirname "$0")/bench-sleep" 2>/dev/null || echo 1)"\n', 1)
open(p, "w").write(s)
PY
confirm_setup "$T_TMP/bench --op chunk_linear_attn"
cand=$(sha1sum "$kernel")
runs() { sqlite3 "$db" "SELECT count(*) FROM runs WHERE kind = 'noise' $1"; }

tui_start 120 34 LANG=C.UTF-8 -- "$OPTLOOP" tui
t_screen "the workbench opens on the edited kernel" 'iter 1 · EDITING'
tui_keys '?'
t_screen "help lists the noise key from the action table" 'b +noise run: the best measured 5 times'
tui_keys Escape
tui_keys b
t_screen "b starts the noise run" 'noise started: the best \(iteration 0\) 5 times in one session \(x cancels'
t_screen "the status line counts its runs" 'iter 1 · EDITING · noise run [1-5]/5 of the best \(x cancels\)'
t_screen "each run's output is in the live pane" '--- noise run [1-5]/5 \(noise\): the best kernel is in the work tree' 30
t_unlike "the best is in the work tree for the runs" "$(sha1sum "$kernel")" "^${cand%% *}"
t_screen "the live pane ends with the spread" \
	'noise: the best \(iteration 0\) measured 5 times · spread up to [0-9.]+% over 3 shapes' 90
t_screen "the message line names the session" 'noise of the best measured in session [0-9]+: 5 runs \(b measures again\)'
t_is "the kernel file is the candidate again" "$(sha1sum "$kernel")" "$cand"
t_is "five noise runs are recorded" "$(runs '')" 5
t_is "in one session, each run in the role optloop noise gives it" \
	"$(sqlite3 "$db" "SELECT count(DISTINCT s.session) || '|' || group_concat(DISTINCT s.role) FROM stats_runs s JOIN runs r ON r.id = s.run_id WHERE r.kind = 'noise'")" \
	"1|noise"
t_is "the session is in the event log" "$(sqlite3 "$db" "SELECT count(*) FROM events WHERE kind = 'noise'")" 1
t_is "no swap of the work tree is left open" \
	"$(sqlite3 "$db" "SELECT count(*) FROM tree_intents WHERE done = 0")|$(git for-each-ref refs/optloop/swap | wc -l)" "0|0"
t_screen "the status line is back at the due step" 'iter 1 · EDITING · step 2/3: verify the change'

# x cancels a noise run: the run going stops, no spread is recorded.
echo 30 >"$T_TMP/bench-sleep"
tui_keys b
t_screen "a second noise run starts" 'noise run 1/5 \(noise\)' 30
t_screen "its benchmark is going" 'Warming up 3 shape' 30
t_unlike "the best is in the work tree for its run" "$(sha1sum "$kernel")" "^${cand%% *}"
tui_keys v
t_screen "verify is refused while the noise runs" 'verify refused: a noise run is already going \(x cancels it\)'
tui_keys x
t_screen "x cancels the noise run" 'cancelling the noise run|noise cancelled'
t_screen "the message line says no spread was recorded" \
	'noise cancelled after 0 of 5 runs: no spread recorded; the kernel is back \(b measures again\)' 30
t_screen "the live pane says it" 'noise cancelled: no spread recorded'
t_is "the kernel file is the candidate again" "$(sha1sum "$kernel")" "$cand"
t_is "the cut run is kept, as cancelled and incomplete" "$(runs "AND cancelled = 1 AND gate = 4")" 1
t_is "no second session is in the event log" "$(sqlite3 "$db" "SELECT count(*) FROM events WHERE kind = 'noise'")" 1
t_is "no swap is left open" "$(sqlite3 "$db" "SELECT count(*) FROM tree_intents WHERE done = 0")" 0

# q during a noise run asks, a second q cancels it and quits.
tui_keys b
t_screen "a third noise run starts" 'noise run 1/5 \(noise\)' 30
tui_keys q
t_screen "q during the noise asks first" 'a noise run is going: press q again to cancel it and quit'
tui_keys q
t_is "quitting with a run going exits 4" "$(tui_exit_status 60)" "4"
tui_stop
t_is "the kernel file is the candidate after quitting" "$(sha1sum "$kernel")" "$cand"
t_is "the run cut by quitting is kept as cancelled" "$(runs "AND cancelled = 1")" 2
t_is "no swap is left open after quitting" \
	"$(sqlite3 "$db" "SELECT count(*) FROM tree_intents WHERE done = 0")|$(git for-each-ref refs/optloop/swap | wc -l)" "0|0"
rm -f "$T_TMP/bench-sleep"
t_is "the CLI's noise runs after it" "$("$OPTLOOP" noise --runs 2 --json | jget runs)" 2

tui_check_stderr
t_done
