/* Unit tests for vcs (real repositories made with the git command line) and
 * for workspace (op names, the FLA registry reader, layout). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/fsutil.h"
#include "core/sb.h"
#include "core/vcs.h"
#include "core/workspace.h"
#include "tests/unit/scratch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[64];
static char repo[128];

static char *sh_out(const char *fmt, ...)
{
	char cmd[2048];
	struct sb out = SB_INIT;
	char buf[4096];
	size_t n;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
		sb_add(&out, buf, n);
	pclose(p);
	sb_trim(&out);
	return sb_detach(&out);
}

static void write_file(const char *rel, const char *text)
{
	char *p = xasprintf("%s/%s", repo, rel);
	char *slash = strrchr(p, '/');
	*slash = '\0';
	fsutil_mkdir_p(p, NULL);
	*slash = '/';
	assert_int_equal(fsutil_write_atomic(p, text, strlen(text), NULL), 0);
	free(p);
}

static int setup(void **state)
{
	/* no global identity: each repository sets its own */
	scratch_make(tmpdir, "vcs");
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	return 0;
}

static int teardown(void **state)
{
	return scratch_remove(tmpdir);
}

/* A small FLA-shaped repository: kernel package, test, naive, one commit. */
static int fresh_repo(void **state)
{
	static int k;
	snprintf(repo, sizeof(repo), "%s/r%d", tmpdir, k++);
	sh("mkdir -p %s && cd %s && git init -q -b main . && git config user.name 'T Tester' && "
	   "git config user.email t@example.invalid",
	   repo, repo);
	write_file("fla/ops/gla/chunk.py", "def chunk():\n    return 1\n");
	write_file("fla/ops/gla/naive.py", "def naive():\n    return 1\n");
	write_file("tests/ops/test_gla.py", "def test_chunk():\n    pass\n");
	write_file(".gitignore", "__pycache__/\n*.so\n");
	sh("cd %s && git add -A && git commit -q -m init", repo);
	return 0;
}

static const char *const kernel[] = {"fla/ops/gla"};

static void open_discovers_from_a_subdirectory(void **state)
{
	struct vcs *v;
	struct err e = {0};
	char *sub = xasprintf("%s/fla/ops", repo);
	char *real = realpath(repo, NULL);

	assert_int_equal(vcs_open(sub, &v, &e), 0);
	assert_string_equal(vcs_workdir(v), real);
	vcs_free(v);
	assert_int_equal(vcs_open(tmpdir, &v, &e), ERR_NOTFOUND);
	assert_non_null(strstr(e.msg, "not inside a git repository"));
	free(sub);
	free(real);
}

/* Refs are shared by all work trees: a linked one is named in the refs
 * that belong to it, always as one safe ref component. */
static void worktree_id_names_a_linked_work_tree(void **state)
{
	struct vcs *v;
	struct err e = {0};
	assert_int_equal(vcs_open(repo, &v, &e), 0);
	assert_null(vcs_worktree_id(v));
	vcs_free(v);
	sh("cd %s && git worktree add -q -b side ../%s-side && git worktree add -q -b odd "
	   "'../%s-with space'",
	   repo, strrchr(repo, '/') + 1, strrchr(repo, '/') + 1);
	char *side = xasprintf("%s-side", repo), *odd = xasprintf("%s-with space", repo);
	char *want = xasprintf("%s-side", strrchr(repo, '/') + 1);
	assert_int_equal(vcs_open(side, &v, &e), 0);
	char *id = vcs_worktree_id(v);
	assert_string_equal(id, want);
	free(id);
	vcs_free(v);
	assert_int_equal(vcs_open(odd, &v, &e), 0);
	id = vcs_worktree_id(v);
	assert_non_null(id); /* git names it without the space; either way a ref component */
	assert_null(strpbrk(id, " ~^:?*[\\"));
	char *again = vcs_worktree_id(v);
	assert_string_equal(id, again);
	free(again);
	free(id);
	vcs_free(v);
	free(side);
	free(odd);
	free(want);
}

static void kernel_hash_tracks_edits_and_ignores_build_files(void **state)
{
	struct vcs *v;
	struct err e = {0};
	char head[VCS_OID_HEX], work[VCS_OID_HEX], work2[VCS_OID_HEX];

	assert_int_equal(vcs_open(repo, &v, &e), 0);
	assert_int_equal(vcs_kernel_hash(v, kernel, 1, "HEAD", head, &e), 0);
	assert_int_equal(vcs_kernel_hash(v, kernel, 1, NULL, work, &e), 0);
	assert_string_equal(head, work);

	/* ignored outputs do not count */
	write_file("fla/ops/gla/__pycache__/chunk.pyc", "bytecode");
	write_file("fla/ops/gla/fast.so", "elf");
	assert_int_equal(vcs_kernel_hash(v, kernel, 1, NULL, work, &e), 0);
	assert_string_equal(head, work);
	/* a file outside the kernel does not count */
	write_file("tests/ops/test_gla.py", "def test_chunk():\n    assert True\n");
	assert_int_equal(vcs_kernel_hash(v, kernel, 1, NULL, work, &e), 0);
	assert_string_equal(head, work);

	/* an edit, a new file and a mode change each do */
	write_file("fla/ops/gla/chunk.py", "def chunk():\n    return 2\n");
	assert_int_equal(vcs_kernel_hash(v, kernel, 1, NULL, work, &e), 0);
	assert_string_not_equal(head, work);
	write_file("fla/ops/gla/extra.py", "x = 1\n");
	assert_int_equal(vcs_kernel_hash(v, kernel, 1, NULL, work2, &e), 0);
	assert_string_not_equal(work, work2);
	sh("chmod +x %s/fla/ops/gla/extra.py", repo);
	assert_int_equal(vcs_kernel_hash(v, kernel, 1, NULL, work, &e), 0);
	assert_string_not_equal(work, work2);
	vcs_free(v);
}

static void commit_holds_only_the_kernel_change_with_trailers(void **state)
{
	struct vcs *v;
	struct err e = {0};
	char sha[VCS_OID_HEX], head[VCS_OID_HEX], work[VCS_OID_HEX];
	const char *msg = "optloop: iter 1 keep - unroll\n\nOptloop-Op: chunk_gla\n"
			  "Optloop-Iter: 1\nOptloop-Direction: unroll the inner loop\n"
			  "Optloop-Gate: pass\nOptloop-Bench: 0.802\nOptloop-Vs-Best: +18%\n"
			  "Optloop-Status: keep\n";

	write_file("fla/ops/gla/chunk.py", "def chunk():\n    return 2\n");
	write_file("fla/ops/gla/new.py", "y = 2\n");
	write_file("tests/ops/test_gla.py", "changed test\n");
	assert_int_equal(vcs_open(repo, &v, &e), 0);
	assert_int_equal(vcs_commit_kernel(v, kernel, 1, msg, sha, &e), 0);
	assert_int_equal(vcs_head(v, head, &e), 0);
	assert_string_equal(sha, head);

	char *files = sh_out("cd %s && git show --name-only --format= HEAD | sort | tr '\\n' ' '", repo);
	assert_string_equal(files, "fla/ops/gla/chunk.py fla/ops/gla/new.py");
	free(files);
	/* the frozen test change is still only in the work tree; the kernel is clean */
	char *st = sh_out("cd %s && git status --porcelain | tr '\\n' ' '", repo);
	assert_string_equal(st, "M tests/ops/test_gla.py");
	free(st);
	assert_int_equal(vcs_kernel_hash(v, kernel, 1, "HEAD", head, &e), 0);
	assert_int_equal(vcs_kernel_hash(v, kernel, 1, NULL, work, &e), 0);
	assert_string_equal(head, work);

	struct vcs_iter_commit *ic;
	size_t n;
	assert_int_equal(vcs_iter_commits(v, "chunk_gla", NULL, 0, &ic, &n, &e), 0);
	assert_int_equal(n, 1);
	assert_int_equal(ic[0].iter, 1);
	assert_string_equal(ic[0].sha, sha);
	assert_string_equal(ic[0].direction, "unroll the inner loop");
	assert_string_equal(ic[0].bench, "0.802");
	assert_string_equal(ic[0].vs_best, "+18%");
	assert_string_equal(ic[0].status, "keep");
	vcs_iter_commits_free(ic, n);
	/* another op's commits are not ours */
	assert_int_equal(vcs_iter_commits(v, "chunk_gdn", NULL, 0, &ic, &n, &e), 0);
	assert_int_equal(n, 0);
	vcs_iter_commits_free(ic, n);
	/* the walk stops at the given commit */
	assert_int_equal(vcs_iter_commits(v, "chunk_gla", sha, 0, &ic, &n, &e), 0);
	assert_int_equal(n, 0);
	vcs_iter_commits_free(ic, n);
	assert_true(vcs_commit_exists(v, sha));
	assert_false(vcs_commit_exists(v, "0123456789012345678901234567890123456789"));
	vcs_free(v);
}

static void deleted_kernel_file_is_committed_as_deletion(void **state)
{
	struct vcs *v;
	struct err e = {0};
	char sha[VCS_OID_HEX];

	sh("rm %s/fla/ops/gla/naive.py", repo);
	assert_int_equal(vcs_open(repo, &v, &e), 0);
	assert_int_equal(vcs_commit_kernel(v, kernel, 1, "drop naive\n", sha, &e), 0);
	char *files = sh_out("cd %s && git show --name-status --format= HEAD | tr '\\t\\n' '  '", repo);
	assert_string_equal(files, "D fla/ops/gla/naive.py");
	free(files);
	char *st = sh_out("cd %s && git status --porcelain", repo);
	assert_string_equal(st, "");
	free(st);
	vcs_free(v);
}

static ino_t inode_of(const char *rel)
{
	char *p = xasprintf("%s/%s", repo, rel);
	struct stat st;
	assert_int_equal(lstat(p, &st), 0);
	free(p);
	return st.st_ino;
}

/* A swap keeps what it replaces: swapping back renames the kept link into
 * place (the very inode, no byte written), the kept copies never count as
 * kernel content, and vcs_clear_keeps removes them. */
static void swap_keeps_what_it_replaces_and_swaps_back_by_rename(void **state)
{
	struct vcs *v;
	struct err e = {0};
	char cand[VCS_OID_HEX], chash[VCS_OID_HEX], h[VCS_OID_HEX];

	assert_int_equal(vcs_open(repo, &v, &e), 0);
	write_file("fla/ops/gla/chunk.py", "def chunk():\n    return 2  # candidate\n");
	write_file("fla/ops/gla/extra.py", "extra = 1\n");
	assert_int_equal(vcs_snapshot(v, kernel, 1, cand, &e), 0);
	assert_int_equal(vcs_kernel_hash(v, kernel, 1, NULL, chash, &e), 0);
	ino_t chunk = inode_of("fla/ops/gla/chunk.py"), extra = inode_of("fla/ops/gla/extra.py");

	/* the best in: the candidate's files are kept (extra.py, which the best
	 * lacks, too), and hashing the tree sees only the best */
	assert_int_equal(vcs_swap(v, "HEAD", kernel, 1, &e), 0);
	char *kept = sh_out("cd %s/fla/ops/gla && ls -A | grep -c '^\\.optloop-keep\\.'", repo);
	assert_string_equal(kept, "2");
	free(kept);
	assert_int_equal(vcs_kernel_hash(v, kernel, 1, NULL, h, &e), 0);
	char head[VCS_OID_HEX];
	assert_int_equal(vcs_kernel_hash(v, kernel, 1, "HEAD", head, &e), 0);
	assert_string_equal(h, head);

	/* back: the same inodes, and the best's file kept in turn */
	assert_int_equal(vcs_swap(v, cand, kernel, 1, &e), 0);
	assert_int_equal(vcs_kernel_hash(v, kernel, 1, NULL, h, &e), 0);
	assert_string_equal(h, chash);
	assert_true(inode_of("fla/ops/gla/chunk.py") == chunk);
	assert_true(inode_of("fla/ops/gla/extra.py") == extra);

	/* a kept copy edited since is not used: the bytes come from git */
	char *edit = sh_out("cd %s/fla/ops/gla && for f in .optloop-keep.chunk.py.*; do "
			    "echo tampered >>$f; done; echo done", repo);
	free(edit);
	assert_int_equal(vcs_restore(v, "HEAD", kernel, 1, &e), 0);
	assert_int_equal(vcs_kernel_hash(v, kernel, 1, NULL, h, &e), 0);
	assert_string_equal(h, head);

	assert_int_equal(vcs_clear_keeps(v, kernel, 1, &e), 0);
	char *st = sh_out("cd %s && git status --porcelain --untracked-files=all", repo);
	assert_string_equal(st, "");
	free(st);
	vcs_free(v);
}

static void missing_identity_says_how_to_set_it(void **state)
{
	struct vcs *v;
	struct err e = {0};
	char sha[VCS_OID_HEX];

	sh("cd %s && git config --unset user.name && git config --unset user.email", repo);
	write_file("fla/ops/gla/chunk.py", "changed\n");
	assert_int_equal(vcs_open(repo, &v, &e), 0);
	assert_int_equal(vcs_commit_kernel(v, kernel, 1, "x\n", sha, &e), ERR_REFUSED);
	assert_non_null(strstr(e.msg, "git config user.name"));
	vcs_free(v);
}

static void snapshot_restore_set_aside_and_bring_back(void **state)
{
	struct vcs *v;
	struct err e = {0};
	char measured[VCS_OID_HEX], mhash[VCS_OID_HEX], h[VCS_OID_HEX], aside[VCS_OID_HEX];
	struct sb s = SB_INIT;

	assert_int_equal(vcs_open(repo, &v, &e), 0);
	write_file("fla/ops/gla/chunk.py", "def chunk():\n    return 2  # measured\n");
	assert_int_equal(vcs_snapshot(v, kernel, 1, measured, &e), 0);
	assert_int_equal(vcs_kernel_hash(v, kernel, 1, NULL, mhash, &e), 0);
	assert_int_equal(vcs_kernel_hash(v, kernel, 1, measured, h, &e), 0);
	assert_string_equal(mhash, h); /* the snapshot holds exactly what was hashed */

	/* a second change telescoped on top, plus a new file */
	write_file("fla/ops/gla/chunk.py", "def chunk():\n    return 3  # telescoped\n");
	write_file("fla/ops/gla/later.py", "later = True\n");
	assert_int_equal(vcs_aside_save(v, kernel, 1, "refs/optloop/aside", "aside\n", aside, &e), 0);
	/* saved again before the restore (a cut-off set-aside): the same commit */
	char again[VCS_OID_HEX];
	assert_int_equal(vcs_aside_save(v, kernel, 1, "refs/optloop/aside", "aside\n", again, &e), 0);
	assert_string_equal(again, aside);
	assert_int_equal(vcs_restore(v, measured, kernel, 1, &e), 0);
	/* a different state never overwrites a saved set-aside */
	assert_int_equal(vcs_aside_save(v, kernel, 1, "refs/optloop/aside", "aside\n", again, &e),
			 ERR_REFUSED);
	assert_non_null(strstr(e.msg, "already set aside"));
	assert_int_equal(vcs_kernel_hash(v, kernel, 1, NULL, h, &e), 0);
	assert_string_equal(h, mhash);
	char *later = xasprintf("%s/fla/ops/gla/later.py", repo);
	assert_false(fsutil_exists(later));
	char *ref = sh_out("cd %s && git rev-parse refs/optloop/aside", repo);
	assert_string_equal(ref, aside);
	free(ref);

	assert_int_equal(vcs_bring_back(v, aside, "refs/optloop/aside", kernel, 1, &e), 0);
	assert_true(fsutil_exists(later));
	char *path = xasprintf("%s/fla/ops/gla/chunk.py", repo);
	assert_int_equal(fsutil_read_file(path, &s, &e), 0);
	assert_non_null(strstr(s.buf, "telescoped"));
	char *gone = sh_out("cd %s && git rev-parse -q --verify refs/optloop/aside || echo gone", repo);
	assert_string_equal(gone, "gone");
	free(gone);

	/* restore to HEAD drops both changes */
	assert_int_equal(vcs_restore(v, "HEAD", kernel, 1, &e), 0);
	assert_false(fsutil_exists(later));
	char *st = sh_out("cd %s && git status --porcelain", repo);
	assert_string_equal(st, "");
	free(st);
	sb_release(&s);
	free(path);
	free(later);
	vcs_free(v);
}

/* A candidate that replaced a kernel subdirectory with a link to a folder
 * outside the repository, or with a file: the restore puts the directory
 * back and never writes through the link. */
static void restore_never_writes_through_a_link(void **state)
{
	struct vcs *v;
	struct err e = {0};
	struct sb s = SB_INIT;

	write_file("fla/ops/gla/sub/a.py", "best = 1\n");
	sh("cd %s && git add -A && git commit -q -m sub", repo);
	char *outside = xasprintf("%s-outside", repo);
	sh("mkdir -p %s && printf 'outside = 1\\n' >%s/a.py", outside, outside);
	sh("cd %s && rm -rf fla/ops/gla/sub && ln -s %s fla/ops/gla/sub", repo, outside);
	assert_int_equal(vcs_open(repo, &v, &e), 0);
	assert_int_equal(vcs_restore(v, "HEAD", kernel, 1, &e), 0);
	char *o = xasprintf("%s/a.py", outside);
	assert_int_equal(fsutil_read_file(o, &s, &e), 0);
	assert_string_equal(s.buf, "outside = 1\n"); /* untouched */
	sb_release(&s);
	char *in = xasprintf("%s/fla/ops/gla/sub/a.py", repo);
	struct stat st;
	char *subdir = xasprintf("%s/fla/ops/gla/sub", repo);
	assert_int_equal(lstat(subdir, &st), 0);
	assert_true(S_ISDIR(st.st_mode)); /* a real directory again */
	assert_int_equal(fsutil_read_file(in, &s, &e), 0);
	assert_string_equal(s.buf, "best = 1\n");
	sb_release(&s);

	/* the directory turned into a file */
	sh("cd %s && rm -rf fla/ops/gla/sub && printf 'x\\n' >fla/ops/gla/sub", repo);
	assert_int_equal(vcs_restore(v, "HEAD", kernel, 1, &e), 0);
	assert_int_equal(lstat(subdir, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(fsutil_read_file(in, &s, &e), 0);
	assert_string_equal(s.buf, "best = 1\n");
	sb_release(&s);
	char *status = sh_out("cd %s && git status --porcelain", repo);
	assert_string_equal(status, "");
	free(status);
	free(subdir);
	free(in);
	free(o);
	free(outside);
	vcs_free(v);
}

/* A submodule inside the kernel directory is its own repository's: git
 * records a commit id for it, and the kernel hash of the work tree equals
 * HEAD's with it there (it blocked the baseline as "a change"). */
static void a_submodule_in_the_kernel_is_not_kernel_content(void **state)
{
	struct vcs *v;
	struct err e = {0};
	char work[VCS_OID_HEX], head[VCS_OID_HEX];

	sh("cd %s/fla/ops/gla && mkdir vendored && cd vendored && git init -q -b main . && "
	   "git config user.name T && git config user.email t@example.invalid && "
	   "echo x >x.py && git add -A && git commit -qm v", repo);
	sh("cd %s && git add fla/ops/gla/vendored && git commit -qm 'a submodule in the kernel'",
	   repo);
	char *kind = sh_out("cd %s && git ls-tree HEAD fla/ops/gla/vendored | cut -c1-6", repo);
	assert_string_equal(kind, "160000"); /* a gitlink */
	free(kind);
	assert_int_equal(vcs_open(repo, &v, &e), 0);
	assert_int_equal(vcs_kernel_hash(v, kernel, 1, NULL, work, &e), 0);
	assert_int_equal(vcs_kernel_hash(v, kernel, 1, "HEAD", head, &e), 0);
	assert_string_equal(work, head);
	/* a restore leaves it alone */
	assert_int_equal(vcs_restore(v, "HEAD", kernel, 1, &e), 0);
	char *x = xasprintf("%s/fla/ops/gla/vendored/x.py", repo);
	assert_true(fsutil_exists(x));
	free(x);
	vcs_free(v);
}

/* After a drop the kernel is the best's again; only the edit made after the
 * measurement comes back, not the dropped change under it. */
static void aside_merge_brings_back_only_the_later_edit(void **state)
{
	struct vcs *v;
	struct err e = {0};
	char measured[VCS_OID_HEX], aside[VCS_OID_HEX], merged[VCS_OID_HEX];
	struct sb s = SB_INIT;
	const char *best = "def chunk():\n    return 1\n\n\n\n\ndef tail():\n    return 0\n";

	write_file("fla/ops/gla/chunk.py", best);
	sh("cd %s && git add -A && git commit -q -m best", repo);
	assert_int_equal(vcs_open(repo, &v, &e), 0);
	/* the measured change: the head of chunk.py */
	write_file("fla/ops/gla/chunk.py",
		   "def chunk():\n    return 2  # dropped\n\n\n\n\ndef tail():\n    return 0\n");
	assert_int_equal(vcs_snapshot(v, kernel, 1, measured, &e), 0);
	/* the edit after it: the tail of chunk.py and a new file */
	write_file("fla/ops/gla/chunk.py",
		   "def chunk():\n    return 2  # dropped\n\n\n\n\ndef tail():\n    return 9  # later\n");
	write_file("fla/ops/gla/later.py", "later = True\n");
	assert_int_equal(vcs_aside_save(v, kernel, 1, "refs/optloop/aside", "aside\n", aside, &e), 0);
	/* the drop: the kernel goes back to the best */
	assert_int_equal(vcs_restore(v, "HEAD", kernel, 1, &e), 0);

	assert_int_equal(vcs_aside_merge(v, measured, aside, kernel, 1, merged, &e), 0);
	assert_int_equal(vcs_bring_back(v, merged, "refs/optloop/aside", kernel, 1, &e), 0);
	char *path = xasprintf("%s/fla/ops/gla/chunk.py", repo);
	assert_int_equal(fsutil_read_file(path, &s, &e), 0);
	assert_null(strstr(s.buf, "dropped"));
	assert_non_null(strstr(s.buf, "return 1\n"));
	assert_non_null(strstr(s.buf, "return 9  # later"));
	char *later = xasprintf("%s/fla/ops/gla/later.py", repo);
	assert_true(fsutil_exists(later));

	/* an edit on the very lines the dropped change made: refused, nothing written */
	sb_release(&s);
	assert_int_equal(vcs_restore(v, "HEAD", kernel, 1, &e), 0);
	write_file("fla/ops/gla/chunk.py",
		   "def chunk():\n    return 2  # dropped\n\n\n\n\ndef tail():\n    return 0\n");
	assert_int_equal(vcs_snapshot(v, kernel, 1, measured, &e), 0);
	write_file("fla/ops/gla/chunk.py",
		   "def chunk():\n    return 3  # on top\n\n\n\n\ndef tail():\n    return 0\n");
	assert_int_equal(vcs_aside_save(v, kernel, 1, "refs/optloop/aside2", "aside\n", aside, &e), 0);
	assert_int_equal(vcs_restore(v, "HEAD", kernel, 1, &e), 0);
	assert_int_equal(vcs_aside_merge(v, measured, aside, kernel, 1, merged, &e), ERR_FAIL);
	assert_non_null(strstr(e.msg, "overlaps"));
	assert_int_equal(fsutil_read_file(path, &s, &e), 0);
	assert_string_equal(s.buf, best);
	sb_release(&s);
	free(path);
	free(later);
	vcs_free(v);
}

static void diff_shows_added_and_removed_lines(void **state)
{
	struct vcs *v;
	struct err e = {0};
	struct sb d = SB_INIT;

	write_file("fla/ops/gla/chunk.py", "def chunk():\n    torch.backends.cuda.matmul.allow_tf32 = True\n    return 1\n");
	write_file("fla/ops/gla/new.py", "cache = {}\n");
	write_file("tests/ops/test_gla.py", "outside the kernel\n");
	assert_int_equal(vcs_open(repo, &v, &e), 0);
	assert_int_equal(vcs_diff(v, NULL, kernel, 1, &d, &e), 0);
	assert_non_null(strstr(d.buf, "+    torch.backends.cuda.matmul.allow_tf32 = True\n"));
	assert_non_null(strstr(d.buf, "+cache = {}\n"));
	assert_non_null(strstr(d.buf, "diff --git a/fla/ops/gla/chunk.py"));
	assert_null(strstr(d.buf, "outside the kernel"));
	sb_release(&d);
	vcs_free(v);
}

static void exclude_and_ignore(void **state)
{
	struct vcs *v;
	struct err e = {0};
	struct sb notes = SB_INIT;
	bool ign;

	assert_int_equal(vcs_open(repo, &v, &e), 0);
	assert_int_equal(vcs_is_ignored(v, "profile/", &ign, &e), 0);
	assert_false(ign);
	assert_int_equal(workspace_ensure_ignored(v, &notes, &e), 0);
	assert_non_null(strstr(notes.buf, ".git/info/exclude"));
	vcs_free(v);
	/* a fresh handle sees the exclude; a second call changes nothing */
	assert_int_equal(vcs_open(repo, &v, &e), 0);
	assert_int_equal(vcs_is_ignored(v, "profile/x-opt/OPT_LOG.md", &ign, &e), 0);
	assert_true(ign);
	sb_reset(&notes);
	assert_int_equal(workspace_ensure_ignored(v, &notes, &e), 0);
	assert_int_equal(notes.len, 0);
	char *ex = sh_out("grep -c profile %s/.git/info/exclude", repo);
	assert_string_equal(ex, "1");
	free(ex);
	sb_release(&notes);
	vcs_free(v);
}

/* An exclude file whose last line has no newline keeps that line, and the
 * pattern gets a line of its own (it used to be glued to the last one). */
static void exclude_without_a_final_newline(void **state)
{
	struct vcs *v;
	struct err e = {0};
	struct sb notes = SB_INIT;
	bool ign;

	sh("mkdir -p %s/.git/info && printf '*.tmp' >%s/.git/info/exclude", repo, repo);
	assert_int_equal(vcs_open(repo, &v, &e), 0);
	assert_int_equal(workspace_ensure_ignored(v, &notes, &e), 0);
	vcs_free(v);
	char *ex = sh_out("cat %s/.git/info/exclude | tr '\\n' '|'", repo);
	assert_string_equal(ex, "*.tmp|/profile/|");
	free(ex);
	assert_int_equal(vcs_open(repo, &v, &e), 0);
	assert_int_equal(vcs_is_ignored(v, "profile/x-opt/OPT_LOG.md", &ign, &e), 0);
	assert_true(ign);
	assert_int_equal(vcs_is_ignored(v, "a.tmp", &ign, &e), 0);
	assert_true(ign);
	sb_release(&notes);
	vcs_free(v);
}

static void frozen_files_inside_the_kernel_are_left_alone(void **state)
{
	struct vcs *v;
	struct err e = {0};
	const char *const frozen[] = {"fla/ops/gla/naive.py", "tests/ops/test_gla.py"};
	char head[VCS_OID_HEX], work[VCS_OID_HEX], sha[VCS_OID_HEX];
	struct sb s = SB_INIT;

	assert_int_equal(vcs_open(repo, &v, &e), 0);
	vcs_set_exclude(v, frozen, 2);
	write_file("fla/ops/gla/naive.py", "def naive():\n    return 'loosened'\n");
	assert_int_equal(vcs_kernel_hash(v, kernel, 1, "HEAD", head, &e), 0);
	assert_int_equal(vcs_kernel_hash(v, kernel, 1, NULL, work, &e), 0);
	assert_string_equal(head, work);
	write_file("fla/ops/gla/chunk.py", "def chunk():\n    return 5\n");
	assert_int_equal(vcs_commit_kernel(v, kernel, 1, "k\n", sha, &e), 0);
	char *files = sh_out("cd %s && git show --name-only --format= HEAD | tr '\\n' ' '", repo);
	assert_string_equal(files, "fla/ops/gla/chunk.py");
	free(files);
	/* restoring the kernel does not undo the frozen edit either */
	write_file("fla/ops/gla/chunk.py", "def chunk():\n    return 6\n");
	assert_int_equal(vcs_restore(v, "HEAD~1", kernel, 1, &e), 0);
	char *p = xasprintf("%s/fla/ops/gla/naive.py", repo);
	assert_int_equal(fsutil_read_file(p, &s, &e), 0);
	assert_non_null(strstr(s.buf, "loosened"));
	sb_reset(&s);
	free(p);
	p = xasprintf("%s/fla/ops/gla/chunk.py", repo);
	assert_int_equal(fsutil_read_file(p, &s, &e), 0);
	assert_string_equal(s.buf, "def chunk():\n    return 1\n");
	free(p);
	sb_release(&s);
	vcs_free(v);
}

/* The tree git itself stages for the same work tree: HEAD~1's index with
 * every change under the kernel path added. */
static char *git_staged_tree(const char *path)
{
	return sh_out("cd %s && rm -f %s/idx && GIT_INDEX_FILE=%s/idx git read-tree HEAD~1 && "
		      "GIT_INDEX_FILE=%s/idx git add -A -- %s && GIT_INDEX_FILE=%s/idx git write-tree",
		      repo, tmpdir, tmpdir, tmpdir, path, tmpdir);
}

static void commit_tree_is_the_one_git_would_stage(void **state)
{
	struct vcs *v;
	struct err e = {0};
	char sha[VCS_OID_HEX];

	/* more of the repository around the kernel, and a nested kernel dir */
	write_file("fla/ops/gla/old/a.py", "a = 1\n");
	write_file("fla/ops/gla/old/b.py", "b = 1\n");
	write_file("fla/ops/gla/keep/k.py", "k = 1\n");
	write_file("fla/layers/gla.py", "layer = 1\n");
	write_file("docs/readme.md", "docs\n");
	sh("cd %s && git add -A && git commit -q -m more", repo);
	char *outside = sh_out("cd %s && git rev-parse HEAD:fla/layers HEAD:docs | tr '\\n' ' '", repo);

	write_file("fla/ops/gla/chunk.py", "def chunk():\n    return 7\n");  /* changed */
	sh("rm -r %s/fla/ops/gla/old", repo);                                  /* dir gone */
	write_file("fla/ops/gla/deep/er/new.py", "new = 1\n");               /* dirs made */
	sh("chmod +x %s/fla/ops/gla/naive.py", repo);                          /* mode only */
	write_file("fla/layers/gla.py", "not the kernel\n");                 /* left out */
	assert_int_equal(vcs_open(repo, &v, &e), 0);
	assert_int_equal(vcs_commit_kernel(v, kernel, 1, "k\n", sha, &e), 0);

	char *ours = sh_out("cd %s && git rev-parse HEAD^{tree}", repo);
	char *theirs = git_staged_tree("fla/ops/gla");
	assert_string_equal(ours, theirs);
	char *after = sh_out("cd %s && git rev-parse HEAD:fla/layers HEAD:docs | tr '\\n' ' '", repo);
	assert_string_equal(after, outside);
	char *st = sh_out("cd %s && git status --porcelain | tr '\\n' ' '", repo);
	assert_string_equal(st, "M fla/layers/gla.py");
	free(st);
	free(after);
	free(theirs);
	free(ours);
	free(outside);
	vcs_free(v);
}

static void kernel_file_that_became_a_directory_is_committed(void **state)
{
	struct vcs *v;
	struct err e = {0};
	char sha[VCS_OID_HEX];

	write_file("fla/ops/gla/util.py", "u = 1\n");
	sh("cd %s && git add -A && git commit -q -m util", repo);
	sh("rm %s/fla/ops/gla/util.py", repo);
	write_file("fla/ops/gla/util.py/__init__.py", "u = 2\n");
	assert_int_equal(vcs_open(repo, &v, &e), 0);
	assert_int_equal(vcs_commit_kernel(v, kernel, 1, "d/f\n", sha, &e), 0);
	char *ours = sh_out("cd %s && git rev-parse HEAD^{tree}", repo);
	char *theirs = git_staged_tree("fla/ops/gla");
	assert_string_equal(ours, theirs);
	char *st = sh_out("cd %s && git status --porcelain", repo);
	assert_string_equal(st, "");
	free(st);
	free(theirs);
	free(ours);
	vcs_free(v);
}

static void unchanged_kernel_commits_the_same_tree(void **state)
{
	struct vcs *v;
	struct err e = {0};
	char sha[VCS_OID_HEX];

	assert_int_equal(vcs_open(repo, &v, &e), 0);
	assert_int_equal(vcs_commit_kernel(v, kernel, 1, "no change\n", sha, &e), 0);
	char *trees = sh_out("cd %s && git rev-parse HEAD^{tree} HEAD~1^{tree} | uniq | wc -l", repo);
	assert_string_equal(trees, "1");
	free(trees);
	vcs_free(v);
}

static void diff_of_paths_in_different_directories(void **state)
{
	struct vcs *v;
	struct err e = {0};
	struct sb d = SB_INIT;
	const char *const paths[] = {"tests/ops/test_gla.py", "fla/ops/gla", "fla/ops/gla/naive.py"};

	write_file("fla/ops/gla/naive.py", "def naive():\n    return 'loose'\n");
	write_file("tests/ops/test_gla.py", "atol = 1\n");
	write_file("fla/layers/other.py", "outside = 1\n");
	assert_int_equal(vcs_open(repo, &v, &e), 0);
	assert_int_equal(vcs_diff(v, NULL, paths, 3, &d, &e), 0);
	assert_non_null(strstr(d.buf, "+atol = 1\n"));
	assert_non_null(strstr(d.buf, "+    return 'loose'\n"));
	assert_null(strstr(d.buf, "outside"));
	/* a path inside another one is shown once */
	const char *first = strstr(d.buf, "diff --git a/fla/ops/gla/naive.py");
	assert_non_null(first);
	assert_null(strstr(first + 1, "diff --git a/fla/ops/gla/naive.py"));
	sb_release(&d);
	vcs_free(v);
}

/* ---- workspace ---------------------------------------------------------------- */

static void op_names_are_validated(void **state)
{
	struct err e = {0};
	assert_int_equal(workspace_op_valid("chunk_gla", &e), 0);
	assert_int_equal(workspace_op_valid("chunk-la.v2", &e), 0);
	assert_int_equal(workspace_op_valid("../etc", &e), ERR_USAGE);
	assert_int_equal(workspace_op_valid("a/b", &e), ERR_USAGE);
	assert_non_null(strstr(e.msg, "path separator"));
	assert_int_equal(workspace_op_valid("a..b", &e), ERR_USAGE);
	assert_int_equal(workspace_op_valid("", &e), ERR_USAGE);
	assert_int_equal(workspace_op_valid("-x", &e), ERR_USAGE);
	assert_int_equal(workspace_op_valid("a b", &e), ERR_USAGE);
}

/* Shaped like FLA's benchmarks/ops/registry.py: nested calls and dicts,
 * keyword arguments on their own lines, comments, an op with test_file. */
static const char registry[] =
	"def register_op(config: OpConfig) -> None:\n"
	"    _REGISTRY[config.name] = config\n\n"
	"register_op(OpConfig(\n"
	"    name='chunk_gla',\n"
	"    import_path='fla.ops.gla',\n"
	"    inputs={\n"
	"        **_simple_qkv,\n"
	"        'g': TensorSpec(shape_BTHD, transform=logsigmoid_clamp),\n"
	"    },\n"
	"    category='elem_gate',  # name='decoy'\n"
	"))\n\n"
	"register_op(OpConfig(\n"
	"    name=\"chunk_gdn\",\n"
	"    import_path=\"fla.ops.gated_delta_rule\",\n"
	"    inputs={'beta': TensorSpec(shape_BTH, transform=sigmoid_transform)},\n"
	"    func_name='chunk_gated_delta_rule',\n"
	"    extra_kwargs={'use_qk_l2norm_in_kernel': True},\n"
	"    test_file='tests/ops/test_gdn.py',\n"
	"))\n";

static void registry_defaults_follow_fla(void **state)
{
	struct workspace_defaults d;
	struct err e = {0};

	assert_int_equal(workspace_registry_lookup(registry, strlen(registry), "chunk_gdn", &d, &e), 0);
	assert_string_equal(d.import_path, "fla.ops.gated_delta_rule");
	assert_string_equal(d.func_name, "chunk_gated_delta_rule");
	assert_string_equal(d.test_file, "tests/ops/test_gdn.py");
	assert_string_equal(d.naive, "fla/ops/gated_delta_rule/naive.py");
	assert_string_equal(d.kernel, "fla/ops/gated_delta_rule");
	assert_string_equal(d.verify_cmd, "python -m benchmarks.ops.verify --op chunk_gdn");
	assert_string_equal(d.bench_cmd, "python -m benchmarks.ops.verify --op chunk_gdn --base main");
	workspace_defaults_release(&d);

	assert_int_equal(workspace_registry_lookup(registry, strlen(registry), "chunk_gla", &d, &e), 0);
	assert_string_equal(d.test_file, "tests/ops/test_gla.py");
	assert_string_equal(d.naive, "fla/ops/gla/naive.py");
	assert_string_equal(d.func_name, "chunk_gla"); /* without func_name: the op's name */
	workspace_defaults_release(&d);

	assert_int_equal(workspace_registry_lookup(registry, strlen(registry), "decoy", &d, &e),
			 ERR_NOTFOUND);
	assert_int_equal(workspace_registry_lookup(registry, strlen(registry), "chunk", &d, &e),
			 ERR_NOTFOUND);
	/* a truncated file does not read past its end */
	assert_int_equal(workspace_registry_lookup(registry, 60, "chunk_gla", &d, &e), ERR_NOTFOUND);
}

static void fla_defaults_need_the_registry(void **state)
{
	struct workspace_defaults d;
	struct err e = {0};
	assert_int_equal(workspace_fla_defaults(repo, "chunk_gla", &d, &e), ERR_NOTFOUND);
	assert_non_null(strstr(e.msg, "not FLA-shaped"));
	write_file("benchmarks/ops/registry.py", registry);
	assert_int_equal(workspace_fla_defaults(repo, "chunk_gla", &d, &e), 0);
	assert_string_equal(d.kernel, "fla/ops/gla");
	workspace_defaults_release(&d);
}

/* The whole registry, read in one pass, gives each op the defaults a look-up
 * by its name gives; "def register_op(" is no entry. */
static void registry_list_matches_lookup(void **state)
{
	char **names;
	struct workspace_defaults *ops;
	write_file("benchmarks/ops/registry.py", registry);
	size_t n = workspace_fla_registry(repo, &names, &ops);
	assert_int_equal(n, 2);
	for (size_t i = 0; i < n; i++) {
		struct workspace_defaults d;
		struct err e = {0};
		assert_int_equal(workspace_registry_lookup(registry, strlen(registry), names[i], &d, &e),
				 0);
		assert_string_equal(ops[i].import_path, d.import_path);
		assert_string_equal(ops[i].kernel, d.kernel);
		assert_string_equal(ops[i].test_file, d.test_file);
		assert_string_equal(ops[i].func_name, d.func_name);
		assert_string_equal(ops[i].verify_cmd, d.verify_cmd);
		workspace_defaults_release(&d);
	}
	assert_string_equal(names[0], "chunk_gla");
	assert_string_equal(names[1], "chunk_gdn");
	workspace_fla_registry_release(names, ops, n);
}

static void find_picks_the_workspace(void **state)
{
	struct workspace ws;
	struct err e = {0};

	assert_int_equal(workspace_find(repo, NULL, &ws, &e), ERR_NOTFOUND);
	assert_non_null(strstr(e.msg, "optloop init"));
	workspace_paths(repo, "chunk_gla", &ws);
	assert_int_equal(workspace_create(&ws, "contract\n", "log\n", NULL, &e), 0);
	assert_true(fsutil_is_dir(ws.trace_dir));
	assert_true(fsutil_exists(ws.contract_path));
	assert_true(fsutil_exists(ws.dispatch_path));
	write_file("profile/chunk_gla-opt/optloop.db", "");
	assert_int_equal(workspace_create(&ws, "contract\n", "log\n", NULL, &e), ERR_REFUSED);
	workspace_release(&ws);

	assert_int_equal(workspace_find(repo, NULL, &ws, &e), 0);
	assert_string_equal(ws.op, "chunk_gla");
	assert_string_equal(ws.rel, "profile/chunk_gla-opt");
	workspace_release(&ws);
	write_file("profile/chunk_gdn-opt/optloop.db", "");
	assert_int_equal(workspace_find(repo, NULL, &ws, &e), ERR_USAGE);
	assert_non_null(strstr(e.msg, "chunk_gdn, chunk_gla"));
	assert_non_null(strstr(e.msg, "--op"));
	assert_int_equal(workspace_find(repo, "chunk_gdn", &ws, &e), 0);
	workspace_release(&ws);
	assert_int_equal(workspace_find(repo, "nope", &ws, &e), ERR_NOTFOUND);
	assert_int_equal(workspace_find(repo, "../x", &ws, &e), ERR_USAGE);
}

/* A touched checkout: listing the changes refreshes the index's stat data
 * and writes it back (as git status does), so the next listing need not
 * hash the files again; with another git holding the index lock the
 * listing is still taken, and the lock is left alone. */
static void listing_changes_writes_the_refreshed_index_back(void **state)
{
	struct vcs *v;
	struct err e = {0};
	struct vcs_change *ch = NULL;
	size_t n = 9;
	static const char *const keep[] = {"fla/ops/gla"};
	assert_int_equal(vcs_open(repo, &v, &e), 0);

	sh("cd %s && touch -d @978307200 tests/ops/test_gla.py .gitignore", repo);
	char *before = sh_out("cd %s && sha1sum < .git/index", repo);
	assert_int_equal(vcs_changes_outside(v, keep, 1, &ch, &n, &e), 0);
	assert_int_equal(n, 0); /* touched, not changed */
	vcs_changes_free(ch, n);
	char *after = sh_out("cd %s && sha1sum < .git/index", repo);
	assert_string_not_equal(before, after);
	char *dbg = sh_out("cd %s && git ls-files --debug tests/ops/test_gla.py | sed -n 's/^  mtime: \\([0-9]*\\):.*/\\1/p'",
			   repo);
	assert_string_equal(dbg, "978307200");
	free(before);
	free(after);
	free(dbg);

	/* the lock held by someone else: listed all the same, lock untouched */
	sh("cd %s && touch -d @1009843200 .gitignore && : >.git/index.lock && echo x >notes.txt", repo);
	before = sh_out("cd %s && sha1sum < .git/index", repo);
	assert_int_equal(vcs_changes_outside(v, keep, 1, &ch, &n, &e), 0);
	assert_int_equal(n, 1);
	assert_string_equal(ch[0].path, "notes.txt");
	assert_string_equal(ch[0].what, "new");
	vcs_changes_free(ch, n);
	after = sh_out("cd %s && sha1sum < .git/index", repo);
	assert_string_equal(before, after);
	char *lock = xasprintf("%s/.git/index.lock", repo);
	assert_int_equal(access(lock, F_OK), 0);
	free(lock);
	free(before);
	free(after);
	vcs_free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(open_discovers_from_a_subdirectory, fresh_repo),
		cmocka_unit_test_setup(worktree_id_names_a_linked_work_tree, fresh_repo),
		cmocka_unit_test_setup(listing_changes_writes_the_refreshed_index_back, fresh_repo),
		cmocka_unit_test_setup(kernel_hash_tracks_edits_and_ignores_build_files, fresh_repo),
		cmocka_unit_test_setup(commit_holds_only_the_kernel_change_with_trailers, fresh_repo),
		cmocka_unit_test_setup(deleted_kernel_file_is_committed_as_deletion, fresh_repo),
		cmocka_unit_test_setup(missing_identity_says_how_to_set_it, fresh_repo),
		cmocka_unit_test_setup(swap_keeps_what_it_replaces_and_swaps_back_by_rename, fresh_repo),
		cmocka_unit_test_setup(snapshot_restore_set_aside_and_bring_back, fresh_repo),
		cmocka_unit_test_setup(aside_merge_brings_back_only_the_later_edit, fresh_repo),
		cmocka_unit_test_setup(restore_never_writes_through_a_link, fresh_repo),
		cmocka_unit_test_setup(a_submodule_in_the_kernel_is_not_kernel_content, fresh_repo),
		cmocka_unit_test_setup(diff_shows_added_and_removed_lines, fresh_repo),
		cmocka_unit_test_setup(exclude_and_ignore, fresh_repo),
		cmocka_unit_test_setup(exclude_without_a_final_newline, fresh_repo),
		cmocka_unit_test_setup(frozen_files_inside_the_kernel_are_left_alone, fresh_repo),
		cmocka_unit_test_setup(commit_tree_is_the_one_git_would_stage, fresh_repo),
		cmocka_unit_test_setup(kernel_file_that_became_a_directory_is_committed, fresh_repo),
		cmocka_unit_test_setup(unchanged_kernel_commits_the_same_tree, fresh_repo),
		cmocka_unit_test_setup(diff_of_paths_in_different_directories, fresh_repo),
		cmocka_unit_test(op_names_are_validated),
		cmocka_unit_test(registry_defaults_follow_fla),
		cmocka_unit_test(registry_list_matches_lookup),
		cmocka_unit_test_setup(fla_defaults_need_the_registry, fresh_repo),
		cmocka_unit_test_setup(find_picks_the_workspace, fresh_repo),
	};
	return cmocka_run_group_tests_name("vcs_workspace", tests, setup, teardown);
}
