#!/usr/bin/env bash
# A database that was emptied, cut short, replaced by an older copy or
# deleted never costs a row: OPT_LOG.md and the commits' Optloop trailers
# still hold the log, every write is refused (exit 3) until
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
t_done
