#!/usr/bin/env bash
# The roofline in the workbench, on the demo project (its op has a cost
# model) at 80x24 and at 120x40: the per-shape pane (s) puts under each
# shape the selected row's achieved bandwidth and FLOP rate, each with its
# share of the peak, and the bound it is nearest, in words fitted to the
# pane; the iteration's detail has the same as a table, each number the
# one the run's verdict recorded.  The tiny project's op has no cost model:
# neither pane shows a roofline, not even a heading.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tui_lib.sh"
. "$(dirname "$0")/guards_lib.sh"

d="$T_TMP/demo"
demo_ws "$d"
cd "$d" || exit 1
db=profile/chunk_linear_attn-opt/optloop.db
"$OPTLOOP" verify >/dev/null 2>&1
"$OPTLOOP" log --direction baseline >/dev/null && "$OPTLOOP" commit >/dev/null
# what the baseline's verdict recorded for one shape, as the panes word it
rec() { # FIELD: the recorded value of shape fwd B=2 T=512 H=4 D=64
	sqlite3 "$db" "SELECT json_extract(s.value, '\$.$1') FROM iterations i JOIN stats_verdicts v
		ON v.run_id = i.run_id, json_each(v.json, '\$.roofline.shapes') s WHERE i.iter = 0
		AND json_extract(s.value, '\$.shape') LIKE 'fwd B=2 T=512 H=4 D=64%'"
}
rate() { # VALUE UNIT TIGHT: the rate as the workbench writes it
	python3 -c '
import sys
v, unit, tight = float(sys.argv[1]), sys.argv[2], sys.argv[3] == "1"
i = 0
while abs(v) >= 1000 and i < 6:
    v /= 1000; i += 1
f = "%.0f" if abs(v) >= 100 else "%.1f" if abs(v) >= 10 else "%.2f"
if tight and unit.startswith("FLOP"):
    unit = "F/s"
print((f % v) + ("" if tight else " ") + "_KMGTPE"[i].replace("_", "") + unit)' "$@"
}
share() { python3 -c 'import sys; print("%.0f%%" % (100 * float(sys.argv[1])))' "$1"; }
bound=$(rec bound)
t_like "the baseline's run recorded a roofline for the shape" "$bound" '^(memory|compute|launch)$'
bw=$(rec bw) fl=$(rec flop_rate) bws=$(share "$(rec bw_share)")
case $bound in memory) short=mem ;; compute) short=comp ;; *) short=$bound ;; esac
esc() { printf '%s' "$1" | sed 's/[.]/\\./g'; }

tui_start 80 24 LANG=C.UTF-8 -- "$OPTLOOP" tui
t_screen "80x24: the workbench opens" 'iter 1 · READY'
tui_keys Tab s
t_screen "80x24: the per-shape pane names the row and the peaks" '│roofline of iter 0 · this CPU peaks +│'
t_screen "80x24: under the shape, its bound, bandwidth and share, FLOP rate" \
	"│  $short · $(esc "$(rate "$bw" B/s 1)") $bws · $(esc "$(rate "$fl" FLOP/s 1)") "
tui_keys BTab Enter
t_screen "80x24: the detail opens" 'Iteration 0 · base · baseline'
tui_keys / Roofline Enter
t_screen "80x24: the detail has the roofline table" '│Roofline \(this CPU peaks; the run.s verdict recorded it\) +│'
t_screen "80x24: its columns fit, unscrolled" '│Shape +bandwidth +of peak +FLOP rate +of peak bound +│'
t_screen "80x24: each number the one recorded" \
	"│fwd B=2 T=512 H=4 D=64 +$(esc "$(rate "$bw" B/s 0)") +$bws +$(esc "$(rate "$fl" FLOP/s 0)") +[^ ]+ $bound +│"

tui_keys Escape
tui_resize 120 40
t_screen "120x40: the per-shape pane words it in full" \
	"│  $bound · $(esc "$(rate "$bw" B/s 0)") $bws · $(esc "$(rate "$fl" FLOP/s 0)") "
tui_keys Enter / Roofline Enter
t_screen "120x40: the detail's table" \
	"│fwd B=2 T=512 H=4 D=64 +$(esc "$(rate "$bw" B/s 0)") +$bws +$(esc "$(rate "$fl" FLOP/s 0)") +[^ ]+ $bound +│"
tui_keys Escape q
t_is "quit" "$(tui_exit_status)" 0
tui_stop

# ---- no cost model: nothing new -------------------------------------------------
tiny_workspace "$T_TMP/tiny"
"$OPTLOOP" verify >/dev/null 2>&1
"$OPTLOOP" log --direction baseline >/dev/null && "$OPTLOOP" commit >/dev/null
tui_start 80 24 LANG=C.UTF-8 -- "$OPTLOOP" tui
t_screen "tiny: the workbench opens" 'iter 1 · READY'
tui_keys Tab s
t_screen "tiny: the per-shape pane lists the shape" '│Shape +base +best speedup│'
t_no_screen "tiny: with no roofline line" 'roofline|mem · |comp · '
tui_keys BTab Enter
t_screen "tiny: the detail opens" 'Iteration 0 · base · baseline'
tui_keys G
t_screen "tiny: the detail reaches its end" 'Commit [0-9a-f]{40}|Not committed yet'
t_no_screen "tiny: and has no roofline heading" 'Roofline'
tui_keys Escape q
t_is "quit" "$(tui_exit_status)" 0
tui_stop
tui_check_stderr
t_done
