# tui_lib.sh — drive the real workbench in a private tmux server.
#
#   . tests/e2e/tui_lib.sh            (after lib.sh)
#   tui_start COLS ROWS [ENV=VAL...] -- command args...
#   tui_keys KEYS...                  tmux send-keys (names like Enter, Escape, Tab)
#   tui_wait REGEX [SECONDS]          poll the screen until REGEX matches (default 20 s)
#   tui_gone REGEX [SECONDS]          poll until REGEX no longer matches
#
# Every limit is a bound for a failing test, never a timing check: it is
# multiplied by T_SLACK (default 3) so a loaded machine only makes the wait
# longer, and a wait ends as soon as the screen shows what it waits for.
#   tui_screen                        the screen as text
#   tui_resize COLS ROWS
#   tui_alive                         the program is still running
#   tui_stop                          kill the server (a closed terminal) and wait
#                                     for the program to exit
#
# Each test file gets its own socket, so parallel suites never meet.
TUI_SOCK="optloop-e2e-$$-${RANDOM}"
TUI_STATUS="$T_TMP/tui-exit"
# stderr of every run (parked while the screen is in use, replayed on exit):
# sanitizer reports land here and tui_check_stderr fails on them.
TUI_STDERR="$T_TMP/tui-stderr"
: >"$TUI_STDERR"
tmux_() { tmux -L "$TUI_SOCK" -f /dev/null "$@"; }
# What a pane runs: see tui_run.sh.
TUI_RUN=$(printf '%q' "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/tui_run.sh")
TUI_STARTED=

tui_start() {
	local cols=$1 rows=$2
	shift 2
	local envs=()
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do
		envs+=("$1")
		shift
	done
	shift
	rm -f "$TUI_STATUS"
	local cmd
	cmd=$(printf '%q ' "$@")
	tmux_ kill-server 2>/dev/null
	# The program's exit status is kept; the pane stays open to read the
	# screen.  A server still shutting down refuses a new session: again.
	local _
	for _ in $(seq 50); do
		tmux_ new-session -d -x "$cols" -y "$rows" \
			"$TUI_RUN $TUI_STATUS $TUI_STDERR env TERM=screen-256color ${envs[*]} $cmd" \
			2>/dev/null && break
		sleep 0.1
	done
	TUI_STARTED=1
	tmux_ set-option -g status off >/dev/null
	tmux_ resize-window -x "$cols" -y "$rows" 2>/dev/null
}

tui_screen() { tmux_ capture-pane -p; }
# the program has not exited (its exit status is written when it does)
tui_alive() { [ ! -s "$TUI_STATUS" ]; }
tui_keys() { tmux_ send-keys "$@"; }
tui_resize() { tmux_ resize-window -x "$1" -y "$2"; }

T_SLACK=${T_SLACK:-3}
tui_wait() {
	local re=$1 limit=$((${2:-20} * T_SLACK)) end
	end=$(($(date +%s) + limit))
	while [ "$(date +%s)" -le "$end" ]; do
		tui_screen | grep -qE -- "$re" && return 0
		sleep 0.1
	done
	return 1
}

tui_gone() {
	local re=$1 limit=$((${2:-20} * T_SLACK)) end
	end=$(($(date +%s) + limit))
	while [ "$(date +%s)" -le "$end" ]; do
		tui_screen | grep -qE -- "$re" || return 0
		sleep 0.1
	done
	return 1
}

# Wait for the program to exit; prints its status.
tui_exit_status() {
	local limit=$((${1:-20} * T_SLACK)) end
	end=$(($(date +%s) + limit))
	while [ "$(date +%s)" -le "$end" ]; do
		[ -s "$TUI_STATUS" ] && { cat "$TUI_STATUS"; return 0; }
		sleep 0.1
	done
	echo timeout
}

# tui_stop: close the terminal (the program gets SIGHUP, as from a closed
# window) and wait for the program to be gone, so that what runs next finds
# it exited (its locks released, its sanitizer report written).
tui_stop() {
	tmux_ kill-server 2>/dev/null
	[ -n "$TUI_STARTED" ] || return 0
	TUI_STARTED=
	local end=$(($(date +%s) + 20 * T_SLACK))
	while [ ! -s "$TUI_STATUS" ] && [ "$(date +%s)" -le "$end" ]; do
		sleep 0.05
	done
}

tui_check_stderr() {
	local bad
	bad=$(grep -E 'AddressSanitizer|LeakSanitizer|runtime error|UndefinedBehavior' "$TUI_STDERR")
	t_is "no sanitizer report from any run" "$bad" ""
}

# t_screen NAME REGEX [SECONDS]: a test that passes when the screen shows REGEX.
t_screen() {
	if tui_wait "$2" "${3:-20}"; then t_pass "$1"; else t_fail "$1" "screen never matched /$2/:" "$(tui_screen)"; fi
}
t_no_screen() {
	if tui_gone "$2" "${3:-20}"; then t_pass "$1"; else t_fail "$1" "screen still matches /$2/:" "$(tui_screen)"; fi
}

trap 'tui_stop; rm -rf "$T_TMP"' EXIT
