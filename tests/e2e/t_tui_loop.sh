#!/usr/bin/env bash
# The workbench on a live workspace, driven by keys in a real terminal
# (tmux): the empty timeline naming the due step, the contract wizard, a
# whole baseline iteration and a second one (verify, log wizard, commit),
# refusals in the message line, a verify child that prints escape sequences
# (the screen must not change), resizing and cancelling mid-run, and a
# terminal closed during a run (recorded as incomplete, nothing lost).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tui_lib.sh"

mk="$OPTLOOP_ROOT/tests/fixtures/make_tiny_project.sh"
if [ ! -x "$mk" ]; then
	t_skip "live workbench" "the tiny project fixture is not in this tree"
	t_done
	exit 0
fi
d="$T_TMP/tiny"
"$mk" "$d" >/dev/null
cd "$d" || exit 1
# A verify that starts with hostile output: clear screen, cursor moves, a
# window title, the alternate screen, colours and a C1 CSI.
cat >verify-esc <<'EOF'
#!/bin/sh
printf '\033[2J\033[H\033]0;pwned\007\033[31mRED\033[0m \033[?1049h\033[5;5Hmoved\033[?25l\n'
printf 'tab\there \302\23331m c1 \033]8;;http://x\033\\link\033]8;;\033\\\n'
exec ./verify "$@"
EOF
chmod +x verify-esc
git add verify-esc && git commit -qm "verify with escapes"
"$OPTLOOP" init --op tiny --kernel kernel --test-file tests/test_compute.sh --naive ref/naive.sh \
	--verify ./verify-esc >/dev/null 2>&1
t_ok "workspace created" test -d profile/tiny-opt

state() { "$OPTLOOP" status --json 2>/dev/null | sed -n 's/^  "state": "\(.*\)",$/\1/p'; }

# Not on a terminal: a clear refusal.
out=$("$OPTLOOP" tui </dev/null 2>&1)
t_is "tui without a terminal exits 2" "$?" "2"
t_like "and says why" "$out" 'needs a terminal'

# NO_CONTRACT: the timeline's empty state names the step optloop status
# names (the contract), never the baseline verify, at 80x24 and 120x40.
t_like "status: the contract is the next step" "$("$OPTLOOP" status --json | jget next)" \
	'^complete the task contract'
for size in "80 24" "120 40"; do
	tui_start $size LANG=C.UTF-8 -- "$OPTLOOP" tui
	t_screen "${size/ /x}: the empty timeline names the contract step and its key" \
		'│ no iterations yet: .*task contract.*\(r\) *│'
	scr=$(tui_screen)
	t_unlike "${size/ /x}: and no verify of the baseline anywhere" "$scr" 'unmodified kernel|\(v\)'
	t_like "${size/ /x}: the status line says the same step" "$(printf '%s\n' "$scr" | sed -n "$((${size#* } - 1))p")" \
		'NO_CONTRACT · .*task contract.*\(r\)'
	tui_stop
done

tui_start 120 34 LANG=C.UTF-8 -- "$OPTLOOP" tui
t_screen "status line shows NO_CONTRACT and the key" 'iter 0 · NO_CONTRACT · .*\(r\)'
tui_keys v
t_screen "verify is refused in the message line" '^verify refused: the task contract is incomplete'

# The contract wizard: Esc cancels without saving.
tui_keys r
t_screen "r opens the contract wizard" 'Task contract: fill the missing fields'
t_screen "one field a step" 'fill the missing fields · step 1/3'
t_screen "under the hint draft.md gives for it" '│Target +│'
t_screen "with its example" 'required: the shapes that matter and the speedup'
t_screen "wrapped under the field" 'wanted, e\.g\. B=8 T=4096 H=16 D=128'
tui_keys "half done" Escape
t_screen "Esc cancels the wizard" 'cancelled: nothing was saved'
t_unlike "nothing was written" "$(cat profile/tiny-opt/docs/draft.md)" 'half done'
tui_keys r
tui_wait 'Task contract: fill the missing fields'
tui_keys "N up to 50, 2x" Enter sh Enter "full gate, confirmed win" Enter
t_screen "the contract is saved" 'contract saved: 3 fields filled'
t_screen "status moves on to the baseline" 'NEED_BASELINE · step 2/3: verify the unmodified kernel .*\(v\)'
t_screen "and so does the empty timeline" '│ no iterations yet: .*verify the unmodified kernel.*\(v\) *│'
t_is "engine agrees" "$(state)" need_baseline

# Baseline: verify, with hostile output.
tui_keys v
t_screen "verify shows the live pane" 'Verify · iter 0'
t_screen "the run finishes with its verdict" 'finished .* gate pass · bench'
t_screen "the tail of the output is shown" '│  GATE PASSED\.'
t_screen "status says log is due, as base" 'MEASURED · step 3/3: log the row as base \(l\), then commit \(c\)'
# Scroll the live pane to its first lines.
tui_keys Tab Tab g
t_screen "the live pane scrolls to the top" '│RED moved'
scr=$(tui_screen)
t_like "top bar survived the child's clear-screen" "$(printf '%s' "$scr" | head -1)" '^ optloop · tiny'
t_like "escaped text shows as plain text, where it belongs" "$scr" '│RED moved +│'
t_like "tabs expanded, C1 CSI removed, hyperlink text kept" "$scr" '│tab     here  c1 link +│'
t_unlike "no title text leaked" "$scr" 'pwned'
t_unlike "window title unchanged" "$(tmux_ display-message -p '#{pane_title}')" 'pwned'

tui_keys c
t_screen "commit before log is refused, and says why" 'commit refused'
tui_keys l
t_screen "l opens the log wizard with gate and bench shown" 'iteration 0 · gate pass · bench'
tui_keys Enter Enter
t_screen "the baseline is logged" 'logged iteration 0 \(base\)'
t_screen "status says commit is due" 'LOGGED · step 3/3: commit the logged row \(c\)'
tui_keys c
t_screen "commit reports the sha" 'committed iteration 0 as [0-9a-f]{7}'
tui_keys Escape
t_screen "the timeline shows the baseline row" '\*   0 baseline +pass +[0-9.]+ +— base'
# The band follows the best on its line, or on the next when the bench has one
# digit more than fits (a loaded machine measures 14.173 ms, a quiet one 9.350).
t_screen "the chart shows the best" 'best [0-9.]+ ms @ iter 0'
t_like "and its noise band, beside it or on the line below" \
	"$(tui_screen | awk '/best [0-9.]+ ms @ iter 0/ { print; getline; print; exit }' | tr '\n' ' ')" \
	'best [0-9.]+ ms @ iter 0.*noise ±[0-9.]+%'
t_screen "READY: change the kernel next" 'iter 1 · READY · step 1/3: change the kernel, then verify \(v\)'
t_like "one commit for the iteration" "$(git log --oneline -1)" 'iter 0 base: baseline'

# Iteration 1: an edit (outside optloop), verify, log with a status, commit.
printf '# a comment\n' >>kernel/compute.sh
tui_keys l
t_screen "log before verify is refused with the step, in the engine's words" 'log refused: iteration 1 has not been measured yet'
tui_keys v
t_screen "second verify runs" 'Verify · iter 1'
t_screen "and finishes" 'finished .* gate pass'
tui_keys l
tui_wait 'Log the iteration'
tui_keys "add a comment" Down d
t_screen "the status choice follows the key" '\(\*\) \[d\]rop'
tui_keys Enter Enter Enter Enter
t_screen "iteration 1 is logged" 'logged iteration 1 \(drop\)'
tui_keys c
t_screen "and committed" 'committed iteration 1 as'
tui_keys Escape
t_screen "timeline has both rows" '   1 add a comment .* drop'
t_like "OPT_LOG.md has the row" "$(cat profile/tiny-opt/OPT_LOG.md)" '\| 1 \| add a comment \| pass \|'

# Details of a row: per-shape table, the run, the commit's diff.
tui_keys k Enter
t_screen "Enter opens the detail" 'Iteration 0 · base · baseline'
t_screen "detail shows the per-shape table" 'fwd B=1 T=64 H=1 D=16'
t_screen "detail shows the environment" 'Environment: tiny \| CPU sh 1'
t_screen "missing numbers show as a dash, not nan" 'fwd B=1 T=64 H=1 D=16 +— +[0-9.]+ +—'
t_unlike "no nan anywhere" "$(tui_screen)" 'nan'
tui_keys Escape j Enter
t_screen "detail of a row shows its run" 'Run: ./verify-esc · exit 0'
tui_keys G
t_screen "detail of a committed change shows its diff at the end" '^│\+# a comment'
tui_keys Escape q
t_is "q quits with status 0 when idle" "$(tui_exit_status)" "0"
tui_stop

# A slow run: resize mid-run, cancel.  The kernel sleeps 5 s per call (five
# calls a verify), so on a loaded machine the run is still going at the x.
printf '# another\n' >>kernel/compute.sh
tui_start 120 34 LANG=C.UTF-8 KERNEL_SLEEP=5 -- "$OPTLOOP" tui
tui_wait 'EDITING'
tui_keys v
t_screen "a slow run is going" 'running 00:'
tui_resize 80 24
t_screen "resize mid-run keeps the live pane" 'Verify · iter 2'
tui_resize 50 12
t_screen "too small mid-run" 'terminal too small'
tui_resize 130 40
t_screen "back to a big screen mid-run" 'running 00:.*x cancel'
tui_keys q
t_screen "q during a run asks first" 'a verify run is going: press q again'
tui_keys j
t_screen "any other key stays" 'running 00:'
tui_keys x
t_screen "x cancels: recorded as incomplete" 'incomplete \(cancelled\)'
t_is "a cancelled run is an attempt, not an iteration: the change is still being edited" \
	"$(state)" editing
t_screen "the status line says the run was an attempt" 'EDITING · the last run was an attempt: it was cancelled; verify again \(v\)'
tui_keys l
t_screen "and log is refused: an attempt gets no row" \
	"log refused: the last run of iteration 2 was an attempt, not an iteration: it was cancelled"
tui_keys q
t_is "quit" "$(tui_exit_status)" "0"
tui_stop

# A terminal closed during a run: the run is recorded as an incomplete attempt.
# The kernel sleeps 30 s a call: the run cannot end before the terminal does.
printf '# third\n' >>kernel/compute.sh
tui_start 120 34 LANG=C.UTF-8 KERNEL_SLEEP=30 -- "$OPTLOOP" tui
tui_wait 'EDITING'
tui_keys v
tui_wait 'running 00:'
tui_stop
for _ in $(seq $((100 * T_SLACK))); do
	s=$(state)
	[ "$s" != verifying ] && break
	sleep 0.2
done
t_is "after the terminal closed the run is recorded, as an attempt" "$s" editing
t_like "status --json names it" \
	"$("$OPTLOOP" status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["attempt"]["why"])')" \
	'^it was (cancelled|killed before a gate verdict) \(gate incomplete'
t_exit "verify runs again" 0 "$OPTLOOP" verify
t_exit "its row is logged" 0 "$OPTLOOP" log --direction "terminal closed" --status drop
t_like "and the row is the measured run's, never the cut-off one's" "$(cat profile/tiny-opt/OPT_LOG.md)" \
	'\| terminal closed \| pass \|'
t_exit "and committed" 0 "$OPTLOOP" commit
printf '# fourth\n' >>kernel/compute.sh
t_exit "a third change is verified" 0 "$OPTLOOP" verify
t_exit "logged" 0 "$OPTLOOP" log --direction "a fourth comment" --status drop
# Three rows without a win: STALLED, and the re-assessment wizard.
t_exit "and committed" 0 "$OPTLOOP" commit
t_is "three rows without a win stall the loop" "$(state)" stalled
sleep 1.1
perf_report "sh start-up" >profile/tiny-opt/trace/profile-2.txt
tui_start 120 34 LANG=C.UTF-8 -- "$OPTLOOP" tui
t_screen "STALLED names the key" 'STALLED · 3 rows without a win: re-assess \(r\)'
tui_keys v
t_screen "verify is refused while stalled" '^verify refused: .*(STALLED|stall)'
tui_keys r
t_screen "r opens the stall wizard, one prompt at a time" 'Stall re-assessment · step 1/4'
t_screen "it lists the directions tried so far" 'add a comment'
tui_keys Enter
t_screen "a prompt cannot be skipped" 'Re-profile is required'
tui_keys "trace/nope.txt" Enter
t_screen "a profile that is not there is refused at its step" 'the profile trace/nope\.txt does not exist'
t_screen "and the wizard stays on that step" 'step 1/4'
printf 'an old profile\n' >profile/tiny-opt/trace/old.txt
touch -d '2000-01-01' profile/tiny-opt/trace/old.txt
tui_keys C-u "trace/old.txt" Enter
t_screen "so is one written before the stall began" 'the profile trace/old\.txt is older than the stall'
tui_keys C-u "trace/profile-2.txt" Enter
t_screen "step 2 asks for the axes" 'step 2/4'
tui_keys "comments, cancellation" Enter "none for shell kernels" Enter
t_screen "step 4 asks for the new direction" 'New direction'
tui_keys "rewrite compute with awk" Escape
t_screen "Esc leaves the stall in place" 'cancelled: nothing was saved'
t_is "still stalled after Esc" "$(state)" stalled
tui_keys r
tui_wait 'step 1/4'
tui_keys "trace/profile-2.txt" Enter "comments, cancellation" Enter "none for shell kernels" Enter "rewrite compute with awk" Enter
t_screen "the re-assessment is recorded" 're-assessment recorded'
t_screen "and the loop is ready again" 'READY · step 1/3'
t_is "engine agrees" "$(state)" ready
# The trap checklist: Tab to it, t marks the selected trap.
tui_keys Tab Tab
t_screen "traps pane has the seeded catalogue" 'Traps · 0/[0-9]+ checked'
tui_keys t
t_screen "t checks the selected trap" 'Traps · 1/[0-9]+ checked'
tui_keys q
t_is "quit" "$(tui_exit_status)" "0"
tui_stop
tui_start 120 34 LANG=C.UTF-8 -- "$OPTLOOP" tui
t_screen "the check is kept across sessions" 'Traps · 1/[0-9]+ checked'
tui_keys q
tui_stop

# optloop demo on a terminal opens the workbench on the new repository once
# it holds a workspace; until then it says why not and prints the project.
tui_start 120 34 LANG=C.UTF-8 -- "$OPTLOOP" demo "$T_TMP/demo-repo"
if tui_wait 'optloop · chunk_linear_attn|no workspace in the demo repository yet' 60; then
	if [ -d "$T_TMP/demo-repo/profile" ]; then
		t_screen "demo opens the workbench on its workspace" 'optloop · chunk_linear_attn'
		tui_keys q
	else
		t_screen "demo without a workspace explains and prints the project" 'next: cd '
	fi
	t_is "demo exits 0" "$(tui_exit_status)" "0"
else
	t_fail "demo on a terminal" "$(tui_screen)"
fi
tui_stop

tui_check_stderr
t_done
