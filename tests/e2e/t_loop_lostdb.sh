#!/usr/bin/env bash
# A database that was emptied, cut short, replaced by an older copy or
# deleted never costs a row: OPT_LOG.md and the commits' Optloop trailers
# still hold the log (the trailers alone, when the whole workspace went), every write is refused (exit 3) until
# `optloop repair --rebuild` takes the rows back, and the loop then goes on.
. "$(dirname "$0")/lib.sh"
mk="$OPTLOOP_ROOT/tests/fixtures/make_tiny_project.sh"
ws=profile/tiny-opt
init_tiny() {
	"$OPTLOOP" init --op tiny --kernel kernel --test-file tests/test_compute.sh \
		--naive ref/naive.sh --verify ./verify --target "2x" --languages sh \
		--promotion "full gate" >/dev/null
}

# Three iterations logged and committed: base, keep, drop.
setup() {
	"$mk" "$1"
	cd "$1" || exit 1
	init_tiny
	"$OPTLOOP" verify >/dev/null && "$OPTLOOP" log --direction "baseline" --commit >/dev/null
	sed -i 's/\$(( \$1 \* 2 ))/$(( $1 << 1 ))/' kernel/compute.sh
	"$OPTLOOP" verify >/dev/null && explain_noise && "$OPTLOOP" log --direction "shift" --status keep \
		--unconfirmed "one run" --commit >/dev/null
	sed -i 's/<< 1/+ $1/' kernel/compute.sh
	"$OPTLOOP" verify >/dev/null && "$OPTLOOP" log --direction "add" --status drop --commit >/dev/null
	[ "$(rows)" = 3 ] || echo "setup failed in $1" >&2
}
rows() { grep -cE '^\| [0-9]+ \|' $ws/OPT_LOG.md; }
db_rows() { sqlite3 $ws/optloop.db "SELECT count(*) FROM iterations"; }
state() { "$OPTLOOP" status --json | sed -n 's/^  "state": "\(.*\)",$/\1/p'; }
checkpoint() { sqlite3 $ws/optloop.db "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null; }

# ---- a database replaced by an older copy: the tail is taken back ---------
setup "$T_TMP/older"
checkpoint
cp $ws/optloop.db "$T_TMP/two-rows.db" # a copy from before row 2 was logged
sqlite3 "$T_TMP/two-rows.db" "DELETE FROM iterations WHERE iter = 2"
cp $ws/OPT_LOG.md "$T_TMP/OPT_LOG.saved"
rm -f $ws/optloop.db-wal $ws/optloop.db-shm
cp "$T_TMP/two-rows.db" $ws/optloop.db
out=$("$OPTLOOP" status 2>&1)
t_like "status says OPT_LOG.md holds a row the database lost" "$out" 'holds 1 row the database does not'
t_like "and the next step is repair --rebuild" "$out" 'next: +OPT_LOG.md holds 1 row the database lost: rebuild it with optloop repair --rebuild'
t_is "OPT_LOG.md is not re-rendered without the row" "$(cat $ws/OPT_LOG.md)" "$(cat "$T_TMP/OPT_LOG.saved")"
echo "# next" >>kernel/compute.sh
t_exit "verify is refused (exit 3)" 3 "$OPTLOOP" verify
t_like "saying how to make it right" "$("$OPTLOOP" verify 2>&1)" 'verify refused: OPT_LOG.md holds 1 row that optloop.db does not.*repair --rebuild'
t_exit "confirm is refused too" 3 "$OPTLOOP" confirm
t_exit "plain repair says to rebuild first" 3 "$OPTLOOP" repair
out=$("$OPTLOOP" repair --rebuild 2>&1)
t_like "repair --rebuild takes row 2 back with its commit" "$out" 'row 2 taken back from OPT_LOG.md, commit [0-9a-f]{12}'
t_is "the database has three rows again" "$(db_rows)" 3
t_is "row 2 is linked to the commit that carries it" \
	"$(sqlite3 $ws/optloop.db "SELECT commit_sha FROM iterations WHERE iter = 2")" \
	"$(git log --format=%H --grep='^Optloop-Iter: 2$')"
t_is "OPT_LOG.md still has its three rows" "$(rows)" 3
t_exit "rebuilding again has nothing to take back (exit 3)" 3 "$OPTLOOP" repair --rebuild
t_ok "the loop goes on: verify" "$OPTLOOP" verify
t_ok "log and commit" "$OPTLOOP" log --direction next --status drop --commit
t_is "four rows" "$(rows)" 4

# ---- an emptied database: its settings are gone too -------------------------
setup "$T_TMP/empty"
cp $ws/OPT_LOG.md "$T_TMP/OPT_LOG.saved"
: >$ws/optloop.db
rm -f $ws/optloop.db-wal $ws/optloop.db-shm
t_like "status says the rows were lost" "$("$OPTLOOP" status 2>&1)" 'holds 3 rows the database does not'
echo "# next" >>kernel/compute.sh
t_exit "verify is refused (exit 3)" 3 "$OPTLOOP" verify
git checkout -q -- kernel/compute.sh
t_is "OPT_LOG.md keeps its rows" "$(cat $ws/OPT_LOG.md)" "$(cat "$T_TMP/OPT_LOG.saved")"
t_exit "repair --rebuild refuses without the kernel paths (exit 3)" 3 "$OPTLOOP" repair --rebuild
t_like "and says to init again first" "$("$OPTLOOP" repair --rebuild 2>&1)" 'run optloop init --op tiny --kernel PATH'
mv $ws/optloop.db "$T_TMP/empty.db"
t_ok "init again with the same options" init_tiny
t_is "init keeps OPT_LOG.md" "$(cat $ws/OPT_LOG.md)" "$(cat "$T_TMP/OPT_LOG.saved")"
t_like "status still says the rows were lost" "$("$OPTLOOP" status 2>&1)" 'holds 3 rows the database does not'
out=$("$OPTLOOP" repair --rebuild 2>&1)
t_like "repair --rebuild takes back row 0" "$out" 'row 0 taken back'
t_like "and row 2" "$out" 'row 2 taken back'
t_is "three rows in the database" "$(db_rows)" 3
t_is "the loop is ready for iteration 3" "$(state)" ready
t_like "the best is the kept row" "$("$OPTLOOP" status)" 'best: +[0-9.]+ ms \(iteration 1'
t_ok "the loop goes on" "$OPTLOOP" verify
t_ok "log and commit" "$OPTLOOP" log --direction next --status drop --commit
t_is "four rows" "$(rows)" 4
t_is "four optloop commits, one per row" "$(git log --format=%B | grep -c '^Optloop-Iter:')" 4
# ---- a database copied in from another op's workspace ----------------------
setup "$T_TMP/foreign"
"$OPTLOOP" init --op other --kernel kernel --test-file tests/test_compute.sh \
	--naive ref/naive.sh --verify ./verify --target "2x" --languages sh \
	--promotion "full gate" >/dev/null
ows=profile/other-opt
cp $ows/OPT_LOG.md "$T_TMP/other.log"
checkpoint
rm -f $ows/optloop.db-wal $ows/optloop.db-shm
cp $ws/optloop.db $ows/optloop.db
t_exit "status on the copied database is refused (exit 3)" 3 "$OPTLOOP" --op other status
out=$("$OPTLOOP" --op other status 2>&1)
t_like "  naming the op it belongs to" "$out" 'profile/other-opt/optloop.db belongs to op tiny, not other'
t_like "  and the way out" "$out" 'mv profile/other-opt/optloop.db profile/other-opt/optloop.db.foreign.*optloop init --op other.*repair --rebuild'
t_exit "verify is refused too" 3 "$OPTLOOP" --op other verify
t_is "other's OPT_LOG.md is untouched" "$(cat $ows/OPT_LOG.md)" "$(cat "$T_TMP/other.log")"
t_ok "tiny's own workspace still works" "$OPTLOOP" --op tiny status
sqlite3 $ows/optloop.db "UPDATE meta SET value = 'x' || char(27) || ']52;c;AAAA' || char(7) WHERE key = 'op'"
out=$("$OPTLOOP" --op other status 2>&1)
t_like "an op name with an escape sequence is shown spelled out" "$out" 'belongs to op x\\e\]52'
t_unlike "  no raw escape byte reaches the terminal" "$out" $'\e'
mv $ows/optloop.db $ows/optloop.db.foreign
t_ok "the way out: init again" "$OPTLOOP" init --op other --kernel kernel --test-file tests/test_compute.sh \
	--naive ref/naive.sh --verify ./verify --target "2x" --languages sh --promotion "full gate"
t_ok "and other's status works" "$OPTLOOP" --op other status
# ---- the workspace deleted while verify runs (git clean -x in the harness) --
setup "$T_TMP/cleaned"
"$OPTLOOP" contract --set "validation=./verify; git clean -xdfq" >/dev/null
echo "# next" >>kernel/compute.sh
out=$("$OPTLOOP" verify 2>&1); rc=$?
t_is "a harness that deletes the workspace: verify exits 4, not 0" "$rc" 4
t_like "  saying the workspace went while the run went, and nothing is recorded" "$out" \
	'the workspace profile/tiny-opt was deleted or replaced while the run went.*nothing of this run is recorded'
t_like "  and where the committed rows still are" "$out" "git log --grep 'Optloop-Op: tiny'"
t_unlike "  it does not report a measured iteration" "$out" 'verdict:'
# ---- ... and the rows come back from the commits' trailers ------------------
git checkout -q -- kernel/compute.sh
# the keep's commit as a confirmed win's would read (no Optloop-Unconfirmed):
# the commits alone say so, nothing in a database backs it
FILTER_BRANCH_SQUELCH_WARNING=1 git filter-branch -f \
	--msg-filter "grep -v '^Optloop-Unconfirmed:'" HEAD >/dev/null 2>&1
t_ok "init again, OPT_LOG.md and the database both gone" init_tiny
out=$("$OPTLOOP" status 2>&1)
t_like "status names the iterations the history still holds" "$out" \
	'the history holds 3 iterations of op tiny that neither optloop.db nor OPT_LOG.md holds \(commits [0-9a-f]{12} to [0-9a-f]{12}'
t_like "  next: take them back, or start over" "$out" \
	'next: +the history holds 3 iterations of op tiny from an earlier workspace: take them back with optloop repair --rebuild, or verify the unmodified kernel to start the op over'
cp -a . "$T_TMP/over" # a copy that starts over instead
out=$("$OPTLOOP" repair --rebuild 2>&1)
t_like "repair --rebuild takes row 0 back from its commit's trailers" "$out" \
	'row 0 taken back from the trailers of commit [0-9a-f]{12}'
t_like "  and row 1" "$out" 'row 1 taken back from the trailers'
t_like "  and row 2" "$out" 'row 2 taken back from the trailers'
t_is "three rows in the database" "$(db_rows)" 3
t_is "and in OPT_LOG.md" "$(rows)" 3
t_is "each linked to its commit" \
	"$(sqlite3 $ws/optloop.db "SELECT commit_sha FROM iterations WHERE iter = 2")" \
	"$(git log --format=%H --grep='^Optloop-Iter: 2$')"
t_like "the keep comes back unconfirmed: no run backs its number" \
	"$(sqlite3 $ws/optloop.db "SELECT unconfirmed FROM iterations WHERE iter = 1")" \
	"taken back from commit [0-9a-f]{12}'s trailers.*no run in this database backs its number"
out=$("$OPTLOOP" status 2>&1)
t_like "the best is the kept row, unconfirmed" "$out" 'best: +[0-9.]+ ms \(iteration 1, kept unconfirmed\)'
t_like "  and the next step measures it first" "$out" \
	'next: +the best \(iteration 1\) was taken back without a run.*measure it first with optloop noise'
t_exit "report final claims nothing on commit trailers alone (exit 3)" 3 "$OPTLOOP" report final
t_ok "noise measures the best's kernel" "$OPTLOOP" noise --runs 3
t_like "then the loop goes on" "$("$OPTLOOP" status)" \
	'next: +make one change to the kernel, then run optloop verify \(iteration 3\)'
echo "# next" >>kernel/compute.sh
out=$("$OPTLOOP" verify 2>&1)
t_like "the next verdict compares with the best's runs" "$out" 'verdict: (fast|slow|same|ambiguous|noise)'
t_unlike "  not with nothing" "$out" 'no best to compare with'
t_exit "rebuilding again has nothing to take back (exit 3)" 3 "$OPTLOOP" repair --rebuild
cd "$T_TMP/over" || exit 1
t_ok "the copy starts over instead: verify the unmodified kernel" "$OPTLOOP" verify
t_ok "  logged and committed as the new baseline" "$OPTLOOP" log --direction again --commit
t_is "  iteration 0 of a new history" "$(db_rows)" 1
t_unlike "  the earlier iterations are no longer offered" "$("$OPTLOOP" status 2>&1)" 'the history holds'
t_done
