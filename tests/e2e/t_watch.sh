#!/usr/bin/env bash
# optloop watch: one line per event while other processes drive the loop.
# A watcher never takes the writer lock, sees verify runs stream (progress,
# the gate as printed), rows, commits, a failed gate, an explanation and a
# confirm, exits 0 on SIGTERM or when --until's state is reached, says when
# the optloop driving a run was killed, and keeps going when the trace file
# is cut or the database replaced; twenty watch at once; -C with a relative
# path works as for every other command.
. "$(dirname "$0")/lib.sh"
d="$T_TMP/tiny"
"$OPTLOOP_ROOT/tests/fixtures/make_tiny_project.sh" "$d"
cd "$d" || exit 1
"$OPTLOOP" init --op tiny --kernel kernel --test-file tests/test_compute.sh --naive ref/naive.sh \
	--verify ./verify --target "2x" --languages sh --promotion "full gate" >/dev/null
ev() { grep -c "\"event\":\"$1\"" "$2"; }
# wait until file $1 matches /$2/ (up to 10 s)
wait_for() {
	for _ in $(seq 200); do grep -qE "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
	return 1
}

# -C with a relative directory, from another directory: watch follows -C as
# every command does (the path is read once, from where optloop started)
out=$(cd "$T_TMP" && timeout $((10 * ${T_SLACK:-3})) "$OPTLOOP" -C tiny watch --json \
	--until need_baseline 2>&1); rc=$?
t_is "watch with -C RELATIVE-DIR from another directory: exit 0" "$rc" 0
t_like "and it watches that workspace" "$out" '"event":"state".*"op":"tiny".*"state":"need_baseline"'
out=$(cd "$T_TMP" && timeout $((10 * ${T_SLACK:-3})) "$OPTLOOP" -C tiny watch \
	--until need_baseline 2>&1); rc=$?
t_is "the same in text: exit 0" "$rc" 0
t_like "a line of the state" "$out" 'tiny iteration 0: need_baseline; next: '

"$OPTLOOP" watch --json >"$T_TMP/w.jsonl" 2>"$T_TMP/w.err" &
wpid=$!
wait_for "$T_TMP/w.jsonl" '"state":"need_baseline"'
t_ok "the watcher starts with where the loop stands" grep -q '"event":"state".*"state":"need_baseline"' "$T_TMP/w.jsonl"
# the driver: an agent's CLI calls while the watcher runs
t_ok "verify runs while a watcher is open (no lock taken)" "$OPTLOOP" verify
"$OPTLOOP" log --direction baseline --commit >/dev/null
sed -i 's/\$(( \$1 \* 2 ))/$(( $1 << 1 ))/' kernel/compute.sh
"$OPTLOOP" verify >/dev/null
explain_noise
"$OPTLOOP" log --direction shift --status keep --unconfirmed "one run" --commit >/dev/null
sed -i 's/<< 1/<< 2/' kernel/compute.sh # wrong: a failed gate
"$OPTLOOP" verify >/dev/null 2>&1
"$OPTLOOP" log --direction "shift by two" --status drop --commit >/dev/null
sed -i 's/<< 1/+ $1/' kernel/compute.sh
"$OPTLOOP" verify >/dev/null 2>&1
"$OPTLOOP" confirm --max-pairs 3 >/dev/null 2>&1
wait_for "$T_TMP/w.jsonl" '"event":"confirm"'
"$OPTLOOP" log --direction "add" --status drop --commit >/dev/null
wait_for "$T_TMP/w.jsonl" '"state":"stalled"'
perf_report >profile/tiny-opt/trace/profile-w.txt
"$OPTLOOP" reassess --profile trace/profile-w.txt --axes shifts --techniques none --next "use awk" >/dev/null
wait_for "$T_TMP/w.jsonl" '"event":"reassess"'
"$OPTLOOP" stop --reason floor --bound "sh start-up: 2 ms a call" >/dev/null
wait_for "$T_TMP/w.jsonl" '"event":"stop"'
kill -TERM $wpid
wait $wpid
t_is "the watcher exits 0 on SIGTERM" "$?" 0
w="$T_TMP/w.jsonl"
t_is "four verify runs started" "$(grep -c '"event":"run.start".*"kind":"verify"' "$w")" 4
t_is "and ended" "$(grep -c '"event":"run.end".*"kind":"verify"' "$w")" 4
t_ok "progress streamed" grep -q '"event":"progress".*"progress":100' "$w"
t_ok "the gate streamed as printed: pass" grep -q '"event":"gate".*"gate":"pass"' "$w"
t_ok "and fail" grep -q '"event":"gate".*"gate":"fail"' "$w"
t_is "four rows logged" "$(ev row "$w")" 4
t_is "four commits" "$(ev commit "$w")" 4
t_ok "the drop row" grep -q '"event":"row".*"status":"drop".*"direction":"shift by two"' "$w"
t_ok "  no unconfirmed mark on it" grep -q '"event":"row".*"status":"drop","unconfirmed":null' "$w"
t_ok "the keep row carries its unconfirmed reason" grep -q '"event":"row".*"status":"keep","unconfirmed":"one run"' "$w"
t_ok "a re-assessment is an event, with its next direction" grep -q '"event":"reassess".*"next":"use awk"' "$w"
t_ok "a stop carries its reason and bound" \
	grep -q '"event":"stop".*"reason":"floor","bound":"sh start-up: 2 ms a call"' "$w"
t_ok "the confirm's verdict" grep -qE '"event":"confirm".*"verdict":"[a-z_]+","promoted":(true|false)' "$w"
t_ok "confirm runs are runs too" grep -q '"event":"run.start".*"kind":"confirm"' "$w"
t_ok "editing is seen when the kernel file changes" grep -q '"state":"editing"' "$w"
t_ok "an explanation recorded (promote --explain) is an event, with its note" \
	grep -q '"event":"explain","op":"tiny","iteration":1,"note":"the harness times one shell run' "$w"
t_ok "every line is one JSON object" python3 -c '
import json, sys
for line in open(sys.argv[1]):
    o = json.loads(line)
    assert {"t", "event", "op", "iteration"} <= o.keys(), line
' "$w"
t_ok "events come in the loop's order: run.start, gate, run.end, row, commit" python3 -c '
import json, sys
ev = [json.loads(l)["event"] for l in open(sys.argv[1])]
want = ["run.start", "gate", "run.end", "row", "commit"]
i = 0
for e in ev:
    if i < len(want) and e == want[i]:
        i += 1
assert i == len(want), ev
' "$w"
t_is "nothing on the watcher's stderr" "$(cat "$T_TMP/w.err")" ""

# a fresh project for the rest (the one above is stalled by now)
d="$T_TMP/tiny2"
"$OPTLOOP_ROOT/tests/fixtures/make_tiny_project.sh" "$d"
cd "$d" || exit 1
"$OPTLOOP" init --op tiny --kernel kernel --test-file tests/test_compute.sh --naive ref/naive.sh \
	--verify ./verify --target "2x" --languages sh --promotion "full gate" >/dev/null
"$OPTLOOP" verify >/dev/null && "$OPTLOOP" log --direction baseline --commit >/dev/null

# --until: exits by itself once the state is reached
echo "# next" >>kernel/compute.sh
"$OPTLOOP" watch --until measured >"$T_TMP/until.out" 2>&1 &
upid=$!
sleep 0.3
"$OPTLOOP" verify >/dev/null 2>&1
for _ in $(seq 100); do kill -0 $upid 2>/dev/null || break; sleep 0.05; done
t_ok "watch --until measured exits once verify ends" bash -c "! kill -0 $upid 2>/dev/null"
wait $upid
t_is "with exit 0" "$?" 0
t_like "its last line is the state reached" "$(tail -1 "$T_TMP/until.out")" 'iteration [0-9]+: measured; next'
t_exit "--until with no such state is a usage error" 2 "$OPTLOOP" watch --until nowhere
"$OPTLOOP" log --direction next --status drop --commit >/dev/null 2>&1

# twenty watchers at once, each sees the same commit
many=
for i in $(seq 20); do "$OPTLOOP" watch --json >"$T_TMP/many.$i" 2>&1 & many="$many $!"; done
sleep 0.5
echo "# twenty" >>kernel/compute.sh
"$OPTLOOP" verify >/dev/null 2>&1
"$OPTLOOP" log --direction twenty --status drop --commit >/dev/null 2>&1
sleep 0.5
n=0
for i in $(seq 20); do grep -q '"event":"commit".*"status":"drop"' "$T_TMP/many.$i" && n=$((n + 1)); done
t_is "twenty watchers each saw the commit" "$n" 20
kill -TERM $many 2>/dev/null
wait 2>/dev/null

# the driver killed mid-verify: the watcher says so and keeps watching
"$OPTLOOP" watch --json >"$T_TMP/kill.jsonl" 2>&1 &
wpid=$!
echo "# slow" >>kernel/compute.sh
KERNEL_SLEEP=30 "$OPTLOOP" verify >/dev/null 2>&1 &
vpid=$!
wait_for "$T_TMP/kill.jsonl" '"event":"run.start"'
# cut the raw log short and replace the database file under the watcher
log=$(sed -n 's/.*"event":"run.start".*"log":"\([^"]*\)".*/\1/p' "$T_TMP/kill.jsonl" | tail -1)
: >"$log"
kill -KILL $vpid
wait $vpid 2>/dev/null
wait_for "$T_TMP/kill.jsonl" 'is gone'
t_like "the watcher says the driver is gone" "$(cat "$T_TMP/kill.jsonl")" '"event":"problem".*pid [0-9]+\) is gone'
db=profile/tiny-opt/optloop.db
cp "$db" "$T_TMP/db.copy" && mv "$T_TMP/db.copy" "$db"
"$OPTLOOP" status >/dev/null 2>&1 # a writer settles the cut-off run
wait_for "$T_TMP/kill.jsonl" '"state":"editing"'
t_ok "and still watches: the settled state arrives" grep -q '"state":"editing"' "$T_TMP/kill.jsonl"
t_ok "the watcher is still running" kill -0 $wpid
kill -INT $wpid
wait $wpid
t_is "SIGINT ends it with exit 0" "$?" 0
kill_harnesses

# A watcher that could not look while runs came and went (stopped here, as a
# busy machine would delay it) still tells each run's start and end, in order.
"$OPTLOOP" watch --json >"$T_TMP/late.jsonl" 2>&1 &
wpid=$!
wait_for "$T_TMP/late.jsonl" '"event":"state"'
kill -STOP $wpid
db=profile/tiny-opt/optloop.db
first=$(sqlite3 "$db" "SELECT coalesce(max(id), 0) FROM runs")
"$OPTLOOP" noise --runs 3 >/dev/null 2>&1
kill -CONT $wpid
wait_for "$T_TMP/late.jsonl" "\"event\":\"run.end\".*\"run\":$((first + 3))"
t_is "every run that ended while the watcher was stopped has a start and an end, in order" \
	"$(python3 -c 'import json,sys
ev=[(e["event"], e["run"]) for e in map(json.loads, open(sys.argv[1])) if e["event"] in ("run.start","run.end")]
print(" ".join("%s:%d" % (k.split(".")[1], r - int(sys.argv[2])) for k, r in ev))' "$T_TMP/late.jsonl" "$first")" \
	"start:1 end:1 start:2 end:2 start:3 end:3"
kill -INT $wpid
wait $wpid 2>/dev/null

# A writer in the middle of a move (stopped there, alive) is not a cut-off
# move to readers: status and watch say nothing of it; once it goes on,
# nothing is left to finish.
echo "# slower" >>kernel/compute.sh
"$OPTLOOP" verify >/dev/null 2>&1
OPTLOOP_FAULT=restore.after_checkout:stop "$OPTLOOP" log --direction slower --status drop --commit \
	>/dev/null 2>&1 &
lpid=$!
for _ in $(seq 200); do
	[ "$(ps -o stat= -p $lpid 2>/dev/null | cut -c1)" = T ] && break
	sleep 0.05
done
t_is "the writer is stopped in the middle of its restore" "$(ps -o stat= -p $lpid | cut -c1)" T
t_unlike "status (a reader) does not call the live writer's move cut off" \
	"$("$OPTLOOP" status --json 2>&1)" 'cut off'
kill -CONT $lpid
wait $lpid
t_is "the writer went on and finished" "$?" 0
t_unlike "and nothing is left to finish" "$("$OPTLOOP" status --json 2>&1)" 'cut off'

t_done
