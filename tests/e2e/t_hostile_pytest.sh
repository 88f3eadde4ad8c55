#!/usr/bin/env bash
# The pytest that `dependents --run` and `warmup` start: a test file's name
# reaches pytest as one word, never a shell (a file named test_$(touch
# PWNED).py runs nothing), and is spelled out on the terminal; SIGTERM or
# SIGHUP to optloop stops pytest with everything it started, as verify's
# harness is stopped (on a GPU a pytest left behind would hold the device
# under the next verify), and the command exits 4 naming the signal.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/deps_lib.sh"
deps_workspace "$T_TMP/fla"
db=profile/chunk_ret-opt/optloop.db
esc=$(printf '\033')
bidi=$(printf '\342\200\256')

# --- names reach pytest as words ------------------------------------------
# A stand-in for python3 on PATH: each call's argv, NUL-separated, in a file
# of its own.
mkdir -p "$T_TMP/bin"
cat >"$T_TMP/bin/python3" <<'SH'
#!/bin/sh
n=$(ls "$ARGV_DIR" | wc -l)
printf '%s\0' "$@" >"$ARGV_DIR/$n"
echo "1 passed in 0.01s"
SH
chmod +x "$T_TMP/bin/python3"
export ARGV_DIR="$T_TMP/argv"
mkdir -p "$ARGV_DIR"
pwned='tests/ops/test_$(touch PWNED).py'
shown="tests/ops/test_${esc}]0;owned${esc}\\${bidi}yp.py"
for f in "$pwned" "$shown"; do
	printf 'from fla.ops.sgla import chunk_sgla\n\n\ndef test_it():\n    assert chunk_sgla(1, 2, 3) == 1\n' >"$f"
done
git add tests/ops && git commit -qm "two dependent tests with hostile names"
out=$(PATH="$T_TMP/bin:$PATH" "$OPTLOOP" dependents --run 2>&1); rc=$?
t_is "dependents --run with a test file named test_\$(touch PWNED).py: exit 0" "$rc" 0
t_ok "  nothing the name says ran (no PWNED in the repository)" test ! -e PWNED
t_ok "  nor where the test runs from" test ! -e "$T_TMP/PWNED"
want=$(printf '%s\0' -m pytest "$pwned" -q | od -An -c)
got=""
for a in "$ARGV_DIR"/*; do
	grep -qF 'PWNED' "$a" && got=$(od -An -c <"$a")
done
t_is "  pytest got the name as one word, as it is" "$got" "$want"
# (the two, test_sgla.py and the model test through a registered factory)
t_is "  each dependent test file ran once" "$(ls "$ARGV_DIR" | wc -l)" 4
t_like "  its gate is said" "$out" 'gate: tests/ops/test_\$\(touch PWNED\)\.py passed \(exit 0'
t_unlike "  a name with ESC and a bidi override is printed with neither" "$out" "[$esc]|$bidi"
t_like "  but spelled out" "$out" 'gate: tests/ops/test_\\e\]0;owned\\e\\\\u202eyp\.py passed'
out=$("$OPTLOOP" dependents 2>&1)
t_unlike "dependents lists it with no ESC or bidi byte" "$out" "[$esc]|$bidi"
t_like "  spelled out" "$out" '^  tests/ops/test_\\e\]0;owned\\e\\\\u202eyp\.py  \[gate passed\]$'

# --- a signal stops pytest and all it started -------------------------------
# A slow pytest: a shell that waits for its own child, a sleep whose command
# line is exactly "sleep 31.3" (optloop's own argv never is).
mkdir -p "$T_TMP/slow"
cat >"$T_TMP/slow/python3" <<SH
#!/bin/sh
sleep 31.3 &
echo \$! >"$T_TMP/sleep.pid"
wait
SH
chmod +x "$T_TMP/slow/python3"
started=""
cleanup_sleep() { # only the sleep this suite started
	local p
	p=$(cat "$T_TMP/sleep.pid" 2>/dev/null) && [ -n "$p" ] &&
		[ "$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)" = "sleep 31.3 " ] && kill -9 "$p" 2>/dev/null
	rm -f "$T_TMP/sleep.pid"
}
trap 'cleanup_sleep; rm -rf "$T_TMP"' EXIT
# the suite's own sleep running: its pid file written and the pid a running
# "sleep 31.3" (a zombie, or a pid reused by another program, is not)
sleep_running() {
	local p st
	p=$(cat "$T_TMP/sleep.pid" 2>/dev/null) && [ -n "$p" ] || return 1
	pgrep -f '^sleep 31\.3$' | grep -qx "$p" || return 1
	st=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | cut -c1)
	[ -n "$st" ] && [ "$st" != Z ]
}
sleep_started() { # 10 s, times T_SLACK on a loaded machine
	for _ in $(seq $((100 * ${T_SLACK:-3}))); do sleep_running && return 0; sleep 0.1; done
	return 1
}
sleep_gone() { # within 3 s
	for _ in $(seq 30); do sleep_running || return 0; sleep 0.1; done
	return 1
}
gates=$(sqlite3 "$db" "SELECT count(*) FROM events WHERE kind = 'dependents.gate'")
warmups=$(sqlite3 "$db" "SELECT count(*) FROM events WHERE kind = 'warmup'")
for cmd in "dependents --run" warmup; do
	for sig in TERM HUP; do
		rm -f "$T_TMP/sleep.pid"
		# shellcheck disable=SC2086
		PATH="$T_TMP/slow:$PATH" "$OPTLOOP" $cmd >"$T_TMP/out" 2>&1 &
		pid=$!
		if ! sleep_started; then
			t_fail "$cmd: the slow pytest started" "$(cat "$T_TMP/out")"
			kill -9 "$pid" 2>/dev/null
			wait "$pid" 2>/dev/null
			continue
		fi
		kill -s "$sig" "$pid"
		wait "$pid"
		t_is "SIG$sig on $cmd: exit 4 (stopped)" "$?" 4
		t_ok "SIG$sig on $cmd: pytest's child is gone too" sleep_gone
		t_like "SIG$sig on $cmd: it names the signal and who sent it" "$(cat "$T_TMP/out")" \
			"optloop: $cmd stopped by SIG$sig from pid $$ "
		t_like "SIG$sig on $cmd: and that nothing of the run was recorded" "$(cat "$T_TMP/out")" \
			'pytest and every process it started were stopped, and nothing of that run was recorded'
		cleanup_sleep
	done
done
t_is "no gate was recorded for a stopped run" \
	"$(sqlite3 "$db" "SELECT count(*) FROM events WHERE kind = 'dependents.gate'")" "$gates"
t_is "nor a warmup" "$(sqlite3 "$db" "SELECT count(*) FROM events WHERE kind = 'warmup'")" "$warmups"
out=$(PATH="$T_TMP/bin:$PATH" "$OPTLOOP" warmup 2>&1); rc=$?
t_is "after them, warmup runs as before: exit 0" "$rc" 0
t_like "  its pytest ran" "$out" '1 passed'
# --json: stdout carries only the JSON, pytest's output goes to stderr
out=$(PATH="$T_TMP/bin:$PATH" "$OPTLOOP" warmup --json 2>"$T_TMP/err")
t_is "warmup --json: stdout is the JSON alone" "$(printf '%s' "$out" | jget exit)" 0
t_like "  pytest's output is on stderr" "$(cat "$T_TMP/err")" '1 passed'
out=$(PATH="$T_TMP/bin:$PATH" "$OPTLOOP" dependents --run --json 2>"$T_TMP/err")
t_is "dependents --run --json: stdout is the JSON alone" \
	"$(printf '%s' "$out" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["gates_run"]))')" 4
t_like "  pytest's output is on stderr" "$(cat "$T_TMP/err")" '1 passed'
t_done
