#!/usr/bin/env bash
# The workbench's log wizard on the demo project in a real terminal (tmux):
# a diff lint's box is required to keep the change but not to undo it (a
# revert gives the kernel back, as optloop log without --ack), and a failed
# gate offers neither keep nor floor.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tui_lib.sh"
. "$(dirname "$0")/guards_lib.sh"

d="$T_TMP/demo"
demo_ws "$d"
cd "$d" || exit 1
ws=profile/chunk_linear_attn-opt
kernel=ops/linear_attn/chunk.c
"$OPTLOOP" verify >/dev/null 2>&1
"$OPTLOOP" log --direction baseline --commit >/dev/null 2>&1
t_is "baseline logged and committed" "$(state)" ready

# ---- a lint finding: required for keep, not for revert ----------------------
# A cache kept between calls: trips the c-static-cache lint (trap tensor-cache).
python3 - "$kernel" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
i = s.index("\nvoid ")
s = s[:i] + "\n/* the last output, reused when the same inputs come back */\nstatic float *last_out_cache;\n" + s[i:]
open(p, "w").write(s)
PY
t_like "the change trips a diff lint" "$("$OPTLOOP" lint 2>&1)" 'c-static-cache'
"$OPTLOOP" verify >/dev/null 2>&1
t_is "iteration 1 is measured" "$(state)" measured

tui_start 120 34 LANG=C.UTF-8 -- "$OPTLOOP" tui
t_screen "the workbench opens on the measured run" 'iter 1 · MEASURED'
tui_keys l
t_screen "the log wizard lists the finding" 'Lint: c-static-cache +\[ \] no'
t_screen "and says it is needed to keep the change" \
	'1 lint finding on this diff: each must be acknowledged to keep it'
t_screen "a run that passed its gate may be logged as floor" '\[f\]loor'
# Tab moves between fields without checking them and stops at the last one
# (the lint box), whatever fields the evidence brought.
tui_keys "a static output cache" Tab k
t_screen "keep is picked" '\(\*\) \[k\]eep'
tui_keys Tab Tab Tab Tab Tab Tab Tab Tab Enter
t_screen "keep with the box unticked is refused in the wizard" \
	'Lint: c-static-cache must be confirmed'
t_is "  nothing was logged" "$(state)" measured
tui_keys Up Up Up Up Up Up Up Up Tab r
t_screen "revert is picked" '\(\*\) \[r\]evert'
tui_keys Tab Tab Tab Tab Tab Tab Tab Tab
t_screen "the box is still unticked" 'Lint: c-static-cache +\[ \] no'
tui_keys Enter
t_screen "revert with the box unticked is logged" 'logged iteration 1 \(revert\)'
t_is "  the engine agrees" "$(state)" logged
t_like "  OPT_LOG.md has the revert row" "$(grep -E '^\| 1 \|' $ws/OPT_LOG.md)" \
	'^\| 1 \| a static output cache \| pass \|.*revert'
ack=$(python3 -c 'import sqlite3, sys
r = sqlite3.connect(sys.argv[1]).execute("SELECT n FROM guards_acks WHERE iter = 1").fetchone()
print(r[0] if r else "none")' "$ws/optloop.db")
t_is "  no acknowledgement is recorded: none was given" "$ack" none
tui_keys c
t_screen "and committed" 'committed iteration 1 as'
t_unlike "  the kernel went back to the best" "$(cat "$kernel")" 'last_out_cache'

# ---- a failed gate: no keep, no floor ------------------------------------------
sed -i 's/ot\[j\] += a \* vs\[j\];/ot[j] += 2 * a * vs[j];/' "$kernel"
t_like "the kernel is broken" "$(cat "$kernel")" 'ot\[j\] \+= 2 \* a \* vs\[j\];'
tui_keys v
t_screen "iteration 2's gate fails" 'finished .*gate FAIL' 60
tui_keys l
t_screen "the log wizard opens" 'Log the iteration'
tui_keys Tab
t_screen "the status says why it is limited" 'the gate did not pass: revert / drop undo it'
scr=$(tui_screen)
row=$(printf '%s\n' "$scr" | grep -E '\[r\]evert')
t_like "the choices are revert and drop" "$row" 'Status +\([* ]\) \[r\]evert +\([* ]\) \[d\]rop +│'
t_unlike "  floor is not among them" "$scr" '\[f\]loor'
t_unlike "  nor keep" "$scr" '\[k\]eep'
t_unlike "  and no bound is asked for" "$scr" 'Bound'
tui_keys Escape
t_screen "Esc cancels" 'cancelled: nothing was saved'

# ---- an edit made after the measurement: the wizard sets it aside -------------
printf '/* a later edit */\n' >>"$kernel"
t_screen "the later edit is seen" 'MEASURED'
tui_keys l
t_screen "the log wizard says the kernel changed since the measurement" \
	'the kernel changed since this run was measured: tick Set aside'
tui_keys "double accumulate" Tab d Tab Tab Tab
t_screen "it offers to set the later edit aside" 'Set aside the later edit +\[ \] no'
tui_keys Enter
t_screen "the box must be ticked to log the measured run" 'Set aside the later edit must be confirmed'
t_is "  nothing was logged" "$(state)" measured
tui_keys Space
t_screen "the box is ticked" 'Set aside the later edit +\[x\] yes'
tui_keys Enter
t_screen "logged, the later edit set aside" \
	'logged iteration 2 \(drop\); the later edit is set aside and comes back after the commit'
t_is "  the engine agrees" "$(state)" logged
t_unlike "  the kernel is the measured one" "$(cat "$kernel")" 'a later edit'
t_like "  OPT_LOG.md has the row" "$(grep -E '^\| 2 \|' profile/chunk_linear_attn-opt/OPT_LOG.md)" \
	'^\| 2 \| double accumulate \| FAIL'
tui_keys c
t_screen "committed" 'committed iteration 2 as'
t_like "  the later edit came back after the commit" "$(tail -n 1 "$kernel")" 'a later edit'
t_unlike "  on the best kernel (the drop undone)" "$(cat "$kernel")" '2 \* a \* vs'
tui_keys q
t_is "q quits" "$(tui_exit_status)" 0
tui_stop

tui_check_stderr
t_done
