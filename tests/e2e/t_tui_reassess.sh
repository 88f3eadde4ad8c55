#!/usr/bin/env bash
# The stall re-assessment wizard lists every direction tried so far, and
# asks for a summary of them: at 80x24 a list longer than its rows scrolls
# (PgDn/PgUp), none of it out of reach, the step's field always on screen;
# at 120x40 the same list fits whole.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tui_lib.sh"
. "$(dirname "$0")/guards_lib.sh"

d="$T_TMP/demo"
demo_ws "$d"
cd "$d" || exit 1
ws=profile/chunk_linear_attn-opt
"$OPTLOOP" verify >/dev/null 2>&1
"$OPTLOOP" log --direction baseline --commit >/dev/null 2>&1

# one whole iteration that is no win, on an axis of its own
drop_iter() { # N CHUNK
	set_chunk "$2"
	"$OPTLOOP" verify >/dev/null 2>&1
	"$OPTLOOP" log --direction "chunk size $2" --axis "axis $1" --status drop --commit >/dev/null 2>&1
}
drop_iter 1 16
drop_iter 2 24
drop_iter 3 40
t_is "three rows without a win stall the loop" "$(state)" stalled
sleep 1.1
perf_report "chunk_fwd" >$ws/trace/profile-1.txt
t_ok "the first stall is re-assessed" "$OPTLOOP" reassess --profile $ws/trace/profile-1.txt \
	--axes "chunk size" --techniques "none yet" --next "loop order"
drop_iter 4 48
drop_iter 5 80
drop_iter 6 96
t_is "three more stall it again" "$(state)" stalled

# every direction line of the list: "iter N drop: chunk size C"
want_lines() { for c in 16 24 40 48 80 96; do echo "chunk size $c"; done; }

tui_start 80 24 LANG=C.UTF-8 -- "$OPTLOOP" tui
t_screen "80x24: STALLED" 'STALLED'
tui_keys r
t_screen "80x24: r opens the wizard" 'Stall re-assessment · step 1/4'
t_screen "80x24: a list longer than its rows says how to see the rest" \
	'more lines? not shown: PgDn shows them'
t_screen "80x24: the key line names the paging keys" 'PgUp/PgDn context'
t_screen "80x24: the step's field is on screen" 'Re-profile'
seen="$T_TMP/seen"
: >"$seen"
for _ in 1 2 3 4 5 6 7 8; do
	tui_screen >>"$seen"
	grep -q 'chunk size 96' "$seen" && break
	before=$(tui_screen)
	tui_keys PageDown
	# the screen changes (or the end was reached)
	for _ in $(seq 1 50); do [ "$(tui_screen)" != "$before" ] && break; sleep 0.1; done
done
tui_screen >>"$seen"
missing=$(want_lines | while read -r l; do grep -q "$l" "$seen" || echo "$l"; done)
t_is "80x24: PgDn reaches every direction in the list" "$missing" ""
t_screen "80x24: at the end, what is above is said" 'earlier lines?: PgUp shows them'
t_no_screen "80x24: and nothing is left below" 'not shown: PgDn'
t_screen "80x24: the field stays on screen while paging" 'Re-profile'
tui_keys PageUp PageUp PageUp PageUp PageUp PageUp
t_screen "80x24: PgUp goes back to the top of the list" 'rows in a row without a win'
t_no_screen "80x24: nothing is above the top" 'earlier lines?: PgUp'
# typing still goes to the field
tui_keys "trace/profile-2.txt"
t_screen "80x24: the field takes what is typed" 'trace/profile-2\.txt'
tui_keys Escape
t_screen "80x24: Esc saves nothing" 'cancelled: nothing was saved'
tui_stop

tui_start 120 40 LANG=C.UTF-8 -- "$OPTLOOP" tui
t_screen "120x40: STALLED" 'STALLED'
tui_keys r
t_screen "120x40: r opens the wizard" 'Stall re-assessment · step 1/4'
t_screen "120x40: the whole list fits" 'chunk size 96'
scr=$(tui_screen)
missing=$(want_lines | while read -r l; do grep -q "$l" <<<"$scr" || echo "$l"; done)
t_is "120x40: every direction on one screen" "$missing" ""
t_unlike "120x40: no paging line" "$scr" 'not shown: PgDn|PgUp/PgDn'
tui_stop

tui_check_stderr
t_done
