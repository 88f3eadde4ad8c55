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

/* The most optloop reads from one file or from standard input.  Its
 * documents, logs and pattern sets are far smaller (an OPT_LOG.md of
 * 100,000 rows is about 10 MB); anything bigger is not the file it should
 * be, and reading it whole would take the memory with it. */
#define FSUTIL_READ_MAX ((size_t)64 << 20)

/* Every file optloop reads goes through these.  Only a regular file is
 * read: a symbolic link is followed (a TRAPS.md linked to a shared one is
 * fine) and what it names must be a regular file itself.  The open does not
 * block (O_NONBLOCK), so a FIFO or a device cannot hang it; fstat then
 * refuses anything else (ERR_NOTFILE, naming what it is: "x/TRAPS.md is a
 * FIFO, not a regular file; replace it with a file"), and a file over
 * FSUTIL_READ_MAX the same way.  ERR_NOTFOUND when absent, ERR_IO when it
 * cannot be opened or read. */

/* Open path for reading as above; *fd is the caller's to close.  With
 * FSUTIL_STDIN, "-" (and a path that opens this process's own standard
 * input, such as /dev/stdin) is standard input, read whatever it is (a
 * pipe): the user handed it over on purpose.  FSUTIL_ANY_SIZE leaves out
 * the size check, for a caller that reads only the head of the file. */
enum { FSUTIL_STDIN = 1, FSUTIL_ANY_SIZE = 2 };
int fsutil_open_read(const char *path, int flags, int *fd, struct err *e);

/* Read fd to its end into out (appended), at most FSUTIL_READ_MAX bytes in
 * all (ERR_NOTFILE beyond); name says what it is in messages. */
int fsutil_read_fd(int fd, const char *name, struct sb *out, struct err *e);

/* Read the whole regular file path into out (appended); refusals as above. */
int fsutil_read_file(const char *path, struct sb *out, struct err *e);
/* The same for a file named on the command line: "-" is standard input. */
int fsutil_read_input(const char *path, struct sb *out, struct err *e);

/* The head of a small file the kernel writes (/proc/PID/stat, cmdline):
 * up to cap - 1 bytes into buf, NUL-ended; the length, 0 when it cannot be
 * read (the process is gone). */
size_t fsutil_read_head(const char *path, char *buf, size_t cap);

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
/* fsutil_write_atomic (mode 0644), and the stat of path as it was put in
 * place: *placed holds it and *known is true when path is the inode written
 * (nothing renamed over it since) with len bytes; false when that cannot be
 * told. */
struct stat;
int fsutil_write_atomic_placed(const char *path, const void *data, size_t len,
			       struct stat *placed, bool *known, struct err *e);

/* Remove the temp files fsutil_write_atomic leaves when it is killed before
 * its rename ("NAME.tmp.PID") in folder dir; only for a caller that holds
 * the lock of whatever writes there.  Returns how many went. */
int fsutil_clear_atomic_temps(const char *dir);

/* mkdir -p with mode 0755. */
int fsutil_mkdir_p(const char *path, struct err *e);
/* A folder optloop writes into must be a folder of its own, not a link that
 * sends the writes elsewhere: 0 when path is a directory (or absent),
 * ERR_REFUSED naming it and where the link points otherwise. */
int fsutil_own_dir(const char *path, struct err *e);

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
