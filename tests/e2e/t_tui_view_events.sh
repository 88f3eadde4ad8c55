#!/usr/bin/env bash
# The re-assessments and stops OPT_LOG.md lists under its table reach the
# reviewer in `optloop view`: the detail of the row each followed names it
# in words (no Markdown), at 80x24 and at 120x40; a row nothing followed
# names none, and the listed lines are never read as rows or problems.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tui_lib.sh"

log="$T_TMP/OPT_LOG.md"
cat >"$log" <<'MD'
# Optimization log — chunk_gla

Env: NVIDIA H200 | CUDA 12.4 | PyTorch 2.5 | Triton 3.1 | main[ce250a9]
Baseline (main): 0.973 ms

## Summary

| Iter | Direction (one line) | Gate | Bench (median ms) | vs best | Status |
|---|---|---|---|---|---|
| 0 | baseline | pass | 0.973 | — | base |
| 1 | BT=128 tiles | pass | 0.981 | -0.8% | revert |
| 2 | num_warps 8 | pass | 0.990 | -1.7% | drop |
| 3 | fuse the gate cumsum | pass | 0.975 | -0.2% | drop |
| 4 | TMA loads for k | pass | 0.969 | +0.4% | revert |

### Re-assessments and stops

- After iteration 3: **re-assessed**; axes tried: tiling, warps, fusion; next direction: TMA loads for k and v
- After iteration 4: **stopped**, at a floor: HBM bandwidth: 4.1 of 4.8 TB/s
MD

for size in "80 24" "120 40"; do
	set -- $size
	tui_start "$1" "$2" LANG=C.UTF-8 -- "$OPTLOOP" view "$log"
	t_screen "$1x$2: the five rows, none from the list" 'read-only view.* 5 rows'
	t_no_screen "$1x$2: no import problem" 'problems? \(p\)'
	tui_keys : 3 Enter
	tui_keys Enter
	t_screen "$1x$2: row 3's detail" 'Iteration 3 · drop'
	t_screen "$1x$2: names the re-assessment that followed it" 'After it: re-assessed; axes tried: tiling, warps'
	t_no_screen "$1x$2: in words, no Markdown" '\*\*'
	tui_keys Escape : 4 Enter
	tui_keys Enter
	t_screen "$1x$2: row 4's detail names the stop" 'After it: stopped, at a floor: HBM bandwidth'
	tui_keys Escape : 1 Enter
	tui_keys Enter
	t_screen "$1x$2: row 1's detail" 'Iteration 1 · revert'
	t_no_screen "$1x$2: nothing followed row 1" 'After it:'
	tui_keys Escape q
	t_is "$1x$2: q quits with status 0" "$(tui_exit_status)" "0"
	tui_check_stderr
	tui_stop
done
t_done
