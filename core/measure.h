/*
 * measure — the statistics and the GPU evidence of one workspace, kept in
 * its store: which runs measured which kernel state in which environment,
 * the probe readings taken around each run, the verdict of every run
 * against the current best, confirm sessions, explanations of flags,
 * attached profiler artifacts, the stall count and the promotion check.
 *
 * The pure rules live in stats.c and probe.c; this file only turns store
 * rows into stats_set values and results back into rows.  Its tables are
 * named stats_* and are part of the store's numbered migrations.
 *
 * A kernel state is the kernel hash runs.tree.  A session is one sitting of
 * the GPU: a verify run is its own session; the runs of one optloop noise
 * or optloop confirm share one (stats_runs.session).  The environment of a
 * run is "device | backend | PyTorch | Triton | driver" from its Machine
 * line and its probe (branch and sha are not part of it).
 */
#ifndef OPTLOOP_MEASURE_H
#define OPTLOOP_MEASURE_H

#include "core/stats.h"
#include "core/store.h"

#include <jansson.h>
#include <stdbool.h>

struct err;
struct probe_reading;
struct probe_opts;
struct sb;
struct store;

/* ---- probe readings ---- */

/* phase: "before" or "after". */
int measure_probe_put(struct store *s, int run_id, const char *phase,
		      const struct probe_reading *r, struct err *e);
/* ERR_NOTFOUND when the run has no reading for phase; out caller-owned. */
int measure_probe_get(struct store *s, int run_id, const char *phase, struct probe_reading *out,
		      struct err *e);

/* The probe's two commands as they run through /bin/sh -c: $OPTLOOP_PROBE,
 * else nvidia-smi's GPU query (PROBE_DEFAULT_COMMAND), and
 * $OPTLOOP_PROBE_APPS, else its compute-process query ("" turns that off).
 * Never from the database: what runs is what the user set and can see
 * (status shows both).  *from_env (may be NULL) says whether either came
 * from the environment.  Static or environment strings. */
void measure_probe_commands(const char **cmd, const char **apps, bool *from_env);

/* Run the probe now (measure_probe_commands) and store its reading for the
 * run.  OPTLOOP_PROBE_BUSY_UTIL / probe.busy_util and, for the "before"
 * phase, OPTLOOP_PROBE_SETTLE / probe.settle_s (default PROBE_SETTLE_S; 0
 * turns the second look off) and OPTLOOP_PROBE_TIMEOUT / probe.timeout_s
 * (each probe command's limit, default 10 s) tune how it is read.  A
 * missing probe is stored as "no probe"; errors only from the store.
 * where (may be NULL: here) says where it runs: its wrap, node, capture and
 * capture_ctx (a Slurm step on node, probe_opts); its other fields are not
 * read. */
int measure_probe_take(struct store *s, int run_id, const char *phase,
		       const struct probe_opts *where, struct err *e);

/* ---- runs, sessions, sets ---- */

/* Environment key of a run (caller frees; NULL when the run printed no
 * Machine line). */
int measure_env_key(struct store *s, int run_id, char **key, struct err *e);

/* Shape key of a result row: "fwd B=4 T=2048 H=16 D=64 chunk_linear_attn"
 * (caller frees). */
struct parse_row;
char *measure_shape_key(const struct parse_row *r);

/* Every usable run of kernel state tree as a stats_set: runs in env (when
 * env is not NULL and some run matches it), else all its runs (the set's
 * env says which).  session_only > 0 keeps only that session's runs,
 * < 0 leaves out session −session_only's; role, when not NULL, only runs of that role.  out caller-owned. */
int measure_tree_set(struct store *s, const char *tree, const char *env, int session_only,
		     const char *role, struct stats_set *out, struct err *e);

/* measure_tree_set over the runs up to run id upto (0: all). */
int measure_tree_set_upto(struct store *s, const char *tree, const char *env, int session_only,
			  const char *role, int upto, struct stats_set *out, struct err *e);
/* Every kernel state's runs in env (each a set, as measure_tree_set),
 * leaving out the runs of session skip_session (> 0) and, with upto > 0,
 * every run after run upto: the history a session's own comparison pools
 * its noise with.  Release with
 * measure_history_release. */
int measure_history(struct store *s, const char *env, int skip_session, int upto,
		    struct stats_set **out, size_t *n, struct err *e);
void measure_history_release(struct stats_set *h, size_t n);

/* Every in-process pair measured in env (store_pair_runs; env NULL: any),
 * up to run upto (0: all): per shape each run's base / new time ratio with
 * the run's session, the set stats_opts.pairs reads. */
int measure_pair_set(struct store *s, const char *env, int upto, struct stats_set *out,
		     struct err *e);

/* A memo of what comparisons read: while one is open, each kernel tree's
 * runs (with their environments) and each run's samples are read from the
 * store once, and read again from memory, so pooling the same runs several
 * ways costs one read.  Only while the store does not change: open it
 * around reads, close it before a write.  NULL (and close does nothing)
 * when one is open already; measure_confirm_compare opens its own. */
struct measure_memo;
struct measure_memo *measure_memo_open(void);
void measure_memo_close(struct measure_memo *m);

/* The one comparison of a confirm session: best's and candidate's runs of
 * that session, noise pooled with every other session's, the sequential
 * test on; and the same over the Target's shapes (mt may be NULL).  The
 * confirm itself, the promotion check and the reports all read it here,
 * so a confirm has one number.  against: stats_opts.against (NULL: the
 * best).  cmp (and mt) are filled when 0 is
 * returned; release them with stats_cmp_release / measure_target_release. */
struct measure_target;
int measure_confirm_compare(struct store *s, const char *best_tree, const char *cand_tree,
			    int session, double threshold, const char *target, const char *against,
			    struct stats_cmp *cmp, struct measure_target *mt, struct err *e);

/* ---- the best ---- */

/* The one best (log_rows_best: the baseline or the last keep) with what the
 * statistics need of it: its run, the kernel state it measured, and whether
 * an interleaved confirm backs it. */
struct measure_best {
	bool have;
	int iter;       /* the baseline, or the last keep */
	int run_id;
	char *tree;     /* kernel hash it measured */
	char *commit;   /* its commit, NULL before it is committed */
	double bench_ms;
	bool confirmed;   /* a confirm of it promoted (false for the baseline) */
	bool unconfirmed; /* kept --unconfirmed: no win beyond noise backs it */
};
int measure_best(struct store *s, struct measure_best *b, struct err *e);
void measure_best_release(struct measure_best *b);
/* The run that shows the best's kernel passed the full gate with a bench
 * number: its own verify's, else the newest verify of the same kernel tree
 * that did (a -k keep verified again with the full gate); 0 when none. */
int measure_best_full_gate(struct store *s, const struct measure_best *b);
/* Can a claim be made for the best (report final, report pr)?  A keep whose
 * confirm promoted it and whose kernel passed the full gate.  0 with *iter
 * and *gate_run (the full-gate run) set; else ERR_REFUSED saying, for what
 * ("report final"), what the best is and what would make it claimable. */
int measure_best_claimable(struct store *s, const char *what, int *iter, int *gate_run,
			   struct err *e);

/* ---- verdicts ---- */

/* The evidence a keep needs (DESIGN §2), judged once, here: iteration
 * iter's finished confirm when it has one, else the verdict of its verify
 * run run_id.  A win beyond noise is a confirm whose verdict is fast, or a
 * verify verdict fast against a measured (not assumed) noise band; neither
 * on a busy GPU.  vs_best is the iteration's one "vs best" figure: the
 * confirm's when one ran, else the verdict's (NAN when neither has one). */
struct measure_win {
	bool win;
	double vs_best;
	enum evidence_source source; /* the confirm's, the verify's, or none */
	enum stats_verdict verdict; /* that verdict, SV_NONE when there is none */
	char *why;          /* when not a win: what the evidence says, in words */
	/* The implausible flags (SF_IMPLAUSIBLE_MASK) of the evidence (the
	 * confirm's when one ran), while no explanation of iteration iter is
	 * recorded: such a speedup is no win, and not keepable even
	 * --unconfirmed (a result that skipped work reads fast); 0 once
	 * explained. */
	unsigned implausible;
};
int measure_win(struct store *s, int iter, int run_id, struct measure_win *w, struct err *e);
/* SF_IMPOSSIBLE when the last verify of iteration iter was flagged
 * impossible (its roofline: core/roofline.h), else 0; *why (may be NULL)
 * receives the first shape's arithmetic (caller frees). */
unsigned measure_impossible(struct store *s, int iter, char **why);
void measure_win_release(struct measure_win *w);

/* Judge a finished run against the current best (threshold 0: 3 %), add
 * busy_gpu / subset_gate from the run, store the verdict and fill *out
 * (caller releases with stats_cmp_release; may be NULL). */
int measure_judge_run(struct store *s, int run_id, double threshold, struct stats_cmp *out,
		      struct err *e);

/* The noise band around the best: ±2σ, where σ is the per-run spread in
 * log space that a verdict against the best pools (the best kernel's runs
 * and every other kernel state's, in the best's environment), averaged
 * over the best's shapes; the default spread, marked assumed, while no
 * kernel state has repeated runs.  have is false without a best that has
 * per-shape runs.  The workbench and status show this one figure. */
struct loop_noise;
/* shape (a measure_shape_key; NULL: σ averaged over the best's shapes) and
 * centre (the time the band sits around; NAN: the best's bench) let the
 * chart draw the band at one shape. */
int measure_noise_band(struct store *s, const char *shape, double centre, struct loop_noise *out,
		       struct err *e);
/* The figure in words, one wording everywhere: "±1.5%", "±4.0% (assumed)",
 * "none yet" (appended to out). */
void measure_noise_words(const struct loop_noise *n, struct sb *out);

/* The roofline a run's verdict recorded (its detail's "roofline", with at
 * least one shape), or NULL; *detail holds it (json_decref when done). */
const json_t *measure_run_roofline(struct store *s, int run_id, json_t **detail);

/* The stored verdict of a run: name ("fast", ...), flags and the whole
 * comparison as JSON (each may be NULL).  ERR_NOTFOUND when none. */
int measure_verdict_get(struct store *s, int run_id, char **verdict, unsigned *flags,
			json_t **detail, struct err *e);

/* ---- confirm sessions ---- */

/* The records are the store's (struct store_confirm, store_confirm_*). */
/* Finish it with the comparison and the decision. */
int measure_confirm_end(struct store *s, int id, const struct stats_cmp *cmp, bool promoted,
			struct err *e);

/* ---- flags explained, artifacts attached ---- */

/* Record why a flagged speedup is real.  When the iteration's last confirm
 * was fast and held back only by implausible flags, it now promotes
 * (*promoted set; may be NULL). */
int measure_explain(struct store *s, int iter, const char *note, bool *promoted, struct err *e);
/* Explanations of an iteration, one per line (appended to out, which may be
 * NULL); count returned. */
int measure_explanations(struct store *s, int iter, struct sb *out);
int measure_attach(struct store *s, int iter, const char *path, struct err *e);
/* The same for a file of the workspace: recorded (and cited by reports)
 * relative to workspace_dir, so no machine's path is in the record. */
int measure_attach_in(struct store *s, int iter, const char *path, const char *workspace_dir,
		      struct err *e);
/* What kind of profiler or roofline output the file at path is ("Nsight
 * Compute export", "perf report", ...), by its name and first 64 KiB; *kind
 * NULL when it is none optloop recognises. */
int measure_file_kind(const char *path, const char **kind, struct err *e);
/* The kinds measure_file_kind recognises, in words, for a message. */
#define MEASURE_PROFILE_KINDS                                                              \
	"an Nsight Compute or Nsight Systems report or export (.ncu-rep, .nsys-rep, ncu "  \
	"--csv, nsys stats), a torch.profiler table (key_averages().table()) or trace, a " \
	"perf report, or a roofline text that names the roofline with its numbers (e.g. "  \
	"\"roofline: 3.9 of 4.8 TB/s\")"
/* Is the file path names (as given, else relative to the workspace dir) a
 * profiler or roofline reading of iteration iter: under the workspace,
 * written after the iteration's verify run ended, and recognised as an
 * Nsight Compute or Nsight Systems export or report, a torch.profiler
 * table, a perf report, or a roofline text with numbers?  *real receives
 * its real path when it was found (caller frees, also on failure); *kind
 * names what was recognised; ERR_USAGE / ERR_REFUSED say what is wrong and
 * what would be accepted. */
int measure_attach_check(struct store *s, int iter, const char *path, const char *workspace_dir,
			 char **real, const char **kind, struct err *e);
/* Attached artifact paths of an iteration, one per line; count returned. */
/* Attach the profiler trace the iteration's own verify wrote (FLA's
 * verify --profile writes <op>_trace.json into the workspace): it must lie
 * in the workspace, be written during run run_id, and read as a profiler
 * trace.  *real: its resolved path (caller frees). */
int measure_attach_run_trace(struct store *s, int iter, int run_id, const char *path,
			     const char *workspace_dir, char **real, struct err *e);
int measure_artifacts(struct store *s, int iter, struct sb *out);

/* ---- target shapes ---- */

/* The comparison over the shapes the contract's Target names. */
struct measure_target {
	char **named;         /* the target shapes' names (contract_shape_name) */
	size_t ntargets;      /* 0: the Target names no shapes, every shape counts */
	char **missing;       /* named target shapes not measured on both sides */
	size_t nmissing;
	struct stats_cmp cmp; /* best vs candidate over the measured shapes that fall
			       * under a target (all shapes when ntargets is 0) */
};

/* Compare best and cand over the shapes the Target text names (NULL or no
 * shapes: every shape).  A target shape counts as measured when some shape
 * both sides measured falls under it.  Never fails; out is caller-owned
 * (measure_target_release). */
void measure_target_compare(const struct stats_set *best, const struct stats_set *cand,
			    const char *target, const struct stats_opts *o,
			    struct measure_target *out);
void measure_target_release(struct measure_target *t);
/* {"named": [...], "missing": [...], "shapes": n, "speedup", "vs_best",
 * "interval", "verdict", "worst_shape"} (caller owns). */
json_t *measure_target_json(const struct measure_target *t);

/* ---- the stall rule and promotion ---- */

/* Rows since the last confirmed win (and after after_iter, the last
 * re-assessment; -1 for none) that count toward a stall: the stall rule of
 * rules_stall_count over the log. */
int measure_stall_count(struct store *s, int after_iter, int *count, struct err *e);

/* The promotion check: fills out with one line per requirement ("ok ..." or
 * "MISSING ..." with what to do).  The confirmed win must hold on the
 * target shapes of the contract c (may be NULL: no target shapes, default
 * threshold), measured in the best's confirm session.  Returns 0 when every
 * requirement holds, ERR_FAIL when one does not.  json (may be NULL)
 * receives the same as an object {"ok": bool, "iter": N, "checks": [{name,
 * ok, detail}], "target": measure_target_json or null}. */
struct contract;
int measure_promote_check(struct store *s, const char *workspace_dir, const struct contract *c,
			  struct sb *out, json_t **json, struct err *e);

/* ---- what deciding cost (loop.h's struct loop_cost) ---- */

struct loop_cost;
struct loop_cost_row;
int measure_cost(struct store *s, int iter, struct loop_cost *out, struct err *e);
/* Every iteration's row in order, each handed to fn as it is read (nothing
 * held: a long history's rows are summed as they come), after head has
 * been told how many there are; and the whole history's (*total). */
int measure_cost_each(struct store *s, void (*head)(void *ctx, size_t n),
		      struct loop_cost_row *total,
		      void (*fn)(void *ctx, const struct loop_cost_row *r), void *ctx,
		      struct err *e);
const struct loop_cost_row *measure_cost_of(const struct loop_cost *c, int iter);
void measure_cost_release(struct loop_cost *c);
/* to gets r's runs, measurements and seconds added, kind by kind (a line
 * that stands for several iterations). */
void measure_cost_row_add(struct loop_cost_row *to, const struct loop_cost_row *r);
void measure_cost_words(const struct loop_cost_row *r, struct sb *out);
json_t *measure_cost_json(const struct loop_cost_row *r);

#endif
