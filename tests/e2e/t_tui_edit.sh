#!/usr/bin/env bash
# The workbench names the kernel file in its top bar and e opens it in the
# user's editor: a real child on the real terminal (curses suspended, the
# editor reads the keyboard), run in the repository on the kernel's path;
# the screen comes back and shows the change as EDITING.  An editor that
# cannot be run, and a run going, are said in the message line.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tui_lib.sh"
. "$(dirname "$0")/guards_lib.sh"

d="$T_TMP/demo"
demo_ws "$d"
cd "$d" || exit 1
kernel=ops/linear_attn/chunk.c
"$OPTLOOP" verify >/dev/null 2>&1
"$OPTLOOP" log --direction baseline --commit >/dev/null 2>&1
t_is "baseline logged and committed" "$(state)" ready

# The editor: says where it runs and on what, waits for a line typed on
# the terminal (so it owns the keyboard while it runs), then changes the file.
ed="$T_TMP/ed.sh"
cat >"$ed" <<'SH'
#!/bin/sh
printf '%s|%s|%s\n' "$PWD" "$#" "$*" >"$MARK"
printf 'EDITOR RUNNING on %s; type a line: ' "$1"
read -r line
printf '%s\n' "$line" >>"$MARK"
printf '/* %s */\n' "$line" >>"$1"
SH
chmod +x "$ed"

for size in "80 24" "120 40"; do
	set -- $size
	mark="$T_TMP/mark-$1"
	git checkout -q -- "$kernel"
	tui_start "$1" "$2" LANG=C.UTF-8 "EDITOR=$ed" "MARK=$mark" -- env -u VISUAL "$OPTLOOP" tui
	t_screen "$1x$2: the top bar names the kernel file and the key that opens it" \
		"^ optloop · chunk_linear_attn · kernel $kernel \\(e edits\\)"
	t_screen "$1x$2: the status line waits for a change" 'READY'
	tui_keys e
	t_screen "$1x$2: e hands the terminal to the editor" "EDITOR RUNNING on $kernel"
	tui_keys "one edit" Enter
	t_screen "$1x$2: the workbench comes back when the editor exits" \
		"back from ed\\.sh on $kernel"
	t_screen "$1x$2: and the status line shows the change" 'EDITING'
	t_screen "$1x$2: the panes are drawn again" '─ Timeline · 1 iteration'
	t_screen "$1x$2: the best pane too" '─ Best · bench per iteration'
	t_no_screen "$1x$2: nothing of the editor is left on the screen" 'EDITOR RUNNING'
	t_is "$1x$2: the editor ran in the repository on the kernel file" \
		"$(head -n 1 "$mark")" "$(pwd -P)|1|$kernel"
	t_is "$1x$2: it read the line typed on the terminal" "$(sed -n 2p "$mark")" "one edit"
	t_like "$1x$2: the kernel holds the edit" "$(tail -n 1 "$kernel")" '^/\* one edit \*/$'
	t_ok "$1x$2: the workbench is still running" tui_alive
	tui_keys q
	t_is "$1x$2: q quits with 0" "$(tui_exit_status)" 0
	tui_stop
done

# an editor that is not there
git checkout -q -- "$kernel"
tui_start 80 24 LANG=C.UTF-8 "EDITOR=$T_TMP/no-such-editor" -- env -u VISUAL "$OPTLOOP" tui
t_screen "the workbench opens" 'READY'
tui_keys e
t_screen "an editor that cannot be run is named, with what to do" \
	"the editor '.*no-such-editor' could not be run"
t_ok "  and the workbench goes on" tui_alive
tui_stop

# VISUAL wins over EDITOR, as for git
tui_start 80 24 LANG=C.UTF-8 "VISUAL=$ed" "EDITOR=$T_TMP/no-such-editor" "MARK=$T_TMP/mark-v" -- "$OPTLOOP" tui
t_screen "the workbench opens (VISUAL set)" 'READY'
tui_keys e
t_screen "VISUAL is the editor run" "EDITOR RUNNING on $kernel"
tui_keys x Enter
t_screen "  and the workbench comes back" "back from ed\\.sh"
tui_stop

# a read-only view of a log has no kernel to open
tui_start 80 24 LANG=C.UTF-8 "EDITOR=$ed" "MARK=$T_TMP/mark-ro" -- "$OPTLOOP" view profile/chunk_linear_attn-opt/OPT_LOG.md
t_screen "view opens the log" 'read-only'
tui_keys e
t_screen "e in a read-only view says there is no kernel to open" \
	'edit: a log viewed read-only has no kernel file to open'
t_ok "  and runs nothing" test ! -e "$T_TMP/mark-ro"
tui_stop

tui_check_stderr
t_done
