/*
 * wizard — modal forms: the log step, the stall re-assessment, contract
 * fields, stop / no-go / promotion checks.  A wizard is a list of fields
 * (text, choice, check box, or read-only information) with lines of
 * context above them; Esc cancels without side effects, Enter moves on and
 * submits at the end.  The program builds the form, reads the values and
 * calls the engine; the wizard itself knows nothing of the loop.
 */
#ifndef OPTLOOP_WIZARD_H
#define OPTLOOP_WIZARD_H

#include "core/sb.h"
#include "views/view.h"

#include <stdbool.h>
#include <wchar.h>

enum wz_kind { WZ_TEXT, WZ_CHOICE, WZ_CHECK };

/* A field's own check, run when Enter leaves it with a value: 0 lets it
 * go, anything else keeps the wizard on the field with why (appended)
 * shown as the error. */
typedef int (*wz_check_fn)(void *ctx, const char *value, struct sb *why);

/* Whether a field is required given the rest of the form (a box needed for
 * one choice only); it replaces the field's fixed required flag. */
struct wizard;
typedef bool (*wz_need_fn)(void *ctx, const struct wizard *wz);

struct wz_field {
	enum wz_kind kind;
	char *label;
	char *help;        /* shown under the field when it has focus (wrapped), may be NULL */
	bool required;     /* text: non-empty; check: must be ticked */
	struct sb value;   /* WZ_TEXT, clean UTF-8 typed by the user */
	char **choices;    /* WZ_CHOICE */
	char *keys;        /* WZ_CHOICE: the key that picks each choice, shown on screen */
	int nchoices, choice;
	bool checked;      /* WZ_CHECK */
	wz_check_fn check; /* may be NULL (wizard_field_check) */
	void *check_ctx;
	wz_need_fn need;   /* may be NULL (wizard_field_need) */
	void *need_ctx;
};

struct wizard {
	char *title;
	int kind;              /* the program's tag: which wizard this is */
	struct wb_line *info;  /* context lines shown above the fields */
	size_t ninfo;
	struct wz_field *f;
	size_t nf;
	int cur;
	bool one_per_page;     /* step mode: one field at a time ("step 2/4") */
	/* The context scrolls (PgUp/PgDn) when it does not fit: the first
	 * line shown; from the last draw (zeros before one), the rows and
	 * columns it had, the first line it did not show whole, and whether
	 * any was left below. */
	int info_top, info_rows, info_cells, info_next;
	bool info_more;
	char *error;           /* why Enter did not submit */
};

enum wz_result { WZ_CONTINUE, WZ_SUBMIT, WZ_CANCEL };

/* Owned by the caller: wizard_free(). */
struct wizard *wizard_new(const char *title, int kind);
void wizard_free(struct wizard *wz);
void wizard_info(struct wizard *wz, enum role role, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
struct wz_field *wizard_text(struct wizard *wz, const char *label, const char *help,
			     bool required, const char *initial);
/* choices: NULL-terminated list, copied.  Each choice is picked by a key
 * of its own, shown in brackets ("[k]eep"): its first letter that no
 * earlier choice took (h and l move instead), as Left/Right and Space. */
struct wz_field *wizard_choice(struct wizard *wz, const char *label, const char *help,
			       const char *const *choices, int initial);
struct wz_field *wizard_check(struct wizard *wz, const char *label, const char *help,
			      bool required);

/* Check f's value with fn when Enter leaves it (see wz_check_fn). */
void wizard_field_check(struct wz_field *f, wz_check_fn fn, void *ctx);
/* Ask fn whether f is required each time the form is checked. */
void wizard_field_need(struct wz_field *f, wz_need_fn fn, void *ctx);
/* The choice picked in the choice field labelled label; NULL when there
 * is none. */
const char *wizard_choice_value(const struct wizard *wz, const char *label);

/* One key: ch is a character (fkey false) or a curses KEY_* code.
 * PgDn/PgUp scroll the context lines above the fields. */
enum wz_result wizard_key(struct wizard *wz, wint_t ch, bool fkey);
void wizard_draw(struct wizard *wz, WINDOW *w);
/* Rows the wizard would like in a window `width` columns wide (for the
 * layout to size it): wrapped context and help lines included. */
int wizard_height(const struct wizard *wz, int width);

#endif
