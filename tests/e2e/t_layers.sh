#!/usr/bin/env bash
# The include rules (tests/layers.sh) hold for the tree, and the checker
# finds each kind of break in a scratch copy: a test that cannot fail would
# prove nothing.
. "$(dirname "$0")/lib.sh"
chk="$OPTLOOP_ROOT/tests/layers.sh"

t_ok "the tree keeps its include rules, with no exception beyond the allow-list" "$chk" "$OPTLOOP_ROOT"

copy="$T_TMP/tree"
# fresh: a scratch copy of the sources and the allow-list.
fresh() {
	rm -rf "$copy" && mkdir -p "$copy/tests" &&
		cp -R "$OPTLOOP_ROOT/core" "$OPTLOOP_ROOT/views" "$OPTLOOP_ROOT/tui" "$copy/" &&
		cp "$OPTLOOP_ROOT/tests/layers.allow" "$copy/tests/"
}
fresh
t_ok "a copy of the tree passes as the tree does" "$chk" "$copy"

# broken NAME FILE LINE WANT: LINE added to FILE in a fresh copy is found.
broken() {
	fresh
	mkdir -p "$(dirname "$copy/$2")"
	printf '%s\n' "$3" >>"$copy/$2"
	local out rc
	out=$("$chk" "$copy" 2>&1); rc=$?
	t_is "$1: refused" "$rc" 1
	t_like "$1: named" "$out" "$4"
}
broken "core including curses" core/sb.c '#include <curses.h>' 'front core/sb.c -> <curses.h>'
broken "core including a view" core/sb.c '#include "views/view.h"' 'front core/sb.c -> views/view.h'
broken "a view including the program" views/best.c '#include "tui/term.h"' 'front views/best.c -> tui/term.h'
broken "the CLI including curses" tui/cli/opts.c '#include <ncurses.h>' 'front tui/cli/opts.c -> <ncurses.h>'
broken "the workbench including the CLI" tui/workbench/app.c '#include "tui/cli/command.h"' \
	'front tui/workbench/app.c -> tui/cli/command.h'
broken "a front end reaching past the facade" tui/main.c '#include "core/store.h"' \
	'facade tui/main.c -> core/store.h'
broken "a base module including the engine" core/sb.c '#include "core/loop.h"' \
	'up core/sb.c -> core/loop.h \(base includes engine\)'
# vis and closest are both base modules: no layer is crossed, only a circle.
fresh
printf '#include "core/closest.h"\n' >>"$copy/core/vis.c"
printf '#include "core/vis.h"\n' >>"$copy/core/closest.c"
out=$("$chk" "$copy" 2>&1); rc=$?
t_is "two modules including each other: refused" "$rc" 1
t_like "two modules including each other: named with both" "$out" 'cycle: core/closest core/vis$'
broken "a core module in no layer" core/newmod.c '#include "core/sb.h"' 'unlisted core/newmod'

# The allow-list only shrinks: an entry that finds nothing fails.
fresh
{ cat "$OPTLOOP_ROOT/tests/layers.allow"; echo 'up core/sb.c -> core/loop.h (base includes engine)'; } >"$copy/tests/layers.allow"
out=$("$chk" "$copy" 2>&1); rc=$?
t_is "a stale allow-list entry fails the check" "$rc" 1
t_like "and is named, to be deleted" "$out" 'no longer happen.*
  up core/sb.c -> core/loop.h'
t_done
