#!/usr/bin/env bash
# A row optloop logs and commits itself leaves git's check of the rows
# standing: the key it was made for is carried to the new row and HEAD
# (loop_reconcile_git_carry), so the next command does not walk the whole
# history again; what it records is what a walk records, and a commit made
# by hand after it is still checked.
. "$(dirname "$0")/lib.sh"
d="$T_TMP/tiny"
"$OPTLOOP_ROOT/tests/fixtures/make_tiny_project.sh" "$d" >/dev/null
cd "$d" || exit 1
git config user.name "optloop test" && git config user.email "test@optloop.invalid"
"$OPTLOOP" init --op tiny --kernel kernel --test-file tests/test_compute.sh --naive ref/naive.sh \
	--verify ./verify >/dev/null
"$OPTLOOP" contract --set "target=2x" --set languages=sh --set "promotion=full gate, confirmed win" >/dev/null
db=profile/tiny-opt/optloop.db
key() { sqlite3 "$db" "SELECT value FROM meta WHERE key = 'reconciled_git'"; }
"$OPTLOOP" verify >/dev/null 2>&1
"$OPTLOOP" log --direction baseline --commit >/dev/null
for k in 1 2; do
	printf '# change %s\n' "$k" >>kernel/compute.sh
	"$OPTLOOP" verify >/dev/null 2>&1
	"$OPTLOOP" log --direction "change $k" --status drop --commit >/dev/null
	carried=$(key)
	t_like "after log --commit $k the check is recorded for HEAD" "$carried" "^$(git rev-parse HEAD) "
	sqlite3 "$db" "DELETE FROM meta WHERE key = 'reconciled_git'"
	before=$("$OPTLOOP" status 2>&1)
	t_is "  a walk of the history records the same key" "$(key)" "$carried"
	t_unlike "  and finds nothing wrong" "$before" "problem|not in the history|no row for it"
done
# a commit by hand that carries an iteration: HEAD moved, so it is walked
printf '# by hand\n' >>kernel/compute.sh
git commit -qam "by hand

Optloop-Op: tiny
Optloop-Iter: 7
Optloop-Direction: by hand
Optloop-Gate: pass
Optloop-Bench: 1.000
Optloop-Status: drop"
out=$("$OPTLOOP" status 2>&1)
t_like "a commit by hand after them is still found" "$out" "carries iteration 7"
t_done
