/* files — see files.h. */
#include "tui/workbench/files.h"

#include "core/err.h"
#include "core/fsutil.h"
#include "core/sb.h"
#include "views/view.h"

#include <stdlib.h>
#include <string.h>

void ws_note(struct wb_data *d, int role, const char *text)
{
	d->notes = xrealloc(d->notes, (d->nnotes + 1) * sizeof(*d->notes));
	d->notes[d->nnotes++] = (struct wb_line){xstrdup(text), (enum role)role};
}

static void note_problem(struct wb_data *d, const char *file, int lineno, const char *msg)
{
	char *s = lineno > 0 ? xasprintf("%s line %d: %s", file, lineno, msg)
			     : xasprintf("%s: %s", file, msg);
	ws_note(d, R_NORMAL, s);
	free(s);
}

void ws_files_load(struct ws_files *f, const char *dir, struct wb_data *d)
{
	char *path;
	struct sb text = SB_INIT;
	struct err e = {0};

	memset(f, 0, sizeof(*f));
	sb_init(&text);
	path = fsutil_join(dir, "TRAPS.md");
	if (fsutil_read_file(path, &text, &e) == 0) {
		struct problems p = {0};
		if (traps_parse(text.buf, text.len, &f->traps, &p, &e) < 0)
			note_problem(d, "TRAPS.md", 0, e.msg);
		for (size_t i = 0; i < p.n; i++)
			note_problem(d, "TRAPS.md", p.v[i].lineno, p.v[i].msg);
		problems_release(&p);
	} else if (e.code != ERR_NOTFOUND) {
		note_problem(d, "TRAPS.md", 0, e.msg);
	}
	free(path);
	sb_reset(&text);
	err_clear(&e);
	path = fsutil_join(dir, "dispatch.md");
	if (fsutil_read_file(path, &text, &e) == 0) {
		struct problems p = {0};
		if (dispatch_parse(text.buf, text.len, &f->disp, &p, &e) < 0)
			note_problem(d, "dispatch.md", 0, e.msg);
		for (size_t i = 0; i < p.n; i++)
			note_problem(d, "dispatch.md", p.v[i].lineno, p.v[i].msg);
		problems_release(&p);
	} else if (e.code != ERR_NOTFOUND) {
		note_problem(d, "dispatch.md", 0, e.msg);
	}
	free(path);
	sb_release(&text);
	d->traps = f->traps.v;
	d->ntraps = f->traps.n;
	d->disp = f->disp.v;
	d->ndisp = f->disp.n;
}

void ws_files_release(struct ws_files *f)
{
	traps_doc_release(&f->traps);
	dispatch_doc_release(&f->disp);
	memset(f, 0, sizeof(*f));
}
