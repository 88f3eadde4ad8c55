#!/usr/bin/env bash
# Hand-edited OPT_LOG.md files: every row of the summary table is read or
# named as a problem (a stray line between rows does not end the table
# silently), and a file a person edited is never silently replaced: the
# read-only commands leave it byte for byte and say what differs, a writing
# command keeps the extra columns, the sections and the edited cells.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tui_lib.sh"

# --- 1. stray lines between table rows --------------------------------------
log="$T_TMP/OPT_LOG.md"
cat >"$log" <<'MD'
# Optimization log — chunk_gla

Env: NVIDIA H200 | CUDA 12.4 | PyTorch 2.5.1 | Triton 3.1.0 | opt-a[1a2b3c4]
Baseline (main): 1.000 ms
Target: 1.3x

## Summary

| Iter | Direction (one line) | Gate | Bench (median ms) | vs best | Status |
|---|---|---|---|---|---|
| 0 | baseline | pass | 1.000 | — | base |
| 1 | tile 64 | pass | 0.900 | +10% | keep |

| 2 | unroll two | pass | 0.950 | -6% | revert |
<!-- tried again below -->
| 3 | mask early | FAIL | — | — | drop |
retried after a reboot
| 4 | swizzle | pass | 0.800 | +11% | keep |

## Notes

Plain text, and a table of its own:

| Shape | ms |
|---|---|
| 1 | 0.8 |

### Later

| 5 | left below a heading | pass | 0.790 | +1% | keep |
MD

out=$("$OPTLOOP" import "$log"); rc=$?
t_is "import of a log with stray lines between rows exits 0" "$rc" 0
t_like "every row before and after the stray lines is read" "$out" 'op chunk_gla, 5 rows'
t_like "  row 2, after a blank line" "$out" '^ +2  pass +0\.950 +-6% +revert +unroll two$'
t_like "  row 3, after a comment line" "$out" '^ +3  FAIL +— +— +drop +mask early$'
t_like "  row 4, after a line of text" "$out" '^ +4  pass +0\.800 +\+11% +keep +swizzle$'
t_like "the blank line is named with its line number" "$out" 'OPT_LOG.md:13: a blank line inside the summary table'
t_like "the comment line is named" "$out" 'OPT_LOG.md:15: .*not a table row.*inside the summary table'
t_like "the line of text is named" "$out" 'OPT_LOG.md:17: .*not a table row.*inside the summary table'
t_like "a row left below a heading is named, not dropped silently" "$out" \
	"OPT_LOG.md:30: .*row of the summary table \(iteration 5\).*not read"
t_unlike "the other section's own table is not a problem" "$out" 'OPT_LOG.md:2[67]:'
json=$("$OPTLOOP" import --json "$log")
t_is "--json: the five rows in order" \
	"$(python3 -c 'import json,sys; print([r["iter"] for r in json.loads(sys.argv[1])["rows"]])' "$json")" \
	"[0, 1, 2, 3, 4]"
t_is "--json: one problem per stray line and one for the row apart" \
	"$(python3 -c 'import json,sys; print([p["line"] for p in json.loads(sys.argv[1])["problems"]])' "$json")" \
	"[13, 15, 17, 30]"

# view: the same rows in the timeline, the same problems behind p
tui_start 120 30 LANG=C.UTF-8 -- "$OPTLOOP" view --no-follow "$log"
t_screen "view lists the row after the stray lines" '4 swizzle +pass'
t_screen "view says it read five rows" 'read-only view of .* 5 rows'
t_screen "view announces the problems" '4 problems \(p\)'
tui_keys p
t_screen "p names the blank line" 'line 13: a blank line inside the summary table'
t_screen "p names the row left apart" 'line 30: .*iteration 5'
tui_keys Escape q
t_is "view quits cleanly" "$(tui_exit_status 10)" 0
tui_stop

tui_check_stderr
t_done
