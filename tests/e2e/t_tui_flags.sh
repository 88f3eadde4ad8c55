#!/usr/bin/env bash
# A verify that reads implausibly fast, in the workbench at 80x24 and
# 120x40: the flags and the rule that fired, with its number, show under
# the verify output as soon as it finishes (the best pane is hidden by it
# on a small terminal), in the log wizard (which does not propose keep),
# and in the best pane; the words are the ones optloop status --json and
# verify's why: lines carry.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tui_lib.sh"
. "$(dirname "$0")/confirm_lib.sh"

export DEMO_BENCH_WARMUP_MS=1 DEMO_BENCH_REP_MS=1
# A baseline that computes everything four times: removing that reads ~4x,
# past the implausible bound (1.5x), and nothing is explained.
demo_repeated 4
"$OPTLOOP" init --op chunk_linear_attn --kernel "$kernel" --test-file tests/ops/test_linear_attn.c \
	--naive ops/linear_attn/naive.c --verify "./verify --op chunk_linear_attn" >/dev/null
"$OPTLOOP" contract --set "target=fwd B2-T512-H4-D64, 1.2x" --set languages=C \
	--set "promotion=full gate, confirmed win" >/dev/null
"$OPTLOOP" verify >/dev/null 2>&1
"$OPTLOOP" log --direction baseline --status base >/dev/null && "$OPTLOOP" commit >/dev/null
python3 -c 'import sys; p=sys.argv[1]; s=open(p).read(); a="\tfor (int rep = 0; rep < 4; rep++)\n"; assert a in s; open(p,"w").write(s.replace(a,"",1))' "$kernel"

tui_start 80 24 LANG=C.UTF-8 DEMO_BENCH_WARMUP_MS=1 DEMO_BENCH_REP_MS=1 -- "$OPTLOOP" tui
t_screen "80x24: the workbench opens" 'iter 1 · EDITING'
tui_keys v
t_screen "80x24: verify runs and finishes" 'finished .* gate pass' 60
# what the engine recorded, in the words verify prints after why:
rule=$("$OPTLOOP" status --json | python3 -c '
import json, sys
w = (json.load(sys.stdin).get("verdict_detail") or {}).get("implausible_why") or []
print(w[0]["rule"] if w else "none")')
num=$("$OPTLOOP" status --json | python3 -c '
import json, re, sys
w = (json.load(sys.stdin).get("verdict_detail") or {}).get("implausible_why") or []
print(re.search(r"[0-9]+\.[0-9]+x", w[0]["detail"]).group(0) if w else "none")')
t_like "the engine flagged the run implausible" "$rule" '^implausible_'
t_screen "80x24: under the output, the flags" 'flags: implausible'
t_screen "80x24: the rule that fired" "$rule:"
t_screen "80x24: and its number" "$num"
tui_keys l
t_screen "80x24: the log wizard opens" 'Log the iteration'
t_screen "80x24: it names the flags" 'flags: implausible'
t_screen "80x24: and the rule" "$rule:"
t_screen "80x24: keep is not the one proposed" '\( \) \[k\]eep'
t_unlike "80x24: no proposal of keep" "$(tui_screen)" 'proposed: keep'
tui_keys Escape
t_screen "80x24: Esc cancels" 'cancelled: nothing was saved'
tui_keys Escape
t_screen "80x24: Esc shows the panes again, the best pane naming the flags" \
	'flags: implausible'
t_screen "80x24: and the rule there" "$rule:"
tui_keys q
t_is "80x24: quit" "$(tui_exit_status)" 0
tui_stop

tui_start 120 40 LANG=C.UTF-8 -- "$OPTLOOP" tui
t_screen "120x40: the best pane names the flags of the last run" 'flags: implausible'
t_screen "120x40: with the rule" "$rule:"
t_screen "120x40: and its number" "$num"
tui_keys q
tui_stop

tui_check_stderr
t_done
