#!/usr/bin/env bash
# The workbench on the demo project in a real terminal (tmux): the live
# pane's progress bar from the harness's own progress (the gate's pytest
# percentages, then the benchmark's warm-up phase), the best pane's
# per-shape mode, and a diff lint acknowledged in the log wizard: an
# acknowledgement given on a revert is recorded with the row (a keep's is
# required: t_tui_wizard.sh).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tui_lib.sh"
. "$(dirname "$0")/guards_lib.sh"

d="$T_TMP/demo"
demo_ws "$d"
cd "$d" || exit 1
ws=profile/chunk_linear_attn-opt
# A warm-up long enough to watch: the demo's benchmark warms each of its
# three shapes for this long before timing them.
tui_start 120 34 LANG=C.UTF-8 DEMO_BENCH_WARMUP_MS=700 -- "$OPTLOOP" tui
t_screen "the workbench opens on the demo" 'iter 0 · NEED_BASELINE'

# ---- progress ---------------------------------------------------------------
tui_keys v
t_screen "verify shows the live pane" 'Verify · iter 0'
# Watch the header while it runs: every percentage shown, and the phase.
seen=""
end=$(($(date +%s) + 60))
while [ "$(date +%s)" -le "$end" ]; do
	hdr=$(tui_screen | grep -E '(running|finished) [0-9]{2}:[0-9]{2}' | head -1)
	case "$hdr" in *finished*) break ;; esac
	seen="$seen$hdr"$'\n'
	sleep 0.05
done
t_like "while running, the bar shows the gate's percentage" "$seen" \
	'running [0-9:]+ · [0-9]+ lines \[█+·*\] +[0-9]+%'
t_like "the gate's end is 100%" "$seen" 'running .*\[█+\] 100%'
t_like "then the benchmark's warm-up is named beside the bar" "$seen" \
	'running .*\] 100% · Warming up 3 shape\(s\)'
t_like "and the end of the warm-up" "$seen" 'running .*\] 100% · Warmup done'
t_screen "the run finishes with its verdict" 'finished .* 100% +gate pass · bench'
t_no_screen "a finished run no longer names a phase" 'finished .*Warm'
tui_keys l
tui_wait 'Log the baseline'
tui_keys Enter Enter
t_screen "the baseline is logged" 'logged iteration 0 \(base\)'
tui_keys c
t_screen "and committed" 'committed iteration 0 as'
tui_keys Escape

# ---- the best pane's per-shape mode ------------------------------------------
# (wide enough for the shape names to fit the best pane)
tui_resize 200 40
t_screen "the chart is the default mode" 'Best · bench per iteration \(s: per shape\)'
tui_keys s
t_screen "s switches the best pane to per shape" 'Best · per shape \(s: chart\)'
scr=$(tui_screen)
t_like "a header names the columns" "$scr" 'Shape +base +best +speedup'
nshapes=$(printf '%s\n' "$scr" | grep -cE '│fwd B=[0-9]+ T=[0-9]+ H=[0-9]+ D=[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+x')
t_is "one labelled line per benchmark shape, with its numbers" "$nshapes" 3
t_unlike "no nan in the per-shape lines" "$scr" 'nan'
tui_keys s
t_screen "s again goes back to the chart" 'Best · bench per iteration'
t_screen "with the best line" 'best [0-9.]+ ms @ iter 0'
tui_resize 120 34

# ---- lint acknowledgement in the log wizard ----------------------------------
# A cache kept between calls: trips the c-static-cache lint (trap tensor-cache).
python3 - ops/linear_attn/chunk.c <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
i = s.index("\nvoid ")
s = s[:i] + "\n/* the last output, reused when the same inputs come back */\nstatic float *last_out_cache;\n" + s[i:]
open(p, "w").write(s)
PY
t_like "the change trips a diff lint" "$("$OPTLOOP" lint 2>&1)" 'c-static-cache'
tui_keys v
t_screen "iteration 1 is verified" 'finished .* gate pass' 60
tui_keys l
t_screen "the log wizard lists the finding to acknowledge" 'Lint: c-static-cache'
t_screen "and says it must be acknowledged" '1 lint finding on this diff: each must be acknowledged'
t_screen "a change that is no win beyond noise gets revert preselected" '\( \) \[k\]eep +\(\*\) \[r\]evert'
t_screen "and a place for the reason to keep it anyway" 'Keep unconfirmed'
tui_keys "a static output cache" Enter Enter Enter Enter Enter
t_screen "the box is unticked" 'Lint: c-static-cache +\[ \] no'
tui_keys " "
t_screen "space ticks the acknowledgement" 'Lint: c-static-cache +\[x\] yes'
tui_keys Enter
t_screen "the row is logged" 'logged iteration 1 \(revert\)'
t_is "the engine agrees" "$(state)" logged
t_like "OPT_LOG.md has the row" "$(cat $ws/OPT_LOG.md)" '\| 1 \| a static output cache \| pass \| [0-9.]+ \|'
t_screen "the timeline shows it" '   1 a static output cache +pass'
ack=$(python3 -c 'import sqlite3, sys
r = sqlite3.connect(sys.argv[1]).execute("SELECT n FROM guards_acks WHERE iter = 1").fetchone()
print(r[0] if r else "none")' "$ws/optloop.db")
t_is "the acknowledgement, given on a revert, is recorded for the iteration" "$ack" 1
tui_keys c
t_screen "and committed" 'committed iteration 1 as'
tui_keys q
t_is "q quits" "$(tui_exit_status)" 0
tui_stop

tui_check_stderr
t_done
