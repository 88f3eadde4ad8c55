/* gitshow — see gitshow.h. */
#include "core/gitshow.h"

#include "core/err.h"
#include "core/sb.h"
#include "core/vcs.h"

#include <git2.h>
#include <string.h>

static int git_fail(struct err *e, int code, const char *what)
{
	const git_error *ge = git_error_last();
	return err_set(e, code, "%s: %s", what, ge && ge->message ? ge->message : "libgit2 error");
}

static int add_line(const git_diff_delta *d, const git_diff_hunk *h, const git_diff_line *l,
		    void *payload)
{
	struct sb *out = payload;
	(void)d;
	(void)h;
	if (l->origin == GIT_DIFF_LINE_CONTEXT || l->origin == GIT_DIFF_LINE_ADDITION ||
	    l->origin == GIT_DIFF_LINE_DELETION)
		sb_addc(out, l->origin);
	sb_add(out, l->content, l->content_len);
	return 0;
}

int gitshow_commit(const char *dir, const char *sha, struct sb *stat, struct sb *patch,
		   struct err *e)
{
	git_repository *repo = NULL;
	git_object *obj = NULL;
	git_commit *c = NULL, *parent = NULL;
	git_tree *tree = NULL, *ptree = NULL;
	git_diff *diff = NULL;
	git_diff_stats *stats = NULL;
	git_buf buf = GIT_BUF_INIT;
	int rc = 0;

	vcs_libgit2_init();
	if (git_repository_open_ext(&repo, dir, 0, NULL) < 0) {
		rc = git_fail(e, ERR_IO, "cannot open the repository");
		goto out;
	}
	if (git_revparse_single(&obj, repo, sha) < 0 ||
	    git_object_peel((git_object **)&c, obj, GIT_OBJECT_COMMIT) < 0) {
		rc = err_set(e, ERR_NOTFOUND, "commit %s is not in the repository (was history rewritten?)", sha);
		goto out;
	}
	if (git_commit_tree(&tree, c) < 0) {
		rc = git_fail(e, ERR_IO, "cannot read the commit's tree");
		goto out;
	}
	if (git_commit_parentcount(c) > 0 &&
	    (git_commit_parent(&parent, c, 0) < 0 || git_commit_tree(&ptree, parent) < 0)) {
		rc = git_fail(e, ERR_IO, "cannot read the parent commit");
		goto out;
	}
	if (git_diff_tree_to_tree(&diff, repo, ptree, tree, NULL) < 0) {
		rc = git_fail(e, ERR_IO, "cannot diff the commit");
		goto out;
	}
	if (stat) {
		if (git_diff_get_stats(&stats, diff) < 0 ||
		    git_diff_stats_to_buf(&buf, stats, GIT_DIFF_STATS_FULL, 72) < 0) {
			rc = git_fail(e, ERR_IO, "cannot compute the diff stat");
			goto out;
		}
		sb_add(stat, buf.ptr, buf.size);
	}
	if (patch && git_diff_print(diff, GIT_DIFF_FORMAT_PATCH, add_line, patch) < 0)
		rc = git_fail(e, ERR_IO, "cannot print the diff");
out:
	git_buf_dispose(&buf);
	git_diff_stats_free(stats);
	git_diff_free(diff);
	git_tree_free(ptree);
	git_tree_free(tree);
	git_commit_free(parent);
	git_commit_free(c);
	git_object_free(obj);
	git_repository_free(repo);
	return rc;
}
