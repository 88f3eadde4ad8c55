#!/usr/bin/env bash
# Exit statuses and messages when optloop itself cannot work: its own I/O
# failures (a full disk, a file it may not grow, a database it cannot read,
# a lock file it cannot open) exit 4, never 1, which means a failed gate or
# check; --json commands answer with a JSON error object, a usage error on
# the command line too; a stale .git/index.lock is named with how to remove
# it, before anything is committed; the workbench without a usable TERM says
# so and exits 2.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tui_lib.sh"
export DEMO_BENCH_REP_MS=${DEMO_BENCH_REP_MS:-40} DEMO_BENCH_WARMUP_MS=${DEMO_BENCH_WARMUP_MS:-10}

jerr() { # the error object's field $1 from JSON on stdin
	python3 -c 'import json,sys; print(json.load(sys.stdin)["error"][sys.argv[1]])' "$1" 2>&1
}

# --- --json when the workspace cannot be opened --------------------------------
mkdir "$T_TMP/plain"
out=$(cd "$T_TMP/plain" && "$OPTLOOP" status --json 2>/dev/null); rc=$?
t_is "status --json outside a repository: exit 2" "$rc" 2
t_is "and a JSON error object on stdout" "$(printf '%s' "$out" | jerr code)" not_found
t_like "whose message says what is wrong" "$(printf '%s' "$out" | jerr message)" 'not inside a git repository'
t_is "with the exit status in it" "$(printf '%s' "$out" | jerr exit)" 2
err=$(cd "$T_TMP/plain" && "$OPTLOOP" status --json 2>&1 >/dev/null)
t_like "the message is on stderr too" "$err" '^optloop: .*not inside a git repository'
out=$(cd "$T_TMP/plain" && "$OPTLOOP" status 2>/dev/null)
t_is "without --json nothing goes to stdout" "$out" ""

d="$T_TMP/demo"
"$OPTLOOP" demo "$d" >/dev/null 2>&1 || { t_fail "demo project"; t_done; exit 1; }
cd "$d" || exit 1
W=profile/chunk_linear_attn-opt
out=$("$OPTLOOP" --op nosuch verify --json 2>/dev/null); rc=$?
t_is "verify --json for an op without a workspace: exit 2" "$rc" 2
t_is "and the JSON error says not_found" "$(printf '%s' "$out" | jerr code)" not_found

# --- --json anywhere: a usage error is the same JSON error object --------------------
# (found while reading the command line: a mistyped option, a missing value,
# -C to nowhere, a mistyped command, input parse does not recognise)
json_usage() { # json_usage NAME WANT_CODE MESSAGE_REGEX optloop-args...
	local name=$1 code=$2 re=$3 out err rc
	shift 3
	out=$("$OPTLOOP" "$@" 2>"$T_TMP/jerr"); rc=$?
	err=$(cat "$T_TMP/jerr")
	t_is "$name: exit 2" "$rc" 2
	t_is "$name: a JSON error object on stdout, code $code" "$(printf '%s' "$out" | jerr code)" "$code"
	t_is "$name: with its exit status" "$(printf '%s' "$out" | jerr exit)" 2
	t_like "$name: whose message says what was wrong" "$(printf '%s' "$out" | jerr message)" "$re"
	t_like "$name: the message is on stderr too" "$err" "$re"
}
json_usage "status --json --jsn" usage 'unknown option --jsn \(did you mean --json\?\)' \
	status --json --jsn
json_usage "--jsn before --json" usage 'unknown option --jsn' status --jsn --json
json_usage "-C to a directory that is not there" not_found 'cannot change to /nonexistent' \
	-C /nonexistent status --json
json_usage "verify --json --gate-k (no value)" usage '--gate-k needs a value \(EXPR\)' \
	verify --json --gate-k
json_usage "a mistyped command" usage "'stauts' is not a command; did you mean 'status'" \
	stauts --json
json_usage "an unknown global option" usage 'unknown option --bogus' --bogus status --json
: >"$T_TMP/empty.log"
json_usage "parse --json of no verify output" usage 'no verify or benchmark output' \
	parse "$T_TMP/empty.log" --json
out=$("$OPTLOOP" status --jsn 2>/dev/null); rc=$?
t_is "without --json a usage error prints nothing on stdout" "$out|$rc" "|2"
out=$("$OPTLOOP" log -- --json 2>/dev/null)
t_unlike "a --json after -- is an argument, not the flag" "$out" '"error"'

# --- a database optloop cannot read: exit 4, JSON code io -------------------------
schema=$(sqlite3 "$W/optloop.db" 'PRAGMA user_version')
sqlite3 "$W/optloop.db" "PRAGMA user_version = 999"
out=$("$OPTLOOP" status --json 2>"$T_TMP/err"); rc=$?
t_is "a database of a newer schema: exit 4 (optloop's own I/O, not a check)" "$rc" 4
t_is "JSON error code io" "$(printf '%s' "$out" | jerr code)" io
t_like "the message names the database" "$(cat "$T_TMP/err")" 'optloop.db has schema version 999'
out=$("$OPTLOOP" verify 2>&1); rc=$?
t_is "verify then exits 4 as well, not 1" "$rc" 4
sqlite3 "$W/optloop.db" "PRAGMA user_version = $schema"

# --- a lock file optloop cannot open ------------------------------------------------
lock="$W/optloop.db.lock"
if [ "$(id -u)" = 0 ]; then
	# root opens any file: a directory in its place cannot be opened for writing
	mv "$lock" "$T_TMP/lock.keep"
	mkdir "$lock"
else
	chmod 000 "$lock"
fi
out=$("$OPTLOOP" verify 2>&1); rc=$?
t_is "a lock file that cannot be opened: verify exits 4" "$rc" 4
t_like "naming the lock" "$out" 'cannot open the lock .*optloop.db.lock'
out=$("$OPTLOOP" status --json 2>/dev/null); rc=$?
t_is "status --json too: exit 4" "$rc" 4
t_is "with a JSON error" "$(printf '%s' "$out" | jerr code)" io
if [ "$(id -u)" = 0 ]; then
	rmdir "$lock"
	mv "$T_TMP/lock.keep" "$lock"
else
	chmod 644 "$lock"
fi

# --- a file optloop may not grow (RLIMIT_FSIZE): the log is not written, exit 4 ----
out=$("$OPTLOOP" verify --quiet 2>&1); rc=$?
t_is "baseline verify passes" "$rc" 0
out=$(trap '' XFSZ; ulimit -f 1; "$OPTLOOP" log --direction baseline 2>&1); rc=$?
t_is "log that cannot write its database: exit 4, not 1" "$rc" 4
t_like "and says the database failed" "$out" 'database'
t_like "the measurement is still there: the row is still due" "$("$OPTLOOP" status)" 'state: +measured'
t_ok "with room again the row is logged" "$OPTLOOP" log --direction baseline

# --- a stale .git/index.lock --------------------------------------------------------
touch .git/index.lock
head=$(git rev-parse HEAD)
out=$("$OPTLOOP" commit 2>&1); rc=$?
t_is "commit with a stale .git/index.lock: refused (exit 3)" "$rc" 3
t_like "naming the lock and how to remove it" "$out" \
	"git's index is locked \\($d/\\.git/index\\.lock exists\\).*rm '$d/\\.git/index\\.lock'"
t_is "no commit was made" "$(git rev-parse HEAD)" "$head"
out=$("$OPTLOOP" commit --json 2>/dev/null)
t_is "commit --json: JSON error code busy" "$(printf '%s' "$out" | jerr code)" busy
rm .git/index.lock
t_ok "removed, the commit goes through" "$OPTLOOP" commit
echo "/* one change */" >>ops/linear_attn/chunk.c
"$OPTLOOP" verify --quiet >/dev/null 2>&1
touch .git/index.lock
before=$(cat "$W/OPT_LOG.md")
out=$("$OPTLOOP" log --direction "one change" --status drop --commit 2>&1); rc=$?
t_is "log --commit with a stale index.lock: refused before the row (exit 3)" "$rc" 3
t_is "nothing was logged" "$(cat "$W/OPT_LOG.md")" "$before"
rm .git/index.lock
t_ok "removed, log --commit goes through" "$OPTLOOP" log --direction "one change" --status drop --commit

# --- a real full disk (a tiny tmpfs, where this machine lets us mount one) --------
mnt="$T_TMP/full"
mkdir "$mnt"
if mount -t tmpfs -o size=16m tmpfs "$mnt" 2>/dev/null; then
	fd="$mnt/demo"
	"$OPTLOOP" demo "$fd" >/dev/null 2>&1
	(cd "$fd" && "$OPTLOOP" verify --quiet >/dev/null 2>&1)
	cat /dev/zero >"$mnt/filler" 2>/dev/null
	out=$(cd "$fd" && "$OPTLOOP" log --direction baseline 2>&1); rc=$?
	t_is "a full disk: log exits 4" "$rc" 4
	t_like "and says what failed" "$out" 'database|No space left'
	out=$(cd "$fd" && "$OPTLOOP" log --direction baseline --json 2>/dev/null); rc=$?
	t_is "log --json on a full disk: a JSON error, code io" "$(printf '%s' "$out" | jerr code)" io
	rm -f "$mnt/filler"
	t_ok "with space again the measured row is logged (nothing lost)" \
		sh -c "cd '$fd' && '$OPTLOOP' log --direction baseline"
	umount "$mnt"
else
	t_skip "a full disk (tmpfs)" "mounting a tmpfs is not allowed here"
fi

# --- the workbench without a usable TERM ----------------------------------------------
for t in "-u TERM" "TERM=" "TERM=no-such-terminal" "TERM=dumb"; do
	rm -f "$TUI_STATUS"
	: >"$TUI_STDERR"
	tmux_ kill-server 2>/dev/null
	# a server still shutting down refuses the new session: try again
	for _ in $(seq 50); do
		tmux_ new-session -d -x 100 -y 30 \
			"$TUI_RUN $TUI_STATUS $TUI_STDERR env $t $(printf '%q' "$OPTLOOP") tui" \
			2>/dev/null && break
		sleep 0.1
	done
	t_is "optloop tui with $t: exit 2" "$(tui_exit_status 15)" 2
	case $t in
	*no-such*) want='TERM=no-such-terminal is a terminal type this machine.s terminfo does not know' ;;
	*dumb) want='TERM=dumb cannot move the cursor' ;;
	*) want='TERM is not set; set it' ;;
	esac
	t_like "and says why" "$(cat "$TUI_STDERR")" "$want"
done
tui_stop

t_done
