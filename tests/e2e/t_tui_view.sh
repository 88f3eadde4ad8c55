#!/usr/bin/env bash
# The history viewer in a real terminal (tmux): `optloop view OPT_LOG.md` on a
# hand-written log shows the panes read-only, lists import problems, refuses
# loop actions in the message line, and copes with NO_COLOR, LANG=C, tiny
# terminals, resizing and hostile text in the file.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tui_lib.sh"

log="$T_TMP/OPT_LOG.md"
esc=$(printf '\033')
cat >"$log" <<EOF
# Optimization log — chunk_gla

Env: NVIDIA H200 | CUDA 12.4 | PyTorch 2.5 | Triton 3.1 | main[ce250a9]
Baseline (main): 0.973 ms

## Summary

| Iter | Direction (one line) | Gate | Bench (median ms) | vs best | Status |
|---|---|---|---|---|---|
| 0 | baseline | pass | 0.973 | — | base |
| 1 | fuse gate cumsum | pass | 0.902 | +7.3% | keep |
| 2 | TF32 inner matmul | FAIL | — | — | revert |
| 3 | BT=128 tiles | incomplete | — | — | drop |
| 4 | warps ${esc}[2J${esc}[H${esc}]0;owned${esc}\\ eight | pass (-k) | 0.883 | +2.1% | keep |
| five | broken row | pass | x | — | keep |
EOF

cat >"$T_TMP/TRAPS.md" <<'EOF'
# Traps

## TF32 in the reference path {#tf32}
**Fact:** Turning TF32 on for the matmul changes the reference numbers too.
**Why:** The gate then compares two equally wrong results.
**How to apply:** Keep allow_tf32 off in the reference.

## Int64 address arithmetic
**Fact:** pid * stride overflows int32 for long sequences.
**Why:** The wrap is silent.
**How to apply:** Cast program ids to int64 before multiplying.
EOF
cat >"$T_TMP/dispatch.md" <<'EOF'
| Bucket condition | Entry point chosen | Baseline ms | Candidate ms | Speedup | Why this path |
|---|---|---|---|---|---|
| T <= 2048 | chunk_fwd_small | 0.410 | 0.330 | 1.24x | one wave of blocks (iters 1, 4) |
EOF

# Not a terminal: a clear usage error, no curses garbage.
out=$("$OPTLOOP" view "$log" </dev/null 2>&1)
t_is "view without a terminal exits 2" "$?" "2"
t_like "and says a terminal is needed" "$out" 'needs a terminal'
t_exit "view of a missing file is a usage error" 2 "$OPTLOOP" view "$T_TMP/nope.md"
t_exit "view without a path is a usage error" 2 "$OPTLOOP" view

tui_start 110 28 LANG=C.UTF-8 -- "$OPTLOOP" view "$log"
t_screen "timeline lists the rows" 'TF32 inner matmul +FAIL'
t_screen "incomplete run is marked" '\?   3 BT=128 tiles +incomplete'
t_screen "failed gate is marked" '!   2 TF32'
t_screen "best is shown in the chart" 'best 0\.883 ms @ iter 4'
t_screen "import problems are announced" '1 problem \(p\)'
t_screen "hostile escapes in the file are shown as plain text" 'warps  eight'
t_screen "the screen was not cleared by the file's escapes" 'optloop · .*OPT_LOG\.md \(read-only\)'
t_screen "status line says it is read-only" 'read-only view of .* 5 rows'
tui_keys p
t_screen "p lists problems with line numbers" "line 15: .*'five'"
tui_keys Escape v
t_screen "verify is refused with the reason, not a beep" 'verify refused: this is a read-only view'
tui_keys l
t_screen "log is refused too" 'log refused: this is a read-only view'
tui_keys '/' T F 3 2 Enter
t_screen "search reports the match" '^/TF32'
tui_keys Enter
t_screen "Enter opens the selected iteration's detail" 'Iteration 2 · revert'
t_screen "detail shows the gate" 'Gate: FAIL'
tui_keys Escape '?'
t_screen "help is generated from the action table" 'x C-c +cancel the running verify'
tui_keys q
t_no_screen "q closes help" 'Help \(Esc back\)'
t_screen "TRAPS.md beside the log fills the trap pane" 'Traps · 0/2 checked'
t_screen "dispatch.md beside the log fills the dispatch pane" 'T <= 2.* chunk_f.* +0\.410 +0\.330 +1\.24x'
tui_keys Tab Tab
t_screen "Tab to the traps pane explains the selected trap" 'Fact: Turning TF32 on'
tui_keys j
t_screen "moving the selection explains the next trap" 'Fact: pid \* stride overflows'
tui_keys Z
t_screen "an unbound key explains itself" 'key Z does nothing here'

# Resize to tiny and back.
tui_resize 40 10
t_screen "a tiny terminal gets a clear message" 'terminal too small: 40x10'
t_screen "it says what size is needed" 'needs at least 60x16'
tui_resize 110 28
t_screen "growing again brings the panes back" 'TF32 inner matmul'
tui_keys q
t_is "q quits with status 0" "$(tui_exit_status)" "0"
tui_stop

# Starting tiny.
tui_start 30 8 -- "$OPTLOOP" view "$log"
t_screen "starting in a tiny terminal shows the message" 'terminal too small'
tui_keys q
t_is "q quits from the too-small screen" "$(tui_exit_status)" "0"
tui_stop

# Colour by default; NO_COLOR gives attributes only.
tui_start 110 28 LANG=C.UTF-8 -- "$OPTLOOP" view "$log"
tui_wait 'TF32'
colours=$(tmux_ capture-pane -p -e | grep -cE $'\033\\[[0-9;]*(3[0-7]|4[0-7]|38;5)[;m]')
t_like "colour terminal gets colours" "$colours" '^[1-9]'
tui_stop
tui_start 110 28 LANG=C.UTF-8 NO_COLOR=1 -- "$OPTLOOP" view "$log"
tui_wait 'TF32'
colours=$(tmux_ capture-pane -p -e | grep -cE $'\033\\[[0-9;]*(3[0-7]|4[0-7]|38;5)[;m]')
t_is "NO_COLOR=1 gets no colours" "$colours" "0"
bold=$(tmux_ capture-pane -p -e | grep -c $'\033\\[1m\\|\033\\[[0-9;]*;1m\\|\033\\[1;')
t_like "but still uses attributes" "$bold" '^[1-9]'
tui_stop

# LANG=C: ASCII only.
tui_start 110 28 LANG=C LC_ALL=C -- "$OPTLOOP" view "$log"
t_screen "LANG=C draws ASCII borders" '^\+- Timeline \. 5 iterations -'
scr=$(tui_screen)
t_is "LANG=C screen is pure ASCII" "$(printf '%s' "$scr" | LC_ALL=C grep -c '[^ -~]')" "0"
t_like "LANG=C spells the dash" "$scr" 'incomplete +- +- drop'
tui_stop
tui_check_stderr

# a Notes column shows in the detail, each line of the cell on its own
cat >"$T_TMP/notes.md" <<'MD'
# Optimization log — chunk_gla

| Iter | Direction | Gate | Bench (ms) | vs best | Status | Notes |
|---|---|---|---|---|---|---|
| 0 | baseline | pass | 0.973 | — | base | B8-T8192: 1.041<br>B16-T4096: 1.934 |
MD
tui_start 120 30 -- "$OPTLOOP" view "$T_TMP/notes.md"
t_screen "the notes log opens" 'baseline'
tui_keys Enter
t_screen "the detail shows the notes" 'Notes:'
t_screen "line by line" '^.*  B16-T4096: 1.934'
tui_stop
tui_check_stderr

# the view follows the log as it changes (inotify: no key press, no poll);
# a workspace folder stands for its OPT_LOG.md; --no-follow is a snapshot
mkdir -p "$T_TMP/ws"
cp "$T_TMP/notes.md" "$T_TMP/ws/OPT_LOG.md"
tui_start 120 30 -- "$OPTLOOP" view "$T_TMP/ws"
t_screen "a workspace folder opens its OPT_LOG.md" 'baseline'
t_screen "one row at first" 'read-only view of .* 1 row'
printf '| 1 | tiles of 64 | pass | 0.800 | +18%% | keep | |\n' >>"$T_TMP/ws/OPT_LOG.md"
tui_wait 'tiles of 64' 5
t_screen "a row appended by another process shows without a key press" 'tiles of 64'
t_screen "and the status line counts it" 'read-only view of .* 2 rows'
cp "$T_TMP/notes.md" "$T_TMP/ws/OPT_LOG.md.new" && mv "$T_TMP/ws/OPT_LOG.md.new" "$T_TMP/ws/OPT_LOG.md"
tui_wait 'read-only view of .* 1 row' 5
t_screen "a log replaced by rename shows too" 'read-only view of .* 1 row'
tui_stop
tui_check_stderr
tui_start 120 30 -- "$OPTLOOP" view --no-follow "$T_TMP/ws/OPT_LOG.md"
t_screen "--no-follow opens a snapshot" 'snapshot'
printf '| 1 | later | pass | 0.800 | +18%% | keep | |\n' >>"$T_TMP/ws/OPT_LOG.md"
sleep 1
t_no_screen "a snapshot does not follow" 'later'
tui_stop
tui_check_stderr
t_exit "a folder without an OPT_LOG.md is a usage error" 2 "$OPTLOOP" view "$T_TMP"
# The followed log removed, cut to nothing, replaced by a file with no table,
# a link to /dev/zero or a FIFO: the view stays up with the last good rows
# and says what is wrong; the log put back is shown again.
cp "$T_TMP/ws/OPT_LOG.md" "$T_TMP/good.md"
tui_start 120 30 -- "$OPTLOOP" view "$T_TMP/ws/OPT_LOG.md"
t_screen "the view follows the log" 'read-only view of .* rows?'
rows_shown=$(tui_screen | grep -c '│[* !?] *[0-9]')
: >"$T_TMP/ws/OPT_LOG.md"
sleep 1
t_ok "  cut to 0 bytes: still running" tui_alive
printf 'no table here\n' >"$T_TMP/ws/OPT_LOG.md"
sleep 1
t_ok "  a file with no table: still running" tui_alive
rm -f "$T_TMP/ws/OPT_LOG.md"
sleep 1
t_ok "  removed: still running" tui_alive
ln -s /dev/zero "$T_TMP/ws/OPT_LOG.md"
sleep 1
t_ok "  a link to /dev/zero: still running" tui_alive
rm -f "$T_TMP/ws/OPT_LOG.md" && mkfifo "$T_TMP/ws/OPT_LOG.md"
sleep 1
t_ok "  a FIFO: still running" tui_alive
t_screen "  and it says what is wrong" 'is a FIFO, not a regular file'
t_is "  the last good rows stay on screen" "$(tui_screen | grep -c '│[* !?] *[0-9]')" "$rows_shown"
rm -f "$T_TMP/ws/OPT_LOG.md" && cp "$T_TMP/good.md" "$T_TMP/ws/OPT_LOG.md"
t_screen "the log put back is shown again" 'read-only view of .* rows?'
tui_keys q
t_is "q quits with status 0" "$(tui_exit_status)" "0"
tui_check_stderr
t_done
