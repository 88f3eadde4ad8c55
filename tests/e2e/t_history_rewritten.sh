#!/usr/bin/env bash
# History rewritten under the loop: the branch moved back past optloop's
# commits (git reset --hard to an older one), or rewritten and the old
# commits pruned.  Nothing on the branch carries those rows, so repair has
# nothing to re-link: status says what happened once, with the one way out
# (the commit to reset to, or where the commits are gone, a clone or a new
# workspace), and verify, log, commit, confirm and noise are refused until
# then; following the way out, the loop goes on.
. "$(dirname "$0")/lib.sh"
mk="$OPTLOOP_ROOT/tests/fixtures/make_tiny_project.sh"
jget() { python3 -c 'import json,sys; j=json.load(sys.stdin); print(j.get(sys.argv[1]))' "$1"; }

"$mk" "$T_TMP/p" >/dev/null && cd "$T_TMP/p" || exit 1
"$OPTLOOP" init --op tiny --kernel kernel --test-file tests/test_compute.sh --naive ref/naive.sh \
	--verify ./verify --target "2x" --languages sh --promotion "full gate" >/dev/null
"$OPTLOOP" verify >/dev/null && "$OPTLOOP" log --direction baseline --commit >/dev/null
for i in 1 2 3; do
	echo "# change $i" >>kernel/compute.sh
	"$OPTLOOP" verify >/dev/null 2>&1
	"$OPTLOOP" log --direction "change $i" --status drop --commit >/dev/null 2>&1
done
t_is "three drops, each with its restore" "$(git log --format=%s | grep -c '^optloop')" 7
tip=$(git rev-parse HEAD)
t_is "status is clean" "$("$OPTLOOP" status --json | jget problems)" None

# ---- reset back past two iterations -----------------------------------------
git reset -q --hard HEAD~4
out=$("$OPTLOOP" status 2>&1)
t_like "status says the branch lost iterations 2-3, once" "$out" \
	'the branch no longer holds iterations 2-3: it was moved back past their commits'
t_is "  one problem, not one per row" "$(printf '%s\n' "$out" | grep -c 'no longer holds')" 1
t_like "  and gives the one way out: where the branch last held every row" "$out" \
	"git reset --hard ${tip:0:12} \\(where the branch was when it last held every row\\)"
t_unlike "  it does not send the user to a repair that cannot re-link" "$out" 'run optloop repair to re-link'
t_like "  next says to put the branch back first" "$out" 'next: +put the branch back as the problem above says'
echo "# another" >>kernel/compute.sh
"$OPTLOOP" verify >"$T_TMP/v.out" 2>&1; rc=$?
t_is "verify is refused (exit 3)" "$rc" 3
t_like "  with the same words" "$(cat "$T_TMP/v.out")" 'verify refused: the branch no longer holds iterations 2-3'
"$OPTLOOP" confirm >"$T_TMP/c.out" 2>&1; rc=$?
t_is "confirm is refused (exit 3)" "$rc" 3
"$OPTLOOP" repair >"$T_TMP/r.out" 2>&1
t_like "repair says it cannot, and repeats the way out" "$(cat "$T_TMP/r.out")" "git reset --hard ${tip:0:12}"
git checkout -q kernel/compute.sh
git reset -q --hard "$tip"
t_is "following the way out: no problem left" "$("$OPTLOOP" status --json | jget problems)" None
# (three drops in a row: the loop re-assesses before the next iteration)
perf_report >profile/tiny-opt/trace/after-stall.txt
"$OPTLOOP" reassess --profile profile/tiny-opt/trace/after-stall.txt --axes a --techniques t --next n >/dev/null
echo "# change 4" >>kernel/compute.sh
t_ok "and the loop goes on" "$OPTLOOP" verify
t_ok "  to the next row" "$OPTLOOP" log --direction "change 4" --status drop --commit

# ---- another branch checked out: the rows are on the one left ----------------
git switch -q -c elsewhere HEAD~5
out=$("$OPTLOOP" status 2>&1)
t_like "a branch switched: the way out is to switch back, not to reset" "$out" \
	'HEAD is on a history that does not hold iterations 3-4: they are on branch main.*git switch main'
t_unlike "  no reset is suggested (it would move this branch)" "$out" 'git reset --hard'
git switch -q main
t_is "switched back: no problem left" "$("$OPTLOOP" status --json | jget problems)" None

# ---- rewritten and pruned: the commits are gone ------------------------------
tip=$(git rev-parse HEAD)
git reset -q --hard HEAD~2
# what keeps them from git gc is removed too, and the reflog expired
git for-each-ref --format='%(refname)' refs/optloop | while read -r r; do git update-ref -d "$r"; done
git reflog expire --expire=now --all && git gc -q --prune=now
t_ok "the commit of iteration 4 is gone" test -z "$(git cat-file -t "$tip" 2>/dev/null)"
out=$("$OPTLOOP" status 2>&1)
t_like "status says the commit is gone and why" "$out" \
	'the commit of iteration 4 is gone from the repository: the history was rewritten'
t_like "  with the one way out" "$out" 'bring the commit back from a clone that has it.*start a new one with optloop init'
"$OPTLOOP" log --direction x --status drop >"$T_TMP/l.out" 2>&1; rc=$?
t_is "log is refused (exit 3)" "$rc" 3
t_is "nothing was logged" "$(sqlite3 profile/tiny-opt/optloop.db 'SELECT count(*) FROM iterations')" 5

t_done
