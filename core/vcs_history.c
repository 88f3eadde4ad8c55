/* vcs_history — optloop's own commits read back from history: whether a
 * commit is there and in HEAD's history, and the Optloop trailers of the
 * commits of an op (repair --rebuild, start-up reconciliation). */
#include "core/vcs_impl.h"
#include "core/err.h"
#include "core/sb.h"

#include <git2.h>

#include <stdlib.h>
#include <string.h>

bool vcs_commit_exists(struct vcs *v, const char *sha)
{
	git_object *obj = NULL;
	if (!sha || !*sha || git_revparse_single(&obj, v->repo, sha) < 0)
		return false;
	bool ok = git_object_type(obj) == GIT_OBJECT_COMMIT;
	git_object_free(obj);
	return ok;
}

bool vcs_path_in(struct vcs *v, const char *treeish, const char *path)
{
	git_object *obj = NULL;
	git_tree *tree = NULL;
	git_tree_entry *ent = NULL;
	bool yes = false;
	if (git_revparse_single(&obj, v->repo, treeish) == 0 &&
	    git_object_peel((git_object **)&tree, obj, GIT_OBJECT_TREE) == 0 &&
	    git_tree_entry_bypath(&ent, tree, path) == 0)
		yes = true;
	git_tree_entry_free(ent);
	git_tree_free(tree);
	git_object_free(obj);
	return yes;
}

bool vcs_holds(struct vcs *v, const char *tip, const char *sha)
{
	git_object *obj = NULL, *top = NULL;
	bool ok = false;

	if (!sha || !*sha || git_revparse_single(&obj, v->repo, sha) < 0)
		return false;
	if (git_object_type(obj) == GIT_OBJECT_COMMIT && git_revparse_single(&top, v->repo, tip) == 0) {
		git_object *c = NULL;
		if (git_object_peel(&c, top, GIT_OBJECT_COMMIT) == 0)
			ok = git_oid_equal(git_object_id(c), git_object_id(obj)) ||
			     git_graph_descendant_of(v->repo, git_object_id(c), git_object_id(obj)) == 1;
		git_object_free(c);
	}
	git_error_clear();
	git_object_free(top);
	git_object_free(obj);
	return ok;
}

bool vcs_commit_in_history(struct vcs *v, const char *sha)
{
	return vcs_holds(v, "HEAD", sha);
}

char *vcs_branch_holding(struct vcs *v, const char *sha)
{
	git_branch_iterator *it = NULL;
	git_reference *ref;
	git_branch_t type;
	char *found = NULL;
	if (git_branch_iterator_new(&it, v->repo, GIT_BRANCH_LOCAL) < 0) {
		git_error_clear();
		return NULL;
	}
	while (!found && git_branch_next(&ref, &type, it) == 0) {
		const char *name = NULL;
		if (!git_branch_is_checked_out(ref) && git_branch_name(&name, ref) == 0 &&
		    vcs_holds(v, git_reference_name(ref), sha))
			found = xstrdup(name);
		git_reference_free(ref);
	}
	git_branch_iterator_free(it);
	git_error_clear();
	return found;
}

int vcs_resolve(struct vcs *v, const char *spec, char sha[VCS_OID_HEX])
{
	git_object *obj = NULL, *c = NULL;
	int rc = -1;
	sha[0] = '\0';
	if (git_revparse_single(&obj, v->repo, spec) == 0 &&
	    git_object_peel(&c, obj, GIT_OBJECT_COMMIT) == 0) {
		git_oid_tostr(sha, VCS_OID_HEX, git_object_id(c));
		rc = 0;
	}
	git_error_clear();
	git_object_free(c);
	git_object_free(obj);
	return rc;
}

static void iter_commit_release(struct vcs_iter_commit *c)
{
	free(c->op);
	free(c->direction);
	free(c->gate);
	free(c->bench);
	free(c->vs_best);
	free(c->status);
	free(c->unconfirmed);
	memset(c, 0, sizeof(*c));
}

int vcs_parse_message(const char *msg, struct vcs_iter_commit *c)
{
	git_message_trailer_array arr = {0};
	bool have_iter = false;

	memset(c, 0, sizeof(*c));
	if (!strstr(msg, "Optloop-Iter:") || git_message_trailers(&arr, msg) < 0)
		return ERR_NOTFOUND;
	for (size_t i = 0; i < arr.count; i++) {
		const char *k = arr.trailers[i].key, *val = arr.trailers[i].value;
		if (!strcmp(k, "Optloop-Iter")) {
			char *end;
			long it = strtol(val, &end, 10);
			if (end != val && it >= 0 && it < 1000000) {
				c->iter = (int)it;
				have_iter = true;
			}
		} else if (!strcmp(k, "Optloop-Op")) {
			free(c->op), c->op = xstrdup(val);
		} else if (!strcmp(k, "Optloop-Direction")) {
			free(c->direction), c->direction = xstrdup(val);
		} else if (!strcmp(k, "Optloop-Gate")) {
			free(c->gate), c->gate = xstrdup(val);
		} else if (!strcmp(k, "Optloop-Bench")) {
			free(c->bench), c->bench = xstrdup(val);
		} else if (!strcmp(k, "Optloop-Vs-Best")) {
			free(c->vs_best), c->vs_best = xstrdup(val);
		} else if (!strcmp(k, "Optloop-Status")) {
			free(c->status), c->status = xstrdup(val);
		} else if (!strcmp(k, "Optloop-Unconfirmed")) {
			free(c->unconfirmed), c->unconfirmed = xstrdup(val);
		}
	}
	git_message_trailer_array_free(&arr);
	if (!have_iter) {
		iter_commit_release(c);
		return ERR_NOTFOUND;
	}
	return 0;
}

int vcs_iter_commits(struct vcs *v, const char *op, const char *stop_sha, int max,
		     struct vcs_iter_commit **out, size_t *nout, struct err *e)
{
	git_revwalk *w = NULL;
	git_oid oid;
	size_t n = 0, cap = 0;
	struct vcs_iter_commit *vec = NULL;
	int rc = 0, seen = 0;

	*out = NULL;
	*nout = 0;
	if (git_revwalk_new(&w, v->repo) < 0)
		return vcs_git_fail(e, ERR_IO, "cannot walk history");
	if (git_revwalk_push_head(w) < 0) {
		git_revwalk_free(w);
		return 0; /* unborn HEAD: no history */
	}
	git_revwalk_simplify_first_parent(w);
	if (stop_sha && *stop_sha && git_oid_fromstr(&oid, stop_sha) == 0)
		git_revwalk_hide(w, &oid);
	while ((max <= 0 || seen < max) && git_revwalk_next(&oid, w) == 0) {
		git_commit *c = NULL;
		struct vcs_iter_commit ic;
		seen++;
		if (git_commit_lookup(&c, v->repo, &oid) < 0) {
			rc = vcs_git_fail(e, ERR_IO, "cannot read a commit");
			break;
		}
		const char *msg = git_commit_message(c);
		if (msg && vcs_parse_message(msg, &ic) == 0) {
			if (op && (!ic.op || strcmp(ic.op, op) != 0)) {
				iter_commit_release(&ic);
			} else {
				git_oid_tostr(ic.sha, VCS_OID_HEX, &oid);
				if (n == cap) {
					cap = cap ? 2 * cap : 16;
					vec = xrealloc(vec, cap * sizeof(*vec));
				}
				vec[n++] = ic;
			}
		}
		git_commit_free(c);
	}
	git_revwalk_free(w);
	if (rc < 0) {
		vcs_iter_commits_free(vec, n);
		return rc;
	}
	*out = vec;
	*nout = n;
	return 0;
}

void vcs_iter_commits_free(struct vcs_iter_commit *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		iter_commit_release(&c[i]);
	free(c);
}
