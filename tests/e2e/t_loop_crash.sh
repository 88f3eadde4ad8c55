#!/usr/bin/env bash
# Crash safety of log and commit: SIGKILL at every named write point
# (OPTLOOP_FAULT), restart, and check that status is consistent, nothing
# reported as done is lost, OPT_LOG.md is never half-written, and the loop
# goes on to the next iteration with one commit and one row per iteration.
. "$(dirname "$0")/lib.sh"
mk="$OPTLOOP_ROOT/tests/fixtures/make_tiny_project.sh"

# A repository with iteration 0 committed and iteration 1 measured.
setup() {
	local d=$1
	"$mk" "$d"
	cd "$d" || exit 1
	"$OPTLOOP" init --op tiny --kernel kernel --test-file tests/test_compute.sh \
		--naive ref/naive.sh --verify ./verify --target "2x" --languages sh \
		--promotion "full gate" >/dev/null
	"$OPTLOOP" verify >/dev/null && "$OPTLOOP" log --direction "baseline" >/dev/null &&
		"$OPTLOOP" commit >/dev/null || echo "setup failed in $d" >&2
	sed -i 's/\$(( \$1 \* 2 ))/$(( $1 << 1 ))/' kernel/compute.sh
	"$OPTLOOP" verify >/dev/null || echo "verify 1 failed in $d" >&2
}

state() { "$OPTLOOP" status --json | sed -n 's/^  "state": "\(.*\)",$/\1/p'; }
rows() { grep -cE '^\| [0-9]+ \|' profile/tiny-opt/OPT_LOG.md; }
iter_commits() { git log --format=%B | grep -c '^Optloop-Iter:'; }

# The log file is either the old one or the new one: complete, ending in a
# table row, with a header line and rows 0..N-1 in order.
optlog_whole() {
	local f=profile/tiny-opt/OPT_LOG.md n
	n=$(rows)
	[ "$(tail -c1 "$f" | od -An -c | tr -d ' ')" = '\n' ] || return 1
	grep -q '^| Iter | Direction (one line) | Gate | Bench (median ms) | vs best | Status |$' "$f" || return 1
	[ "$(grep -oE '^\| [0-9]+ \|' "$f" | tr -dc '0-9\n' | tr '\n' ' ')" = "$(seq -s ' ' 0 $((n - 1))) " ]
}

# Finish the loop from wherever the crash left it, then run iteration 2.
finish_and_continue() {
	local s
	s=$(state)
	[ "$s" = measured ] && explain_noise && "$OPTLOOP" log --direction "shift instead of multiply" --status keep --unconfirmed "one run only" >/dev/null
	[ "$(state)" = logged ] && "$OPTLOOP" commit >/dev/null
	sed -i 's/<< 1/+ $1/' kernel/compute.sh
	"$OPTLOOP" verify >/dev/null && "$OPTLOOP" log --direction "add" --status revert >/dev/null &&
		"$OPTLOOP" commit >/dev/null
}

for point in log.begin log.after_db fsutil.before_rename log.after_render; do
	d="$T_TMP/$point"
	setup "$d" 2>&1
	explain_noise
	OPTLOOP_FAULT=$point "$OPTLOOP" log --direction "shift instead of multiply" --status keep --unconfirmed "one run only" >/dev/null 2>&1
	rc=$?
	t_is "log killed at $point" "$rc" 137
	t_ok "OPT_LOG.md whole after a kill at $point" optlog_whole
	s=$(state)
	case $point in
	log.begin) t_is "$point: the row was never recorded, measured again" "$s" measured ;;
	*) t_is "$point: the recorded row survives, commit is due" "$s" logged ;;
	esac
	# status reconciled the file with the database
	if [ "$s" = logged ]; then
		t_is "$point: OPT_LOG.md has the row after restart" "$(rows)" 2
	else
		t_is "$point: OPT_LOG.md has no row 1" "$(rows)" 1
	fi
	t_ok "OPT_LOG.md whole after restart ($point)" optlog_whole
	finish_and_continue
	t_is "$point: loop continued to iteration 3" "$(state)" ready
	t_is "$point: three rows" "$(rows)" 3
	t_is "$point: three optloop commits" "$(iter_commits)" 3
	t_ok "OPT_LOG.md whole at the end ($point)" optlog_whole
done

for point in commit.begin commit.after_git commit.after_db; do
	d="$T_TMP/$point"
	setup "$d" 2>&1
	explain_noise
	"$OPTLOOP" log --direction "shift instead of multiply" --status keep --unconfirmed "one run only" >/dev/null
	OPTLOOP_FAULT=$point "$OPTLOOP" commit >/dev/null 2>&1
	t_is "commit killed at $point" "$?" 137
	s=$(state)
	case $point in
	commit.begin)
		t_is "$point: not committed, commit still due" "$s" logged
		t_is "$point: no commit for iteration 1 yet" "$(iter_commits)" 1 ;;
	*)
		t_is "$point: the commit made is adopted, loop ready" "$s" ready
		t_is "$point: exactly one commit for iteration 1" "$(iter_commits)" 2
		t_exit "$point: a second commit is refused" 3 "$OPTLOOP" commit
		t_is "$point: work tree clean after restart" "$(git status --porcelain)" "" ;;
	esac
	t_ok "OPT_LOG.md whole ($point)" optlog_whole
	finish_and_continue
	t_is "$point: loop continued" "$(state)" ready
	t_is "$point: three rows" "$(rows)" 3
	t_is "$point: three optloop commits, no duplicate" "$(iter_commits)" 3
	t_is "$point: rows cite their commits" \
		"$("$OPTLOOP" export --json | grep -c '"commit_sha": "[0-9a-f]\{40\}"')" 3
done

# log --commit in one process: killed at the log's last write point or at
# any of the commit's, a restart finds the row and at most one commit.
for point in log.after_render commit.begin commit.after_git commit.after_db; do
	d="$T_TMP/one-$point"
	setup "$d" 2>&1
	explain_noise
	OPTLOOP_FAULT=$point "$OPTLOOP" log --direction "shift instead of multiply" --status keep --unconfirmed "one run only" \
		--commit >/dev/null 2>&1
	t_is "log --commit killed at $point" "$?" 137
	t_ok "OPT_LOG.md whole after log --commit was killed at $point" optlog_whole
	t_is "log --commit $point: the row survives" "$(rows)" 2
	s=$(state)
	case $point in
	log.after_render | commit.begin)
		t_is "log --commit $point: commit still due" "$s" logged
		t_is "log --commit $point: no commit for iteration 1 yet" "$(iter_commits)" 1 ;;
	*)
		t_is "log --commit $point: the commit made is adopted" "$s" ready
		t_is "log --commit $point: exactly one commit for iteration 1" "$(iter_commits)" 2 ;;
	esac
	finish_and_continue
	t_is "log --commit $point: loop continued" "$(state)" ready
	t_is "log --commit $point: three rows" "$(rows)" 3
	t_is "log --commit $point: three optloop commits" "$(iter_commits)" 3
done

# A change set aside for the commit comes back even when the commit is
# killed right after restoring it.
d="$T_TMP/aside"
setup "$d" 2>&1
echo "# next idea" >>kernel/compute.sh
t_exit "telescoped change refuses log" 3 "$OPTLOOP" log --direction "shift" --status keep --unconfirmed "one run only"
explain_noise
t_ok "log --set-aside" "$OPTLOOP" log --direction "shift" --status keep --unconfirmed "one run only" --set-aside
t_unlike "the extra change is aside during the commit" "$(cat kernel/compute.sh)" 'next idea'
OPTLOOP_FAULT=commit.after_restore "$OPTLOOP" commit >/dev/null 2>&1
t_is "commit killed after restoring the set-aside change" "$?" 137
t_like "the set-aside change is back" "$(cat kernel/compute.sh)" 'next idea'
t_is "after restart: editing iteration 2" "$(state)" editing
t_unlike "the committed kernel does not hold the extra change" "$(git show HEAD:kernel/compute.sh)" 'next idea'
t_is "no pending set-aside left" "$(git for-each-ref refs/optloop/aside | wc -l)" 0

# The same after a drop: the kernel goes back to the best and only the edit
# returns, also when the commit is killed right after bringing it back.
d="$T_TMP/aside-drop"
setup "$d" 2>&1
best=$(git show HEAD:kernel/compute.sh)
sed -i '1a # next idea' kernel/compute.sh
t_ok "log --set-aside as drop" "$OPTLOOP" log --direction "shift" --status drop --set-aside
OPTLOOP_FAULT=commit.after_restore "$OPTLOOP" commit >/dev/null 2>&1
t_is "drop: commit killed after bringing the edit back" "$?" 137
t_is "drop: the kernel is the best plus the edit" "$(sed '2d' kernel/compute.sh)" "$best"
t_like "drop: the edit is there" "$(sed -n 2p kernel/compute.sh)" '^# next idea$'
t_is "drop: after restart, editing iteration 2" "$(state)" editing
t_is "drop: no pending set-aside left" "$(git for-each-ref refs/optloop/aside | wc -l)" 0

# log --set-aside killed while it puts the measured kernel back: the edit is
# already saved under its ref and the move recorded, so the next command
# finishes the set-aside, and running --set-aside again never overwrites
# the saved edit.
d="$T_TMP/aside-kill"
setup "$d" 2>&1
measured=$(cat kernel/compute.sh)
echo "# next idea" >>kernel/compute.sh
explain_noise
OPTLOOP_FAULT=restore.before_rename "$OPTLOOP" log --direction "shift" --status keep \
	--unconfirmed "one run only" --set-aside >/dev/null 2>&1
t_is "log --set-aside killed in its restore" "$?" 137
t_ok "the kernel is not empty after the kill" test -s kernel/compute.sh
t_is "the edit is saved under its ref" "$(git show refs/optloop/aside/tiny/1:kernel/compute.sh | tail -1)" "# next idea"
out=$("$OPTLOOP" status 2>&1)
t_like "the next command finishes the set-aside" "$out" 'aside cut off by a crash was finished'
t_is "the measured kernel is in the tree" "$(cat kernel/compute.sh)" "$measured"
explain_noise
t_ok "log goes on" "$OPTLOOP" log --direction "shift" --status keep --unconfirmed "one run only"
t_ok "commit goes on" "$OPTLOOP" commit
t_like "after the commit the set-aside edit is back" "$(cat kernel/compute.sh)" 'next idea'
t_is "no pending set-aside left" "$(git for-each-ref refs/optloop/aside | wc -l)" 0

# optloop killed in the middle of a verify run: recorded as incomplete.
d="$T_TMP/verify-kill"
setup "$d" 2>&1
explain_noise
"$OPTLOOP" log --direction "shift" --status keep --unconfirmed "one run only" >/dev/null && "$OPTLOOP" commit >/dev/null
echo "# slow" >>kernel/compute.sh
KERNEL_SLEEP=30 "$OPTLOOP" verify >/dev/null 2>&1 &
pid=$!
for _ in $(seq 100); do
	[ "$(state)" = verifying ] && break
	sleep 0.1
done
t_is "a second optloop sees the run going (read-only)" "$(state)" verifying
t_exit "a second writer is refused while verify runs" 3 "$OPTLOOP" log --direction x --status keep --unconfirmed "one run only"
child=$(pgrep -P $pid | head -1)
kill -9 $pid
wait $pid 2>/dev/null
# the verify command runs in its own process group and outlives optloop
t_ok "the harness outlives the killed optloop" kill -0 "$child"
out=$("$OPTLOOP" status 2>&1)
t_like "the cut-off run is reported" "$out" 'cut off'
t_like "the harness left running is stopped" "$out" 'harness left running by an optloop that was killed'
sleep 0.2
# gone, or a zombie its new parent has not reaped yet
t_unlike "and it is gone" "$(ps -o stat= -p "$child" 2>/dev/null)" '^[^Z]'
t_is "the cut-off run is an attempt, not an iteration: the change is still being edited" \
	"$(state)" editing
t_like "status names the attempt" "$("$OPTLOOP" status)" 'attempt: +it was killed before a gate verdict \(gate incomplete'
t_like "an attempt gets no row" "$("$OPTLOOP" log --direction slow --status drop 2>&1)" 'was an attempt, not an iteration'
t_exit "and verify may run again" 0 "$OPTLOOP" verify
t_is "which measures the iteration" "$(state)" measured
t_like "the cut-off run's raw output is kept beside it" \
	"$(ls profile/tiny-opt/trace/)" 'iter-2\.attempt-[0-9]+\.log'

# A drop's restore killed while it writes the kernel: the file is the
# candidate or the best, never empty or half-written, and the next command
# finishes the restore (each file goes to a temp file and is renamed over).
for point in restore.before_rename restore.after_checkout; do
	d="$T_TMP/$point"
	setup "$d" 2>&1
	best=$(git show HEAD:kernel/compute.sh)
	"$OPTLOOP" log --direction "shift instead of multiply" --status drop >/dev/null
	cand=$(cat kernel/compute.sh)
	OPTLOOP_FAULT=$point "$OPTLOOP" commit >/dev/null 2>&1
	t_is "$point: the commit was killed in the restore" "$?" 137
	now=$(cat kernel/compute.sh)
	t_ok "$point: the kernel is not empty" test -s kernel/compute.sh
	if [ "$now" != "$cand" ] && [ "$now" != "$best" ]; then
		t_fail "$point: the kernel is the candidate or the best" "$now"
	else
		t_pass "$point: the kernel is the candidate or the best"
	fi
	t_unlike "$point: no temp file is taken for kernel content" \
		"$("$OPTLOOP" status 2>&1)" 'changed after|telescop'
	"$OPTLOOP" status >/dev/null 2>&1
	t_is "$point: the next command finishes the restore" "$(cat kernel/compute.sh)" "$best"
	t_is "$point: the loop is ready for the next change" "$(state)" ready
	t_is "$point: no temp file is left" "$(git status --porcelain)" ""
done
# A drop committed, its restore cut off, and git's index left locked: the
# tree holds the best again but HEAD the dropped change, and verify must not
# measure that as the next iteration; once the lock is gone the next command
# commits the restore.
d="$T_TMP/restore-locked"
setup "$d" 2>&1
"$OPTLOOP" log --direction "shift" --status drop >/dev/null
OPTLOOP_FAULT=restore.after_checkout "$OPTLOOP" commit >/dev/null 2>&1
t_is "commit killed between the restore and its commit" "$?" 137
touch .git/index.lock
out=$("$OPTLOOP" verify 2>&1); rc=$?
t_is "verify refuses while the restore is not committed (exit 3)" "$rc" 3
t_like "  saying why and what to do" "$out" \
	"restore of the best kernel after it is not \(git's index is locked\).*remove \.git/index\.lock"
t_is "  no run was recorded for iteration 2" \
	"$(sqlite3 profile/tiny-opt/optloop.db "SELECT count(*) FROM runs WHERE iter = 2")" 0
rm -f .git/index.lock
t_is "with the lock gone the restore is committed: ready" "$(state)" ready
t_like "  by its own commit" "$(git log -1 --format=%B)" '^Optloop-Restore: 1$'

# A kernel change committed by hand between iterations: verify refuses (it
# would read as no change, and a drop's restore would quietly undo it).
d="$T_TMP/hand-commit"
setup "$d" 2>&1
"$OPTLOOP" log --direction "shift" --status drop --commit >/dev/null
echo "# by hand" >>kernel/compute.sh
git commit -qam "tweak the kernel by hand"
out=$("$OPTLOOP" verify 2>&1); rc=$?
t_is "verify after a hand commit of the kernel: exit 3" "$rc" 3
t_like "  saying what happened and the two ways on" "$out" \
	"a commit made since iteration 1 changed the kernel.*git reset --soft.*git revert"
git reset -q --soft HEAD~1
t_is "after git reset --soft the change is this iteration's: editing" "$(state)" editing
t_ok "  and verify measures it" "$OPTLOOP" verify

# A drop's commit killed while git wrote its index, as the lock file shows:
# the dropped kernel is left staged.  Once the lock is removed, the next
# command puts the kernel's index entries back to HEAD, and a plain git
# commit cannot bring the dropped change back.
d="$T_TMP/index-staged"
setup "$d" 2>&1
"$OPTLOOP" log --direction "shift" --status drop --commit >/dev/null
iter1=$(git log --format=%H --grep='^Optloop-Iter: 1$' -1)
git restore --source="$iter1" --staged kernel/compute.sh
touch .git/index.lock
out=$("$OPTLOOP" status 2>&1)
t_like "with the lock there, status says so" "$out" 'index.lock is there'
t_like "  and the dropped kernel is still staged (nothing touched under the lock)" \
	"$(rm -f .git/index.lock; git diff --cached --stat; touch .git/index.lock)" 'compute.sh'
rm -f .git/index.lock
out=$("$OPTLOOP" status 2>&1)
t_like "with the lock removed the next command resets the kernel's index entries" "$out" \
	"git's index held iteration 1's dropped kernel"
t_is "  nothing of the kernel is staged" "$(git diff --cached --name-only)" ""
t_is "  the work tree keeps the best" "$(git status --porcelain -- kernel)" ""
git commit -qm "a commit by hand" 2>/dev/null
t_unlike "  a git commit by hand does not bring the dropped change back" \
	"$(git show HEAD:kernel/compute.sh)" '<< 1'

# A write killed before its rename leaves NAME.tmp.PID: the next writer
# removes it (the file itself is whole).
: >profile/tiny-opt/OPT_LOG.md.tmp.4242
: >profile/tiny-opt/docs/draft.md.tmp.77
: >profile/tiny-opt/notes.tmp.x
out=$("$OPTLOOP" status 2>&1)
t_like "the next command removes the leftover temp files" "$out" '2 temp files of a write cut off'
t_ok "  OPT_LOG.md's is gone" test ! -e profile/tiny-opt/OPT_LOG.md.tmp.4242
t_ok "  docs/draft.md's is gone" test ! -e profile/tiny-opt/docs/draft.md.tmp.77
t_ok "  a file that only looks alike stays" test -e profile/tiny-opt/notes.tmp.x

t_done
