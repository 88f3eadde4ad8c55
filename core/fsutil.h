/*
 * fsutil — crash-safe file writes and small path helpers.
 *
 * fsutil_write_atomic() is the only way the engine replaces a file: write a
 * temp file beside it, fsync, rename over the target, fsync the directory.
 * A reader (or a restart after SIGKILL) sees the old file or the new one,
 * never a mix.
 */
#ifndef OPTLOOP_FSUTIL_H
#define OPTLOOP_FSUTIL_H

#include <stdbool.h>
#include <stddef.h>

struct err;
struct sb;

/* Read the whole file into out (appended).  ERR_NOTFOUND when absent. */
int fsutil_read_file(const char *path, struct sb *out, struct err *e);

/* Replace path with data atomically (temp + fsync + rename + dir fsync).
 * The temp file is created new (O_EXCL, never through a symbolic link). */
int fsutil_write_atomic(const char *path, const void *data, size_t len, struct err *e);
/* The same with the new file's permission bits. */
int fsutil_write_atomic_mode(const char *path, const void *data, size_t len, unsigned mode,
			     struct err *e);
/* Its two steps: write a new temp file (O_EXCL, no link followed; fsynced),
 * then rename it over path (and fsync the directory). */
int fsutil_write_temp(const char *tmp, const void *data, size_t len, unsigned mode,
		      struct err *e);
int fsutil_commit_temp(const char *tmp, const char *path, struct err *e);
/* The same through the temp file tmp (same directory as path). */
int fsutil_write_atomic_via(const char *path, const char *tmp, const void *data, size_t len,
			    unsigned mode, struct err *e);

/* mkdir -p with mode 0755. */
int fsutil_mkdir_p(const char *path, struct err *e);

bool fsutil_exists(const char *path);
bool fsutil_is_dir(const char *path);
/* The real path of the file p names, as given or else relative to base,
 * when it lies under the directory root.  0 with *out (caller frees);
 * ERR_NOTFOUND when neither names an existing path, ERR_REFUSED when it is
 * outside root, ERR_USAGE when it is not a regular file.  No message: the
 * caller says it in its own words. */
int fsutil_file_under(const char *p, const char *base, const char *root, char **out);
/* Whether the relative path p is dir or lies inside it ("a/b" under "a",
 * "a" under "a/"; "ab" is not under "a"), by the text of the paths. */
bool fsutil_path_under(const char *p, const char *dir);

/* "a" + "/" + "b", without doubling slashes.  Caller frees. */
char *fsutil_join(const char *a, const char *b);

/* Copy a directory tree (regular files, dirs, symlinks); dst must not exist. */
int fsutil_copy_tree(const char *src, const char *dst, struct err *e);

/* Absolute path of the running executable's directory.  Caller frees;
 * NULL when it cannot be determined. */
char *fsutil_exe_dir(void);

#endif
