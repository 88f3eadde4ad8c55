#!/usr/bin/env bash
# `optloop log ... --commit`: the row and its commit in one process.  The
# same result as log then commit (row, commit, trailers, JSON), the same
# refusals, nothing written when the commit would be refused up front, and
# a row that stays logged when the commit itself fails; a long direction is
# cut at a word boundary in the commit's subject.
. "$(dirname "$0")/lib.sh"
mk="$OPTLOOP_ROOT/tests/fixtures/make_tiny_project.sh"
d="$T_TMP/tiny"
"$mk" "$d" >/dev/null
cd "$d" || exit 1
"$OPTLOOP" init --op tiny --kernel kernel --test-file tests/test_compute.sh --naive ref/naive.sh \
	--verify ./verify --target 2x --languages sh --promotion "full gate" >/dev/null

state() { "$OPTLOOP" status --json | sed -n 's/^  "state": "\(.*\)",$/\1/p'; }
rows() { grep -cE '^\| [0-9]+ \|' profile/tiny-opt/OPT_LOG.md; }
jget() {
	python3 -c 'import json,sys
v=json.load(sys.stdin)
for k in sys.argv[1].split("."):
    v=v[int(k)] if isinstance(v,list) else v[k]
print("null" if v is None else v)' "$1"
}

# refusals before anything is measured
head0=$(git rev-parse HEAD)
t_exit "log --commit before the baseline is refused" 3 "$OPTLOOP" log --direction x --commit
t_exit "log --commit without --direction is a usage error" 2 "$OPTLOOP" log --commit
t_is "nothing was committed" "$(git rev-parse HEAD)" "$head0"

# the baseline in one call, with JSON
"$OPTLOOP" verify >/dev/null 2>&1
out=$("$OPTLOOP" log --direction "baseline" --commit --json); rc=$?
t_is "log --commit the baseline" "$rc" 0
t_is "JSON: iteration" "$(printf '%s' "$out" | jget iteration)" 0
t_is "JSON: status" "$(printf '%s' "$out" | jget status)" base
t_is "JSON: gate" "$(printf '%s' "$out" | jget gate)" pass
t_is "JSON: the commit is HEAD" "$(printf '%s' "$out" | jget commit)" "$(git rev-parse HEAD)"
t_is "JSON: state after the commit" "$(printf '%s' "$out" | jget state)" ready
t_like "JSON: next step" "$(printf '%s' "$out" | jget next)" 'make one change to the kernel'
t_is "state ready" "$(state)" ready
t_like "the Baseline line cites the commit" "$(cat profile/tiny-opt/OPT_LOG.md)" \
	"^Baseline \\(main\\): [0-9.]+ ms \\(iter 0, $(git rev-parse --short=7 HEAD)\\)"
t_like "the commit carries the row" "$(git log -1 --format=%B)" '^Optloop-Iter: 0$'

# an iteration in one call, text output
sed -i 's/\$(( \$1 \* 2 ))/$(( $1 << 1 ))/' kernel/compute.sh
echo "scratch" >notes.txt
echo notes.txt >>.git/info/exclude
"$OPTLOOP" verify >/dev/null 2>&1
explain_noise
out=$("$OPTLOOP" log --direction "shift instead of multiply" --status keep --unconfirmed "one run only" --commit); rc=$?
t_is "log --commit iteration 1" "$rc" 0
t_like "says what it logged" "$out" '^logged: \| 1 \| shift instead of multiply \| pass \|'
t_like "and what it committed" "$out" "committed iteration 1 as $(git rev-parse --short=12 HEAD)"
t_like "and the next step" "$out" 'next: make one change to the kernel, then run optloop verify \(iteration 2\)'
t_is "the commit holds only the kernel" "$(git show --format= --name-only HEAD)" kernel/compute.sh
t_like "the other (ignored) file stays in the work tree" "$(git status --porcelain --ignored)" 'notes.txt'
rm -f notes.txt
t_is "one row per iteration" "$(rows)" 2
t_is "one commit per iteration" "$(git log --format=%B | grep -c '^Optloop-Iter:')" 2
t_is "the index agrees with HEAD for the kernel" "$(git diff --cached --name-only)" ""

# refused with nothing measured; refused when already logged
t_exit "log --commit with nothing measured is refused" 3 "$OPTLOOP" log --direction x --status keep --unconfirmed "one run only" --commit
sed -i 's/<< 1/+ $1/' kernel/compute.sh
"$OPTLOOP" verify >/dev/null 2>&1
explain_noise
"$OPTLOOP" log --direction "add" --status keep --unconfirmed "one run only" >/dev/null
t_exit "log --commit on a logged iteration is refused" 3 "$OPTLOOP" log --direction again --status keep --unconfirmed "one run only" --commit
t_like "naming the step due" "$("$OPTLOOP" log --direction again --status keep --unconfirmed "one run only" --commit 2>&1)" \
	'already logged; commit it'
t_ok "commit finishes it" "$OPTLOOP" commit

# refused up front, nothing written: a frozen file changed
sed -i 's/+ \$1/* 2/' kernel/compute.sh
"$OPTLOOP" verify >/dev/null 2>&1
echo "# loosened" >>tests/test_compute.sh
explain_noise
out=$("$OPTLOOP" log --direction "back to times" --status keep --unconfirmed "one run only" --commit 2>&1); rc=$?
t_is "a changed frozen file refuses log --commit" "$rc" 3
t_like "naming the file" "$out" 'log --commit refused: frozen file tests/test_compute.sh changed'
t_is "no row was written" "$(rows)" 3
t_is "still measured" "$(state)" measured
git checkout -q tests/test_compute.sh

# refused up front: no git identity
git config --unset user.name && git config --unset user.email
explain_noise
out=$(HOME="$T_TMP/nohome" GIT_CONFIG_NOSYSTEM=1 "$OPTLOOP" log --direction "back to times" \
	--status keep --unconfirmed "one run only" --commit 2>&1); rc=$?
t_is "no git identity refuses log --commit (exit 3)" "$rc" 3
t_like "saying how to set it" "$out" 'git config user.name'
t_is "no row was written without an identity" "$(rows)" 3
git config user.name "optloop test" && git config user.email test@optloop.invalid

# the commit itself fails after the row is written: the row stays, commit finishes
touch .git/refs/heads/main.lock
explain_noise
out=$("$OPTLOOP" log --direction "back to times" --status keep --unconfirmed "one run only" --commit 2>&1); rc=$?
t_is "a commit git's lock file blocks exits 3 (busy)" "$rc" 3
t_like "naming the lock file and how to remove it" "$out" "lock file .*main\.lock is there.*rm '.*main\.lock'"
t_like "says the row is logged and what to run" "$out" \
	'iteration 3 is logged, but its commit failed .*run optloop commit'
t_is "the row is there" "$(rows)" 4
t_is "state logged" "$(state)" logged
rm -f .git/refs/heads/main.lock
t_ok "optloop commit finishes the iteration" "$OPTLOOP" commit
# three rows without a confirmed win may stall the loop (timing noise decides)
t_like "committed: ready (or stalled)" "$(state)" '^(ready|stalled)$'
t_is "still one commit per row" "$(git log --format=%B | grep -c '^Optloop-Iter:')" 4
if [ "$(state)" = stalled ]; then
	perf_report >profile/tiny-opt/trace/after-stall.txt
	"$OPTLOOP" reassess --profile profile/tiny-opt/trace/after-stall.txt --axes a \
		--techniques t --next n >/dev/null
fi

# telescoping: --set-aside with --commit
sed -i 's/\* 2/+ $1 + 0/' kernel/compute.sh
"$OPTLOOP" verify >/dev/null 2>&1
# (the edit away from the measured line: one that touches it or its
# neighbours overlaps the dropped change, see t_one_judgment)
sed -i '1a # next idea' kernel/compute.sh
t_exit "a telescoped change refuses log --commit" 3 "$OPTLOOP" log --direction add --status drop --commit
t_ok "log --set-aside --commit" "$OPTLOOP" log --direction add --status drop --set-aside --commit
t_unlike "the commit does not hold the extra change" "$(git show HEAD~1:kernel/compute.sh)" 'next idea'
t_like "the drop is followed by the restore commit" "$(git log -1 --format=%B)" '^Optloop-Restore: 4$'
t_like "the extra change is back in the work tree" "$(cat kernel/compute.sh)" 'next idea'
t_unlike "without the dropped change under it" "$(cat kernel/compute.sh)" '\+ 0'
t_is "no pending set-aside left" "$(git for-each-ref refs/optloop/aside | wc -l)" 0
# A detached HEAD: optloop's commits would be on no branch (and lost to git
# gc after the next checkout): log --commit refuses before writing the row.
# (Measured there, a branch made at the same commit takes the commit.)
echo "# detached" >>kernel/compute.sh
git checkout -q --detach
"$OPTLOOP" verify >/dev/null 2>&1
rows_before=$(rows)
out=$("$OPTLOOP" log --direction "on a detached HEAD" --status drop --commit 2>&1); rc=$?
t_is "log --commit on a detached HEAD: exit 3" "$rc" 3
t_like "  saying why and to create a branch" "$out" 'HEAD is detached .*git switch -c'
t_is "  no row was written" "$(rows)" "$rows_before"
git switch -qc opt-work
t_ok "on a branch it goes on" "$OPTLOOP" log --direction "on a branch" --status drop --commit

# A long direction: the commit's subject keeps at most 60 bytes of it, cut at
# a word boundary and marked with "…"; the trailer keeps it whole.
subject_check() { # subject_check word|char DIRECTION SUBJECT: where the cut must be
	python3 - "$2" "$3" "$1" <<'PY'
import sys
d, subj = sys.argv[1], sys.argv[2]
import re
head = re.match(r"optloop\(tiny\): iter \d+ \w+: (.*)$", subj).group(1)
assert head.endswith("\u2026"), "no ellipsis: " + head
cut = head[:-1]
assert len(head.encode()) <= 60, "longer than 60 bytes: %d" % len(head.encode())
assert d.startswith(cut), "not a prefix of the direction: " + cut
if sys.argv[3] == "word":
    assert d[len(cut)] == " " and not cut.endswith(" "), "cut inside a word: " + cut
PY
}
unstall() { # rows without a win stall the loop: re-assess to go on
	[ "$(state)" = stalled ] || return 0
	perf_report >profile/tiny-opt/trace/long-direction.txt
	"$OPTLOOP" reassess --profile profile/tiny-opt/trace/long-direction.txt --axes a \
		--techniques t --next n >/dev/null
}
long="fuse the two passes over the rows into one and keep the partial sums in registers between tiles"
printf '# long\n' >>kernel/compute.sh
"$OPTLOOP" verify >/dev/null 2>&1
"$OPTLOOP" log --direction "$long" --status drop --commit >/dev/null
subj=$(git log -1 --skip=1 --format=%s) # HEAD is the drop's restore
unstall
t_like "a long direction: the subject says the iteration" "$subj" '^optloop\(tiny\): iter [0-9]+ drop: fuse the two'
t_ok "  cut at a word boundary, within 60 bytes, with an ellipsis" subject_check word "$long" "$subj"
t_like "  the trailer keeps the whole direction" "$(git log -1 --skip=1 --format=%B)" \
	"^Optloop-Direction: $long\$"
# one long word of two-byte characters (the 60th byte inside one): cut
# between characters, still "…"
word=$(python3 -c 'print("\u00e9" * 45)')
printf '# long word\n' >>kernel/compute.sh
"$OPTLOOP" verify >/dev/null 2>&1
"$OPTLOOP" log --direction "op $word" --status drop --commit >/dev/null
subj=$(git log -1 --skip=1 --format=%s)
t_ok "  a long word of multibyte characters: cut between characters" subject_check char "op $word" "$subj"
t_ok "  the subject is valid UTF-8" python3 -c 'import sys; sys.argv[1].encode("utf-8", "surrogateescape").decode("utf-8")' "$subj"
unstall

# A file outside the kernel and the frozen scope edited with the kernel:
# refused, then made part of the kernel with consent (--include): committed
# with the kernel, and put back by a drop's restore.  One a commit changed
# after the best is refused (the drop would put back the best's version).
mkdir -p lib && printf 'echo helper\n' >lib/helper.sh && git add lib && git commit -qm "a helper"
printf '# measured with the harness edit\n' >>kernel/compute.sh
printf '# the harness, edited\n' >>verify
printf 'echo new\n' >lib/new.sh
printf 'echo faster helper\n' >lib/helper.sh
out=$("$OPTLOOP" verify 2>&1); rc=$?
t_is "edits outside the kernel: verify refuses (exit 3)" "$rc" 3
t_like "  naming each, modified or new" "$out" \
	'3 files outside the kernel and the frozen scope changed: .*lib/helper.sh \(modified\).*lib/new.sh \(new\).*verify \(modified\)'
out=$("$OPTLOOP" verify --include tests/test_compute.sh 2>&1); rc=$?
t_is "  --include of a frozen file is refused" "$rc" 3
t_like "  saying it is frozen" "$out" '--include tests/test_compute.sh is frozen'
# --include is held to what init holds a kernel path to
t_exit "  --include . (the whole repository) is a usage error" 2 "$OPTLOOP" verify --include .
t_like "  saying why" "$("$OPTLOOP" verify --include . 2>&1)" '--include \. is the whole repository'
t_exit "  --include .git is a usage error" 2 "$OPTLOOP" verify --include .git/hooks
t_like "  saying it lies in git's directory" "$("$OPTLOOP" verify --include .git/hooks 2>&1)" "lies in git's own directory"
t_exit "  --include of a path that exists nowhere is a usage error" 2 "$OPTLOOP" verify --include lib/nope.sh
t_like "  saying so" "$("$OPTLOOP" verify --include lib/nope.sh 2>&1)" 'no such file or directory, in the tree or in HEAD'
t_exit "  --include profile/ is a usage error" 2 "$OPTLOOP" verify --include profile/tiny-opt
"$OPTLOOP" init --op other --kernel lib --test-file tests/test_compute.sh --naive ref/naive.sh \
	--verify ./verify >/dev/null
out=$("$OPTLOOP" --op tiny verify --include lib/new.sh 2>&1); rc=$?
t_is "  --include of another workspace's kernel is refused (exit 3)" "$rc" 3
t_like "  naming the op and where to change it" "$out" \
	"--include lib/new.sh is in op other's kernel \(lib\).*optloop --op other"
rm -rf profile/other-opt
t_is "  after all of these the workspace is as it was" "$("$OPTLOOP" status --json | jget state)" editing
out=$("$OPTLOOP" verify --include lib/helper.sh --include lib/new.sh --include verify 2>&1); rc=$?
t_is "  --include of a file a commit changed after the best is refused" "$rc" 3
t_like "  saying a drop would lose that commit's version" "$out" \
	'--include lib/helper.sh: a commit after the best .* changed it, so a drop would put back the best'
git checkout -q -- lib/helper.sh
t_exit "  with the others included it runs" 0 "$OPTLOOP" verify --include lib/new.sh --include verify
t_is "  and they are kernel files from now on" \
	"$("$OPTLOOP" status --json | python3 -c 'import json,sys; print(" ".join(json.load(sys.stdin)["kernel"]))')" \
	'kernel lib/new.sh verify'
t_ok "  the consent is an event" sh -c "'$OPTLOOP' export --json | grep -q 'made part of the kernel by --include: lib/new.sh, verify'"
t_ok "  dropped and committed" "$OPTLOOP" log --direction "the harness and the kernel" --status drop --commit
t_is "  the iteration's commit holds all three" "$(git show --format= --name-only HEAD~1 | sort | tr '\n' ' ')" \
	"kernel/compute.sh lib/new.sh verify "
t_unlike "  the drop put the harness back" "$(cat verify)" 'the harness, edited'
t_ok "  and removed the new file" test ! -e lib/new.sh
t_is "  nothing is left changed" "$(git status --porcelain)" ""

t_done
