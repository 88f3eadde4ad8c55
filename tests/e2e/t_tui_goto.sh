#!/usr/bin/env bash
# Reviewing a long log with optloop view, at 80x24 and 120x40: the Iter
# column shows five-digit iterations whole, and : goes to iteration N
# (selected, in view, named in the message line); a number the log lacks
# and a word that is no number are said, with what to do.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tui_lib.sh"

log="$T_TMP/OPT_LOG.md"
python3 - "$log" <<'PY'
import sys
rows = ["| 0 | baseline | pass | 1.000 | — | base |"]
for i in range(1, 20000):
    rows.append("| %d | direction number %d | pass | %.3f | -1.0%% | revert |" % (i, i, 1.01))
open(sys.argv[1], "w").write(
    "# Optimization log — long\n\nEnv: demo\nBaseline (main): 1.000 ms\n\n## Summary\n\n"
    "| Iter | Direction (one line) | Gate | Bench (median ms) | vs best | Status |\n"
    "|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n")
PY

for size in "80 24" "120 40"; do
	set -- $size
	tui_start "$1" "$2" LANG=C.UTF-8 -- "$OPTLOOP" view "$log"
	t_screen "$1x$2: the view opens on the last row" '19999 direction number 19999'
	t_no_screen "$1x$2: no iteration number is cut" '[0-9]…'
	tui_keys :
	t_screen "$1x$2: : asks for the iteration" '^go to iteration:'
	tui_keys 12345 Enter
	t_screen "$1x$2: the message names the iteration gone to" '^iteration 12345: direction number 12345'
	t_screen "$1x$2: its row is in view" '12345 direction number 12345'
	t_screen "$1x$2: the chart follows: its x axis names the selected iteration" \
		'iter 123[0-9][0-9] +\^12345 +iter 123[0-9][0-9]'
	tui_keys Enter
	t_screen "$1x$2: and selected (Enter opens its details)" 'Iteration 12345'
	tui_keys Escape
	tui_keys : 7 Enter
	t_screen "$1x$2: a short number too" '^iteration 7: direction number 7'
	t_screen "$1x$2: in view" '     7 direction number 7 '
	tui_keys : 20000 Enter
	t_screen "$1x$2: a number the log lacks is said, with the range it has" \
		'^go to: no iteration 20000 in the timeline \(it has 0 to 19999\)'
	tui_keys : x y Enter
	t_screen "$1x$2: a word is no iteration number" \
		"^go to: 'xy' is not an iteration number \\(type its digits, then Enter\\)"
	tui_keys : 5 Escape
	t_no_screen "$1x$2: Esc leaves the prompt" '^go to iteration:'
	t_ok "$1x$2: still running" tui_alive
	tui_stop
done

tui_check_stderr
t_done
