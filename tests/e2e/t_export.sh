#!/usr/bin/env bash
# `optloop export --json` on a real workspace: the document holds every
# table of optloop.db, every row in rowid order with its columns in table
# order and its values as sqlite holds them, then the op (read back here
# with python's own sqlite3, not through optloop); it is laid out as the
# other commands lay out their JSON; and it is written as it is read, so
# its peak memory does not grow with the number of rows.
. "$(dirname "$0")/lib.sh"
d="$T_TMP/tiny"
"$OPTLOOP_ROOT/tests/fixtures/make_tiny_project.sh" "$d" >/dev/null
cd "$d" || exit 1
"$OPTLOOP" init --op tiny --kernel kernel --test-file tests/test_compute.sh --naive ref/naive.sh \
	--verify ./verify >/dev/null
"$OPTLOOP" contract --set "target=2x" --set languages=sh --set "promotion=full gate, confirmed win" >/dev/null
"$OPTLOOP" verify >/dev/null 2>&1
"$OPTLOOP" log --direction 'baseline, "quoted", café' --commit >/dev/null
"$OPTLOOP" noise --runs 2 >/dev/null 2>&1
printf '# a comment\n' >>kernel/compute.sh
"$OPTLOOP" verify >/dev/null 2>&1
"$OPTLOOP" log --direction "a comment" --status revert >/dev/null
db=profile/tiny-opt/optloop.db

"$OPTLOOP" export --json >"$T_TMP/export.json" 2>"$T_TMP/export.err"
t_is "export exits 0" "$?" 0
t_is "and says nothing on stderr" "$(cat "$T_TMP/export.err")" ""
# same_as_db JSON DB: what differs between the document and the database
same_as_db() {
	python3 - "$1" "$2" <<'PY'
import json, math, sqlite3, sys
pairs = lambda kv: kv  # keep every object's members in order
doc = json.load(open(sys.argv[1], encoding="utf-8"), object_pairs_hook=pairs)
db = sqlite3.connect(sys.argv[2])
bad = []
if [k for k, _ in doc] != ["schema", "tables", "op"]:
    bad.append("top-level members: %s" % [k for k, _ in doc])
top = dict(doc)
if top.get("op") != "tiny":
    bad.append("op: %r" % top.get("op"))
if top.get("schema") != db.execute("PRAGMA user_version").fetchone()[0]:
    bad.append("schema %r, user_version %r" % (top.get("schema"),
               db.execute("PRAGMA user_version").fetchone()[0]))
names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'"
                                  " AND name NOT LIKE 'sqlite_%' ORDER BY name")]
tables = top.get("tables", [])
if [k for k, _ in tables] != names:
    bad.append("tables: %s, not %s" % ([k for k, _ in tables], names))
def same(a, b):
    if isinstance(b, float) and isinstance(a, (int, float)) and not isinstance(a, bool):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=0)
    return type(a) is type(b) and a == b
rows = 0
for name, got in tables:
    cur = db.execute('SELECT * FROM "%s" ORDER BY rowid' % name.replace('"', '""'))
    cols = [c[0] for c in cur.description]
    want = cur.fetchall()
    if len(got) != len(want):
        bad.append("%s: %d rows, not %d" % (name, len(got), len(want)))
        continue
    for g, w in zip(got, want):
        rows += 1
        if [k for k, _ in g] != cols:
            bad.append("%s: columns %s, not %s" % (name, [k for k, _ in g], cols))
        elif not all(same(gv, wv) for (_, gv), wv in zip(g, w)):
            bad.append("%s: row %r, not %r" % (name, g, w))
print("\n".join(bad[:5]) if bad else "same, %d rows" % rows)
PY
}
out=$(same_as_db "$T_TMP/export.json" "$db")
t_like "every table, row, column and value is the database's, then the op" "$out" '^same, [0-9]+ rows$'
t_like "  (rows of runs, samples, events and the stats tables among them)" \
	"$(python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["tables"]
print(" ".join(k for k in ("runs", "samples", "events", "stats_runs", "iterations") if t[k]))' "$T_TMP/export.json")" \
	'^runs samples events stats_runs iterations$'
t_is "laid out as the other commands' JSON: indented by two" "$(head -c 14 "$T_TMP/export.json")" \
	'{
  "schema": '
t_is "  and one newline after the closing brace" "$(tail -c 3 "$T_TMP/export.json" | od -An -c | tr -s ' ')" \
	' \n } \n'

# many more rows: the peak memory stays where it was (a sanitizer build
# keeps freed memory aside unless told not to)
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:quarantine_size_mb=0"
if [ -x /usr/bin/time ]; then
	/usr/bin/time -f %M -o "$T_TMP/small.kb" "$OPTLOOP" export --json >/dev/null
	python3 - "$db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
detail = "an event with a long detail, " * 8
db.executemany("INSERT INTO events (t, iter, kind, detail) VALUES (?, ?, ?, ?)",
               ((1e9 + i, 1, "note", "%s%d" % (detail, i)) for i in range(150000)))
db.commit()
PY
	/usr/bin/time -f %M -o "$T_TMP/big.kb" "$OPTLOOP" export --json >"$T_TMP/big.json"
	t_is "export of 150,000 more rows exits 0" "$?" 0
	t_like "  and writes them all ($(wc -c <"$T_TMP/big.json") bytes)" \
		"$(same_as_db "$T_TMP/big.json" "$db")" '^same, [0-9]{6,} rows$'
	small=$(tail -n 1 "$T_TMP/small.kb") big=$(tail -n 1 "$T_TMP/big.kb")
	t_is "  in the memory of the small export: peak $small KB, then $big KB (within 8 MB)" \
		"$((big - small < 8192))" 1
else
	t_skip "export's peak memory with many more rows" "no /usr/bin/time"
fi

# a closed output stops the export with a message, not a partial success
"$OPTLOOP" export --json 2>"$T_TMP/full.err" >/dev/full
t_is "export to a full disk exits with the I/O status" "$?" 4
t_like "  and says the output could not be written" "$(cat "$T_TMP/full.err")" \
	'^optloop: export stopped: its output could not be written'
t_done
