#!/usr/bin/env bash
# The loop's protocol through the CLI on a tiny project: states, every
# refusal (exit 3) and usage error (exit 2), JSON keys, the single writer,
# telescoping, no-change and failed-gate iterations, reconciliation.
. "$(dirname "$0")/lib.sh"
mk="$OPTLOOP_ROOT/tests/fixtures/make_tiny_project.sh"
d="$T_TMP/tiny"
"$mk" "$d"
cd "$d" || exit 1

state() { "$OPTLOOP" status --json | sed -n 's/^  "state": "\(.*\)",$/\1/p'; }
# jget KEY.PATH < JSON: one value (lists joined by spaces)
jget() {
	python3 -c 'import json,sys
v=json.load(sys.stdin)
for k in sys.argv[1].split("."):
    v=v[int(k)] if isinstance(v,list) else v[k]
print(" ".join(map(str,v)) if isinstance(v,list) else ("null" if v is None else v))' "$1"
}

t_exit "status outside a workspace is a usage error" 2 "$OPTLOOP" status
t_like "and says how to start" "$("$OPTLOOP" status 2>&1)" 'optloop init --op'
t_exit "init without --op is a usage error" 2 "$OPTLOOP" init
t_exit "init with a path in the op name is refused" 2 "$OPTLOOP" init --op ../evil --kernel kernel --test-file tests/test_compute.sh --naive ref/naive.sh --verify ./verify
out=$("$OPTLOOP" init --op 'chunk_é' 2>&1); rc=$?
t_is "a non-ASCII op name is a usage error" "$rc" 2
t_like "  naming the whole character, not half of it" "$out" "contains 'é'; use ASCII letters"
t_is "  and the message is valid UTF-8" "$(printf '%s' "$out" | iconv -f UTF-8 -t UTF-8 >/dev/null 2>&1; echo $?)" 0
out=$("$OPTLOOP" init --op $'a\e]52;c;eA==\a' 2>&1)
t_like "an op name with an escape sequence is shown spelled out" "$out" "op name 'a\\\\e\\]52;c;eA==\\\\x07' contains '\\\\e'"
t_unlike "  no raw escape byte reaches the terminal" "$out" $'\e'
out=$("$OPTLOOP" init --op "$(printf 'é%.0s' $(seq 40))" 2>&1)
t_like "a long name is cut at a character boundary" "$out" "'(é){32}\\.\\.\\.' is longer than 64 bytes"
out=$("$OPTLOOP" init --op tiny 2>&1); rc=$?
t_is "init in a repository that is not FLA-shaped needs options" "$rc" 2
t_like "and names them" "$out" 'not FLA-shaped.*--test-file PATH --naive PATH \(or --frozen PATH\) --kernel PATH --verify CMD'
t_exit "init with a missing kernel path is a usage error" 2 "$OPTLOOP" init --op tiny --kernel nope --test-file tests/test_compute.sh --naive ref/naive.sh --verify ./verify
out=$("$OPTLOOP" init --op tiny --kernel kernel --test-file tests/test_compute.sh --naive ref/naive.sh --verify ./verify 2>&1)
t_is "init exits 0" "$?" 0
t_like "init says it excluded profile/" "$out" 'added /profile/ to .git/info/exclude'
t_ok "profile/ is now ignored" git check-ignore -q profile/tiny-opt/OPT_LOG.md
for f in docs/draft.md OPT_LOG.md dispatch.md optloop.db; do
	t_ok "init created $f" test -f "profile/tiny-opt/$f"
done
t_ok "init created trace/" test -d profile/tiny-opt/trace
t_is "the work tree stays clean" "$(git status --porcelain)" ""
t_exit "a second init is refused" 3 "$OPTLOOP" init --op tiny --kernel kernel --test-file tests/test_compute.sh --naive ref/naive.sh --verify ./verify

# NO_CONTRACT: only contract editing
t_is "state no_contract" "$(state)" no_contract
t_exit "contract --check fails while incomplete" 1 "$OPTLOOP" contract --check
t_like "and explains what is missing" "$("$OPTLOOP" contract --check)" 'Target'
t_exit "verify refused without a contract" 3 "$OPTLOOP" verify
t_like "and says why" "$("$OPTLOOP" verify 2>&1)" 'verify refused: the task contract is incomplete'
t_exit "an unknown contract field is a usage error" 2 "$OPTLOOP" contract --set colour=blue
t_exit "--set without = is a usage error" 2 "$OPTLOOP" contract --set target
t_ok "contract --set fills fields" "$OPTLOOP" contract --set "target=N up to 50, 2x" --set languages=sh --set "promotion=full gate, confirmed win"
t_ok "contract --check passes" "$OPTLOOP" contract --check
t_like "the file keeps the value" "$(cat profile/tiny-opt/docs/draft.md)" 'N up to 50, 2x'
# A Validation section with prose beside its fenced block would run the
# prose through /bin/sh -c; two Validation sections would run the first.
D=profile/tiny-opt/docs/draft.md
cp $D "$T_TMP/draft.good"
python3 - "$D" "$T_TMP/prose-ran" <<'PY'
import sys
p, ran = sys.argv[1], sys.argv[2]
s = open(p).read()
i, j = s.index("## Validation command"), s.index("## Benchmark command")
open(p, "w").write(s[:i] + "## Validation command\n\nRun it from the root; then touch " + ran +
                   "\n\n```sh\n./verify\n```\n\n" + s[j:])
PY
out=$("$OPTLOOP" verify 2>&1); rc=$?
t_is "prose beside the fenced validation command: verify refuses (exit 2)" "$rc" 2
t_like "  saying what is wrong and what to do" "$out" \
	'Validation command in docs/draft.md holds text beside its fenced block.*leave only the command'
t_ok "  and nothing ran" test ! -e "$T_TMP/prose-ran"
t_exit "contract --check names it (exit 1)" 1 "$OPTLOOP" contract --check
t_like "  as what is missing" "$("$OPTLOOP" contract --check)" 'holds text beside its fenced block'
t_ok "contract --set mends it, as the message says" "$OPTLOOP" contract --set validation=./verify
t_ok "  and the contract is complete again" "$OPTLOOP" contract --check
printf '\n## Validation command\n\n./verify --other\n' >>$D
out=$("$OPTLOOP" status 2>&1); rc=$?
t_is "two Validation sections: refused (exit 2)" "$rc" 2
t_like "  saying only the first would run" "$out" 'gives the Validation command 2 times, and optloop would run only the first; delete all but one'
cp "$T_TMP/draft.good" $D
t_ok "the draft put back: complete" "$OPTLOOP" contract --check

# NEED_BASELINE
t_is "state need_baseline" "$(state)" need_baseline
t_exit "log before the baseline is refused" 3 "$OPTLOOP" log --direction x
t_exit "commit before the baseline is refused" 3 "$OPTLOOP" commit
t_exit "the baseline needs the full gate" 3 "$OPTLOOP" verify --gate-k N1
echo "# tweak" >>kernel/compute.sh
t_like "the baseline needs the unmodified kernel" "$("$OPTLOOP" verify 2>&1)" 'unmodified kernel'
git checkout -q kernel/compute.sh
out=$("$OPTLOOP" verify --json 2>/dev/null); rc=$?
t_is "baseline verify passes" "$rc" 0
t_like "verify --json: gate" "$out" '"gate": "pass"'
t_like "verify --json: scope full" "$out" '"scope": "full"'
t_like "verify --json: a bench number" "$out" '"bench_ms": [0-9]'
t_like "verify --json: no change for the baseline" "$out" '"no_change": true'
t_like "verify --json: the parsed result" "$out" '"result": \{'
t_ok "raw output in trace/iter-0.log" grep -q 'GATE PASSED' profile/tiny-opt/trace/iter-0.log

# MEASURED
t_is "state measured" "$(state)" measured
t_exit "verify refused while measured-not-logged" 3 "$OPTLOOP" verify
t_like "naming the step due" "$("$OPTLOOP" verify 2>&1)" 'iteration 0 is measured but OPT_LOG.md has no row for it yet \(run optloop log first\)'
t_exit "commit refused before log" 3 "$OPTLOOP" commit
t_exit "log without --direction is a usage error" 2 "$OPTLOOP" log
t_exit "a bad status word is a usage error" 2 "$OPTLOOP" log --direction x --status maybe
t_exit "the baseline's status can only be base" 2 "$OPTLOOP" log --direction x --status keep --unconfirmed "one run only"
out=$("$OPTLOOP" log --direction "baseline | pristine" --json); rc=$?
t_is "log the baseline" "$rc" 0
t_like "log --json status base" "$out" '"status": "base"'

# LOGGED
t_is "state logged" "$(state)" logged
t_exit "verify refused while logged-not-committed" 3 "$OPTLOOP" verify
t_like "naming the step due" "$("$OPTLOOP" verify 2>&1)" 'logged but not committed \(run optloop commit\)'
t_exit "a second log is refused" 3 "$OPTLOOP" log --direction again
out=$("$OPTLOOP" commit --json); rc=$?
t_is "commit the baseline" "$rc" 0
t_like "commit --json carries the sha" "$out" '"commit": "[0-9a-f]{40}"'
t_like "the escaped pipe is in OPT_LOG.md" "$(cat profile/tiny-opt/OPT_LOG.md)" '\| 0 \| baseline \\\| pristine \| pass \| [0-9.]+ \| — \| base \|'
t_like "Baseline line cites the commit" "$(cat profile/tiny-opt/OPT_LOG.md)" '^Baseline \(main\): [0-9.]+ ms \(iter 0, [0-9a-f]{7}\)'

# READY -> a no-change iteration is an iteration too
t_is "state ready" "$(state)" ready
t_like "status text names the next step" "$("$OPTLOOP" status)" 'next: +make one change to the kernel, then run optloop verify \(iteration 1\)'
t_exit "commit refused with nothing logged" 3 "$OPTLOOP" commit
t_exit "log refused with nothing measured" 3 "$OPTLOOP" log --direction x --status keep --unconfirmed "one run only"
out=$("$OPTLOOP" verify --json 2>/dev/null)
t_like "a no-change run is recorded as such" "$out" '"no_change": true'
t_ok "and logged" "$OPTLOOP" log --direction "re-measure, no change" --status drop
t_ok "and committed (an empty commit)" "$OPTLOOP" commit
t_is "iteration 1's commit is empty" "$(git show --format= --name-only HEAD)" ""

# EDITING -> a failed gate is an iteration too
sed -i 's/\* 2/* 3/' kernel/compute.sh
echo "scratch" >notes.txt
t_is "state editing" "$(state)" editing
# a change outside the kernel and the frozen scope: measured with the kernel,
# never committed, left behind by a drop; refused until it is undone,
# ignored, or made part of the kernel
out=$("$OPTLOOP" verify 2>&1); rc=$?
t_is "a file outside the kernel and the frozen scope: verify refuses (exit 3)" "$rc" 3
t_like "  naming it and the ways on" "$out" \
	'1 file outside the kernel and the frozen scope changed: notes.txt \(new\)\..*git-ignore it.*optloop verify --include notes.txt'
t_is "  nothing ran" "$(state)" editing
echo notes.txt >>.git/info/exclude
"$OPTLOOP" verify >/dev/null 2>&1
t_is "verify exits 1 on a failed gate" "$?" 1
t_ok "the failed gate is logged" "$OPTLOOP" log --direction "times three" --status revert
t_like "as FAIL with no bench" "$(cat profile/tiny-opt/OPT_LOG.md)" '\| 2 \| times three \| FAIL \| — \| — \| revert \|'
t_ok "and committed" "$OPTLOOP" commit
# a revert row: the iteration's commit, then a commit restoring the best kernel
t_is "the commit holds only the kernel, not the other edit" "$(git show --format= --name-only HEAD~1)" "kernel/compute.sh"
t_like "the ignored file is still in the work tree" "$(git status --porcelain --ignored)" 'notes.txt'
rm -f notes.txt
t_like "the revert is followed by a restore commit" "$(git log -1 --format=%B)" '^Optloop-Restore: 2$'
t_like "which puts the best (baseline) kernel back" "$(cat kernel/compute.sh)" '\$1 \* 2'
msg=$(git log -1 --skip=1 --format=%B)
t_like "the message carries the iteration" "$msg" '^Optloop-Iter: 2$'
t_like "the gate" "$msg" '^Optloop-Gate: FAIL$'
t_like "the status" "$msg" '^Optloop-Status: revert$'
t_like "the direction" "$msg" '^Optloop-Direction: times three$'

# telescoping
sed -i 's/\* 3/* 2/' kernel/compute.sh
"$OPTLOOP" verify --gate-k N1 >/dev/null 2>&1
t_like "a -k run is a subset" "$("$OPTLOOP" export --json | grep '"scope"' | tail -1)" '"scope": 2'
echo "# second idea" >>kernel/compute.sh
t_is "status reports telescoping" "$("$OPTLOOP" status --json | grep -c '"telescoped": true')" 1
t_exit "log refused after a telescoped edit" 3 "$OPTLOOP" log --direction "back to two" --status keep --unconfirmed "one run only"
t_like "offering the set-aside" "$("$OPTLOOP" log --direction x --status keep --unconfirmed "one run only" 2>&1)" 'set-aside'
sed -i '$d' kernel/compute.sh
explain_noise
t_ok "undoing the extra edit lets log go on" "$OPTLOOP" log --direction "back to two" --status keep --unconfirmed "one run only"
t_like "the -k row says so" "$(cat profile/tiny-opt/OPT_LOG.md)" '\| 3 \| back to two \| pass \(-k\) \|'
echo "# third idea" >>kernel/compute.sh
t_exit "commit refused after a telescoped edit" 3 "$OPTLOOP" commit
t_ok "commit --set-aside" "$OPTLOOP" commit --set-aside
t_unlike "the commit does not hold the extra edit" "$(git show HEAD:kernel/compute.sh)" 'third idea'
t_like "the extra edit is back in the work tree" "$(cat kernel/compute.sh)" 'third idea'
t_is "not telescoped any more" "$("$OPTLOOP" status --json | jget telescoped)" False
# rows 1 and 3 changed nothing in the kernel (row 3's edit put back what the
# restore had already put back): they tried no direction, and only row 2
# counts toward the stall
t_is "rows that changed nothing do not count toward the stall" \
	"$(state) $("$OPTLOOP" status --json | jget stall.count)" "editing 1"

# status --json keys
j=$("$OPTLOOP" status --json)
for k in state iteration next best kernel frozen workspace; do
	t_like "status --json has $k" "$j" "\"$k\": "
done
t_is "best is the last keep, the -k row kept unconfirmed" \
	"$(printf '%s' "$j" | jget best.iter) $(printf '%s' "$j" | jget best.unconfirmed)" "3 True"
t_is "kernel lists the kernel path" "$(printf '%s' "$j" | jget kernel)" kernel
t_is "frozen lists the test and the reference" "$(printf '%s' "$j" | jget frozen)" "tests/test_compute.sh ref/naive.sh"
t_like "workspace is absolute" "$j" "\"workspace\": \"$d/profile/tiny-opt\""
t_like "status text names the next step" "$("$OPTLOOP" status)" 'next: +run optloop verify to measure iteration 4'

# reconciliation: a row citing a commit that is gone, an optloop commit without a row
git checkout -q kernel/compute.sh
git -c user.name=x -c user.email=x@x commit -q --allow-empty -m "stray

Optloop-Op: tiny
Optloop-Iter: 9
Optloop-Status: keep"
out=$("$OPTLOOP" status 2>&1)
t_like "a commit without a row is reported with a repair" "$out" 'carries iteration 9.*repair'
r3=$(git rev-parse HEAD~1)
git reset -q --hard HEAD~2
out=$("$OPTLOOP" status 2>&1)
t_like "a row whose commit the branch lost, with nothing on it carrying it, is reported with the way back" \
	"$out" 'the branch no longer holds iteration 3: .*The one way out: git reset --hard [0-9a-f]{12}'
# the change comes back as a new commit, and a commit is made by hand for iteration 4
# the same change and message on the same parent, committed at another time:
# a new commit id (a cherry-pick in the second the original was made can
# fast-forward to the original itself)
git reset -q --hard "$(GIT_COMMITTER_DATE="2001-01-01T00:00:00Z" \
	git commit-tree "$r3^{tree}" -p HEAD -m "$(git log -1 --format=%B "$r3")")"
t_unlike "the picked change is a new commit" "$(git rev-parse HEAD)" "^$r3$"
git -c user.name=x -c user.email=x@x commit -q --allow-empty -m "by hand

Optloop-Op: tiny
Optloop-Iter: 4
Optloop-Direction: measured by hand
Optloop-Gate: pass
Optloop-Bench: 1.500
Optloop-Vs-Best: —
Optloop-Status: drop"
out=$("$OPTLOOP" repair 2>&1); rc=$?
t_is "repair fixes both" "$rc" 0
t_like "repair re-links row 3" "$out" "row 3 now cites commit $(git rev-parse --short=12 HEAD~1)"
t_like "repair rebuilds row 4 from the trailers" "$out" 'row 4 rebuilt from commit'
t_like "row 4 is in OPT_LOG.md" "$(cat profile/tiny-opt/OPT_LOG.md)" '\| 4 \| measured by hand \| pass \| 1.500 \| — \| drop \|'
t_is "no problems left" "$("$OPTLOOP" status --json | jget problems)" null
t_exit "repair with nothing to do" 0 "$OPTLOOP" repair

# export
out=$("$OPTLOOP" export --json)
for tbl in iterations runs samples envs events meta; do
	t_like "export has table $tbl" "$out" "\"$tbl\": \\["
done
t_exit "export rejects unknown arguments" 2 "$OPTLOOP" export --csv

# several workspaces: --op picks
"$OPTLOOP" init --op other --kernel kernel --test-file tests/test_compute.sh --naive ref/naive.sh --verify ./verify >/dev/null
t_exit "two workspaces: a command that acts needs --op" 2 "$OPTLOOP" verify
t_like "listing them" "$("$OPTLOOP" verify 2>&1)" 'other, tiny.*--op'
t_like "status lists both" "$("$OPTLOOP" status)" '^  tiny +ready +5'
t_like "and how to pick one" "$("$OPTLOOP" status)" 'pick one with --op OP'
t_is "--op picks one" "$("$OPTLOOP" --op other status --json | sed -n 's/^  "op": "\(.*\)",$/\1/p')" other
t_is "-C works from elsewhere" "$(cd / && "$OPTLOOP" -C "$d/kernel" --op tiny status --json | sed -n 's/^  "op": "\(.*\)",$/\1/p')" tiny
t_done
