/* actions — the table built from OPTLOOP_ACTIONS and the key lookups. */
#include "views/actions.h"

#include <stdio.h>

const struct action_info action_table[ACT_COUNT - 1] = {
#define X(id, name, help, ...) {ACT_##id, name, help, {__VA_ARGS__, 0}},
	OPTLOOP_ACTIONS(X)
#undef X
};

enum action action_for_key(int key)
{
	for (int i = 0; i < ACT_COUNT - 1; i++)
		for (const int *k = action_table[i].keys; *k; k++)
			if (*k == key)
				return action_table[i].id;
	return ACT_NONE;
}

const char *action_key_name(int key)
{
	static char buf[16];

	switch (key) {
	case '\n':
	case '\r':
	case KEY_ENTER:
		return "Enter";
	case ' ':
		return "Space";
	case KEY_ESC:
		return "Esc";
	case KEY_TAB:
		return "Tab";
	case KEY_BTAB:
		return "S-Tab";
	case KEY_UP:
		return "Up";
	case KEY_DOWN:
		return "Down";
	case KEY_LEFT:
		return "Left";
	case KEY_RIGHT:
		return "Right";
	case KEY_NPAGE:
		return "PgDn";
	case KEY_PPAGE:
		return "PgUp";
	case KEY_HOME:
		return "Home";
	case KEY_END:
		return "End";
	}
	if (key >= KEY_F(1) && key <= KEY_F(12)) {
		snprintf(buf, sizeof(buf), "F%d", key - KEY_F0);
		return buf;
	}
	if (key > 0 && key < 0x20) {
		snprintf(buf, sizeof(buf), "C-%c", key + 'a' - 1);
		return buf;
	}
	if (key >= 0x20 && key < 0x7f) {
		snprintf(buf, sizeof(buf), "%c", key);
		return buf;
	}
	snprintf(buf, sizeof(buf), "#%d", key);
	return buf;
}

const char *action_first_key(enum action a)
{
	if (a <= ACT_NONE || a >= ACT_COUNT)
		return "";
	return action_key_name(action_table[a - 1].keys[0]);
}
