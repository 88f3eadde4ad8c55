#!/usr/bin/env bash
# The workbench's axis filter on logs without an Axis column, at 80x24 and
# 120x40: `f` then `axis NAME` keeps the rows of that axis.  A workspace's
# OPT_LOG.md (optloop renders no Axis column) takes each iteration's axis
# from what optloop recorded (log --axis), in view and in the live
# workbench; a hand-written log without the column, and a row logged
# without an axis, match the axis their direction names.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/guards_lib.sh"
. "$(dirname "$0")/tui_lib.sh"

d="$T_TMP/demo"
demo_ws "$d"
cd "$d" || exit 1
ws=profile/chunk_linear_attn-opt
iter() { # iter CHUNK DIRECTION STATUS [AXIS]: one whole iteration
	set_chunk "$1"
	"$OPTLOOP" verify >/dev/null 2>&1
	"$OPTLOOP" log --direction "$2" --status "$3" ${4:+--axis "$4"} >/dev/null 2>&1 &&
		"$OPTLOOP" commit >/dev/null
}
"$OPTLOOP" verify >/dev/null 2>&1
"$OPTLOOP" log --direction baseline >/dev/null && "$OPTLOOP" commit >/dev/null
iter 16 "halve the chunk" revert "chunk size"
iter 8 "swap the loops" drop "loop order"
iter 128 "double the chunk" drop "chunk size"
# three rows without a win: re-assessed before the next
perf_report "intra-chunk dot products" >$ws/trace/perf-after-stall.txt
"$OPTLOOP" reassess --profile $ws/trace/perf-after-stall.txt --axes "chunk size, loop order" \
	--techniques "tiling" --next "tile the state" >/dev/null
iter 48 "tiling by 48" drop
t_is "five rows logged" "$(grep -c '^| [0-9]' $ws/OPT_LOG.md)" 5
t_is "the log has no Axis column" "$(grep -c '| Axis' $ws/OPT_LOG.md)" 0

for size in "80 24" "120 40"; do
	set -- $size
	for how in view live; do
		if [ $how = view ]; then
			tui_start "$1" "$2" LANG=C.UTF-8 -- "$OPTLOOP" view $ws/OPT_LOG.md
		else
			tui_start "$1" "$2" LANG=C.UTF-8 -- "$OPTLOOP"
		fi
		t_screen "$1x$2 $how: the log opens" 'Timeline'
		tui_keys f "axis chunk size" Enter
		t_screen "$1x$2 $how: axis NAME keeps the rows logged with that axis" \
			'Timeline · 2 of 5 iterations · filter: axis chunk size'
		scr=$(tui_screen)
		t_like "$1x$2 $how:   the first" "$scr" 'halve the chunk'
		t_like "$1x$2 $how:   the second" "$scr" 'double the chunk'
		t_unlike "$1x$2 $how:   no other" "$scr" 'swap the loops|tiling by 48|baseline'
		tui_keys f "axis loop order" Enter
		t_screen "$1x$2 $how: another axis" 'Timeline · 1 of 5 iterations · filter: axis loop order'
		t_like "$1x$2 $how:   its row" "$(tui_screen)" 'swap the loops'
		tui_keys f "axis tiling" Enter
		t_screen "$1x$2 $how: a row logged without an axis is on the one its direction names" \
			'Timeline · 1 of 5 iterations · filter: axis tiling'
		t_like "$1x$2 $how:   its row" "$(tui_screen)" 'tiling by 48'
		t_ok "$1x$2 $how: still running" tui_alive
		tui_stop
	done
done

# a hand-written log, no Axis column and no database: the directions
log="$T_TMP/OPT_LOG.md"
cat >"$log" <<'EOF2'
# Optimization log — chunk_gla

## Summary

| Iter | Direction (one line) | Gate | Bench (median ms) | vs best | Status |
|---|---|---|---|---|---|
| 0 | baseline | pass | 0.973 | — | base |
| 1 | fuse gate cumsum | pass | 0.902 | +7.3% | keep |
| 2 | tiling BT=128 | pass | 0.990 | -9.8% | revert |
| 3 | Tiling: BT=32 | pass | 0.870 | +3.5% | keep |
| 4 | retiling the state | pass | 0.880 | -1.1% | drop |
EOF2
for size in "80 24" "120 40"; do
	set -- $size
	tui_start "$1" "$2" LANG=C.UTF-8 -- "$OPTLOOP" view "$log"
	t_screen "$1x$2 hand log: opens" 'Timeline · 5 iterations'
	tui_keys f "axis tiling" Enter
	t_screen "$1x$2 hand log: the directions that name the axis, any case" \
		'Timeline · 2 of 5 iterations · filter: axis tiling'
	scr=$(tui_screen)
	t_like "$1x$2 hand log:   one" "$scr" 'tiling BT=128'
	t_like "$1x$2 hand log:   two" "$scr" 'Tiling: BT=32'
	t_unlike "$1x$2 hand log:   not within a word" "$scr" 'retiling'
	tui_keys f "axis fusion" Enter
	t_screen "$1x$2 hand log: an axis no direction names matches nothing" \
		'^filter axis fusion: no row matches, 0 of 5 rows'
	tui_stop
done

tui_check_stderr
t_done
