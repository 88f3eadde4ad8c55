#!/usr/bin/env bash
# A confirm run killed while the best is checked out in the work tree loses
# nothing: the next command that writes puts the candidate back (the swap
# was recorded as an intent before the first file was written), a harness
# left running is stopped, and a kill at the same point after the user
# edited the tree leaves the edit.  Ctrl-C or SIGTERM on confirm and noise
# stop the run, put the candidate back and record the run incomplete.
. "$(dirname "$0")/lib.sh"
d="$T_TMP/tiny"
tiny_workspace "$d"
"$OPTLOOP" verify >/dev/null 2>&1
"$OPTLOOP" log --direction baseline >/dev/null
"$OPTLOOP" commit >/dev/null
base=$(sha1sum kernel/compute.sh)

printf '# candidate: same arithmetic, one comment more\n' >>kernel/compute.sh
cand=$(sha1sum kernel/compute.sh)
"$OPTLOOP" verify >/dev/null 2>&1
OPTLOOP_FAULT=confirm.best_in_tree "$OPTLOOP" confirm >/dev/null 2>&1
t_is "a confirm killed mid-session exits by SIGKILL" "$?" 137
t_is "the kill left the best in the work tree" "$(sha1sum kernel/compute.sh)" "$base"
out=$("$OPTLOOP" confirm --max-pairs 3 --json 2>/dev/null)
t_is "the next confirm runs to the end: whole pairs until decided" "$(printf '%s' "$out" | python3 -c '
import json,sys; j = json.load(sys.stdin)
print("ok" if j["runs"] == 2 * j["pairs"] and 1 <= j["pairs"] <= 3 and j["sequential"]["decided"] in (True, False) else j)')" ok
t_is "and the candidate is back in the work tree" "$(sha1sum kernel/compute.sh)" "$cand"
db=profile/tiny-opt/optloop.db
t_is "the recovery is in the event log" \
	"$(sqlite3 "$db" "SELECT count(*) FROM events WHERE kind = 'intent.recovered'")" 1
t_is "no confirm is left unfinished" "$(sqlite3 "$db" "SELECT count(*) FROM stats_confirms WHERE done = 0")" 0

# Killed again, but this time the user edits the kernel before the next
# command: the edit is theirs and stays.
OPTLOOP_FAULT=confirm.best_in_tree "$OPTLOOP" confirm >/dev/null 2>&1
printf '# my own edit\n' >>kernel/compute.sh
mine=$(sha1sum kernel/compute.sh)
"$OPTLOOP" noise --runs 2 >/dev/null 2>&1
t_is "an edit made after the kill is not overwritten" "$(sha1sum kernel/compute.sh)" "$mine"
t_is "the cut-off confirm is closed" "$(sqlite3 "$db" "SELECT count(*) FROM stats_confirms WHERE done = 0")" 0

# Killed again with the best in the tree: the very next command (status)
# puts the candidate back, and log is not refused as telescoped.
git checkout -q -- kernel/compute.sh
printf '# candidate: same arithmetic, one comment more\n' >>kernel/compute.sh
OPTLOOP_FAULT=confirm.best_in_tree "$OPTLOOP" confirm >/dev/null 2>&1
t_is "the kill left the best in the tree again" "$(sha1sum kernel/compute.sh)" "$base"
out=$("$OPTLOOP" status 2>&1)
t_like "status says the cut-off swap was undone" "$out" 'swap cut off by a crash was undone'
t_unlike "and does not call it a change after the measurement" "$out" 'changed after'
t_is "the candidate is back after status alone" "$(sha1sum kernel/compute.sh)" "$cand"
t_is "no tree intent is left" "$(sqlite3 "$db" "SELECT count(*) FROM tree_intents WHERE done = 0")" 0

# A slow measuring command, so a signal lands while a run is going.
slow="sleep 29.7; ./verify --no-gate"
# The sleep itself, not any command line that mentions it: optloop's own argv
# carries the --cmd text, so a looser pattern saw the harness "start" the
# moment optloop did, and a slow (sanitizer) build was killed before it had
# spawned anything.
harness_running() { pgrep -f '^sleep 29\.7$' >/dev/null; }
harness_gone() { ! harness_running; }
# wait for the harness to start: 10 s, times T_SLACK on a loaded machine (a
# sanitizer build starts a confirm's first run slowly)
harness_started() {
	for _ in $(seq $((100 * ${T_SLACK:-3}))); do harness_running && return 0; sleep 0.1; done
	return 1
}
for sig in INT TERM; do
	"$OPTLOOP" confirm --cmd "$slow" >"$T_TMP/confirm-$sig.out" 2>&1 &
	pid=$!
	harness_started
	sleep 0.3
	if [ "$sig" = INT ]; then
		# another process looking meanwhile: the best swapped in is the
		# confirm's doing, not a second change to set aside
		nx=$("$OPTLOOP" status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["next"])')
		t_like "during a confirm, status says to wait for it" "$nx" '^wait for the confirm of iteration 1 to finish'
		t_unlike "  not that the kernel changed after the measurement" "$nx" 'kernel changed'
	fi
	kill -s "$sig" "$pid"
	wait "$pid"
	t_is "SIG$sig on confirm: exit 4 (stopped, no verdict)" "$?" 4
	t_like "SIG$sig on confirm: it says the candidate is back" "$(cat "$T_TMP/confirm-$sig.out")" 'candidate is back'
	t_like "SIG$sig on confirm: it names the signal and who sent it" "$(cat "$T_TMP/confirm-$sig.out")" \
		"confirm stopped by SIG$sig from pid $$ \\(.*t_stats_crash"
	t_is "SIG$sig on confirm: the candidate is in the tree" "$(sha1sum kernel/compute.sh)" "$cand"
	t_ok "SIG$sig on confirm: the harness is not left running" harness_gone
	# gate 4 is GATE_INCOMPLETE
	t_is "SIG$sig on confirm: the stopped run is recorded incomplete, and ended" \
		"$(sqlite3 "$db" "SELECT gate, t_end > 0 FROM runs WHERE kind = 'confirm' ORDER BY id DESC LIMIT 1")" \
		"4|1"
done
# --json: the cancelled session's object says what stopped it
"$OPTLOOP" confirm --json --cmd "$slow" >"$T_TMP/confirm-json.out" 2>/dev/null &
pid=$!
harness_started
sleep 0.3
kill -HUP "$pid"
wait "$pid"
t_is "SIGHUP on confirm --json: exit 4" "$?" 4
t_is "  cancelled, not promoted" \
	"$(jget cancelled <"$T_TMP/confirm-json.out") $(jget promoted <"$T_TMP/confirm-json.out")" \
	"True False"
t_like "  stopped_by names the signal and its sender" "$(jget stopped_by <"$T_TMP/confirm-json.out")" \
	"^SIGHUP from pid $$ "
"$OPTLOOP" noise --runs 2 --cmd "$slow" >"$T_TMP/noise.out" 2>&1 &
pid=$!
harness_started
sleep 0.3
kill -TERM "$pid"
wait "$pid"
t_is "SIGTERM on noise: exit 4" "$?" 4
t_like "SIGTERM on noise: it names the signal" "$(cat "$T_TMP/noise.out")" "noise stopped by SIGTERM from pid $$"
t_is "SIGTERM on noise: the candidate is in the tree" "$(sha1sum kernel/compute.sh)" "$cand"
t_ok "SIGTERM on noise: the harness is not left running" harness_gone

# SIGKILL on confirm mid-run: the harness keeps running in its own process
# group; the next command stops it and puts the candidate back.
"$OPTLOOP" confirm --cmd "$slow" >/dev/null 2>&1 &
pid=$!
harness_started
sleep 0.3
kill -KILL "$pid"
wait "$pid" 2>/dev/null
t_ok "SIGKILL on confirm leaves the harness running" harness_running
t_like "while the swap is cut off, a ref keeps the candidate's snapshot" \
	"$(git for-each-ref refs/optloop/swap/ --format='%(objecttype)')" '^tree$'
# git gc --prune=now while the best is in the tree: the candidate survives
git gc -q --prune=now 2>/dev/null
out=$("$OPTLOOP" status 2>&1)
t_like "the next command stops the harness left running" "$out" 'harness left running .* was stopped'
sleep 0.2
t_ok "and it is gone" harness_gone
t_is "and the candidate is back" "$(sha1sum kernel/compute.sh)" "$cand"
t_unlike "  even after git gc --prune=now; no extra change is blamed" "$out" 'extra change'
t_is "  and the ref is dropped once it is back" "$(git for-each-ref refs/optloop/swap/ | wc -l)" 0
t_ok "log is not refused as telescoped" "$OPTLOOP" log --direction "one comment more" --status drop
# Two linked work trees on one op: each keeps its own swap ref, so a confirm
# in one never drops the other's protection (git gc would then prune the
# other's candidate while its best is in the tree).
wa="$T_TMP/wt-a" wb="$T_TMP/wt-b"
cd "$T_TMP" && "$OPTLOOP_ROOT/tests/fixtures/make_tiny_project.sh" "$wa" >/dev/null && cd "$wa" || exit 1
init_wt() {
	"$OPTLOOP" init --op tiny --kernel kernel --test-file tests/test_compute.sh --naive ref/naive.sh \
		--verify ./verify --target 2x --languages sh --promotion confirmed >/dev/null &&
		"$OPTLOOP" verify >/dev/null 2>&1 && "$OPTLOOP" log --direction baseline --commit >/dev/null
}
init_wt
git worktree add -q -b side "$wb"
(cd "$wb" && init_wt && printf '# the other tree\n' >>kernel/compute.sh && "$OPTLOOP" verify >/dev/null 2>&1)
printf '# this tree\n' >>kernel/compute.sh
wa_cand=$(sha1sum <kernel/compute.sh)
"$OPTLOOP" verify >/dev/null 2>&1
OPTLOOP_FAULT=confirm.best_in_tree "$OPTLOOP" confirm >/dev/null 2>&1
t_is "work tree a: a confirm killed with the best in the tree" "$?" 137
t_is "  its candidate is kept by a ref" "$(git for-each-ref --format='%(objecttype)' refs/optloop/swap/tiny)" tree
(cd "$wb" && "$OPTLOOP" confirm --max-pairs 1 >/dev/null 2>&1)
t_is "work tree b: a whole confirm of the same op ends and drops its own ref" \
	"$(git for-each-ref --format='%(refname)' refs/optloop/wt/ | grep -c /swap/)" 0
t_is "  and leaves work tree a's ref alone" "$(git for-each-ref --format='%(objecttype)' refs/optloop/swap/tiny)" tree
git gc -q --prune=now 2>/dev/null
out=$("$OPTLOOP" status 2>&1)
t_like "after git gc --prune=now, work tree a's next command puts its candidate back" "$out" \
	'swap cut off by a crash was undone'
t_is "  the candidate is in the tree" "$(sha1sum <kernel/compute.sh)" "$wa_cand"
t_like "work tree b's kernel is its own" "$(tail -n 1 "$wb/kernel/compute.sh")" '^# the other tree$'
t_done
