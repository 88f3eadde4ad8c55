/*
 * store_schema — the store's schema: the numbered migrations that make a
 * workspace's database, each run once, in order, by the first writer that
 * opens a database of an older version (store.c), and the SQL of the
 * triggers that keep its derived tables and counts.
 */
#include "core/store.h"
#include "core/store_sql.h"

/* run_trees' rows of the runs where cond holds */
#define RUN_TREES_WHERE(cond)                                                              \
	"SELECT tree, count(*), max(COALESCE(repeats, 1)), min(id) FROM runs r WHERE " cond   \
	" AND" USABLE_RUN " GROUP BY tree"
/* run_trees' row of each of the trees named (an SQL list) */
#define RUN_TREES_OF(trees) RUN_TREES_WHERE("tree IN (" trees ")")

/* run_costs' rows of the runs where cond holds */
#define RUN_COSTS_WHERE(cond)                                                              \
	"SELECT iter, kind, count(*), sum(COALESCE(paired, 0)), sum(max(t_end - t_start, 0))" \
	" FROM runs WHERE " cond " AND t_end > 0 GROUP BY iter, kind"
/* run_costs' row of the run row r (NEW or OLD), made again */
#define RUN_COSTS_OF(r)                                                                    \
	"DELETE FROM run_costs WHERE iter = " r ".iter AND kind = " r ".kind;"               \
	" INSERT INTO run_costs " RUN_COSTS_WHERE("iter = " r ".iter AND kind = " r ".kind") ";"

/* enum values the schema's triggers and indexes name (model.h) */
#define STR_SCOPE_FULL "1"
#define STR_SCOPE_SUBSET "2"
#define STR_GATE_FAIL "2"
_Static_assert(SCOPE_FULL == 1 && SCOPE_SUBSET == 2 && GATE_FAIL == 2, "schema 12's values");
/* NEW, a run, is a full gate that failed the kernel of a kept subset-gate row */
#define FULL_GATE_FAILS_A_SUBSET_KEEP                                                         \
	"NEW.kind = 'verify' AND NEW.scope = " STR_SCOPE_FULL " AND NEW.gate = " STR_GATE_FAIL \
	" AND NEW.tree IS NOT NULL AND EXISTS (SELECT 1 FROM iterations WHERE tree = NEW.tree" \
	" AND scope = " STR_SCOPE_SUBSET " AND status = 'keep')"

/* The kept noise terms of the trees where cond holds are forgotten, and
 * meta 'noise_gen' moves on (migration 14). */
#define NOISE_FORGET(cond)                                                                 \
	" DELETE FROM noise_terms WHERE " cond ";"                                         \
	" UPDATE meta SET value = value + 1 WHERE key = 'noise_gen';"
/* The best trees of the confirms whose pairs the run is (its base column
 * is a run of that tree), and those of a session's confirms */
#define NOISE_PAIR_TREES(run)                                                              \
	"(SELECT c.best_tree FROM stats_runs sr JOIN stats_confirms c ON c.session ="    \
	" sr.session WHERE sr.run_id = " run ")"
#define NOISE_SESSION_TREES(session)                                                       \
	"(SELECT best_tree FROM stats_confirms WHERE session = " session ")"
/* What a run is part of: its tree, and its confirm's best tree */
#define NOISE_RUN_TREES(run)                                                               \
	"(tree IN (SELECT tree FROM runs WHERE id = " run ") OR tree IN "              \
	NOISE_PAIR_TREES(run) ")"
/* The rows where cond holds are stamped (migration 15) */
#define ROWS_STAMP(cond)                                                                   \
	" UPDATE meta SET value = value + 1 WHERE key = 'rows_stamp';"                     \
	" UPDATE iterations SET stamp = (SELECT value FROM meta WHERE key = 'rows_stamp')" \
	" WHERE " cond ";"
/* The rows' generation moves on (meta 'rows_gen'). */
#define ROWS_GEN_BUMP "UPDATE meta SET value = value + 1 WHERE key = 'rows_gen';"
/* Whether a run's result (JSON text j) holds the environment line its
 * harness printed: what loop.c's Env line reads (env.raw, a string, not
 * empty); 0 for text that is not JSON. */
#define RUN_HAS_ENV(j)                                                                     \
	"(CASE WHEN json_valid(" j ") THEN json_type(" j ", '$.env.raw') = 'text' AND"         \
	" json_extract(" j ", '$.env.raw') <> '' ELSE 0 END)"
/* has_env of the iteration row r (NEW), from its run */
#define ITER_HAS_ENV(r)                                                                    \
	"UPDATE iterations SET has_env = (SELECT " RUN_HAS_ENV("result_json") " FROM runs"    \
	" WHERE id = " r ".run_id) WHERE iter = " r ".iter;"

/* A shape of the samples table's row sa, as row_shapes holds it (migration
 * 16): its key (NULL columns included), then its columns */
#define ROW_SHAPE_COLS(sa)                                                                 \
	"json_array(" sa ".mode, " sa ".B, " sa ".T, " sa ".H, " sa ".D, " sa ".L, " sa ".op), " \
	sa ".mode, " sa ".B, " sa ".T, " sa ".H, " sa ".D, " sa ".L, " sa ".op"
/* row_shapes made again from every row's run */
#define ROW_SHAPES_REFILL                                                                  \
	" DELETE FROM row_shapes;"                                                         \
	" INSERT OR IGNORE INTO row_shapes SELECT " ROW_SHAPE_COLS("sa")                   \
	" FROM iterations i CROSS JOIN samples sa ON sa.run_id = i.run_id;"
/* whether run is a logged row's */
#define ROW_RUN(run) "EXISTS (SELECT 1 FROM iterations WHERE run_id = " run ")"

/* The kept confirm comparisons made from run N or later are forgotten, and
 * meta 'compare_gen' moves on (migration 17). */
#define COMPARE_FORGET(n)                                                                  \
	" DELETE FROM confirm_compares WHERE upto >= " n ";"                               \
	" UPDATE meta SET value = value + 1 WHERE key = 'compare_gen';"
/* The same for a table of rows of a run (its run_id column) */
#define COMPARE_FORGET_RUN_ROWS(t)                                                         \
	"CREATE TRIGGER IF NOT EXISTS " t "_compare_insert AFTER INSERT ON " t " BEGIN"     \
	COMPARE_FORGET("NEW.run_id") " END;"                                               \
	"CREATE TRIGGER IF NOT EXISTS " t "_compare_update AFTER UPDATE ON " t " BEGIN"     \
	COMPARE_FORGET("min(OLD.run_id, NEW.run_id)") " END;"                              \
	"CREATE TRIGGER IF NOT EXISTS " t "_compare_delete AFTER DELETE ON " t " BEGIN"     \
	COMPARE_FORGET("OLD.run_id") " END;"
/* A confirm from session on, and every confirm after the one of id */
#define COMPARE_FORGET_CONFIRM(session, id)                                                \
	" DELETE FROM confirm_compares WHERE session IN (SELECT session FROM stats_confirms" \
	" WHERE id > " id ");" COMPARE_FORGET(session)

/* Each step moves the schema from version i to i+1.  Never edit a shipped
 * step; append a new one. */
const char *const store_migrations[STORE_SCHEMA_VERSION] = {
	"CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);"
	"CREATE TABLE workspaces (id INTEGER PRIMARY KEY, op TEXT NOT NULL, created REAL);"
	"CREATE TABLE envs (id INTEGER PRIMARY KEY, raw TEXT UNIQUE NOT NULL, device TEXT,"
	" backend TEXT, pytorch TEXT, triton TEXT, branch TEXT, sha TEXT, first_seen REAL);"
	"CREATE TABLE runs (id INTEGER PRIMARY KEY, iter INTEGER NOT NULL, kind TEXT NOT NULL,"
	" command TEXT, cwd TEXT, log_path TEXT, t_start REAL, t_end REAL, exit_status INTEGER,"
	" signal INTEGER, timed_out INTEGER, cancelled INTEGER, no_change INTEGER,"
	" gate INTEGER, scope INTEGER, bench_ms REAL, vs_best REAL, result_json TEXT,"
	" tree TEXT, snapshot TEXT, head TEXT, env_id INTEGER REFERENCES envs(id), pid INTEGER);"
	"CREATE INDEX runs_iter ON runs(iter, kind);"
	"CREATE TABLE samples (id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id),"
	" env_id INTEGER REFERENCES envs(id), mode TEXT, B INTEGER, T INTEGER, H INTEGER,"
	" D INTEGER, L INTEGER, op TEXT, base_ms REAL, new_ms REAL, speedup REAL);"
	"CREATE INDEX samples_run ON samples(run_id);"
	"CREATE TABLE iterations (iter INTEGER PRIMARY KEY, direction TEXT NOT NULL, axis TEXT,"
	" gate TEXT, gate_v INTEGER, scope INTEGER, bench_ms REAL, vs_best REAL,"
	" status TEXT NOT NULL, run_id INTEGER REFERENCES runs(id), tree TEXT,"
	" logged_at REAL, commit_sha TEXT, committed_at REAL);"
	"CREATE TABLE events (id INTEGER PRIMARY KEY, t REAL NOT NULL, iter INTEGER,"
	" kind TEXT NOT NULL, detail TEXT);"
	"CREATE TABLE aside (id INTEGER PRIMARY KEY, iter INTEGER, sha TEXT NOT NULL,"
	" ref TEXT, created REAL, restored REAL);",
	/* 2: the stall count joins iterations to verdicts by run; without the
	 * index that join scanned every iteration (~5.5 M instructions at
	 * 10,000 rows, on every start). */
	"CREATE INDEX iterations_run ON iterations(run_id);",
	/* 3: a keep without a win beyond noise carries the reason it was kept
	 * anyway (log --unconfirmed); NULL for every other row. */
	"ALTER TABLE iterations ADD COLUMN unconfirmed TEXT;",
	/* 4: the guards' and the statistics' tables, which their modules used
	 * to create on first use (IF NOT EXISTS: a database they already
	 * created keeps its rows).  guards_*: frozen hashes, lint findings and
	 * acknowledgements, trap checklist, re-assessments, stops, dispatch
	 * rows, restores; stats_*: GPU probes, session roles, verdicts,
	 * confirms, explanations, attached artifacts. */
	"CREATE TABLE IF NOT EXISTS guards_frozen (path TEXT PRIMARY KEY, hash TEXT NOT NULL,"
	" recorded REAL NOT NULL);"
	"CREATE TABLE IF NOT EXISTS guards_findings (id INTEGER PRIMARY KEY, iter INTEGER NOT NULL,"
	" lint TEXT, trap TEXT, file TEXT, line INTEGER, side TEXT, text TEXT, message TEXT);"
	"CREATE TABLE IF NOT EXISTS guards_acks (iter INTEGER PRIMARY KEY, t REAL, n INTEGER);"
	"CREATE TABLE IF NOT EXISTS guards_trap_state (iter INTEGER NOT NULL, trap TEXT NOT NULL,"
	" state INTEGER NOT NULL, source TEXT, t REAL, PRIMARY KEY (iter, trap));"
	"CREATE TABLE IF NOT EXISTS guards_reassess (id INTEGER PRIMARY KEY, after_iter INTEGER"
	" NOT NULL, t REAL, profile TEXT, axes TEXT, techniques TEXT, next TEXT);"
	"CREATE TABLE IF NOT EXISTS guards_stop (id INTEGER PRIMARY KEY, iter INTEGER, t REAL,"
	" reason TEXT, bound TEXT);"
	"CREATE TABLE IF NOT EXISTS guards_dispatch (id INTEGER PRIMARY KEY, bucket TEXT, entry TEXT,"
	" base_ms REAL, cand_ms REAL, speedup REAL, why TEXT, evidence TEXT, t REAL);"
	"CREATE TABLE IF NOT EXISTS guards_restore (iter INTEGER PRIMARY KEY, best_iter INTEGER,"
	" sha TEXT, t REAL);"
	"CREATE TABLE IF NOT EXISTS stats_probes (id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL,"
	" phase TEXT NOT NULL, t REAL, available INTEGER, busy INTEGER, json TEXT);"
	"CREATE INDEX IF NOT EXISTS stats_probes_run ON stats_probes(run_id, phase);"
	"CREATE TABLE IF NOT EXISTS stats_runs (run_id INTEGER PRIMARY KEY, session INTEGER NOT NULL,"
	" role TEXT);"
	"CREATE TABLE IF NOT EXISTS stats_verdicts (run_id INTEGER PRIMARY KEY, iter INTEGER,"
	" verdict TEXT NOT NULL, flags INTEGER NOT NULL, json TEXT, t REAL);"
	/* the stall count looks up the few not-comparable verdicts */
	"CREATE INDEX IF NOT EXISTS stats_verdicts_verdict ON stats_verdicts(verdict);"
	"CREATE TABLE IF NOT EXISTS stats_confirms (id INTEGER PRIMARY KEY, iter INTEGER NOT NULL,"
	" session INTEGER NOT NULL, best_iter INTEGER, best_tree TEXT, cand_tree TEXT, cand_snapshot TEXT,"
	" verdict TEXT, flags INTEGER, promoted INTEGER NOT NULL DEFAULT 0,"
	" done INTEGER NOT NULL DEFAULT 0, json TEXT, t REAL);"
	"CREATE TABLE IF NOT EXISTS stats_explained (id INTEGER PRIMARY KEY, iter INTEGER NOT NULL,"
	" note TEXT NOT NULL, t REAL);"
	"CREATE TABLE IF NOT EXISTS stats_artifacts (id INTEGER PRIMARY KEY, iter INTEGER NOT NULL,"
	" path TEXT NOT NULL, t REAL);",
	/* 5: every change optloop makes to the kernel in the work tree (a
	 * revert/drop restore, a confirm or noise swap, a set-aside) is recorded
	 * here before the first file is written, so the next writer can finish
	 * or undo one cut off by a crash */
	"CREATE TABLE IF NOT EXISTS tree_intents (id INTEGER PRIMARY KEY, kind TEXT NOT NULL,"
	" iter INTEGER, from_tree TEXT NOT NULL, to_tree TEXT NOT NULL, pid INTEGER, t REAL,"
	" done INTEGER NOT NULL DEFAULT 0);",
	/* 6: runs through Slurm: each allocation the workspace requested (job
	 * id once salloc names it; released set once it is given back or found
	 * gone, with why), and where each run's step ran and how it ended */
	"CREATE TABLE IF NOT EXISTS slurm_allocs (id INTEGER PRIMARY KEY, job TEXT, runner TEXT"
	" NOT NULL, state TEXT NOT NULL, reason TEXT, node TEXT, requested REAL, granted REAL,"
	" last_used REAL, released REAL, why TEXT, pid INTEGER);"
	"CREATE TABLE IF NOT EXISTS slurm_steps (run_id INTEGER PRIMARY KEY, job TEXT, step TEXT,"
	" node TEXT, gpus TEXT, cause TEXT NOT NULL, why TEXT);",
	/* 7: what HEAD named when a run started (the branch's ref, or "HEAD"
	 * when detached): the row is logged and committed on the branch it was
	 * measured on; NULL for runs recorded before */
	"ALTER TABLE runs ADD COLUMN branch TEXT;",
	/* 8: where a row's vs best comes from: 'confirm' when its confirm
	 * sized it (OPT_LOG.md marks it), NULL for the verify verdict's */
	"ALTER TABLE iterations ADD COLUMN vs_from TEXT;",
	/* 9: the look-ups by kernel tree (a tree's runs for the pooled
	 * history and the noise band, the confirms of a best, a -k row's
	 * full-gate runs) scanned every run: indexed */
	"CREATE INDEX IF NOT EXISTS runs_tree ON runs(tree);"
	"CREATE INDEX IF NOT EXISTS stats_confirms_best_tree ON stats_confirms(best_tree);",
	/* 10: the pooled history needs only the kernel trees that can show a
	 * spread: measured more than once, or one run that timed a shape more
	 * than once (repeats, and paired for the cost: RUN_SAMPLE_FACTS, kept
	 * as samples are recorded).  A paired confirm's runs are found from
	 * its session.  env_key: the run's environment as the statistics
	 * compare it (measure_env_key), kept once made ('' for none). */
	"ALTER TABLE runs ADD COLUMN repeats INTEGER;"
	"ALTER TABLE runs ADD COLUMN paired INTEGER;"
	"ALTER TABLE runs ADD COLUMN env_key TEXT;"
	"UPDATE runs SET " RUN_SAMPLE_FACTS("runs.id") ";"
	"CREATE INDEX IF NOT EXISTS stats_runs_session ON stats_runs(session, role);"
	/* the few runs and kernel changes every open looks for (cut off
	 * before they ended; no kernel change, uncounted in the stall; an
	 * intent not finished) without reading every one */
	"CREATE INDEX IF NOT EXISTS runs_unfinished ON runs(id) WHERE t_end IS NULL OR t_end <= 0;"
	"CREATE INDEX IF NOT EXISTS runs_no_change ON runs(no_change) WHERE no_change = 1;"
	"CREATE INDEX IF NOT EXISTS tree_intents_open ON tree_intents(id) WHERE done = 0;"
	"CREATE INDEX IF NOT EXISTS aside_open ON aside(id) WHERE restored IS NULL;"
	"CREATE INDEX IF NOT EXISTS stats_confirms_open ON stats_confirms(id) WHERE done = 0;"
	"CREATE INDEX IF NOT EXISTS stats_confirms_iter ON stats_confirms(iter);"
	"CREATE INDEX IF NOT EXISTS stats_runs_pair ON stats_runs(session) WHERE role = 'pair';"
	"CREATE INDEX IF NOT EXISTS guards_findings_iter ON guards_findings(iter);"
	/* each kernel tree's usable runs, kept by triggers in the transaction
	 * that records or changes a run: how many, whether one repeated a
	 * shape, the first (the history's order) */
	"CREATE TABLE IF NOT EXISTS run_trees (tree TEXT PRIMARY KEY, usable INTEGER NOT NULL,"
	" repeats INTEGER NOT NULL, first INTEGER NOT NULL);"
	"CREATE INDEX IF NOT EXISTS run_trees_spread ON run_trees(first)"
	" WHERE usable >= 2 OR repeats > 0;"
	"CREATE TRIGGER IF NOT EXISTS run_trees_insert AFTER INSERT ON runs WHEN NEW.tree IS NOT NULL"
	" BEGIN DELETE FROM run_trees WHERE tree = NEW.tree;"
	" INSERT INTO run_trees " RUN_TREES_OF("NEW.tree") "; END;"
	"CREATE TRIGGER IF NOT EXISTS run_trees_update AFTER UPDATE OF tree, t_end, cancelled,"
	" timed_out, signal, gate, repeats ON runs"
	" BEGIN DELETE FROM run_trees WHERE tree IN (OLD.tree, NEW.tree);"
	" INSERT INTO run_trees " RUN_TREES_OF("OLD.tree, NEW.tree") "; END;"
	"CREATE TRIGGER IF NOT EXISTS run_trees_delete AFTER DELETE ON runs WHEN OLD.tree IS NOT NULL"
	" BEGIN DELETE FROM run_trees WHERE tree = OLD.tree;"
	" INSERT INTO run_trees " RUN_TREES_OF("OLD.tree") "; END;"
	"INSERT OR REPLACE INTO run_trees " RUN_TREES_WHERE("tree IS NOT NULL") ";"
	/* what the runs cost per iteration and kind (store_run_costs), kept
	 * the same way */
	"CREATE TABLE IF NOT EXISTS run_costs (iter INTEGER NOT NULL, kind TEXT NOT NULL,"
	" runs INTEGER NOT NULL, paired INTEGER NOT NULL, seconds REAL NOT NULL,"
	" PRIMARY KEY (iter, kind));"
	"CREATE TRIGGER IF NOT EXISTS run_costs_insert AFTER INSERT ON runs"
	" BEGIN " RUN_COSTS_OF("NEW") " END;"
	"CREATE TRIGGER IF NOT EXISTS run_costs_update AFTER UPDATE OF iter, kind, t_start, t_end,"
	" paired ON runs BEGIN " RUN_COSTS_OF("OLD") RUN_COSTS_OF("NEW") " END;"
	"CREATE TRIGGER IF NOT EXISTS run_costs_delete AFTER DELETE ON runs"
	" BEGIN " RUN_COSTS_OF("OLD") " END;"
	"INSERT OR REPLACE INTO run_costs " RUN_COSTS_WHERE("1") ";"
	/* and the whole history's by kind, moved by each run_costs row */
	"CREATE TABLE IF NOT EXISTS run_cost_totals (kind TEXT PRIMARY KEY, runs INTEGER NOT NULL,"
	" paired INTEGER NOT NULL, seconds REAL NOT NULL);"
	"CREATE TRIGGER IF NOT EXISTS run_cost_totals_add AFTER INSERT ON run_costs BEGIN"
	" INSERT OR IGNORE INTO run_cost_totals VALUES (NEW.kind, 0, 0, 0);"
	" UPDATE run_cost_totals SET runs = runs + NEW.runs, paired = paired + NEW.paired,"
	" seconds = seconds + NEW.seconds WHERE kind = NEW.kind; END;"
	"CREATE TRIGGER IF NOT EXISTS run_cost_totals_sub AFTER DELETE ON run_costs BEGIN"
	" UPDATE run_cost_totals SET runs = runs - OLD.runs, paired = paired - OLD.paired,"
	" seconds = seconds - OLD.seconds WHERE kind = OLD.kind; END;"
	"INSERT OR REPLACE INTO run_cost_totals SELECT kind, sum(runs), sum(paired), sum(seconds)"
	" FROM run_costs GROUP BY kind;",
	/* 11: what OPT_LOG.md renders from, kept so that the check at every
	 * open needs neither the rows nor a render.  meta 'rows_gen' counts
	 * every change to the rows' rendered columns (a first row's commit is
	 * in the Baseline line); a file whose hash optloop recorded at this
	 * count is current (loop.c).  has_env: the row's run printed an
	 * environment (the Env line is the latest such row's, found through
	 * iterations_env instead of a walk back through the rows). */
	"INSERT OR IGNORE INTO meta(key, value) VALUES ('rows_gen', '0');"
	"CREATE TRIGGER IF NOT EXISTS rows_gen_insert AFTER INSERT ON iterations"
	" BEGIN " ROWS_GEN_BUMP " END;"
	"CREATE TRIGGER IF NOT EXISTS rows_gen_delete AFTER DELETE ON iterations"
	" BEGIN " ROWS_GEN_BUMP " END;"
	"CREATE TRIGGER IF NOT EXISTS rows_gen_update AFTER UPDATE OF iter, direction, gate,"
	" gate_v, scope, bench_ms, vs_best, status, run_id, unconfirmed, vs_from ON iterations"
	" BEGIN " ROWS_GEN_BUMP " END;"
	"CREATE TRIGGER IF NOT EXISTS rows_gen_baseline AFTER UPDATE OF commit_sha ON iterations"
	" WHEN NEW.iter <= (SELECT min(iter) FROM iterations) BEGIN " ROWS_GEN_BUMP " END;"
	"ALTER TABLE iterations ADD COLUMN has_env INTEGER;"
	"UPDATE iterations SET has_env = (SELECT " RUN_HAS_ENV("result_json")
	" FROM runs WHERE id = iterations.run_id) WHERE run_id IS NOT NULL;"
	"CREATE INDEX IF NOT EXISTS iterations_env ON iterations(iter) WHERE has_env;"
	"CREATE TRIGGER IF NOT EXISTS iterations_env_insert AFTER INSERT ON iterations"
	" WHEN NEW.run_id IS NOT NULL BEGIN " ITER_HAS_ENV("NEW") " END;"
	"CREATE TRIGGER IF NOT EXISTS iterations_env_update AFTER UPDATE OF run_id ON iterations"
	" BEGIN " ITER_HAS_ENV("NEW") " END;"
	"CREATE TRIGGER IF NOT EXISTS runs_env_insert AFTER INSERT ON runs BEGIN"
	" UPDATE iterations SET has_env = " RUN_HAS_ENV("NEW.result_json") " WHERE run_id = NEW.id;"
	" END;"
	"CREATE TRIGGER IF NOT EXISTS runs_env_update AFTER UPDATE OF result_json ON runs BEGIN"
	" UPDATE iterations SET has_env = " RUN_HAS_ENV("NEW.result_json") " WHERE run_id = NEW.id;"
	" END;"
	"CREATE TRIGGER IF NOT EXISTS runs_env_delete AFTER DELETE ON runs BEGIN"
	" UPDATE iterations SET has_env = 0 WHERE run_id = OLD.id; END;",
	/* 12: a full gate that fails the kernel of a subset-gate keep changes
	 * that row as OPT_LOG.md renders it ("keep (full gate failed)": it is
	 * no longer the best), so the rows' generation moves on */
	"CREATE INDEX IF NOT EXISTS iterations_subset_tree ON iterations(tree)"
	" WHERE scope = " STR_SCOPE_SUBSET ";"
	"CREATE TRIGGER IF NOT EXISTS rows_gen_full_fail_insert AFTER INSERT ON runs"
	" WHEN " FULL_GATE_FAILS_A_SUBSET_KEEP " BEGIN " ROWS_GEN_BUMP " END;"
	"CREATE TRIGGER IF NOT EXISTS rows_gen_full_fail_update AFTER UPDATE OF kind, scope, gate,"
	" tree ON runs WHEN " FULL_GATE_FAILS_A_SUBSET_KEEP " BEGIN " ROWS_GEN_BUMP " END;",
	/* 13: what a command reads in place of every row.  meta 'rows_n', how
	 * many rows there are, and 'rows_key', which moves on with every row
	 * added or taken away and every change of a row's iteration or commit
	 * (the check of the rows against git, loop_reconcile.c), kept by
	 * triggers; an index of the rows that may be the best (a baseline or a
	 * keep), read newest first (store_rows_best). */
	"INSERT OR REPLACE INTO meta(key, value) SELECT 'rows_n', count(*) FROM iterations;"
	"INSERT OR IGNORE INTO meta(key, value) VALUES ('rows_key', '0');"
	"CREATE TRIGGER IF NOT EXISTS rows_n_insert AFTER INSERT ON iterations BEGIN"
	" UPDATE meta SET value = value + 1 WHERE key IN ('rows_n', 'rows_key'); END;"
	"CREATE TRIGGER IF NOT EXISTS rows_n_delete AFTER DELETE ON iterations BEGIN"
	" UPDATE meta SET value = value - 1 WHERE key = 'rows_n';"
	" UPDATE meta SET value = value + 1 WHERE key = 'rows_key'; END;"
	"CREATE TRIGGER IF NOT EXISTS rows_key_update AFTER UPDATE OF iter, commit_sha ON iterations"
	" BEGIN UPDATE meta SET value = value + 1 WHERE key = 'rows_key'; END;"
	"CREATE INDEX IF NOT EXISTS iterations_best ON iterations(iter)"
	" WHERE status IN ('base', 'keep');",
	/* 14: each spread tree's terms of the pooled noise band (between
	 * sessions, per shape, in the best's environment), made by the first
	 * reader that needs them and forgotten by triggers, in the transaction
	 * of any change to what they were made from (the tree's runs, their
	 * samples, sessions and probes; a confirm's pairs for its best's tree);
	 * meta 'noise_gen' moves on with each such change, so that terms made
	 * while one came in are not kept (store_noise_terms_put). */
	"CREATE TABLE IF NOT EXISTS noise_terms (tree TEXT NOT NULL, env TEXT NOT NULL,"
	" shape TEXT NOT NULL, ss REAL NOT NULL, dof INTEGER NOT NULL, runs INTEGER NOT NULL,"
	" PRIMARY KEY (tree, env, shape));"
	"INSERT OR IGNORE INTO meta(key, value) VALUES ('noise_gen', '0');"
	"CREATE INDEX IF NOT EXISTS stats_confirms_session ON stats_confirms(session);"
	"CREATE TRIGGER IF NOT EXISTS runs_noise_insert AFTER INSERT ON runs BEGIN"
	NOISE_FORGET("tree = NEW.tree OR tree IN " NOISE_PAIR_TREES("NEW.id")) " END;"
	"CREATE TRIGGER IF NOT EXISTS runs_noise_update AFTER UPDATE ON runs BEGIN"
	NOISE_FORGET("tree IN (OLD.tree, NEW.tree) OR tree IN " NOISE_PAIR_TREES("OLD.id")
		     " OR tree IN " NOISE_PAIR_TREES("NEW.id")) " END;"
	"CREATE TRIGGER IF NOT EXISTS runs_noise_delete AFTER DELETE ON runs BEGIN"
	NOISE_FORGET("tree = OLD.tree OR tree IN " NOISE_PAIR_TREES("OLD.id")) " END;"
	"CREATE TRIGGER IF NOT EXISTS samples_noise_insert AFTER INSERT ON samples BEGIN"
	NOISE_FORGET(NOISE_RUN_TREES("NEW.run_id")) " END;"
	"CREATE TRIGGER IF NOT EXISTS samples_noise_update AFTER UPDATE ON samples BEGIN"
	NOISE_FORGET(NOISE_RUN_TREES("OLD.run_id") " OR " NOISE_RUN_TREES("NEW.run_id")) " END;"
	"CREATE TRIGGER IF NOT EXISTS samples_noise_delete AFTER DELETE ON samples BEGIN"
	NOISE_FORGET(NOISE_RUN_TREES("OLD.run_id")) " END;"
	"CREATE TRIGGER IF NOT EXISTS stats_probes_noise_insert AFTER INSERT ON stats_probes BEGIN"
	NOISE_FORGET(NOISE_RUN_TREES("NEW.run_id")) " END;"
	"CREATE TRIGGER IF NOT EXISTS stats_probes_noise_update AFTER UPDATE ON stats_probes BEGIN"
	NOISE_FORGET(NOISE_RUN_TREES("OLD.run_id") " OR " NOISE_RUN_TREES("NEW.run_id")) " END;"
	"CREATE TRIGGER IF NOT EXISTS stats_probes_noise_delete AFTER DELETE ON stats_probes BEGIN"
	NOISE_FORGET(NOISE_RUN_TREES("OLD.run_id")) " END;"
	/* (an INSERT OR REPLACE takes the old row away without a delete
	 * trigger: what it was part of is forgotten before) */
	"CREATE TRIGGER IF NOT EXISTS stats_runs_noise_replace BEFORE INSERT ON stats_runs BEGIN"
	NOISE_FORGET(NOISE_RUN_TREES("NEW.run_id")) " END;"
	"CREATE TRIGGER IF NOT EXISTS stats_runs_noise_insert AFTER INSERT ON stats_runs BEGIN"
	NOISE_FORGET(NOISE_RUN_TREES("NEW.run_id") " OR tree IN " NOISE_SESSION_TREES("NEW.session"))
	" END;"
	"CREATE TRIGGER IF NOT EXISTS stats_runs_noise_update AFTER UPDATE ON stats_runs BEGIN"
	NOISE_FORGET(NOISE_RUN_TREES("OLD.run_id") " OR " NOISE_RUN_TREES("NEW.run_id")
		     " OR tree IN " NOISE_SESSION_TREES("OLD.session") " OR tree IN "
		     NOISE_SESSION_TREES("NEW.session")) " END;"
	"CREATE TRIGGER IF NOT EXISTS stats_runs_noise_delete AFTER DELETE ON stats_runs BEGIN"
	NOISE_FORGET(NOISE_RUN_TREES("OLD.run_id") " OR tree IN " NOISE_SESSION_TREES("OLD.session"))
	" END;"
	"CREATE TRIGGER IF NOT EXISTS stats_confirms_noise_insert AFTER INSERT ON stats_confirms"
	" BEGIN" NOISE_FORGET("tree = NEW.best_tree") " END;"
	"CREATE TRIGGER IF NOT EXISTS stats_confirms_noise_update AFTER UPDATE ON stats_confirms"
	" BEGIN" NOISE_FORGET("tree IN (OLD.best_tree, NEW.best_tree)") " END;"
	"CREATE TRIGGER IF NOT EXISTS stats_confirms_noise_delete AFTER DELETE ON stats_confirms"
	" BEGIN" NOISE_FORGET("tree = OLD.best_tree") " END;",
	/* 15: each row's stamp: meta 'rows_stamp' as it was when the row was
	 * written last, or when a run changed whether a full gate failed its
	 * kernel (a subset-gate row's full_gate_failed), kept by triggers; a
	 * reader holding the rows reads again only those stamped since
	 * (store_rows_get). */
	"ALTER TABLE iterations ADD COLUMN stamp INTEGER NOT NULL DEFAULT 0;"
	"INSERT OR IGNORE INTO meta(key, value) VALUES ('rows_stamp', '0');"
	"CREATE INDEX IF NOT EXISTS iterations_stamp ON iterations(stamp);"
	"CREATE TRIGGER IF NOT EXISTS rows_stamp_insert AFTER INSERT ON iterations BEGIN"
	ROWS_STAMP("iter = NEW.iter") " END;"
	"CREATE TRIGGER IF NOT EXISTS rows_stamp_update AFTER UPDATE ON iterations"
	" WHEN NEW.stamp IS OLD.stamp BEGIN" ROWS_STAMP("iter IN (OLD.iter, NEW.iter)") " END;"
	"CREATE TRIGGER IF NOT EXISTS rows_stamp_runs_insert AFTER INSERT ON runs BEGIN"
	ROWS_STAMP("scope = " STR_SCOPE_SUBSET " AND tree = NEW.tree") " END;"
	"CREATE TRIGGER IF NOT EXISTS rows_stamp_runs_update AFTER UPDATE OF kind, scope, gate, tree"
	" ON runs BEGIN" ROWS_STAMP("scope = " STR_SCOPE_SUBSET " AND tree IN (OLD.tree, NEW.tree)")
	" END;"
	"CREATE TRIGGER IF NOT EXISTS rows_stamp_runs_delete AFTER DELETE ON runs BEGIN"
	ROWS_STAMP("scope = " STR_SCOPE_SUBSET " AND tree = OLD.tree") " END;",
	/* 16: the distinct shapes the logged rows' runs measured, kept by
	 * triggers (a row logged adds its run's; the rare change that can take
	 * one away makes the table again), so the chart's count of shapes
	 * reads a few rows, not every row's samples (store_row_shapes). */
	"CREATE TABLE IF NOT EXISTS row_shapes (key TEXT PRIMARY KEY, mode TEXT, B INTEGER,"
	" T INTEGER, H INTEGER, D INTEGER, L INTEGER, op TEXT);"
	ROW_SHAPES_REFILL
	"CREATE TRIGGER IF NOT EXISTS row_shapes_row_insert AFTER INSERT ON iterations"
	" WHEN NEW.run_id IS NOT NULL BEGIN INSERT OR IGNORE INTO row_shapes SELECT "
	ROW_SHAPE_COLS("sa") " FROM samples sa WHERE sa.run_id = NEW.run_id; END;"
	"CREATE TRIGGER IF NOT EXISTS row_shapes_row_update AFTER UPDATE OF run_id ON iterations"
	" BEGIN" ROW_SHAPES_REFILL " END;"
	"CREATE TRIGGER IF NOT EXISTS row_shapes_row_delete AFTER DELETE ON iterations"
	" WHEN OLD.run_id IS NOT NULL BEGIN" ROW_SHAPES_REFILL " END;"
	"CREATE TRIGGER IF NOT EXISTS row_shapes_sample_insert AFTER INSERT ON samples"
	" WHEN " ROW_RUN("NEW.run_id") " BEGIN INSERT OR IGNORE INTO row_shapes SELECT "
	ROW_SHAPE_COLS("sa") " FROM samples sa WHERE sa.id = NEW.id; END;"
	"CREATE TRIGGER IF NOT EXISTS row_shapes_sample_update AFTER UPDATE ON samples"
	" WHEN " ROW_RUN("OLD.run_id") " OR " ROW_RUN("NEW.run_id") " BEGIN" ROW_SHAPES_REFILL
	" END;"
	"CREATE TRIGGER IF NOT EXISTS row_shapes_sample_delete AFTER DELETE ON samples"
	" WHEN " ROW_RUN("OLD.run_id") " BEGIN" ROW_SHAPES_REFILL " END;",
	/* 17: what report final reads of a long history, kept or indexed.
	 * Each confirm's comparison (measure_confirm_compare) as it stood with
	 * the session's runs up to run upto, kept by the writer that made it,
	 * with what it was made with (the two trees, the threshold, the Target
	 * text, "against") and by which build of optloop.
	 * It is made from runs up to upto alone (their samples, probes and
	 * sessions, their environments) and the confirms before its own, so
	 * triggers forget it, in the transaction of the change, when any of
	 * those changes: a change to run N forgets those with upto >= N.  The
	 * environment key a reader writes into a run it lacks (derived, the
	 * same every time) is no change.  meta 'compare_gen' moves on with
	 * every such change, so one made while a change came in is not kept
	 * (store_compare_put). */
	"CREATE TABLE IF NOT EXISTS confirm_compares (session INTEGER NOT NULL,"
	" upto INTEGER NOT NULL, best_tree TEXT NOT NULL, cand_tree TEXT NOT NULL,"
	" threshold REAL NOT NULL, target TEXT NOT NULL, against TEXT NOT NULL,"
	" build TEXT NOT NULL, json TEXT NOT NULL, PRIMARY KEY (session, best_tree, cand_tree,"
	" threshold, target, against, build));"
	"CREATE INDEX IF NOT EXISTS confirm_compares_upto ON confirm_compares(upto);"
	/* (and what the chart reads of every row, in an index of its own, a
	 * fifth of the rows' pages: store_rows_chart) */
	"CREATE INDEX IF NOT EXISTS iterations_chart ON iterations(iter, bench_ms, gate_v);"
	/* (and the cost rows in one index that holds them whole, read in their
	 * order without a look-up of each; and how many iterations have one:
	 * the report's cost table needs it before its rows, store_cost_iters) */
	"CREATE INDEX IF NOT EXISTS run_costs_read ON run_costs(iter, kind, runs, paired,"
	" seconds);"
	"INSERT OR REPLACE INTO meta(key, value) SELECT 'cost_iters', count(DISTINCT iter) FROM"
	" run_costs;"
	"CREATE TRIGGER IF NOT EXISTS cost_iters_insert AFTER INSERT ON run_costs WHEN NOT EXISTS"
	" (SELECT 1 FROM run_costs WHERE iter = NEW.iter AND kind IS NOT NEW.kind) BEGIN"
	" UPDATE meta SET value = value + 1 WHERE key = 'cost_iters'; END;"
	"CREATE TRIGGER IF NOT EXISTS cost_iters_delete AFTER DELETE ON run_costs WHEN NOT EXISTS"
	" (SELECT 1 FROM run_costs WHERE iter = OLD.iter) BEGIN"
	" UPDATE meta SET value = value - 1 WHERE key = 'cost_iters'; END;"
	"CREATE TRIGGER IF NOT EXISTS cost_iters_update AFTER UPDATE OF iter ON run_costs BEGIN"
	" UPDATE meta SET value = (SELECT count(DISTINCT iter) FROM run_costs)"
	" WHERE key = 'cost_iters'; END;"
	"INSERT OR IGNORE INTO meta(key, value) VALUES ('compare_gen', '0');"
	"CREATE TRIGGER IF NOT EXISTS runs_compare_insert AFTER INSERT ON runs BEGIN"
	COMPARE_FORGET("NEW.id") " END;"
	/* (every column but env_key: a new one belongs in this list) */
	"CREATE TRIGGER IF NOT EXISTS runs_compare_update AFTER UPDATE OF id, iter, kind, command,"
	" cwd, log_path, t_start, t_end, exit_status, signal, timed_out, cancelled, no_change, gate,"
	" scope, bench_ms, vs_best, result_json, tree, snapshot, head, env_id, pid, branch, repeats,"
	" paired ON runs BEGIN" COMPARE_FORGET("min(OLD.id, NEW.id)") " END;"
	"CREATE TRIGGER IF NOT EXISTS runs_compare_delete AFTER DELETE ON runs BEGIN"
	COMPARE_FORGET("OLD.id") " END;"
	COMPARE_FORGET_RUN_ROWS("samples")
	COMPARE_FORGET_RUN_ROWS("stats_probes")
	COMPARE_FORGET_RUN_ROWS("stats_runs")
	/* a confirm's session and trees: the pairs of its session's runs
	 * count for its best tree (from the session's first run on; a confirm
	 * with no session yet has none), and it is one of the confirms before
	 * every later one (store_confirms_before) */
	"CREATE TRIGGER IF NOT EXISTS stats_confirms_compare_insert AFTER INSERT ON stats_confirms"
	" BEGIN" COMPARE_FORGET_CONFIRM("CASE WHEN NEW.session > 0 THEN NEW.session ELSE"
					" 9223372036854775807 END", "NEW.id") " END;"
	"CREATE TRIGGER IF NOT EXISTS stats_confirms_compare_update AFTER UPDATE OF id, session,"
	" best_tree, cand_tree ON stats_confirms BEGIN"
	COMPARE_FORGET_CONFIRM("CASE WHEN OLD.session > 0 AND (NEW.session <= 0 OR OLD.session <"
			       " NEW.session) THEN OLD.session ELSE NEW.session END",
			       "min(OLD.id, NEW.id)") " END;"
	"CREATE TRIGGER IF NOT EXISTS stats_confirms_compare_delete AFTER DELETE ON stats_confirms"
	" BEGIN" COMPARE_FORGET_CONFIRM("OLD.session", "OLD.id") " END;"
	"CREATE TRIGGER IF NOT EXISTS envs_compare_update AFTER UPDATE ON envs BEGIN"
	COMPARE_FORGET("0") " END;"
	"CREATE TRIGGER IF NOT EXISTS envs_compare_delete AFTER DELETE ON envs BEGIN"
	COMPARE_FORGET("0") " END;",
};
_Static_assert(sizeof(store_migrations) / sizeof(store_migrations[0]) == STORE_SCHEMA_VERSION,
	       "STORE_SCHEMA_VERSION is the number of migrations");
