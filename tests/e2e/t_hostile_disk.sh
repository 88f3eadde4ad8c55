#!/usr/bin/env bash
# A disk that fills up, a workspace this user may not write, a repository
# another user owns.
#
# The full disk is real to optloop: strace makes every database write
# (pwrite64) or file write (write) from the Nth on fail with ENOSPC, as a
# full file system does, during confirm and noise, which swap the best's
# kernel into the tree and back.  After each: the kernel in the tree is the
# candidate, never the best or a mix; a failed command says the disk is full
# and what to do; the rows match; and once there is space again the loop
# goes on.  The read-only cases run as another user (root is never refused
# a write), so they need setpriv when the suite runs as root.
. "$(dirname "$0")/lib.sh"

mk="$OPTLOOP_ROOT/tests/fixtures/make_tiny_project.sh"
ws=profile/tiny-opt
d="$T_TMP/tiny"
"$mk" "$d" >/dev/null && cd "$d" || exit 1
"$OPTLOOP" init --op tiny --kernel kernel --test-file tests/test_compute.sh --naive ref/naive.sh \
	--verify ./verify --target "2x" --languages sh --promotion "full gate" >/dev/null
"$OPTLOOP" verify >/dev/null && "$OPTLOOP" log --direction baseline --commit >/dev/null
sed -i 's/\$(( \$1 \* 2 ))/$(( $1 << 1 ))/' kernel/compute.sh
cand=$(cat kernel/compute.sh)
"$OPTLOOP" verify >/dev/null
tar -C "$d" -cf "$T_TMP/measured.tar" .
fresh() { cd "$T_TMP" && rm -rf "$d" && mkdir "$d" && tar -C "$d" -xf "$T_TMP/measured.tar" && cd "$d"; }
rows() { grep -cE '^\| [0-9]+ \|' $ws/OPT_LOG.md; }
db_rows() { sqlite3 $ws/optloop.db "SELECT count(*) FROM iterations"; }

# --- a full disk during confirm and noise -------------------------------------
inject_works() {
	command -v strace >/dev/null 2>&1 || return 1
	strace -qq -o /dev/null -e trace=write -e inject=write:error=ENOSPC:when=1+ \
		sh -c 'echo x >/dev/null' 2>/dev/null
	[ $? != 0 ]
}
if inject_works && command -v sqlite3 >/dev/null 2>&1; then
	for cmd in "confirm --max-pairs 3" "noise --runs 2"; do
		for sys in pwrite64 write; do
			fresh || exit 1
			# shellcheck disable=SC2086
			strace -qq -c -e trace=$sys -o "$T_TMP/count" "$OPTLOOP" $cmd >/dev/null 2>&1
			n=$(awk -v s=$sys '$NF == s {print $4}' "$T_TMP/count")
			bad=0 tried=0 said=0
			for k in 0 1 2 3 4 5; do
				when=$((1 + k * (n - 1) / 5))
				fresh || exit 1
				tried=$((tried + 1))
				# shellcheck disable=SC2086
				# (a sanitizer build checks no leaks under ptrace: it cannot)
				ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" \
					strace -qq -o /dev/null -e trace=$sys -e inject=$sys:error=ENOSPC:when=$when+ \
					"$OPTLOOP" $cmd >"$T_TMP/out" 2>&1
				rc=$?
				why=""
				[ "$(cat kernel/compute.sh)" = "$cand" ] || why="$why; the kernel is not the candidate"
				# database writes fail; the message (on a terminal that
				# still works) says what and what to do
				if [ $sys = pwrite64 ] && [ $rc != 0 ] && [ $rc != 1 ]; then
					if grep -q 'is full .*free space there and run the command again' "$T_TMP/out"; then
						said=$((said + 1))
					else
						why="$why; exit $rc without saying the disk is full"
					fi
				fi
				# space again: the loop goes on
				"$OPTLOOP" status >"$T_TMP/st" 2>&1 || why="$why; status after it: exit $?"
				[ "$(db_rows)" = "$(rows)" ] || why="$why; database $(db_rows) rows, OPT_LOG.md $(rows)"
				# shellcheck disable=SC2086
				"$OPTLOOP" $cmd >/dev/null 2>&1
				case $? in 0 | 1) ;; *) why="$why; $cmd again: exit $?" ;; esac
				[ "$(cat kernel/compute.sh)" = "$cand" ] || why="$why; the kernel is not the candidate after $cmd again"
				"$OPTLOOP" log --direction shift --status drop --commit >/dev/null 2>&1 ||
					why="$why; log --commit after it failed"
				[ "$(db_rows)" = "$(rows)" ] || why="$why; rows differ after the log"
				if [ -n "$why" ]; then
					bad=$((bad + 1))
					t_fail "$cmd with the disk full from $sys #$when: ${why#; }" "$(tail -3 "$T_TMP/out")"
				fi
			done
			[ $bad = 0 ] && t_pass "$cmd, disk full from $tried points of its $n $sys calls: the candidate stays, the loop goes on"
			[ $sys = pwrite64 ] && t_ok "  and a failed $cmd says the disk is full ($said of $tried)" test $said -gt 0
		done
	done
else
	t_skip "a full disk" "strace with syscall injection, or sqlite3, is not available"
fi

# --- a workspace this user may not write -------------------------------------
# as_user CMD...: run as a user that is not the files' owner.
if [ "$(id -u)" = 0 ]; then
	other=$(id -u nobody 2>/dev/null)
	as_user() { setpriv --reuid="$other" --regid="$other" --clear-groups env HOME="$T_TMP/home" "$@"; }
	own() { chown -R "$other" "$@"; }
	command -v setpriv >/dev/null 2>&1 && [ -n "$other" ] || other=""
else
	other=$(id -u)
	as_user() { env HOME="$T_TMP/home" "$@"; }
	own() { :; }
fi
mkdir -p "$T_TMP/home"
chmod -R a+rX "$T_TMP"
# the other user must reach the binary (not so under a private home)
[ -n "$other" ] && ! as_user "$OPTLOOP" --version >/dev/null 2>&1 && other=""
if [ -n "$other" ]; then
	own "$T_TMP/home"
	fresh || exit 1
	chmod -R a+rX "$T_TMP"
	own "$d"
	chmod -R a-w $ws
	before=$(cat $ws/OPT_LOG.md; sqlite3 $ws/optloop.db .dump)
	out=$(as_user "$OPTLOOP" status 2>&1)
	t_is "a read-only workspace: status still reads it" "$?" 0
	t_like "  and says why it only reads" "$out" 'read-only: this user may not write the workspace'
	t_like "  and what is next" "$out" 'next: +(log|confirm) iteration 1'
	for c in "log --direction x --status drop" verify "contract --set languages=c" "confirm --max-pairs 2"; do
		# shellcheck disable=SC2086
		out=$(as_user "$OPTLOOP" $c 2>&1)
		t_is "  $c: exit 4" "$?" 4
		t_like "  $c: says the workspace cannot be written and what to do" "$out" \
			'the workspace cannot be written: .*optloop.db.lock: Permission denied; make it writable \(chmod -R u\+w'
	done
	t_is "  nothing in it changed" "$(cat $ws/OPT_LOG.md; sqlite3 $ws/optloop.db .dump)" "$before"
	t_is "  the kernel is the candidate" "$(cat kernel/compute.sh)" "$cand"
	# only the database read-only: the lock is taken, the first write refused
	dbfiles() { for f in $ws/optloop.db $ws/optloop.db-wal $ws/optloop.db-shm; do [ -e $f ] && echo $f; done; }
	chmod -R u+w $ws && chmod a-w $(dbfiles)
	out=$(as_user "$OPTLOOP" log --direction x --status drop 2>&1)
	t_is "a read-only database: log exits 4" "$?" 4
	t_like "  naming the database and what to do" "$out" \
		"the database .*optloop.db cannot be written \\(attempt to write a readonly database.*make it writable"
	t_is "  and OPT_LOG.md gained no row" "$(cat $ws/OPT_LOG.md; sqlite3 $ws/optloop.db .dump)" "$before"
	chmod u+w $(dbfiles)
	t_exit "  writable again: the row is logged" 0 as_user "$OPTLOOP" log --direction x --status drop
else
	t_skip "a read-only workspace" "running as root without setpriv or a nobody user"
fi

# --- a repository another user owns -------------------------------------------
if [ "$(id -u)" = 0 ] && [ -n "$other" ]; then
	fresh || exit 1
	chmod -R a+rX "$T_TMP"
	rm -f "$T_TMP/home/.gitconfig"
	out=$(as_user "$OPTLOOP" status 2>&1)
	t_is "a repository another user owns: exit 4" "$?" 4
	t_like "  says git refuses it and how to mark it safe" "$out" \
		"the repository $d belongs to another user.*git config --global --add safe.directory $d\$"
	as_user git config --global --add safe.directory "$d"
	t_exit "  marked safe as told: status works (read-only, the files are root's)" 0 as_user "$OPTLOOP" status
else
	t_skip "a repository another user owns" "needs root and setpriv to be another user"
fi
t_done
