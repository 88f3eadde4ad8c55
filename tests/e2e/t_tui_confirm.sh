#!/usr/bin/env bash
# The confirm run from the workbench, on the demo project in a real terminal
# (tmux): refused before a measurement with the reason; after a verify, C
# runs best and candidate in turns in the live pane ("confirm run 3/6
# (best)") with the best checked out for its runs; the verdict and the
# promotion land in the best pane and the status line, the candidate is back
# in the work tree, and the promoted iteration is logged as keep by keys.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tui_lib.sh"
. "$(dirname "$0")/confirm_lib.sh"

# The gate and the verify are the demo's own; the confirm's benchmark reads
# the kernel in the work tree (confirm_bench): a swap that did not happen
# shows as no win.
confirm_bench
confirm_setup "$T_TMP/bench --op chunk_linear_attn"
cand=$(sha1sum "$kernel")

tui_start 120 34 LANG=C.UTF-8 -- "$OPTLOOP" tui
t_screen "the workbench opens on the demo" 'iter 1 · EDITING'
tui_keys C
t_screen "confirm before a measurement is refused with the reason" \
	'confirm refused: iteration 1 is EDITING; a confirm measures a verified candidate'
tui_keys '?'
t_screen "help lists the confirm key from the action table" 'C +confirm run: best and candidate interleaved'
tui_keys Escape

tui_keys v
t_screen "verify runs and finishes" 'finished .* gate pass' 90
want=$("$OPTLOOP" status --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["verdict"])')
case $want in
fast | ambiguous)
	t_screen "the best pane offers the confirm key" 'not confirmed yet: press C \(optloop confirm\)'
	t_screen "and the status line names it" 'step 3/3: no win yet: confirm \(C\) or log revert/drop \(l\), then commit \(c\)'
	;;
*) t_no_screen "no confirm is offered for a $want verdict" 'not confirmed yet' ;;
esac

tui_keys C
t_screen "C starts the confirm" 'confirm started for iteration 1'
t_screen "the live pane names the run going" 'Confirm · iter 1 · run [0-9]+/[0-9]+ \((best|cand)\)'
t_screen "the status line counts the runs" 'iter 1 · MEASURED · confirm run [0-9]+/[0-9]+ \((best|cand)\) of best and candidate \(x cancels\)'
t_screen "the candidate's turn comes" 'confirm run [0-9]+/[0-9]+ \(cand\)' 60
t_screen "each run's output is in the live pane" '--- confirm run 2/[0-9]+ \(cand\): the candidate kernel is in the work tree' 60
t_screen "with the progress bar" '\[[#█·.]+\] +[0-9]+%' 30
t_screen "after each pair, the judgment so far in the live pane (the confirm's own words)" \
	'--- confirm: after pair 1: (fast|same|slow|ambiguous)' 60
tui_keys v
t_screen "verify is refused while the confirm runs" 'verify refused: a confirm run is already going \(x cancels it\)'
t_screen "the confirm ends with its verdict in the live pane" \
	'confirm fast [0-9.]+x over [0-9]+ runs · promoted' 180
t_screen "the message line says the next step" 'iteration 1: confirm fast .* next: log as keep \(l\), then commit \(c\)'
t_screen "the best pane shows the confirm's verdict" 'confirm fast, promoted'
t_screen "the status line says what comes next" 'iter 1 · MEASURED · step 3/3: log the row as keep \(l\), then commit \(c\)'
t_is "the candidate is back in the work tree" "$(sha1sum "$kernel")" "$cand"
t_is "the store has the promoted confirm" \
	"$(sqlite3 "$db" "SELECT done, promoted, verdict FROM stats_confirms ORDER BY id DESC LIMIT 1")" "1|1|fast"
# one pair at a time until the sequential test decides: whole pairs, in turns
t_like "best and candidate ran in turns" \
	"$(sqlite3 "$db" "SELECT group_concat(role, ' ') FROM (SELECT role FROM stats_runs WHERE role IN ('best','cand') ORDER BY run_id)")" \
	'^best cand( best cand)*$'

tui_keys l
tui_wait 'Log the iteration'
tui_keys "three repetitions instead of four" Enter Enter Enter Enter
t_screen "iteration 1 is logged as keep" 'logged iteration 1 \(keep\)'
tui_keys c
t_screen "and committed" 'committed iteration 1 as'
tui_keys q
t_is "quit" "$(tui_exit_status)" "0"
tui_stop
t_is "the confirmed keep is the best" \
	"$("$OPTLOOP" status --json | python3 -c 'import json,sys; b=json.load(sys.stdin)["best"]; print(b["iter"], b["unconfirmed"])')" \
	"1 False"

tui_check_stderr
t_done
