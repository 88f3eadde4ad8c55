/*
 * actions — the one list of what a key can do in the workbench.
 *
 * X(id, name, help, keys...) — the keymap (tui/keymap.c), the help screen
 * (views/help.c) and the status-line hints all read this list, so a key is
 * declared in exactly one place.  Keys are curses key codes or characters.
 */
#ifndef OPTLOOP_ACTIONS_H
#define OPTLOOP_ACTIONS_H

#include <curses.h>

#define CTRL_KEY(c) ((c) & 0x1f)
#define KEY_ESC 27
#define KEY_TAB 9

#define OPTLOOP_ACTIONS(X)                                                                    \
	X(VERIFY, "verify", "run the verify command (gate + bench) on the current change", 'v') \
	X(LOG, "log", "log the measured iteration (opens the log wizard)", 'l')                  \
	X(COMMIT, "commit", "commit the logged iteration (kernel change only)", 'c')             \
	X(REASSESS, "re-assess", "when due: stall re-assessment, contract, stop checks", 'r')   \
	X(STOP, "stop", "record a stop (cap, floor, directions); no-go checks", 'S')            \
	X(CONFIRM, "confirm", "confirm run: best and candidate interleaved; only it promotes a win", \
	  'C')                                                                                 \
	X(NOISE, "noise", "noise run: the best measured 5 times in one session, seeding the band", \
	  'b')                                                                                 \
	X(CANCEL, "cancel", "cancel the running verify, noise or confirm (recorded as incomplete)", \
	  'x', CTRL_KEY('c'))                                                                  \
	X(EDIT, "edit", "open the kernel file in $VISUAL or $EDITOR; back when it exits", 'e')  \
	X(DETAIL, "details", "open the selected iteration's details", '\n', '\r', KEY_ENTER)   \
	X(DOWN, "down", "next row", 'j', KEY_DOWN)                                              \
	X(UP, "up", "previous row", 'k', KEY_UP)                                                \
	X(PAGE_DOWN, "page-down", "next page", KEY_NPAGE, CTRL_KEY('f'), ' ')                   \
	X(PAGE_UP, "page-up", "previous page", KEY_PPAGE, CTRL_KEY('b'))                        \
	X(TOP, "top", "first row", 'g', KEY_HOME)                                               \
	X(BOTTOM, "bottom", "last row", 'G', KEY_END)                                           \
	X(SCROLL_LEFT, "scroll-left", "scroll left (live output, details, help)", KEY_LEFT, '<') \
	X(SCROLL_RIGHT, "scroll-right", "scroll right: the rest of lines wider than the pane",  \
	  KEY_RIGHT, '>')                                                                      \
	X(SEARCH, "search", "search the timeline or the live output", '/')                      \
	X(FILTER, "filter", "show only some rows: keep, fail, revert, drop, axis NAME; nothing: all", \
	  'f')                                                                                  \
	X(MARK, "mark", "mark the selected row: the details of another compare it with this one", 'm') \
	X(GOTO, "go-to", "go to iteration N in the timeline (type the number, then Enter)", ':') \
	X(SEARCH_NEXT, "next-match", "next search match", 'n')                                  \
	X(SEARCH_PREV, "prev-match", "previous search match", 'N')                              \
	X(NEXT_PANE, "next-pane", "move focus to the next pane", KEY_TAB)                       \
	X(PREV_PANE, "prev-pane", "move focus to the previous pane", KEY_BTAB)                  \
	X(MODE, "shape-mode", "chart: switch between geomean and per-shape", 's')               \
	X(TOGGLE, "toggle", "traps: mark the selected trap checked / unchecked", 't')           \
	X(NOTES, "problems", "list import problems and start-up findings", 'p')                  \
	X(BACK, "back", "close the detail, help or live output", KEY_ESC)                       \
	X(REDRAW, "redraw", "redraw the screen", CTRL_KEY('l'))                                 \
	X(HELP, "help", "this help", '?', KEY_F(1))                                             \
	X(QUIT, "quit", "quit (asks first while a run is going)", 'q')

enum action {
	ACT_NONE = 0,
#define X(id, name, help, ...) ACT_##id,
	OPTLOOP_ACTIONS(X)
#undef X
	ACT_COUNT
};

#define ACTION_MAX_KEYS 4

struct action_info {
	enum action id;
	const char *name;
	const char *help;
	int keys[ACTION_MAX_KEYS + 1]; /* 0-terminated */
};

/* The table, in declaration order (index = id - 1). */
extern const struct action_info action_table[ACT_COUNT - 1];

/* The action a key triggers, ACT_NONE when none. */
enum action action_for_key(int key);
/* Printable name of a key ("v", "Enter", "PgDn", "Tab", "C-c"); static storage. */
const char *action_key_name(int key);
/* "v" for ACT_VERIFY: the first key's name. */
const char *action_first_key(enum action a);

#endif
