#!/bin/sh
# tui_run.sh STATUS STDERR COMMAND [ARG...]: what a test's tmux pane runs.
#
# It stands for the user's login shell: it runs COMMAND on the terminal,
# and when the terminal closes (SIGHUP to this shell, the session leader)
# it passes SIGHUP on to COMMAND as an interactive shell does to its jobs.
# It outlives COMMAND, writes COMMAND's exit status to STATUS and then keeps
# the pane (its last screen) until the terminal goes.
#
# Outliving COMMAND matters: a session leader that dies while COMMAND is
# still exiting orphans COMMAND's process group, and the kernel then sends
# that group SIGHUP and SIGCONT.  A sanitizer build checking for leaks at
# exit has its threads stopped at that moment, and the SIGCONT leaves it
# spinning forever.
status=$1 errfile=$2
shift 2
exec 3<&0
"$@" <&3 3<&- 2>>"$errfile" &
pid=$!
exec 3<&-
trap 'kill -HUP "$pid" 2>/dev/null' HUP
while :; do
	wait "$pid"
	rc=$?
	# A wait cut short by the trap returns >128 with COMMAND still there.
	if [ "$rc" -gt 128 ] && kill -0 "$pid" 2>/dev/null; then
		continue
	fi
	break
done
echo "$rc" >"$status"
trap - HUP
while [ -t 1 ]; do
	sleep 1
done
