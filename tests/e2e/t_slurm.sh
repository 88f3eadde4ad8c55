#!/usr/bin/env bash
# Runs through Slurm, end to end against a real single-node cluster started
# by the test (slurm_lib.sh): the demo loop with `Runner: slurm ...` — the
# baseline, an iteration from a new process that reattaches to the same
# allocation, a confirm whose runs all ran in one job on one node, a run
# cancelled with SIGINT and one stopped by its timeout (both scancel'd, both
# attempts), a pending allocation's queue reason in status, an allocation
# revoked from outside, one that reaches its time limit mid-run, giving it
# back with stop --release, and the idle release.  Skipped where the
# cluster cannot run.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/confirm_lib.sh"
. "$(dirname "$0")/slurm_lib.sh"

if ! slurm_up "$T_TMP/slurm"; then
	t_skip "runs through a private Slurm cluster" "$SLURM_WHY"
	t_done
	exit 0
fi
# the idle watches optloop leaves are ended with the cluster
stop_watches() {
	local f
	for f in "$T_TMP"/demo/profile/*/slurm-*.idle "$T_TMP"/tl/profile/*/slurm-*.idle; do
		[ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null
	done
}
trap 'stop_watches; slurm_down; rm -rf "$T_TMP"' EXIT

export DEMO_BENCH_WARMUP_MS=1 DEMO_BENCH_REP_MS=1
jget() {
	python3 -c 'import json,sys
v=json.load(sys.stdin)
for k in sys.argv[1].split("."):
    v=v[int(k)] if isinstance(v,list) else v[k]
print("null" if v is None else v)' "$1"
}
q() { sqlite3 "$T_TMP/demo/profile/chunk_linear_attn-opt/optloop.db" "$1"; }
# wait_until SECONDS COMMAND...: poll every 0.2 s
wait_until() {
	local n=$(($1 * 5))
	shift
	while [ "$n" -gt 0 ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
		n=$((n - 1))
	done
	return 1
}
# a run's step (named optloop; the probe's step is optloop-probe)
has_step() { [ -n "$(squeue -h -s -j "$1" -o '%i %j' 2>/dev/null | awk '$2 == "optloop"')" ]; }
no_step() { ! squeue -h -s -j "$1" -o %i 2>/dev/null | grep -v extern | grep -q .; }
job_gone() { ! squeue -h -j "$1" -o %T 2>/dev/null | grep -qE 'RUNNING|PENDING|CONFIGURING'; }
runner="slurm --partition=test --gres=gpu:1 --time=10 idle=10m"

# --- a second workspace whose allocation reaches its time limit mid-run ------
# Started first: Slurm ends a job at its limit only on its next check (about
# 90 s for --time=1), so this runs while the main loop goes on.  It takes
# the node's other CPU and no GPU.
"$OPTLOOP" demo "$T_TMP/tl" >/dev/null
(cd "$T_TMP/tl" &&
	"$OPTLOOP" contract --set "runner=slurm --partition=test --time=1 idle=off" \
		--set "validation=echo started; sleep 300; ./verify --op chunk_linear_attn" >/dev/null)
tl_rc_file=$T_TMP/tl.rc
(cd "$T_TMP/tl" && "$OPTLOOP" verify >"$T_TMP/tl.out" 2>&1; echo $? >"$tl_rc_file") &

# --- the Runner field --------------------------------------------------------
demo_repeated 4
"$OPTLOOP" init --op chunk_linear_attn --kernel "$kernel" --test-file tests/ops/test_linear_attn.c \
	--naive ops/linear_attn/naive.c --verify "./verify --op chunk_linear_attn" >/dev/null
"$OPTLOOP" contract --set "target=all three shapes, 1.2x" --set languages=C \
	--set "promotion=full gate, confirmed win" >/dev/null
out=$("$OPTLOOP" contract --set "runner=slurm partition=test" 2>&1); rc=$?
t_is "a Runner word that is no salloc option is a usage error" "$rc" 2
t_like "  and the message says what would be right" "$out" "salloc's options start with -|those start with -"
t_exit "a Runner that is neither local nor slurm is a usage error" 2 \
	"$OPTLOOP" contract --set "runner=pbs -q gpu"
t_exit "a Runner idle= that is no duration is a usage error" 2 \
	"$OPTLOOP" contract --set "runner=slurm idle=soon"
t_ok "Runner: slurm with salloc's options is taken" "$OPTLOOP" contract --set "runner=$runner"
t_like "status names the runner" "$("$OPTLOOP" status)" "runner: +$runner"

# --- the baseline: one allocation, the run a step on its node ----------------
out=$("$OPTLOOP" verify 2>&1); rc=$?
t_is "the baseline verify through Slurm passes" "$rc" 0
t_like "  salloc was asked once, and granted" "$out" "requesting a Slurm allocation: salloc --no-shell"
job=$(q "SELECT job FROM slurm_allocs WHERE released IS NULL")
t_like "  the job id is recorded in the store" "$job" '^[0-9]+$'
t_is "  the run's step names the job and the node" \
	"$(q "SELECT job || ' ' || node || ' ' || gpus || ' ' || cause FROM slurm_steps WHERE run_id = 1")" \
	"$job $SLURM_NODE 0 ok"
# (srun may say something of its own first)
t_like "  the raw output starts with where it ran" \
	"$(grep -v '^srun: ' profile/chunk_linear_attn-opt/trace/iter-0.log | head -n 1)" \
	"^optloop-slurm: job $job step [0-9]+ node $SLURM_NODE gpus 0"
t_like "  the probe ran as a step on that node" \
	"$(q "SELECT json FROM stats_probes WHERE run_id = 1 AND phase = 'before'")" \
	"\"node\": ?\"$SLURM_NODE\".*|srun --jobid='$job'"
s=$("$OPTLOOP" status --json)
t_is "status --json: the allocation is running" \
	"$(printf '%s' "$s" | jget allocation.job) $(printf '%s' "$s" | jget allocation.state) $(printf '%s' "$s" | jget allocation.node)" \
	"$job RUNNING $SLURM_NODE"
"$OPTLOOP" log --direction baseline --status base --commit >/dev/null
t_like "the OPT_LOG Env line names the node and the GPU" \
	"$(grep '^Env' profile/chunk_linear_attn-opt/OPT_LOG.md)" "node $SLURM_NODE, GPU 0 \\(Slurm job $job\\)"

# --- iteration 1 from a new process: reattach, then a confirm in one job ------
python3 -c 'import sys; p=sys.argv[1]; s=open(p).read(); a="rep < 4;"; assert a in s; open(p,"w").write(s.replace(a,"rep < 3;",1))' "$kernel"
out=$("$OPTLOOP" verify 2>&1); rc=$?
t_is "iteration 1's verify passes" "$rc" 0
t_like "  a new optloop reattaches to the live allocation" "$out" "reattaching to Slurm job $job"
t_unlike "  and requests none" "$out" "requesting a Slurm allocation"
out=$(DEMO_BENCH_WARMUP_MS=5 DEMO_BENCH_REP_MS=20 "$OPTLOOP" confirm --max-pairs 3 --json 2>/dev/null)
# (which verdict is not this test's question: three pairs of 20 ms timings
# on a loaded 2-core machine beside the time-limit workspace; once in a
# few runs they read slow.  The statistics have tests of their own.)
t_like "the confirm through Slurm reaches a verdict" "$(printf '%s' "$out" | jget verdict)" '^(fast|ambiguous|same|slow)$'
t_is "  every confirm run ran in the one job, on the one node" \
	"$(q "SELECT count(*) > 1, count(DISTINCT s.job || '/' || s.node), min(s.job), min(s.node) FROM slurm_steps s JOIN runs r ON r.id = s.run_id WHERE r.kind = 'confirm'")" \
	"1|1|$job|$SLURM_NODE"
t_is "  one allocation so far" "$(q "SELECT count(*) FROM slurm_allocs")" 1
# (a loaded machine may read the 1.33x win past 1.5x: flagged implausible,
# which keep needs explained)
"$OPTLOOP" promote --explain "four repetitions to three: a quarter less work" >/dev/null 2>&1
"$OPTLOOP" log --direction "three repetitions" --status keep --unconfirmed "slurm test" --commit >/dev/null ||
	"$OPTLOOP" log --direction "three repetitions" --status keep --commit >/dev/null

# --- a run cancelled with SIGINT: the step is scancel'd, the run an attempt --
"$OPTLOOP" noise --runs 2 --cmd "echo waiting; sleep 120" >"$T_TMP/cancel.out" 2>&1 &
pid=$!
if wait_until 30 has_step "$job"; then t_pass "the noise run is a step of the job"; else t_fail "the noise run is a step of the job"; fi
kill -INT "$pid"
wait "$pid"
t_is "  Ctrl-C ends the session (exit 4)" "$?" 4
# (Not timed: exit 4 already says the session was cut, not run out.  The
# step's processes are Slurm's to end; this cluster's proctrack/linuxproc
# can miss one on a loaded machine.)
r=$(q "SELECT id FROM runs WHERE kind = 'noise' ORDER BY id DESC LIMIT 1")
# gate 4: incomplete (core/model.h)
t_is "  cancelled, incomplete, its step scancel'd" \
	"$(q "SELECT r.cancelled || ' ' || r.gate || ' ' || s.cause FROM runs r JOIN slurm_steps s ON s.run_id = r.id WHERE r.id = $r")" \
	"1 4 cancelled"
if wait_until 10 no_step "$job"; then
	t_pass "  no step is left running in the job"
else
	t_fail "  no step is left running in the job" "$(squeue -s)"
fi
t_is "  the allocation is kept" "$(squeue -h -j "$job" -o %T)" RUNNING

# --- a run stopped by its timeout: scancel, an attempt with the cause --------
echo "/* one more idea */" >>"$kernel"
"$OPTLOOP" contract --set "validation=echo started; sleep 120; ./verify --op chunk_linear_attn" >/dev/null
out=$("$OPTLOOP" verify --timeout 3 2>&1); rc=$?
t_is "a verify past its timeout exits 4" "$rc" 4
r=$(q "SELECT max(id) FROM runs WHERE kind = 'verify'")
t_is "  timed out, its step cancelled with scancel" \
	"$(q "SELECT r.timed_out || ' ' || s.cause FROM runs r JOIN slurm_steps s ON s.run_id = r.id WHERE r.id = $r")" \
	"1 timeout"
t_like "  status says why it was an attempt" "$("$OPTLOOP" status)" "attempt: +it ran past its timeout: Slurm step $job\\.[0-9]+ was cancelled with scancel"
"$OPTLOOP" contract --set "validation=./verify --op chunk_linear_attn" >/dev/null

# --- waiting is visible: a pending allocation shows its queue reason ---------
# The test holds the node's GPU itself, so the next allocation must wait.
"$OPTLOOP" stop --release >/dev/null
t_ok "  stop --release gave the job back" wait_until 15 job_gone "$job"
blocker=$(salloc --no-shell -p test --gres=gpu:1 --time=5 2>&1 | sed -n 's/.*Granted job allocation \([0-9]*\).*/\1/p')
"$OPTLOOP" noise --runs 2 >"$T_TMP/pending.out" 2>&1 &
pid=$!
pend() { "$OPTLOOP" status --json | python3 -c 'import json,sys; a=json.load(sys.stdin)["allocation"]; sys.exit(0 if a["state"]=="PENDING" and a["reason"] else 1)'; }
if wait_until 30 pend; then t_pass "status --json: the allocation is PENDING with its reason"; else t_fail "status --json: the allocation is PENDING with its reason" "$("$OPTLOOP" status --json)"; fi
t_like "  status in words: queue reason" "$("$OPTLOOP" status)" "slurm: +Slurm job [0-9]+ PENDING \\((Resources|Priority)"
scancel "$blocker"
wait "$pid"
t_is "  once the GPU is free the waiting runs go on (noise exits 0)" "$?" 0
job2=$(q "SELECT job FROM slurm_allocs WHERE released IS NULL")
t_like "  in a new allocation" "$job2" "^[0-9]+$"

# --- an allocation revoked from outside mid-run --------------------------------
"$OPTLOOP" noise --runs 2 --cmd "echo waiting; sleep 120" >"$T_TMP/revoke.out" 2>&1 &
pid=$!
wait_until 30 has_step "$job2"
scancel "$job2"
wait "$pid"
t_is "a run whose allocation was revoked ends the session (exit 4)" "$?" 4
r=$(q "SELECT max(id) FROM runs WHERE kind = 'noise'")
got=$(q "SELECT r.gate || ' ' || s.cause FROM runs r JOIN slurm_steps s ON s.run_id = r.id WHERE r.id = $r")
if [ "$got" = "4 revoked" ]; then
	t_pass "  an incomplete attempt, cause revoked"
else # every step of the session, to read what Slurm said
	t_fail "  an incomplete attempt, cause revoked" "got: $got" \
		"$(q "SELECT s.run_id, s.cause, s.why FROM slurm_steps s JOIN runs r ON r.id = s.run_id WHERE r.kind = 'noise' ORDER BY s.run_id DESC LIMIT 3")"
fi
t_like "  the message names the cause" "$(q "SELECT why FROM slurm_steps WHERE run_id = $r")" "revoked"
t_like "  status: none held, and why" "$("$OPTLOOP" status)" "slurm: +none held.*Slurm job $job2"
t_ok "  the next session runs" "$OPTLOOP" noise --runs 3
job4=$(q "SELECT job FROM slurm_allocs WHERE released IS NULL")
# the probes before and after each run go through one step the session
# keeps: a run is one step of its own, so the runs' steps follow each other
steps=$(q "SELECT group_concat(step, ' ') FROM (SELECT s.step FROM slurm_steps s JOIN runs r ON r.id = s.run_id WHERE r.kind = 'noise' AND s.job = '$job4' ORDER BY s.run_id)")
t_ok "  one step a run, the probes through the session's own step (steps $steps)" \
	awk -v s="$steps" 'BEGIN { n = split(s, a, " "); exit !(n == 3 && a[2] == a[1] + 1 && a[3] == a[2] + 1) }'
r=$(q "SELECT max(id) FROM runs WHERE kind = 'noise'")
t_like "  its readings were taken there, before and after (no nvidia-smi on this cluster's node)" \
	"$(q "SELECT group_concat(phase || ': ' || json_extract(json, '$.why'), ' / ') FROM (SELECT phase, json FROM stats_probes WHERE run_id = $r ORDER BY phase DESC)")" \
	"^before: no probe: the command 'srun --jobid='?$job4'? .*was not found.* / after: no probe: .*was not found"
if wait_until 10 no_step "$job4"; then
	t_pass "  the probe's step ended with the session"
else
	t_fail "  the probe's step ended with the session" "$(squeue -s)"
fi
# probe_session NAME PROBE TIMEOUT WHY: a noise session of two runs with
# that probe command and limit; the runs go on whatever the probe does (a
# probe is evidence, never a gate), every reading of theirs (before and
# after each) says WHY (an SQL LIKE pattern), and no step is left after
probe_session() {
	OPTLOOP_PROBE=$2 OPTLOOP_PROBE_TIMEOUT=$3 "$OPTLOOP" noise --runs 2 >"$T_TMP/$1.out" 2>&1
	t_is "a probe that $1 does not stop the runs (noise exits 0)" "$?" 0
	local last="SELECT id FROM runs WHERE kind = 'noise' ORDER BY id DESC LIMIT 2"
	t_is "  all four readings: $4" \
		"$(q "SELECT count(*), sum(json_extract(p.json, '$.why') LIKE '$4') FROM stats_probes p JOIN ($last) r ON r.id = p.run_id")" "4|4"
	t_is "  the runs themselves ended well" \
		"$(q "SELECT group_concat(cause) FROM (SELECT s.cause FROM slurm_steps s JOIN ($last) r ON r.id = s.run_id ORDER BY r.id)")" ok,ok
	if wait_until 10 no_step "$job4"; then
		t_pass "  no step of its probe is left"
	else
		t_fail "  no step of its probe is left" "$(squeue -s)"
	fi
}
# one that hangs: stopped at its limit, the after-probe in a new step
probe_session hangs 'echo partial; sleep 60' 2 '%did not finish within 2 s%'
# one that floods (a megabyte of lines): answered all the same, in time
probe_session floods 'yes probe | head -c 1000000' 5 \
	'%gave unreadable output (its first line names no column%'
t_like "  in a new allocation, not the revoked one" "$job4" "^[0-9]+$"
t_unlike "  (a job id other than $job2)" "$job4" "^$job2\$"

# --- a suspended allocation is never forgotten ------------------------------
job_state() { [ "$(squeue -h -j "$1" -o %T)" = "$2" ]; }
scontrol suspend "$job4"
wait_until 15 job_state "$job4" SUSPENDED
out=$("$OPTLOOP" status 2>&1)
t_like "a suspended allocation: status names it and what to do" "$out" \
	"slurm: +Slurm job $job4 SUSPENDED \\(it keeps its nodes but runs nothing: scontrol resume $job4, or scancel $job4\\)"
t_is "  it is not forgotten" "$(q "SELECT count(*) FROM slurm_allocs WHERE job = '$job4' AND released IS NULL")" 1
nallocs=$(q "SELECT count(*) FROM slurm_allocs")
out=$("$OPTLOOP" noise --runs 2 2>&1); rc=$?
t_is "  a run is refused while it is suspended (exit 4)" "$rc" 4
t_like "  saying how to resume it or give it back" "$out" "job $job4 is SUSPENDED.*scontrol resume $job4.*scancel $job4"
t_is "  and no second allocation was asked for" "$(q "SELECT count(*) FROM slurm_allocs")" "$nallocs"
t_is "  the job is still the one held" "$(q "SELECT job FROM slurm_allocs WHERE released IS NULL")" "$job4"
scontrol resume "$job4"
wait_until 15 job_state "$job4" RUNNING

# --- a controller that does not answer: status is bounded --------------------
ctl=$(cat "$T_TMP/slurm/run/slurmctld.pid")
kill -STOP "$ctl"
s=$(date +%s)
out=$("$OPTLOOP" status 2>&1)
took=$(($(date +%s) - s))
kill -CONT "$ctl"
t_like "a controller that does not answer: status says squeue did not answer" "$out" \
	"slurm: +Slurm job $job4 UNKNOWN \(squeue did not answer within 5 s\)"
t_ok "  and returns in seconds, not squeue's own minutes (${took} s)" test "$took" -lt 25
t_is "  the job is not forgotten" "$(q "SELECT job FROM slurm_allocs WHERE released IS NULL")" "$job4"

# --- the idle release --------------------------------------------------------
"$OPTLOOP" contract --set "runner=slurm --partition=test --gres=gpu:1 --time=10 idle=3s" >/dev/null
"$OPTLOOP" noise --runs 2 >/dev/null 2>&1
job3=$(q "SELECT job FROM slurm_allocs WHERE released IS NULL")
t_like "a changed Runner gives the old allocation back" \
	"$(q "SELECT why FROM slurm_allocs WHERE released IS NOT NULL ORDER BY id DESC LIMIT 1")" "Runner"
if wait_until 40 job_gone "$job3"; then t_pass "idle=3s: the allocation is released when unused"; else t_fail "idle=3s: the allocation is released when unused" "$(squeue)"; fi
t_like "  status says so" "$("$OPTLOOP" status)" "released after its idle time"

# --- the time limit, mid-run (the second workspace) -------------------------
wait_until 150 test -s "$tl_rc_file"
t_is "a run past its allocation's time limit exits 4" "$(cat "$tl_rc_file" 2>/dev/null)" 4
t_like "  srun reported the time limit" "$(cat "$T_TMP/tl.out")" "DUE TO TIME LIMIT"
tdb=$T_TMP/tl/profile/chunk_linear_attn-opt/optloop.db
t_is "  the run is an incomplete attempt, cause time_limit" \
	"$(sqlite3 "$tdb" "SELECT r.gate || ' ' || s.cause FROM runs r JOIN slurm_steps s ON s.run_id = r.id ORDER BY r.id DESC LIMIT 1")" \
	"4 time_limit"
t_like "  status says why" "$(cd "$T_TMP/tl" && "$OPTLOOP" status)" "attempt: .*time limit"
t_like "  the allocation is forgotten" "$(cd "$T_TMP/tl" && "$OPTLOOP" status)" "slurm: +none held"
t_like "  nothing logged was lost: the started line is in the raw output" \
	"$(cat "$T_TMP"/tl/profile/chunk_linear_attn-opt/trace/iter-0*.log)" "started"
t_done
