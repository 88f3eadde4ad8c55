#!/usr/bin/env bash
# The workbench while another optloop drives (an agent's CLI calls), at
# 80x24 and 120x40: the message line names the driver only while its run
# goes, and says in the past tense how the run ended once it is over; an
# explanation recorded by the CLI (promote --explain) reloads the best pane
# and the due step at once, as a row or a commit does: a held-back confirm
# reads promoted without a restart.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tui_lib.sh"

# The tiny project whose baseline kernel sleeps 0.2 s a call: without the
# sleep the candidate reads many times faster, an implausible speedup that a
# confirm holds back until it is explained.
project() { # project DIR: made, with its baseline logged and committed
	"$OPTLOOP_ROOT/tests/fixtures/make_tiny_project.sh" "$1" >/dev/null
	cd "$1" || exit 1
	sed -i 's|^echo \$(( \$1 \* 2 ))|sleep 0.2\n&|' kernel/compute.sh
	git commit -qam "a slow kernel"
	"$OPTLOOP" init --op tiny --kernel kernel --test-file tests/test_compute.sh \
		--naive ref/naive.sh --verify ./verify --target 2x --languages sh \
		--promotion "full gate" >/dev/null
	"$OPTLOOP" verify >/dev/null 2>&1 && "$OPTLOOP" log --direction baseline --commit >/dev/null ||
		t_fail "baseline of $1"
}

for size in "80 24" "120 40"; do
	cols=${size% *} rows=${size#* } n="${size/ /x}"
	project "$T_TMP/tiny-$n"
	msg_line() { tui_screen | sed -n "${rows}p"; }
	status_line() { tui_screen | sed -n "$((rows - 1))p"; }
	wait_msg() { # NAME REGEX: the message line (the last row) comes to match
		local end=$(($(date +%s) + 20 * T_SLACK))
		while [ "$(date +%s)" -le "$end" ]; do
			msg_line | grep -qE -- "$2" && { t_pass "$1"; return; }
			sleep 0.1
		done
		t_fail "$1" "message line never matched /$2/:" "$(tui_screen)"
	}
	tui_start "$cols" "$rows" LANG=C.UTF-8 -- "$OPTLOOP" tui
	t_screen "$n: the workbench opens, READY" 'iter 1 · READY'

	# ---- the driver's verify: named while it runs, past tense once over ----
	sed -i '/^sleep 0.2$/d' kernel/compute.sh
	KERNEL_SLEEP=1 "$OPTLOOP" verify >/dev/null 2>&1 &
	vpid=$!
	wait_msg "$n: while the CLI's verify runs, the message line names its driver" \
		"driven by pid $vpid: optloop verify \\(iteration 1\\)"
	wait $vpid
	t_is "$n: the driver's verify passed" "$?" 0
	t_screen "$n: its end shows: MEASURED" 'iter 1 · MEASURED'
	wait_msg "$n: the message line says how that run ended" \
		"optloop verify \\(iteration 1\\) of pid $vpid ended: gate pass, bench"
	t_no_screen "$n: and nothing says it is driven any more" 'driven by'

	# ---- the CLI's confirm, held back; then its explanation ----------------
	"$OPTLOOP" confirm >"$T_TMP/confirm-$n.out" 2>&1
	t_like "$n: the confirm reads fast and holds it back (implausible)" \
		"$(cat "$T_TMP/confirm-$n.out")" '^held back: '
	t_no_screen "$n: no driver named after the confirm's runs" 'driven by'
	tui_keys Escape # the live output closed: the best pane (80x24 has room for one)
	t_screen "$n: the best pane says it is held back" 'confirm fast, held back'
	t_like "$n: the due step proposes no keep" "$(status_line)" 'MEASURED · .*drop'
	t_ok "$n: the CLI records why the speedup is real" \
		"$OPTLOOP" promote --explain "the baseline slept 0.2 s a call; the change removed it"
	t_screen "$n: the best pane reloads: the confirm is promoted" 'confirm fast, promoted'
	t_no_screen "$n: no longer held back" 'held back'
	t_like "$n: and the due step is keep, as optloop status says" \
		"$(status_line)" 'MEASURED · .*log (the row )?as keep'
	t_like "  (status agrees)" "$("$OPTLOOP" status --json | jget suggest)" '^keep$'
	tui_keys q
	tui_stop
done
tui_check_stderr
t_done
