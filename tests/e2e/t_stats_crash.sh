#!/usr/bin/env bash
# A confirm run killed while the best is checked out in the work tree loses
# nothing: the next confirm puts the candidate back before it measures, and
# a kill at the same point after the user edited the tree leaves the edit.
. "$(dirname "$0")/lib.sh"
d="$T_TMP/tiny"
"$OPTLOOP_ROOT/tests/fixtures/make_tiny_project.sh" "$d"
cd "$d" || exit 1
"$OPTLOOP" init --op tiny --kernel kernel --test-file tests/test_compute.sh --naive ref/naive.sh \
	--verify ./verify >/dev/null
"$OPTLOOP" contract --set "target=N up to 50" --set languages=sh --set "promotion=confirmed" >/dev/null
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
t_is "the next confirm runs to the end" "$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["runs"])')" 6
t_is "and the candidate is back in the work tree" "$(sha1sum kernel/compute.sh)" "$cand"
db=profile/tiny-opt/optloop.db
t_is "the recovery is in the event log" \
	"$(sqlite3 "$db" "SELECT count(*) FROM events WHERE kind = 'confirm.recovered'")" 1
t_is "no confirm is left unfinished" "$(sqlite3 "$db" "SELECT count(*) FROM stats_confirms WHERE done = 0")" 0

# Killed again, but this time the user edits the kernel before the next
# command: the edit is theirs and stays.
OPTLOOP_FAULT=confirm.best_in_tree "$OPTLOOP" confirm >/dev/null 2>&1
printf '# my own edit\n' >>kernel/compute.sh
mine=$(sha1sum kernel/compute.sh)
"$OPTLOOP" noise --runs 2 >/dev/null 2>&1
t_is "an edit made after the kill is not overwritten" "$(sha1sum kernel/compute.sh)" "$mine"
t_is "the cut-off confirm is closed" "$(sqlite3 "$db" "SELECT count(*) FROM stats_confirms WHERE done = 0")" 0
t_done
