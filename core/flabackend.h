/*
 * flabackend — the backends an FLA op's kernels may dispatch to.
 *
 * FLA decorates a kernel entry with @dispatch('NAME'); at the first call
 * it imports NAME's backends package (fla/ops/NAME/backends, or what
 * fla/ops/backends' _OPERATION_BACKEND_MODULES maps NAME to) and runs the
 * first registered backend that is available (its package installed),
 * enabled (its environment variable, or its default) and willing, in
 * place of the decorated code: tilelang replaces part of the backward pass
 * of the common chunk kernels on Hopper, kda has a tilelang backend,
 * gated_delta_rule a flash_qla one.  What a backend runs is neither the
 * op's Triton code nor its reference, so the benchmark may measure code
 * the gate never checks on this machine.  Read from the files' text, without
 * Python.
 */
#ifndef OPTLOOP_FLABACKEND_H
#define OPTLOOP_FLABACKEND_H

#include <stdbool.h>
#include <stddef.h>

struct sb;

struct fla_backend {
	char *dispatch; /* the @dispatch name: "common" */
	char *by;       /* the first file that dispatches to it */
	char *path;     /* its folder or file: "fla/ops/common/backends/tilelang" */
	char *registry; /* its backends package's __init__.py, or NULL */
	char *name;     /* backend_type, else the file's or folder's name */
	char *package;  /* package_name it needs, NULL: none */
	char *env_var;  /* what turns it on or off, NULL: nothing */
	bool default_on;  /* on unless env_var says 0 (default_enable) */
	bool hopper;      /* its code asks for Hopper (IS_NVIDIA_HOPPER) */
	bool ascend;      /* an Ascend NPU backend (triton_ascend) */
};

/* The backends the files (repository-relative; a folder stands for its
 * .py files) dispatch to, in the order first met.  *out malloc'd (NULL
 * when none); free with flabackend_free.  Returns how many. */
size_t flabackend_find(const char *repo, const char *const *files, size_t nfiles,
		       struct fla_backend **out);
void flabackend_free(struct fla_backend *v, size_t n);

/* The backends as one line each, tab-separated (path, name, package,
 * env_var, flags), for the workspace's store; and read back from that text
 * (what flabackend_read gives has only those fields). */
void flabackend_record(const struct fla_backend *v, size_t n, struct sb *out);
size_t flabackend_read(const char *text, struct fla_backend **out);

/* When a machine would dispatch to the recorded backends, as a clause for
 * the environment line: "may dispatch to PATH if tilelang is installed (on
 * this Hopper GPU by default; FLA_TILELANG=0 turns it off)", ...; device is
 * the GPU the run reported (NULL: unknown).  Ascend backends are left out
 * on an NVIDIA device.  Appends nothing when none applies. */
void flabackend_env_note(const struct fla_backend *v, size_t n, const char *device,
			 struct sb *out);

#endif
