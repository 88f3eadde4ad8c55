#!/usr/bin/env bash
# Fault injection in the SQLite spirit: every command that writes (verify,
# log, commit, log --commit, log --set-aside, confirm, noise, repair
# --rebuild, reassess) is killed with SIGKILL at its write, pwrite64 and
# rename system calls in turn (strace's syscall injection; optloop's own
# calls, not the harness's), and after the next command the invariants hold:
#   the kernel is the best, the candidate or the set-aside edit, never empty
#     or mixed;
#   the database's rows == OPT_LOG.md's rows, none lost;
#   one Optloop-Iter commit per committed row;
#   no restore temp file is left, and the loop goes on.
# Quick by default (every rename, up to 6 points of each write call);
# FAULT_FULL=1 kills at every single call.
#
# The scenarios are shared out between the suites t_fault_inject_a.sh and
# t_fault_inject_b.sh (FAULT_PART=K/N: every Nth from the Kth), which the
# runner runs side by side.
. "$(dirname "$0")/lib.sh"
fault_part=${FAULT_PART:-1/1}
# injection works when a traced shell dies by SIGKILL at its first write
inject_works() {
	command -v strace >/dev/null 2>&1 || return 1
	(strace -qq -o /dev/null -e trace=write -e inject=write:signal=KILL:when=1 \
		sh -c 'echo x' >/dev/null 2>&1)
	[ $? = 137 ]
}
if ! inject_works; then
	t_skip "fault injection" "strace with syscall injection is not available"
	t_done
	exit 0
fi
mk="$OPTLOOP_ROOT/tests/fixtures/make_tiny_project.sh"
ws=profile/tiny-opt
tpl="${FAULT_TPL:-$T_TMP/tpl}"
mkdir -p "$tpl"

rows() { grep -cE '^\| [0-9]+ \|' $ws/OPT_LOG.md; }
db_rows() { sqlite3 $ws/optloop.db "SELECT count(*) FROM iterations"; }
state() { "$OPTLOOP" status --json 2>/dev/null | sed -n 's/^  "state": "\(.*\)",$/\1/p'; }
commits() { git log --format=%B | grep -c '^Optloop-Iter:'; }
save() { tar -C "$1" -cf "$tpl/$2.tar" .; }

# ---- templates -----------------------------------------------------------
d="$T_TMP/build"
"$mk" "$d" && cd "$d" || exit 1
"$OPTLOOP" init --op tiny --kernel kernel --test-file tests/test_compute.sh --naive ref/naive.sh \
	--verify ./verify --target "2x" --languages sh --promotion "full gate" >/dev/null
"$OPTLOOP" verify >/dev/null && "$OPTLOOP" log --direction baseline --commit >/dev/null
base=$(cat kernel/compute.sh)
sed -i 's/\$(( \$1 \* 2 ))/$(( $1 << 1 ))/' kernel/compute.sh
cand=$(cat kernel/compute.sh)
save "$d" edited
"$OPTLOOP" verify >/dev/null
explain_noise
save "$d" measured
"$OPTLOOP" log --direction shift --status keep --unconfirmed "one run" >/dev/null
save "$d" logged
cd "$T_TMP" && tar -C "$d" -xf "$tpl/measured.tar" && cd "$d" || exit 1
echo "# next idea" >>kernel/compute.sh
aside=$(cat kernel/compute.sh)
save "$d" telescoped
# committed keep, then the database replaced by a copy from before it
rm -rf "$d" && mkdir "$d" && tar -C "$d" -xf "$tpl/logged.tar" && cd "$d" || exit 1
sqlite3 $ws/optloop.db "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
cp $ws/optloop.db "$T_TMP/before.db"
"$OPTLOOP" commit >/dev/null
sqlite3 "$T_TMP/before.db" "DELETE FROM iterations WHERE iter = 1"
rm -f $ws/optloop.db-wal $ws/optloop.db-shm
cp "$T_TMP/before.db" $ws/optloop.db
save "$d" lostrow
# three iterations without a win: stalled, with a fresh profile
rm -rf "$d" && mkdir "$d" && tar -C "$d" -xf "$tpl/measured.tar" && cd "$d" || exit 1
"$OPTLOOP" log --direction shift --status drop --commit >/dev/null
for i in 2 3; do
	echo "# try $i" >>kernel/compute.sh
	"$OPTLOOP" verify >/dev/null && "$OPTLOOP" log --direction "try $i" --status drop --commit >/dev/null
done
sleep 1.1
perf_report multiply >$ws/trace/profile.txt
save "$d" stalled
t_is "the stalled template is stalled" "$(state)" stalled
# a candidate that replaced a kernel subdirectory by a link to a directory
# outside the repository: no restore may write through it
outside="$T_TMP/outside"
reset_outside() { rm -rf "$outside" && mkdir -p "$outside" && echo 'echo outside' >"$outside/a.sh"; }
cd "$T_TMP" && rm -rf "$d" && "$mk" "$d" >/dev/null && cd "$d" || exit 1
mkdir -p kernel/sub && echo 'echo base' >kernel/sub/a.sh
# and a git submodule inside the kernel directory: never walked, never touched
git init -q "$T_TMP/vendor-src" && echo v >"$T_TMP/vendor-src/x.txt" &&
	git -C "$T_TMP/vendor-src" add x.txt && git -C "$T_TMP/vendor-src" commit -qm v
git -c protocol.file.allow=always submodule add -q "$T_TMP/vendor-src" kernel/vendor >/dev/null 2>&1
git add -A && git commit -qm "a kernel subdirectory and a submodule"
t_ok "the submodule is there" test -e kernel/vendor/.git
"$OPTLOOP" init --op tiny --kernel kernel --test-file tests/test_compute.sh --naive ref/naive.sh \
	--verify ./verify --target "2x" --languages sh --promotion "full gate" >/dev/null
"$OPTLOOP" verify >/dev/null && "$OPTLOOP" log --direction baseline --commit >/dev/null
reset_outside
rm -rf kernel/sub && ln -s "$outside" kernel/sub
sed -i 's/\$(( \$1 \* 2 ))/$(( $1 << 1 ))/' kernel/compute.sh
"$OPTLOOP" verify >/dev/null
t_is "the linked template is measured" "$(state)" measured
save "$d" linked

# ---- the scenarios: template and command ------------------------------------
scenarios=(
	"edited|verify"
	"measured|log --direction shift --status keep --unconfirmed one"
	"logged|commit"
	"measured|log --direction shift --status drop --commit"
	"telescoped|log --direction shift --status keep --unconfirmed one --set-aside"
	"measured|confirm --max-pairs 3"
	"measured|noise --runs 2"
	"lostrow|repair --rebuild"
	"stalled|reassess --profile trace/profile.txt --axes shifts --techniques none --next fuse"
	"linked|log --direction link --status drop --commit"
	"linked|confirm --max-pairs 3"
)

# Kill points: call numbers of each traced syscall, every one with
# FAULT_FULL=1, else up to 6 spread over the calls (renames: all).
points() {
	local name=$1 n=$2 k
	if [ -n "${FAULT_FULL:-}" ] || [ "$name" = rename ] || [ "$n" -le 6 ]; then
		seq 1 "$n"
	else
		for k in 0 1 2 3 4 5; do echo $((1 + k * (n - 1) / 5)); done | sort -un
	fi
}

# An optloop command; when git's lock file is in the way, the message names
# it: remove it as it says and run the command once more.
ol() {
	local out=$1 lock
	shift
	# shellcheck disable=SC2068
	if "$OPTLOOP" $@ >"$out" 2>&1; then
		# a lock reported as a problem: removed as told, then once more
		grep -q "rm \.git/index\.lock" "$out" || return 0
		rm -f .git/index.lock
		# shellcheck disable=SC2068
		"$OPTLOOP" $@ >"$out" 2>&1
		return
	fi
	lock=$(grep -o "rm '[^']*\.lock'\|rm \.git/index\.lock" "$out" | head -1)
	[ -n "$lock" ] || return 1
	lock=${lock#rm }
	lock=${lock//\'/}
	rm -f -- "$lock"
	# committed, and what followed it failed: the next command finishes it
	if grep -q 'is committed (' "$out"; then
		"$OPTLOOP" status >"$out" 2>&1
		return
	fi
	# a row logged whose commit failed: what the message says to run
	if grep -q 'then run optloop commit' "$out"; then
		"$OPTLOOP" commit >"$out" 2>&1
		return
	fi
	# shellcheck disable=SC2068
	"$OPTLOOP" $@ >"$out" 2>&1
}

# The invariants, appended to $why.
invariants() {
	local s want
	[ "$(db_rows)" = "$(rows)" ] || why="$why; database $(db_rows) rows, OPT_LOG.md $(rows)"
	[ "$(db_rows)" -ge "$1" ] || why="$why; rows lost ($1 before)"
	s=$(state)
	want=$(db_rows)
	[ "$s" = logged ] && want=$((want - 1))
	[ "$(commits)" = "$want" ] || why="$why; $(commits) optloop commits for $(db_rows) rows ($s)"
	! git status --porcelain --ignored | grep -q 'optloop-restore' || why="$why; a restore temp file is left"
	# the index holds HEAD's kernel: a dropped change staged there would be
	# committed by the user's next git commit
	git diff --cached --quiet -- kernel || why="$why; the index differs from HEAD in the kernel"
	if [ "$t" = linked ]; then
		[ "$(cat "$outside/a.sh")" = 'echo outside' ] || why="$why; a file outside the repository was written through the link"
		[ "$(cat kernel/vendor/x.txt 2>/dev/null)" = v ] && [ -e kernel/vendor/.git ] ||
			why="$why; the submodule was touched"
		if [ ! -L kernel/sub ] && [ "$(cat kernel/sub/a.sh 2>/dev/null)" != 'echo base' ]; then
			why="$why; kernel/sub is neither the best's directory nor the candidate's link"
		fi
	fi
}

case_no=0
part_k=${fault_part%/*} part_n=${fault_part#*/}
for i in "${!scenarios[@]}"; do
	[ $((i % part_n)) = $((part_k - 1)) ] || continue
	sc=${scenarios[$i]}
	t=${sc%%|*}
	cmd=${sc#*|}
	# how many calls of each kind the command makes, untouched
	rm -rf "$d" && mkdir "$d" && tar -C "$d" -xf "$tpl/$t.tar" && cd "$d" || exit 1
	# shellcheck disable=SC2086
	strace -qq -c -e trace=write,pwrite64,rename -o "$T_TMP/count" "$OPTLOOP" $cmd >/dev/null 2>&1
	# strace -c: % time, seconds, usecs/call, calls, [errors,] syscall
	counts=$(awk '$NF ~ /^(write|pwrite64|rename)$/ {print $NF, $4}' "$T_TMP/count")
	bad=0
	while read -r sys n; do
		[ -n "$sys" ] || continue
		for when in $(points "$sys" "$n"); do
			case_no=$((case_no + 1))
			rm -rf "$d" && mkdir "$d" && tar -C "$d" -xf "$tpl/$t.tar" && cd "$d" || exit 1
			reset_outside
			pre=$(db_rows)
			# shellcheck disable=SC2086
			(strace -qq -o /dev/null -e trace="$sys" -e inject="$sys:signal=KILL:when=$when" \
				"$OPTLOOP" $cmd >/dev/null 2>&1)
			# the next command; a lock file git left behind is named, and
			# removed as the message says (no git runs here)
			ol "$T_TMP/status.out" status
			src=$?
			k=$(cat kernel/compute.sh)
			why=""
			[ $src = 0 ] || why="status exit $src"
			[ -s kernel/compute.sh ] || why="$why; the kernel is empty"
			case "$k" in "$base" | "$cand" | "$aside" | "$cand"$'\n'"# try"*) ;; *) why="$why; the kernel is mixed" ;; esac
			# a database that lost rows keeps refusing until they are taken back
			if [ "$(db_rows)" -lt "$(rows)" ]; then
				grep -q 'repair --rebuild' "$T_TMP/status.out" || why="$why; rows lost without a word"
				ol "$T_TMP/rebuild.out" repair --rebuild || why="$why; repair --rebuild failed"
			fi
			invariants "$pre"
			# the loop goes on: the command again (it may be refused as
			# done), then whatever the state asks
			ol "$T_TMP/again.out" $cmd
			case "$(state)" in
			measured) ol "$T_TMP/next.out" log --direction after --status drop --commit || why="$why; log --commit after it failed: $(tail -1 "$T_TMP/next.out")" ;;
			logged) ol "$T_TMP/next.out" commit || why="$why; commit after it failed: $(tail -1 "$T_TMP/next.out")" ;;
			esac
			invariants "$pre"
			[ "$(state)" = logged ] && why="$why; still logged after the commit"
			if [ -n "$why" ]; then
				bad=$((bad + 1))
				t_fail "$cmd killed at $sys #$when: ${why#; }" "$(tail -5 "$T_TMP/status.out")"
			fi
		done
	done <<<"$counts"
	[ "$bad" = 0 ] && t_pass "$cmd: the invariants hold after a kill at each chosen write and rename ($(echo $counts) calls)" || true
done
t_ok "$case_no kill points were tried" test "$case_no" -gt $((40 / part_n))
t_done
