# lib.sh — a small TAP harness for the end-to-end tests.
#
#   . tests/e2e/lib.sh
#   t_ok "name" command args...     passes when the command exits 0
#   t_is "name" "$got" "$want"       passes when the strings are equal
#   t_like "name" "$text" REGEX      passes when grep -E REGEX matches
#   t_exit "name" WANT command...    passes when the command exits WANT
#   t_skip "name" "why"
#   jget KEY.PATH                    a value of the JSON on stdin
#   t_done                           prints the plan; exit status 1 on failure
#
# Each test runs in a fresh scratch directory ($T_TMP), removed at exit.
set -u
: "${OPTLOOP:?OPTLOOP must name the binary under test}"
T_N=0
T_FAILED=0
T_TMP=$(mktemp -d "${TMPDIR:-/tmp}/optloop-e2e.XXXXXX")
trap 'rm -rf "$T_TMP"' EXIT
export GIT_AUTHOR_NAME="optloop test" GIT_AUTHOR_EMAIL="test@optloop.invalid"
export GIT_COMMITTER_NAME="optloop test" GIT_COMMITTER_EMAIL="test@optloop.invalid"
export HOME="$T_TMP/home"
mkdir -p "$HOME"
git config --global user.name "optloop test"
git config --global user.email "test@optloop.invalid"
git config --global init.defaultBranch main

t_pass() { T_N=$((T_N + 1)); echo "ok $T_N - $1"; }
t_fail() {
	T_N=$((T_N + 1)); T_FAILED=$((T_FAILED + 1))
	echo "not ok $T_N - $1"
	shift
	[ $# -gt 0 ] && printf '#   %s\n' "$@"
	return 0
}
t_ok() {
	local name=$1; shift
	local out
	if out=$("$@" 2>&1); then t_pass "$name"; else t_fail "$name" "command failed: $*" "$(printf '%s' "$out" | tail -n 20)"; fi
}
t_exit() {
	local name=$1 want=$2; shift 2
	local out rc
	out=$("$@" 2>&1); rc=$?
	if [ "$rc" = "$want" ]; then t_pass "$name"; else t_fail "$name" "exit $rc, wanted $want: $*" "$(printf '%s' "$out" | tail -n 20)"; fi
}
t_is() {
	if [ "$2" = "$3" ]; then t_pass "$1"; else t_fail "$1" "got:  $2" "want: $3"; fi
}
t_like() {
	if printf '%s' "$2" | grep -qE -- "$3"; then t_pass "$1"; else t_fail "$1" "no match for /$3/ in:" "$(printf '%s' "$2" | tail -n 20)"; fi
}
t_unlike() {
	if printf '%s' "$2" | grep -qE -- "$3"; then t_fail "$1" "unexpected match for /$3/ in:" "$(printf '%s' "$2" | tail -n 20)"; else t_pass "$1"; fi
}
# jget KEY.PATH: a value of the JSON document on stdin ("null" when absent,
# a list joined by spaces); list items by index: "shapes.0.speedup".
jget() {
	python3 -c 'import json,sys
v=json.load(sys.stdin)
for k in sys.argv[1].split("."):
    v=v[int(k)] if isinstance(v,list) else (v or {}).get(k)
print(" ".join(map(str,v)) if isinstance(v,list) else ("null" if v is None else v))' "$1"
}
# explain_noise: record why the measured iteration's speed may read
# implausible.  The tiny project times one shell run, which a loaded machine
# moves by 2x: flagged implausible past 1.5x, and keep needs the flag
# explained (not even --unconfirmed keeps it otherwise).
# perf_report [TEXT]: a profile as perf report writes it (what reassess and
# promote --attach recognise), TEXT as its one hot symbol.
perf_report() {
	printf '# Samples: 1K of event %s\n# Overhead  Command  Shared Object  Symbol\n#\n' "'cycles'"
	printf '    93.00%%  sh  sh  [.] %s\n' "${1:-compute}"
}
# tiny_workspace DIR: the tiny kernel project in DIR with a workspace on it
# (op tiny, its contract complete), the shell left in DIR.
tiny_workspace() {
	"$OPTLOOP_ROOT/tests/fixtures/make_tiny_project.sh" "$1" && cd "$1" || exit 1
	"$OPTLOOP" init --op tiny --kernel kernel --test-file tests/test_compute.sh --naive ref/naive.sh \
		--verify ./verify >/dev/null
	"$OPTLOOP" contract --set "target=N up to 50, 2x" --set languages=sh --set "promotion=confirmed" >/dev/null
}
explain_noise() {
	"$OPTLOOP" promote --explain "the harness times one shell run: its speed is noise" >/dev/null 2>&1
}
# kill_harnesses: SIGKILL every harness process optloop started for a
# workspace under this suite's T_TMP (their environment carries
# OPTLOOP_RUN=<the workspace's trace dir>#<run>).  Suites run side by side:
# a pattern on command lines would reach another suite's processes.
kill_harnesses() {
	local e p real
	real=$(cd "$T_TMP" && pwd -P)
	for e in /proc/[0-9]*/environ; do
		p=${e#/proc/}; p=${p%/environ}
		tr '\0' '\n' <"$e" 2>/dev/null | grep -qE "^OPTLOOP_RUN=($T_TMP|$real)/" &&
			kill -KILL "$p" 2>/dev/null
	done
	return 0
}
t_skip() { T_N=$((T_N + 1)); echo "ok $T_N - $1 # SKIP $2"; }
t_done() {
	echo "1..$T_N"
	[ "$T_FAILED" -eq 0 ]
}
