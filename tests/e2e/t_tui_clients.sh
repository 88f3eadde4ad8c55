#!/usr/bin/env bash
# One workspace, many clients: a workbench stays open while a script drives
# the loop through the CLI (an agent's calls).  The workbench holds the
# writer lock only while it acts, so the CLI is never refused; it shows each
# step without a key press (verify streamed live with its driver named, the
# row, the commit, a failed gate, a confirm); a key that would write during
# the driver's run is refused naming the driver; a second workbench and a
# `watch --json` consumer follow at the same time; a driver killed with
# SIGKILL mid-verify is said, and the workbench goes on.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tui_lib.sh"
d="$T_TMP/tiny"
"$OPTLOOP_ROOT/tests/fixtures/make_tiny_project.sh" "$d" >/dev/null
cd "$d" || exit 1
"$OPTLOOP" init --op tiny --kernel kernel --test-file tests/test_compute.sh --naive ref/naive.sh \
	--verify ./verify --target "2x" --languages sh --promotion "full gate" >/dev/null
"$OPTLOOP" verify >/dev/null && "$OPTLOOP" log --direction baseline --commit >/dev/null

tui_start 120 32 LANG=C.UTF-8 -- "$OPTLOOP" tui
t_screen "the workbench opens" 'iter 1 . READY'
# a second workbench and a watch consumer on the same workspace
tmux_ new-session -d -s second -x 120 -y 32 "$TUI_RUN $T_TMP/second-exit $TUI_STDERR env TERM=screen-256color LANG=C.UTF-8 $OPTLOOP tui"
second() { tmux_ capture-pane -p -t second; }
"$OPTLOOP" watch --json >"$T_TMP/w.jsonl" 2>&1 &
wpid=$!
sleep 0.5

# 1. the driver edits the kernel: READY becomes EDITING with no key press
sed -i 's/\$(( \$1 \* 2 ))/$(( $1 << 1 ))/' kernel/compute.sh
tui_wait 'iter 1 . EDITING' 5
t_screen "an edit by another process shows: EDITING" 'iter 1 . EDITING'

# 2. the driver's verify, slow enough (15 s) to press a key during it on a
# loaded machine
KERNEL_SLEEP=3 "$OPTLOOP" verify >"$T_TMP/v1.out" 2>&1 &
vpid=$!
tui_wait 'driven by pid [0-9]+: optloop verify \(iteration 1\)' 8
t_screen "the CLI's verify runs while the workbench is open, its driver named" \
	'driven by pid [0-9]+: optloop verify \(iteration 1\)'
tui_keys v
tui_wait 'verify refused: driven by pid' 5
t_screen "a key that would write is refused, naming the driver" 'verify refused: driven by pid [0-9]+'
wait $vpid
t_is "the driver's verify was never refused" "$?" 0
tui_wait 'iter 1 . MEASURED' 8
t_screen "the run's end shows: MEASURED" 'iter 1 . MEASURED'
t_screen "with the gate and bench" 'gate pass, bench'

# 3. the driver logs and commits: the row is on both screens (and the
# workbench showing the per-shape numbers keeps showing them)
tui_keys s
t_screen "the per-shape pane shows its table" 'Shape +base +best +speedup'
explain_noise
"$OPTLOOP" log --direction "shift instead" --status keep --unconfirmed "one run" --commit >/dev/null
tui_wait 'shift instead' 15
t_screen "the row logged by the CLI shows" 'shift instead'
t_screen "the reload keeps the per-shape table" 'Shape +base +best +speedup'
t_unlike "  never 'no per-shape numbers'" "$(tui_screen)" 'no per-shape numbers'
tui_keys s
tui_wait 'iter 2 . READY' 15
t_screen "and the commit: READY for iteration 2" 'iter 2 . READY'
for _ in $(seq 50); do second | grep -q 'shift instead' && break; sleep 0.1; done
t_like "the second workbench shows it too" "$(second)" 'shift instead'

# 4. the driver killed with SIGKILL mid-verify
echo "# slow" >>kernel/compute.sh
KERNEL_SLEEP=30 "$OPTLOOP" verify >/dev/null 2>&1 &
vpid=$!
tui_wait "driven by pid $vpid" 8
kill -KILL $vpid
wait $vpid 2>/dev/null
tui_wait 'is gone' 8
t_screen "a killed driver is said" "pid $vpid\\) is gone"
t_ok "the workbench is still running" test ! -e "$TUI_STATUS"
"$OPTLOOP" status >/dev/null 2>&1 # a writer settles the cut-off run
tui_wait 'iter 2 . EDITING' 8
t_screen "after a writer settles it the workbench shows the truth" 'iter 2 . EDITING'
kill_harnesses

# 5. a failed gate, logged as drop
sed -i 's/<< 1/<< 2/' kernel/compute.sh
"$OPTLOOP" verify >/dev/null 2>&1
tui_wait 'iter 2 . MEASURED' 8
t_screen "the failed gate shows" 'gate fail'
"$OPTLOOP" log --direction "shift by two" --status drop --commit >/dev/null
tui_wait 'shift by two' 5
t_screen "the drop row shows" 'shift by two'

# 6. a confirm by the CLI
sed -i 's/<< 1/+ $1/' kernel/compute.sh
"$OPTLOOP" verify >/dev/null 2>&1
"$OPTLOOP" confirm --max-pairs 3 >/dev/null 2>&1 &
cpid=$!
tui_wait 'driven by pid [0-9]+: optloop confirm' 8
t_screen "a confirm driven by the CLI is shown with its driver" 'driven by pid [0-9]+: optloop confirm'
wait $cpid
tui_wait 'iter 3 . MEASURED' 10
t_screen "and its end" 'iter 3 . MEASURED'

# 7. the workbench acts itself between the driver's calls: it takes the lock
tui_keys c
tui_wait 'log refused|commit refused|nothing is logged' 5
t_screen "its own key works when nobody drives (a refusal from the protocol, not the lock)" \
	'(commit refused: nothing is logged|log )'
t_no_screen "no lock refusal" 'refused: driven by'
t_exit "and the CLI writes right after (the lock was given back)" 0 \
	"$OPTLOOP" log --direction "add instead" --status drop --commit
tui_wait 'add instead' 5

# More rows than the timeline has lines: resting on its newest row, it
# follows each row the CLI appends (an agent's loop stays in view).
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
	printf '# more %s\n' "$i" >>kernel/compute.sh
	"$OPTLOOP" verify >/dev/null 2>&1
	"$OPTLOOP" log --direction "more rows $i" --status drop --commit >/dev/null 2>&1
	if "$OPTLOOP" status --json | grep -q '"state": "stalled"'; then
		sleep 1.1
		perf_report >"profile/tiny-opt/trace/profile-$i.txt"
		"$OPTLOOP" reassess --profile "trace/profile-$i.txt" --axes comments --techniques none \
			--next "row $((i + 1))" >/dev/null 2>&1
	fi
done
t_screen "the timeline follows the newest row past its height" 'more rows 12 ' 10
t_no_screen "the oldest rows scrolled away" '│\*   0 baseline'

kill -TERM $wpid
wait $wpid
t_ok "the watch consumer saw the CLI's commits" grep -q '"event":"commit"' "$T_TMP/w.jsonl"
tui_keys q
tui_stop
tui_check_stderr
t_done
