#!/usr/bin/env bash
# Reviewing with optloop view, at 80x24 and 120x40: per-shape numbers from a
# Notes column fill the per-shape pane; m marks a row that the
# details of another then compare with; f filters the rows the
# panes show (keep, fail, a status, axis NAME; nothing: every row), the
# timeline's title says how many of how many and which filter, the details
# and go-to work on the rows shown, and a word that is no filter is said
# with the ones there are.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tui_lib.sh"

log="$T_TMP/OPT_LOG.md"
cat >"$log" <<'EOF2'
# Optimization log — chunk_gla

Env: NVIDIA H200 | CUDA 12.4
Baseline (main): 0.973 ms

## Summary

| Iter | Direction (one line) | Gate | Bench (median ms) | vs best | Status | Axis |
|---|---|---|---|---|---|---|
| 0 | baseline | pass | 0.973 | — | base | |
| 1 | fuse gate cumsum | pass | 0.902 | +7.3% | keep | fusion |
| 2 | TF32 inner matmul | FAIL | — | — | revert | precision |
| 3 | BT=128 tiles | pass | 0.990 | -9.8% | revert | tiling |
| 4 | BT=32 tiles | pass | 0.870 | +3.5% | keep | tiling |
| 5 | bf16 state | FAIL | — | — | drop | precision |
| 6 | BK=64 tiles | pass | 0.880 | -1.1% | drop | tiling |
EOF2

for size in "80 24" "120 40"; do
	set -- $size
	tui_start "$1" "$2" LANG=C.UTF-8 -- "$OPTLOOP" view "$log"
	t_screen "$1x$2: the view opens" 'Timeline · 7 iterations'
	# compare two rows: m marks one, the details of another compare with it
	tui_keys : 4 Enter m
	t_screen "$1x$2: m marks the selected row" '^iteration 4 marked: Enter on another row compares it'
	tui_keys : 1 Enter Enter
	t_screen "$1x$2: the details of another row compare it with the marked one" \
		'Compared with marked iteration 4: 0\.902 ms vs 0\.870 ms, this one 1\.04x slower'
	t_screen "$1x$2:   gate, status and axis side by side" \
		'here / there: gate pass / pass · status keep / keep · axis fusion / tiling'
	t_screen "$1x$2:   and what the marked one tried" 'iteration 4 tried: BT=32 tiles'
	tui_keys Escape : 4 Enter Enter
	t_no_screen "$1x$2: the marked row's own details compare with nothing" 'Compared with'
	tui_keys Escape m
	t_screen "$1x$2: m on it again unmarks" '^iteration 4 unmarked'
	tui_keys : 1 Enter Enter
	t_screen "$1x$2: the details open" 'Direction: fuse gate cumsum'
	t_no_screen "$1x$2:   and compare with nothing once unmarked" 'Compared with'
	tui_keys Escape
	tui_keys f
	t_screen "$1x$2: f asks for the filter" '^filter \(keep, fail, revert, drop, axis NAME; nothing: all\):'
	tui_keys keep Enter
	t_screen "$1x$2: the title says the filter and how many rows" 'Timeline · 2 of 7 iterations · filter: keep'
	t_screen "$1x$2: the message too" '^filter keep: 2 of 7 rows \(f, then Enter on nothing, shows all\)'
	scr=$(tui_screen)
	t_like "$1x$2: the keeps are shown" "$scr" 'fuse gate cumsum.*keep'
	t_like "$1x$2:   both" "$scr" 'BT=32 tiles.*keep'
	t_unlike "$1x$2: the others are not" "$scr" 'baseline|TF32|BT=128|bf16|BK=64'
	tui_keys f fail Enter
	t_screen "$1x$2: fail shows the failed gates" 'Timeline · 2 of 7 iterations · filter: fail'
	scr=$(tui_screen)
	t_like "$1x$2:   TF32" "$scr" 'TF32 inner matmul'
	t_like "$1x$2:   bf16" "$scr" 'bf16 state'
	t_unlike "$1x$2:   nothing that passed" "$scr" 'fuse gate|BT=|BK=|baseline'
	tui_keys f "axis tiling" Enter
	t_screen "$1x$2: axis NAME shows that axis" 'Timeline · 3 of 7 iterations · filter: axis tiling'
	scr=$(tui_screen)
	t_unlike "$1x$2:   none of another axis" "$scr" 'fuse gate|TF32|bf16|baseline'
	tui_keys : 4 Enter
	t_screen "$1x$2: go-to works on the rows shown" '^iteration 4: BT=32 tiles'
	tui_keys Enter
	t_screen "$1x$2: and Enter details the row selected" 'Iteration 4 · keep'
	t_screen "$1x$2:   its direction" 'Direction: BT=32 tiles'
	tui_keys Escape
	tui_keys : 1 Enter
	t_screen "$1x$2: an iteration the filter hides is not gone to" '^go to: no iteration 1 in the timeline'
	tui_keys f "axis memory" Enter
	t_screen "$1x$2: a filter no row matches says so" \
		'^filter axis memory: no row matches, 0 of 7 rows'
	tui_keys f speedy Enter
	t_screen "$1x$2: a word that is no filter is said, with the ones there are" \
		"^filter: 'speedy' is no filter: type keep, fail, revert"
	t_screen "$1x$2:   and the filter stays as it was" 'filter: axis memory'
	tui_keys f Enter
	t_screen "$1x$2: nothing shows every row again" 'Timeline · 7 iterations'
	t_screen "$1x$2:   and says so" '^every row: 7'
	t_ok "$1x$2: still running" tui_alive
	tui_stop
done

# per-shape numbers in a Notes column ("SHAPE: ms", <br> between shapes)
# fill the per-shape pane; remarks and counts that are no times do not
notes="$T_TMP/notes.md"
cat >"$notes" <<'EOF2'
# Optimization log — chunk_gla

| Iter | Direction | Gate | Bench (ms) | vs best | Status | Notes |
|---|---|---|---|---|---|---|
| 0 | baseline | pass | 1.400 | — | base | B8-T8192: 1.041<br>B16-T4096: 1.934 ms<br>T64: 2 ops |
| 1 | BT 64 | pass | 1.300 | +7% | keep | B8-T8192: 0.978 (+6.0%)<br>B16-T4096: 1.807<br>warm cache |
| 2 | BT 32 | pass | 1.350 | -4% | revert | B8-T8192: 0.990<br>B16-T4096: 1.700 |
EOF2
for size in "80 24" "120 40"; do
	set -- $size
	tui_start "$1" "$2" LANG=C.UTF-8 -- "$OPTLOOP" view "$notes"
	t_screen "$1x$2: the notes log opens" 'Timeline · 3 iterations'
	tui_keys s
	t_screen "$1x$2: s shows the shapes the Notes column gives" 'Best · per shape'
	t_screen "$1x$2:   the first shape: base, best (the kept row), speedup" \
		'B8-T8192 +1\.041 +0\.978 +1\.06x'
	t_screen "$1x$2:   the second (its unit read)" 'B16-T4096 +1\.934 +1\.807 +1\.07x'
	t_no_screen "$1x$2:   a count is no time" 'T64'
	t_no_screen "$1x$2:   nor a remark" 'warm cache +[0-9]'
	tui_stop
done

tui_check_stderr
t_done
