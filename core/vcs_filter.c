/*
 * vcs_filter — git's filter drivers for libgit2.  A path whose
 * .gitattributes say `filter=NAME` goes through the commands the
 * configuration gives (filter.NAME.clean into git, filter.NAME.smudge into
 * the work tree), as git itself does; libgit2 applies only its built-in
 * filters (eol, ident).  Without this a kernel file with a driver hashed
 * differently from git's and read as changed while `git status` was clean,
 * and a restore wrote the clean form into the work tree.
 *
 * As git does: `%f` in the command is the path, quoted for the shell; the
 * command runs in the work tree; a missing command, or one that fails, leaves
 * the content as it is unless filter.NAME.required is true, where the
 * call that ran it fails (vcs_filter_failed).  The long-running `process` protocol is not spoken: a driver that
 * gives only filter.NAME.process is an error where it is required, and
 * passes content through otherwise (git would refuse to go on; optloop says
 * so in the error).
 */
#include "core/vcs_impl.h"
#include "core/err.h"
#include "core/sb.h"

#include <git2/sys/filter.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* A required driver that failed since the last vcs_filter_failed, in words. */
static char *failed;

int vcs_filter_failed(struct err *e)
{
	if (!failed)
		return 0;
	int rc = err_set(e, ERR_IO, "%s", failed);
	free(failed);
	failed = NULL;
	return rc;
}

/* What check found for one path: the command and whether it must work. */
struct driver {
	char *name;
	char *cmd;     /* NULL: no command for this direction */
	bool required;
};

/* The data written to the filter, run through the command at close. */
struct dstream {
	git_writestream base;
	git_writestream *next;
	const struct driver *d;
	char *path;    /* the path as git names it */
	char *workdir;
	struct sb in;
};

static char *config_string(git_config *cfg, const char *name, const char *key)
{
	char *full = xasprintf("filter.%s.%s", name, key);
	git_buf b = GIT_BUF_INIT;
	char *v = NULL;
	if (git_config_get_string_buf(&b, cfg, full) == 0)
		v = xstrdup(b.ptr);
	else
		git_error_clear();
	git_buf_dispose(&b);
	free(full);
	return v;
}

static int check(git_filter *self, void **payload, const git_filter_source *src,
		 const char **attr_values)
{
	(void)self;
	const char *name = attr_values ? attr_values[0] : NULL;
	/* unset, set without a value (`filter`) or `-filter`: no driver */
	if (!name || GIT_ATTR_IS_TRUE(name) || GIT_ATTR_IS_FALSE(name) || GIT_ATTR_IS_UNSPECIFIED(name))
		return GIT_PASSTHROUGH;
	git_config *cfg;
	if (git_repository_config_snapshot(&cfg, git_filter_source_repo(src)) < 0)
		return -1;
	bool to_odb = git_filter_source_mode(src) == GIT_FILTER_TO_ODB;
	char *cmd = config_string(cfg, name, to_odb ? "clean" : "smudge");
	int required = 0;
	char *req = xasprintf("filter.%s.required", name);
	if (git_config_get_bool(&required, cfg, req) < 0) {
		git_error_clear();
		required = 0;
	}
	free(req);
	char *process = cmd ? NULL : config_string(cfg, name, "process");
	git_config_free(cfg);
	if (!cmd && required && !failed)
		failed = process ? xasprintf("the filter driver %s on %s speaks git's process "
					     "protocol, which optloop does not; give it filter.%s.clean "
					     "and filter.%s.smudge commands",
					     name, git_filter_source_path(src), name, name)
				 : xasprintf("the required filter driver %s has no %s command for %s",
					     name, to_odb ? "clean" : "smudge",
					     git_filter_source_path(src));
	free(process);
	if (!cmd)
		return GIT_PASSTHROUGH;
	struct driver *d = xcalloc(1, sizeof(*d));
	d->name = xstrdup(name);
	d->cmd = cmd;
	d->required = required != 0;
	*payload = d;
	return 0;
}

/* The command with %f as the path, quoted for the shell (and %% as %). */
static char *expand(const char *cmd, const char *path)
{
	struct sb out = SB_INIT;
	for (const char *p = cmd; *p; p++) {
		if (p[0] == '%' && p[1] == 'f') {
			sb_addc(&out, '\'');
			for (const char *q = path; *q; q++)
				if (*q == '\'')
					sb_adds(&out, "'\\''");
				else
					sb_addc(&out, *q);
			sb_addc(&out, '\'');
			p++;
		} else if (p[0] == '%' && p[1] == '%') {
			sb_addc(&out, '%');
			p++;
		} else {
			sb_addc(&out, *p);
		}
	}
	return sb_detach(&out);
}

/* Run cmd in dir with in on its stdin; its stdout in *out.  0 when it
 * exited 0. */
static int run_driver(const char *cmd, const char *dir, const struct sb *in, struct sb *out)
{
	int to[2], from[2];
	if (pipe(to) < 0)
		return -1;
	if (pipe(from) < 0) {
		close(to[0]);
		close(to[1]);
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		close(to[0]);
		close(to[1]);
		close(from[0]);
		close(from[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		close(to[0]);
		close(to[1]);
		close(from[0]);
		close(from[1]);
		if (dir && chdir(dir) < 0)
			_exit(127);
		signal(SIGPIPE, SIG_DFL);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	/* write and read at once: a driver may answer before it read all */
	size_t off = 0;
	bool writing = true;
	if (in->len == 0) {
		close(to[1]);
		writing = false;
	}
	void (*old)(int) = signal(SIGPIPE, SIG_IGN);
	for (;;) {
		struct pollfd p[2] = {{.fd = from[0], .events = POLLIN},
				      {.fd = writing ? to[1] : -1, .events = POLLOUT}};
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (writing && (p[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
			ssize_t k = write(to[1], in->buf + off, in->len - off);
			if (k > 0)
				off += (size_t)k;
			if (k < 0 || off == in->len) {
				close(to[1]);
				writing = false;
			}
		}
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			char buf[65536];
			ssize_t k = read(from[0], buf, sizeof(buf));
			if (k > 0)
				sb_add(out, buf, (size_t)k);
			else if (k == 0 || errno != EINTR)
				break;
		}
	}
	if (writing)
		close(to[1]);
	close(from[0]);
	signal(SIGPIPE, old);
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static int ds_write(git_writestream *s, const char *buffer, size_t len)
{
	struct dstream *ds = (struct dstream *)s;
	sb_add(&ds->in, buffer, len);
	return 0;
}

static int ds_close(git_writestream *s)
{
	struct dstream *ds = (struct dstream *)s;
	char *cmd = expand(ds->d->cmd, ds->path);
	struct sb out = SB_INIT;
	int rc = run_driver(cmd, ds->workdir, &ds->in, &out);
	free(cmd);
	const struct sb *use = &out;
	if (rc < 0) {
		/* as git does: the content unfiltered; a required driver's failure
		 * is told to the caller beside libgit2's call (vcs_filter_failed),
		 * not as a failed stream: libgit2 leaks its buffer on that path */
		if (ds->d->required && !failed)
			failed = xasprintf("the filter driver %s failed on %s (filter.%s.required)",
					   ds->d->name, ds->path, ds->d->name);
		use = &ds->in;
	}
	rc = use->len ? ds->next->write(ds->next, use->buf, use->len) : 0;
	sb_release(&out);
	if (rc < 0)
		return rc;
	return ds->next->close(ds->next);
}

static void ds_free(git_writestream *s)
{
	struct dstream *ds = (struct dstream *)s;
	sb_release(&ds->in);
	free(ds->path);
	free(ds->workdir);
	free(ds);
}

static int stream(git_writestream **out, git_filter *self, void **payload,
		  const git_filter_source *src, git_writestream *next)
{
	(void)self;
	struct dstream *ds = xcalloc(1, sizeof(*ds));
	ds->base.write = ds_write;
	ds->base.close = ds_close;
	ds->base.free = ds_free;
	ds->next = next;
	ds->d = *payload;
	ds->path = xstrdup(git_filter_source_path(src));
	const char *wd = git_repository_workdir(git_filter_source_repo(src));
	ds->workdir = wd ? xstrdup(wd) : NULL;
	sb_init(&ds->in);
	*out = &ds->base;
	return 0;
}

static void cleanup(git_filter *self, void *payload)
{
	(void)self;
	struct driver *d = payload;
	if (!d)
		return;
	free(d->name);
	free(d->cmd);
	free(d);
}

void vcs_filter_register(void)
{
	static git_filter f;
	static bool done;
	if (done)
		return;
	done = true;
	git_filter_init(&f, GIT_FILTER_VERSION);
	f.attributes = "filter";
	f.check = check;
	f.stream = stream;
	f.cleanup = cleanup;
	if (git_filter_register("optloop/driver", &f, GIT_FILTER_DRIVER_PRIORITY) < 0)
		git_error_clear();
}
