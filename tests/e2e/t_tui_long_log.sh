#!/usr/bin/env bash
# The workbench on a workspace of 1,500 iterations, at 80x24 and 120x40:
# its first frame reads the newest rows only (the rest right after it, before
# a key is taken), and that frame is already the whole one: the count of all
# iterations, the newest row selected, the best kept long before the newest
# rows with its "(unconfirmed)", and the same screen, cell for cell, as the
# frame after the older rows are read (OPTLOOP_PASS_LOG hashes both).  Then
# every row is there: : goes to iteration 0.  A short log is read whole at
# once.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tui_lib.sh"

# rows: the baseline, a keep at 1 (the best: taken back from its trailers
# alone, so unconfirmed), then reverts and drops, none faster
rows_tsv() { # N
	python3 - "$1" <<'PY'
import sys
n = int(sys.argv[1])
print("0\tbaseline\tpass\t1.000\t—\tbase")
print("1\tthe one keep\tpass\t0.950\t+5.0%\tkeep")
for i in range(2, n):
    ms = 0.96 + (i % 9) * 0.01
    print(f"{i}\tdirection number {i}\tpass\t{ms:.3f}\t{(0.95 - ms) / 0.95 * 100:+.1f}%\t" +
          ("revert" if i % 2 else "drop"))
PY
}
rows_tsv 1500 >"$T_TMP/long.tsv"
rows_tsv 5 >"$T_TMP/short.tsv"
"$OPTLOOP_ROOT/tests/fixtures/make_long_workspace.sh" "$T_TMP/long" "$T_TMP/long.tsv"
"$OPTLOOP_ROOT/tests/fixtures/make_long_workspace.sh" "$T_TMP/short" "$T_TMP/short.tsv"
t_like "the long workspace holds its 1,500 rows" \
	"$(cd "$T_TMP/long" && "$OPTLOOP" status --json)" '"iteration": 1500,'

cd "$T_TMP/long" || exit 1
for size in "80 24" "120 40"; do
	set -- $size
	pl="$T_TMP/pass-$1.log"
	rm -f "$pl"
	tui_start "$1" "$2" LANG=C.UTF-8 "OPTLOOP_PASS_LOG=$pl" -- "$OPTLOOP" tui
	t_screen "$1x$2: the timeline counts every iteration" 'Timeline · 1500 iterations'
	t_screen "$1x$2: the newest row in view" '1499 direction number 1499'
	t_screen "$1x$2: the best, kept long before the newest rows, is said unconfirmed" \
		'best 0\.950 ms @ iter 1 \(unconfirmed\)'
	tui_keys : 0 Enter
	t_screen "$1x$2: every row is read: : goes to iteration 0" '^iteration 0: baseline'
	tui_keys : 1 Enter
	t_screen "$1x$2: and to the keep" '^iteration 1: the one keep'
	t_ok "$1x$2: still running" tui_alive
	tui_keys q
	t_is "$1x$2: q quits" "$(tui_exit_status)" 0
	tui_stop
	t_like "$1x$2: the first frame read the newest rows, the rest came after it" \
		"$(cat "$pl")" 'rows_whole_ms [0-9.]+'
	first=$(sed -n 's/^first_screen //p' "$pl")
	whole=$(sed -n 's/^whole_screen //p' "$pl")
	t_ok "$1x$2: the first frame is the whole one, cell for cell ($first, $whole)" \
		test -n "$first" -a "$first" = "$whole"
done

cd "$T_TMP/short" || exit 1
pl="$T_TMP/pass-short.log"
tui_start 120 40 LANG=C.UTF-8 "OPTLOOP_PASS_LOG=$pl" -- "$OPTLOOP" tui
t_screen "a short log: its rows" 'Timeline · 5 iterations'
tui_keys q
t_is "a short log: q quits" "$(tui_exit_status)" 0
tui_stop
t_ok "a short log is read whole for the first frame" test -s "$pl"
t_unlike "so no rows are read after it" "$(cat "$pl")" 'rows_whole_ms'

tui_check_stderr
t_done
