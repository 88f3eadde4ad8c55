/* fsutil — atomic writes, checked whole-file reads and path helpers. */
#include "core/fsutil.h"
#include "core/err.h"
#include "core/fault.h"
#include "core/sb.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What a file that is not a regular one is, in words. */
static const char *kind_of(mode_t m)
{
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	if (S_ISSOCK(m))
		return "a socket";
	return "not a regular file";
}

/* "path is a FIFO, not a regular file", or for a symbolic link "path is a
 * symbolic link to /dev/zero, a character device, not a regular file". */
static int refuse_kind(const char *path, mode_t m, struct err *e)
{
	char target[PATH_MAX];
	struct stat ls;
	ssize_t n = -1;

	if (lstat(path, &ls) == 0 && S_ISLNK(ls.st_mode))
		n = readlink(path, target, sizeof(target) - 1);
	if (n > 0) {
		target[n] = '\0';
		return err_set(e, ERR_NOTFILE,
			       "%s is a symbolic link to %s, %s, not a regular file; replace it "
			       "with a file",
			       path, target, kind_of(m));
	}
	if (S_ISDIR(m))
		return err_set(e, ERR_NOTFILE, "%s is a directory, not a file; name the file in it",
			       path);
	return err_set(e, ERR_NOTFILE, "%s is %s, not a regular file; replace it with a file",
		       path, kind_of(m));
}

static int refuse_size(const char *name, const char *how, struct err *e)
{
	return err_set(e, ERR_NOTFILE,
		       "%s %s more than the %zu MiB optloop reads from one file; is it the right "
		       "file? (trim it, or move it aside)",
		       name, how, FSUTIL_READ_MAX >> 20);
}

/* Is fd this process's standard input, opened again through a path? */
static bool same_as_stdin(int fd)
{
	struct stat a, b;
	return fstat(fd, &a) == 0 && fstat(STDIN_FILENO, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino && !S_ISREG(a.st_mode);
}

int fsutil_open_read(const char *path, int flags, int *fd, struct err *e)
{
	struct stat st;

	*fd = -1;
	if ((flags & FSUTIL_STDIN) && !strcmp(path, "-")) {
		*fd = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
		if (*fd < 0)
			return err_set(e, ERR_IO, "cannot read standard input: %s", strerror(errno));
		return 0;
	}
	/* O_NONBLOCK: opening a FIFO without a writer (or a tty, a tape) would
	 * wait here; nothing but a regular file gets past the fstat below. */
	int f = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (f < 0)
		return err_set(e, errno == ENOENT || errno == ENOTDIR ? ERR_NOTFOUND : ERR_IO,
			       "cannot read %s: %s", path, strerror(errno));
	if (fstat(f, &st) < 0) {
		int saved = errno;
		close(f);
		return err_set(e, ERR_IO, "cannot read %s: %s", path, strerror(saved));
	}
	if (!S_ISREG(st.st_mode)) {
		if ((flags & FSUTIL_STDIN) && same_as_stdin(f)) {
			fcntl(f, F_SETFL, fcntl(f, F_GETFL) & ~O_NONBLOCK);
			*fd = f;
			return 0;
		}
		close(f);
		return refuse_kind(path, st.st_mode, e);
	}
	if (!(flags & FSUTIL_ANY_SIZE) && (uintmax_t)st.st_size > FSUTIL_READ_MAX) {
		close(f);
		char how[64];
		snprintf(how, sizeof(how), "is %jd MiB,", (intmax_t)(st.st_size >> 20));
		return refuse_size(path, how, e);
	}
	*fd = f;
	return 0;
}

int fsutil_read_fd(int fd, const char *name, struct sb *out, struct err *e)
{
	struct stat st;
	size_t start = out->len;
	ssize_t n;

	/* Read straight into the buffer, sized once from the file (a long
	 * OPT_LOG.md is read at every start); a file that grows meanwhile
	 * still reads whole, up to the cap. */
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (uintmax_t)st.st_size <= FSUTIL_READ_MAX)
		sb_grow(out, (size_t)st.st_size + 1);
	for (;;) {
		if (out->cap - out->len < 2)
			sb_grow(out, 4096);
		size_t room = out->cap - out->len - 1;
		if (room > FSUTIL_READ_MAX + 1 - (out->len - start))
			room = FSUTIL_READ_MAX + 1 - (out->len - start);
		n = read(fd, out->buf + out->len, room);
		if (n == 0)
			break;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				/* a stream handed over non-blocking: wait for it */
				struct pollfd p = {.fd = fd, .events = POLLIN};
				poll(&p, 1, -1);
				continue;
			}
			int saved = errno;
			out->buf[out->len] = '\0';
			return err_set(e, ERR_IO, "cannot read %s: %s", name, strerror(saved));
		}
		out->len += (size_t)n;
		out->buf[out->len] = '\0';
		if (out->len - start > FSUTIL_READ_MAX) {
			out->len = start;
			out->buf[out->len] = '\0';
			return refuse_size(name, "holds", e);
		}
	}
	return 0;
}

static int read_path(const char *path, int flags, struct sb *out, struct err *e)
{
	int fd, rc = fsutil_open_read(path, flags, &fd, e);
	if (rc < 0)
		return rc;
	bool in = (flags & FSUTIL_STDIN) && !strcmp(path, "-");
	rc = fsutil_read_fd(fd, in ? "standard input" : path, out, e);
	close(fd);
	return rc;
}

int fsutil_read_file(const char *path, struct sb *out, struct err *e)
{
	return read_path(path, 0, out, e);
}

int fsutil_read_input(const char *path, struct sb *out, struct err *e)
{
	return read_path(path, FSUTIL_STDIN, out, e);
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static void fsync_dir_of(const char *path)
{
	char *dir = xstrdup(path);
	char *slash = strrchr(dir, '/');
	int fd;

	if (slash == dir)
		slash[1] = '\0';
	else if (slash)
		*slash = '\0';
	else
		strcpy(dir, ".");
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	free(dir);
}

int fsutil_write_atomic(const char *path, const void *data, size_t len, struct err *e)
{
	return fsutil_write_atomic_mode(path, data, len, 0644, e);
}

static int write_via(const char *path, const char *tmp, const void *data, size_t len,
		     unsigned mode, struct stat *placed, bool *known, struct err *e);

/* through the temp file fsutil_clear_atomic_temps knows ("NAME.tmp.PID") */
static int write_atomic(const char *path, const void *data, size_t len, unsigned mode,
			struct stat *placed, bool *known, struct err *e)
{
	char *tmp = xasprintf("%s.tmp.%ld", path, (long)getpid());
	int rc = write_via(path, tmp, data, len, mode, placed, known, e);
	free(tmp);
	return rc;
}

int fsutil_write_atomic_mode(const char *path, const void *data, size_t len, unsigned mode,
			     struct err *e)
{
	return write_atomic(path, data, len, mode, NULL, NULL, e);
}

int fsutil_write_temp(const char *tmp, const void *data, size_t len, unsigned mode,
		      struct err *e)
{
	/* a new file of our own: never through a link planted at the temp name */
	int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
	int fd = open(tmp, flags, (mode_t)mode);
	int saved;

	if (fd < 0 && errno == EEXIST && unlink(tmp) == 0) /* left by an earlier crash */
		fd = open(tmp, flags, (mode_t)mode);
	if (fd < 0)
		return err_set(e, ERR_IO, "cannot create %s: %s", tmp, strerror(errno));
	fchmod(fd, (mode_t)mode); /* whatever the umask left */
	if (write_all(fd, data, len) < 0 || fsync(fd) < 0) {
		saved = errno;
		close(fd);
		unlink(tmp);
		return err_set(e, ERR_IO, "cannot write %s: %s", tmp, strerror(saved));
	}
	close(fd);
	return 0;
}

int fsutil_commit_temp(const char *tmp, const char *path, struct err *e)
{
	if (rename(tmp, path) < 0) {
		int saved = errno;
		unlink(tmp);
		return err_set(e, ERR_IO, "cannot replace %s: %s", path, strerror(saved));
	}
	fsync_dir_of(path);
	return 0;
}

/* fsutil_write_atomic_via; with placed, the stat of path as it was put in
 * place (*known: it is the inode written, with len bytes) */
static int write_via(const char *path, const char *tmp, const void *data, size_t len,
		     unsigned mode, struct stat *placed, bool *known, struct err *e)
{
	struct stat mine;
	int rc = fsutil_write_temp(tmp, data, len, mode, e);
	if (rc < 0)
		return rc; /* the old file is untouched */
	bool have = placed && lstat(tmp, &mine) == 0;
	fault_point("fsutil.before_rename");
	if ((rc = fsutil_commit_temp(tmp, path, e)) < 0)
		return rc;
	if (placed)
		*known = have && stat(path, placed) == 0 && placed->st_dev == mine.st_dev &&
			 placed->st_ino == mine.st_ino && (uintmax_t)placed->st_size == len;
	return 0;
}

int fsutil_write_atomic_via(const char *path, const char *tmp, const void *data, size_t len,
			    unsigned mode, struct err *e)
{
	return write_via(path, tmp, data, len, mode, NULL, NULL, e);
}

int fsutil_write_atomic_placed(const char *path, const void *data, size_t len,
			       struct stat *placed, bool *known, struct err *e)
{
	*known = false;
	return write_atomic(path, data, len, 0644, placed, known, e);
}

int fsutil_mkdir_p(const char *path, struct err *e)
{
	char *p = xstrdup(path);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST) {
			int saved = errno;
			err_set(e, ERR_IO, "cannot create directory %s: %s", p, strerror(saved));
			free(p);
			return ERR_IO;
		}
		*s = '/';
	}
	if (mkdir(p, 0755) < 0 && errno != EEXIST) {
		int saved = errno;
		err_set(e, ERR_IO, "cannot create directory %s: %s", p, strerror(saved));
		free(p);
		return ERR_IO;
	}
	free(p);
	return 0;
}

int fsutil_clear_atomic_temps(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		const char *t = strstr(de->d_name, ".tmp.");
		if (!t || t == de->d_name || !t[5] || strspn(t + 5, "0123456789") != strlen(t + 5))
			continue;
		char *p = fsutil_join(dir, de->d_name);
		struct stat st;
		if (lstat(p, &st) == 0 && S_ISREG(st.st_mode) && unlink(p) == 0)
			n++;
		free(p);
	}
	closedir(d);
	return n;
}

int fsutil_own_dir(const char *path, struct err *e)
{
	struct stat st;
	if (lstat(path, &st) < 0 || S_ISDIR(st.st_mode))
		return 0;
	if (S_ISLNK(st.st_mode)) {
		char to[4096];
		ssize_t n = readlink(path, to, sizeof(to) - 1);
		to[n > 0 ? n : 0] = '\0';
		return err_set(e, ERR_REFUSED,
			       "%s is a link (to %s), so what optloop writes there would land "
			       "elsewhere; replace it with a folder of its own (mv it aside, then "
			       "mkdir it)",
			       path, to);
	}
	return err_set(e, ERR_REFUSED,
		       "%s is not a folder; optloop writes its files there: move it aside", path);
}

bool fsutil_exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

int fsutil_file_under(const char *p, const char *base, const char *root, char **out)
{
	char *real = realpath(p, NULL);
	*out = NULL;
	if (!real && p[0] != '/') {
		char *j = fsutil_join(base, p);
		real = realpath(j, NULL);
		free(j);
	}
	if (!real)
		return ERR_NOTFOUND;
	char *top = realpath(root, NULL);
	size_t tl = top ? strlen(top) : 0;
	bool under = top && !strncmp(real, top, tl) && real[tl] == '/';
	free(top);
	struct stat st;
	int rc = !under ? ERR_REFUSED : stat(real, &st) < 0 || !S_ISREG(st.st_mode) ? ERR_USAGE : 0;
	if (rc == 0)
		*out = real;
	else
		free(real);
	return rc;
}

bool fsutil_is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

char *fsutil_join(const char *a, const char *b)
{
	size_t la = strlen(a);
	while (la > 1 && a[la - 1] == '/')
		la--;
	while (*b == '/')
		b++;
	if (la == 0)
		return xstrdup(b);
	return xasprintf("%.*s/%s", (int)la, a, b);
}

static int copy_file(const char *src, const char *dst, mode_t mode, struct err *e)
{
	struct sb data = SB_INIT;
	int rc = fsutil_read_file(src, &data, e);
	int fd;

	if (rc < 0)
		return rc;
	fd = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode & 0777);
	if (fd < 0 || write_all(fd, data.buf, data.len) < 0) {
		int saved = errno;
		if (fd >= 0)
			close(fd);
		sb_release(&data);
		return err_set(e, ERR_IO, "cannot write %s: %s", dst, strerror(saved));
	}
	close(fd);
	sb_release(&data);
	return 0;
}

int fsutil_copy_tree(const char *src, const char *dst, struct err *e)
{
	DIR *d;
	struct dirent *de;
	struct stat st;
	int rc = 0;

	if (stat(src, &st) < 0)
		return err_set(e, ERR_IO, "cannot read %s: %s", src, strerror(errno));
	if (mkdir(dst, st.st_mode & 0777) < 0)
		return err_set(e, ERR_IO, "cannot create %s: %s", dst, strerror(errno));
	d = opendir(src);
	if (!d)
		return err_set(e, ERR_IO, "cannot list %s: %s", src, strerror(errno));
	while (rc == 0 && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char *s = fsutil_join(src, de->d_name);
		char *t = fsutil_join(dst, de->d_name);
		if (lstat(s, &st) < 0) {
			rc = err_set(e, ERR_IO, "cannot read %s: %s", s, strerror(errno));
		} else if (S_ISDIR(st.st_mode)) {
			rc = fsutil_copy_tree(s, t, e);
		} else if (S_ISLNK(st.st_mode)) {
			char target[PATH_MAX];
			ssize_t n = readlink(s, target, sizeof(target) - 1);
			if (n < 0 || (target[n] = '\0', symlink(target, t) < 0))
				rc = err_set(e, ERR_IO, "cannot copy link %s: %s", s, strerror(errno));
		} else if (S_ISREG(st.st_mode)) {
			rc = copy_file(s, t, st.st_mode, e);
		}
		free(s);
		free(t);
	}
	closedir(d);
	return rc;
}

char *fsutil_exe_dir(void)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	char *slash;

	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	slash = strrchr(buf, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	return xstrdup(buf[0] ? buf : "/");
}

/* p without a leading "./" and with its length less trailing slashes */
static size_t trimmed(const char **p)
{
	while ((*p)[0] == '.' && (*p)[1] == '/')
		*p += 2;
	size_t n = strlen(*p);
	while (n > 1 && (*p)[n - 1] == '/')
		n--;
	return n;
}

bool fsutil_path_under(const char *p, const char *dir)
{
	size_t np = trimmed(&p), nd = trimmed(&dir);
	if (nd == 1 && dir[0] == '.')
		return true;
	if (np < nd || strncmp(p, dir, nd))
		return false;
	return np == nd || p[nd] == '/';
}

size_t fsutil_read_head(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "re");
	size_t n = f && cap ? fread(buf, 1, cap - 1, f) : 0;
	if (f)
		fclose(f);
	if (cap)
		buf[n] = 0;
	return n;
}
