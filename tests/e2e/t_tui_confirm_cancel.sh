#!/usr/bin/env bash
# Cancelling a confirm run in the workbench (tmux, demo project): x stops
# the run going while the best is checked out, the candidate comes back, the
# confirm is closed without a verdict and nothing is promoted; q during a
# confirm asks first, and quitting then also puts the candidate back.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tui_lib.sh"
. "$(dirname "$0")/confirm_lib.sh"

confirm_setup
cand=$(sha1sum "$kernel")

# Long benchmark runs: every run is still going when the keys come.
tui_start 120 34 LANG=C.UTF-8 DEMO_BENCH_WARMUP_MS=1 DEMO_BENCH_REP_MS=3000 -- "$OPTLOOP" tui
t_screen "the workbench opens on the demo" 'iter 1 · EDITING'
tui_keys v
t_screen "verify runs and finishes" 'finished .* gate pass' 120
tui_keys C
t_screen "the confirm's first run measures the best" 'confirm run 1/[0-9]+ \(best\)' 30
t_screen "its benchmark is going" 'Warming up|Benchmarking|Machine:' 30
t_unlike "the best is in the work tree for its run" "$(sha1sum "$kernel")" "^${cand%% *}"
tui_keys x
t_screen "x cancels the confirm" 'cancelling the confirm run|confirm of iteration 1 cancelled'
t_screen "the live pane says it ended without a verdict" 'cancelled after 1 run: no verdict, not promoted' 30
t_screen "the message line says the candidate is back" \
	'confirm of iteration 1 cancelled after 1 run: no verdict, not promoted; the candidate is back in the work tree'
t_is "the kernel file is the candidate again" "$(sha1sum "$kernel")" "$cand"
t_screen "the best pane shows the stopped confirm and offers it again" \
	'confirm stopped: no verdict \(C runs it again\)'
t_screen "the status line is back at the due step" 'iter 1 · MEASURED · step 3/3'
t_is "the confirm is closed without a verdict, not promoted" \
	"$(sqlite3 "$db" "SELECT done, promoted, coalesce(verdict, 'none') FROM stats_confirms")" "1|0|none"
t_is "the cut run is kept, as cancelled and incomplete" \
	"$(sqlite3 "$db" "SELECT count(*) FROM runs WHERE kind = 'confirm' AND cancelled = 1")" 1
t_is "the cancel is in the event log" \
	"$(sqlite3 "$db" "SELECT count(*) FROM events WHERE kind = 'confirm.cancelled'")" 1

# q during a confirm asks, a second q cancels and quits.
tui_keys C
t_screen "a second confirm starts" 'confirm run 1/[0-9]+ \(best\)' 30
tui_keys q
t_screen "q during the confirm asks first" 'a confirm run is going: press q again to cancel it and quit'
tui_keys q
t_is "quitting with a run going exits 4" "$(tui_exit_status 60)" "4"
tui_stop
t_is "the kernel file is the candidate after quitting" "$(sha1sum "$kernel")" "$cand"
t_is "no confirm is left unfinished" "$(sqlite3 "$db" "SELECT count(*) FROM stats_confirms WHERE done = 0")" 0
t_is "the workspace is still measured" \
	"$("$OPTLOOP" status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])')" measured

tui_check_stderr
t_done
