#!/usr/bin/env bash
# The workbench at 80x24, as a newcomer first sees it on the demo: the
# status line fits with its key, the verify output's result table keeps its
# ms column (condensed) and Left/Right scroll the lines as printed; the log
# wizard proposes what the evidence supports (revert for a slower run, drop
# for a failed gate) with the keys that pick each status on screen; r says
# when no re-assessment is due and does nothing else; ? has the legend;
# the best pane's noise figure is the one optloop status prints.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tui_lib.sh"
. "$(dirname "$0")/guards_lib.sh"

d="$T_TMP/demo"
demo_ws "$d"
cd "$d" || exit 1
ws=profile/chunk_linear_attn-opt

# The status line is the screen's 23rd row; it must end with the help and
# quit keys, the due step's key shown whole before them (tmux drops the
# trailing blank).
status_line() { tui_screen | sed -n 23p; }
wait_status() { # NAME REGEX
	local end=$(($(date +%s) + 30))
	while [ "$(date +%s)" -le "$end" ]; do
		status_line | grep -qE -- "$2" && { t_pass "$1"; return; }
		sleep 0.1
	done
	t_fail "$1" "status line never matched /$2/:" "$(status_line)"
}

tui_start 80 24 LANG=C.UTF-8 -- "$OPTLOOP" tui
wait_status "NEED_BASELINE: the step and its key fit, then help and quit" \
	'^ iter 0 · NEED_BASELINE · verify the unmodified kernel \(v\) +\? help · q quit$'

# ---- the live table ----------------------------------------------------------
tui_keys v
t_screen "the baseline run finishes" 'finished .*gate pass · bench [0-9.]+ ms' 60
scr=$(tui_screen)
t_like "the table's header is on screen, its ms column named" "$scr" \
	'│ *fwd +B +T +H +D +op +main\[[0-9a-f]+\]\(ms\) *│'
rows=$(printf '%s\n' "$scr" | grep -cE '│ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +chunk_linear_attn +[0-9]+\.[0-9]{3} *│')
t_is "every shape's row keeps its ms number whole" "$rows" 3
t_like "the border says the lines were condensed, and which key scrolls" "$scr" \
	'wide lines condensed · Right scrolls'
t_unlike "no row is cut at the pane's edge" "$scr" 'chunk_linear_attn +[0-9.]*…│'
wait_status "MEASURED: log as base, then commit, fits" \
	'^ iter 0 · MEASURED · log as base \(l\), then commit \(c\) +\? help · q quit$'
tui_keys Right
t_screen "Right shows the lines as printed, scrolled" 'from column [0-9]+ · Left/Right scroll'
t_screen "the raw row, its number at the edge" '│ +2 +512 +4 +64 +chunk_linear_attn {10,}[0-9]+\.[0-9]{3}│'
tui_keys Left
t_screen "Left goes back to the condensed table" 'wide lines condensed · Right scrolls'

tui_keys l
t_screen "the baseline's log wizard" 'Log the baseline'
tui_keys Enter Enter
t_screen "the baseline is logged" 'logged iteration 0 \(base\)'
wait_status "LOGGED: commit, fits" '^ iter 0 · LOGGED · .*commit .*\(c\) +\? help · q quit$'
tui_keys c
t_screen "and committed" 'committed iteration 0 as'
wait_status "READY: change the kernel, then verify, fits" \
	'^ iter 1 · READY · change the kernel, then verify \(v\).* +\? help · q quit$'

# ---- the noise figure: the best pane's and status's are one --------------------
tui_keys Escape
t_screen "the best pane shows the noise band" 'noise ±[0-9]+\.[0-9]%'
pane=$(tui_screen | grep -oE 'noise ±[0-9]+\.[0-9]%( \(assumed\))?' | head -1)
cli=$("$OPTLOOP" status | sed -n 's/^noise: *\(±[0-9.]*%\( (assumed)\)\?\) around the best.*/noise \1/p')
t_is "status prints the same figure in the same words" "$cli" "$pane"
jtext=$("$OPTLOOP" status --json | python3 -c 'import json,sys; print("noise " + json.load(sys.stdin)["noise"]["text"])')
t_is "and so does status --json" "$jtext" "$pane"

# ---- r when nothing is due ------------------------------------------------------
tui_keys r
t_screen "r says no re-assessment is due, with the stall count" \
	'^no re-assessment is due: stall 0/3 \(due after 3 rows in a row without a win\)'
t_unlike "and opens nothing" "$(tui_screen)" 'Record a stop|Stall re-assessment'
t_is "nothing changed" "$(state)" ready

# ---- a slower run: revert proposed ----------------------------------------------
set_chunk 512
tui_keys v
t_screen "the slower run finishes" 'finished .*gate pass · bench' 60
tui_keys l
t_screen "the log wizard opens" 'Log the iteration'
t_screen "it proposes revert, and why" 'proposed: revert · iteration 1.s verdict is slow'
t_screen "revert is preselected, keep is not" '\( \) \[k\]eep +\(\*\) \[r\]evert +\( \) \[d\]rop +\( \) \[f\]loor'
tui_keys "chunk 512" Tab
t_screen "the status field's help names the keys that pick" 'keys k r( d f)? *│'
t_screen "and Left/Right" '(d f )?pick, or Left/Right'
tui_keys d
t_screen "d picks drop" '\( \) \[k\]eep +\( \) \[r\]evert +\(\*\) \[d\]rop'
tui_keys r Enter Enter Enter Enter
t_screen "logged as revert" 'logged iteration 1 \(revert\)'
tui_keys c
t_screen "committed, the best kernel restored" 'committed iteration 1 as'

# ---- a failed gate: drop proposed ------------------------------------------------
sed -i 's/ot\[j\] += a \* vs\[j\];/ot[j] += 2 * a * vs[j];/' ops/linear_attn/chunk.c
tui_keys v
t_screen "the broken kernel fails its gate" 'finished .*gate (fail|FAIL)' 60
tui_keys l
t_screen "the log wizard proposes drop" 'proposed: drop · the gate is fail'
t_screen "drop is preselected, and neither keep nor floor is offered" '\( \) \[r\]evert +\(\*\) \[d\]rop *│'
t_no_screen "  no Bound to fill for a run that did not measure" 'Bound'
tui_keys Escape
t_screen "Esc saves nothing" 'cancelled: nothing was saved'

# ---- help: the legend ------------------------------------------------------------
tui_keys '?'
t_screen "help opens" 'Help \(Esc back\)'
tui_keys /
tui_keys "marks" Enter
t_screen "the legend lists the timeline's marks" 'timeline  ! +the gate failed, or the harness broke'
tui_keys /
tui_keys "states" Enter
t_screen "and the states" 'NEED_BASELINE +the contract is complete'
tui_keys /
tui_keys "the noise band" Enter
t_screen "and what the noise band is" 'band around the best.s bench: two sigma'
tui_keys Escape
tui_keys q
t_is "q quits" "$(tui_exit_status)" 0
tui_stop

tui_check_stderr
t_done
