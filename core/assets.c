/* assets — locate the shipped assets directory. */
#include "core/assets.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/sb.h"

#include <stdlib.h>

static char *found;

/* Any of the shipped folders marks an assets directory. */
static int looks_like_assets(const char *dir)
{
	static const char *const marks[] = {"patterns", "demo"};
	int ok = 0;
	for (size_t i = 0; !ok && i < sizeof(marks) / sizeof(marks[0]); i++) {
		char *p = fsutil_join(dir, marks[i]);
		ok = fsutil_is_dir(p);
		free(p);
	}
	return ok;
}

const char *assets_dir(struct err *e)
{
	const char *env = getenv("OPTLOOP_ASSETS");
	static const char *const rel[] = {"../share/optloop/assets", "assets", "../assets",
					   "../../assets"};
	char *exe;

	if (found)
		return found;
	if (env && *env) {
		if (!looks_like_assets(env)) {
			err_set(e, ERR_NOTFOUND,
				"OPTLOOP_ASSETS=%s has no patterns/ folder; point it at optloop's "
				"assets directory or unset it",
				env);
			return NULL;
		}
		found = xstrdup(env);
		return found;
	}
	exe = fsutil_exe_dir();
	for (size_t i = 0; exe && i < sizeof(rel) / sizeof(rel[0]); i++) {
		char *p = fsutil_join(exe, rel[i]);
		if (looks_like_assets(p)) {
			found = realpath(p, NULL);
			if (!found)
				found = p;
			else
				free(p);
			free(exe);
			return found;
		}
		free(p);
	}
	free(exe);
	err_set(e, ERR_NOTFOUND,
		"cannot find optloop's assets (looked beside the executable and in "
		"../share/optloop); reinstall with 'make install' or set OPTLOOP_ASSETS");
	return NULL;
}

char *assets_path(const char *rel, struct err *e)
{
	const char *d = assets_dir(e);
	return d ? fsutil_join(d, rel) : NULL;
}
