#!/usr/bin/env bash
# A resize while the workbench is busy: a verify that floods its output
# keeps the main loop pumping and drawing, so the terminal's SIGWINCH mostly
# arrives while the loop is not waiting in poll.  Each resize must still be
# drawn at once, with no key pressed (a resize that waited for the next key
# left a "terminal too small" screen up after the window grew back, and the
# q meant for the run then quit a finished one).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tui_lib.sh"
mk="$OPTLOOP_ROOT/tests/fixtures/make_tiny_project.sh"
d="$T_TMP/tiny"
"$mk" "$d" >/dev/null
cd "$d" || exit 1
# a verify that prints lines as fast as it can until it is cancelled (two
# minutes at most)
cat >verify-flood <<'SH'
#!/bin/sh
case " $* " in *" --no-gate "*) exec ./verify "$@" ;; esac
awk 'BEGIN { for (t = systime() + 120; systime() < t;) for (i = 0; i < 2000; i++) printf "flood line %d of the warm-up output\n", ++n }'
exec ./verify "$@"
SH
chmod +x verify-flood
git add verify-flood && git commit -qm "a verify that floods its output"
"$OPTLOOP" init --op tiny --kernel kernel --test-file tests/test_compute.sh --naive ref/naive.sh \
	--verify ./verify-flood >/dev/null 2>&1
t_ok "workspace created" test -d profile/tiny-opt
t_ok "its contract filled" "$OPTLOOP" contract --set target=2x --set languages=sh \
	--set "promotion=full gate, confirmed win"

tui_start 120 34 LANG=C.UTF-8 -- "$OPTLOOP" tui
tui_wait 'q quit'
tui_keys v
t_screen "the flooding run is going" 'running 00:'
# the panes' right borders move with the width: drawn there only once the
# resize was handled
k=0
for size in "100 30" "50 12" "130 40" "90 26" "50 12" "120 34"; do
	set -- $size
	k=$((k + 1))
	tui_resize "$1" "$2"
	if [ "$1" -lt 60 ]; then
		t_screen "resize $k to $1x$2 is drawn with no key: too small" "terminal too small: $1x$2"
	else
		t_screen "resize $k to $1x$2 is drawn with no key" 'running 00:'
		t_is "  the panes are $1 wide" "$(tui_screen | python3 -c 'import sys
print(max([len(l.rstrip("\n")) for l in sys.stdin if l.rstrip("\n")[-1:] in ("\u2510", "\u2518", "\u2502")] or [0]))')" "$1"
	fi
done
tui_keys q
t_screen "q during the run asks first" 'a verify run is going: press q again'
tui_keys j
t_screen "  any other key stays" 'running 00:'
tui_keys x
t_screen "x cancels it" 'incomplete \(cancelled\)'
tui_keys q
t_is "q then quits with status 0" "$(tui_exit_status)" "0"
tui_check_stderr
t_done
