#!/usr/bin/env bash
# Hostile files: a workspace document, a log or a frozen file that is a FIFO,
# a link to /dev/zero or /dev/urandom, or far too big is refused at once with
# its name and what it is; nothing hangs, nothing reads until memory runs
# out, and nothing already there is overwritten unread.  Standard input
# ("-", /dev/stdin) still reads.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tui_lib.sh"
export DEMO_BENCH_REP_MS=${DEMO_BENCH_REP_MS:-40} DEMO_BENCH_WARMUP_MS=${DEMO_BENCH_WARMUP_MS:-10}

d="$T_TMP/demo"
"$OPTLOOP" demo "$d" >/dev/null 2>&1 || { t_fail "demo project"; t_done; exit 1; }
cd "$d" || exit 1
W=profile/chunk_linear_attn-opt
ol() { timeout 20 "$OPTLOOP" "$@"; }

# swap FILE KIND: replace a workspace file by a FIFO or a link, keeping the original
swap() {
	mv "$1" "$1.orig"
	case $2 in
	fifo) mkfifo "$1" ;;
	*) ln -s "$2" "$1" ;;
	esac
}
unswap() { rm -f "$1"; mv "$1.orig" "$1"; }

# --- status and the workspace documents -------------------------------------
for f in OPT_LOG.md TRAPS.md dispatch.md; do
	for kind in fifo /dev/zero; do
		swap "$W/$f" "$kind"
		out=$(ol status 2>&1); rc=$?
		t_is "status with $f a ${kind#/dev/} finishes (exit 0)" "$rc" 0
		unswap "$W/$f"
	done
done
swap "$W/OPT_LOG.md" fifo
out=$(ol status 2>&1)
t_like "status names a FIFO OPT_LOG.md among its problems" "$out" \
	"$W/OPT_LOG.md is a FIFO, not a regular file; replace it with a file"
t_ok "and leaves it in place (a FIFO still)" test -p "$W/OPT_LOG.md"
unswap "$W/OPT_LOG.md"

for kind in fifo /dev/zero; do
	swap "$W/docs/draft.md" "$kind"
	out=$(ol status 2>&1); rc=$?
	t_is "status with docs/draft.md a ${kind#/dev/}: exit 2" "$rc" 2
	if [ "$kind" = fifo ]; then
		t_like "and the message names the FIFO" "$out" \
			"^optloop: .*/$W/docs/draft.md is a FIFO, not a regular file; replace it with a file$"
	else
		t_like "and the message names the link and its target" "$out" \
			"docs/draft.md is a symbolic link to /dev/zero, a character device, not a regular file"
	fi
	unswap "$W/docs/draft.md"
done

swap "$W/TRAPS.md" fifo
out=$(ol trap list 2>&1); rc=$?
t_is "trap list with a FIFO TRAPS.md: exit 2, no hang" "$rc" 2
t_like "and it names the file" "$out" "TRAPS.md is a FIFO, not a regular file"
out=$(ol trap add --title T --fact F --why W --how H 2>&1); rc=$?
t_is "trap add refuses too (exit 2)" "$rc" 2
t_ok "the FIFO is not replaced by the seed catalogue" test -p "$W/TRAPS.md"
unswap "$W/TRAPS.md"
swap "$W/TRAPS.md" /dev/urandom
out=$(ol trap list 2>&1); rc=$?
t_is "trap list with TRAPS.md linked to /dev/urandom: exit 2" "$rc" 2
t_like "and it says so" "$out" "TRAPS.md is a symbolic link to /dev/urandom, a character device"
unswap "$W/TRAPS.md"
# a link to a regular file is read: a catalogue shared between workspaces
mv "$W/TRAPS.md" "$T_TMP/shared-TRAPS.md"
ln -s "$T_TMP/shared-TRAPS.md" "$W/TRAPS.md"
t_like "a TRAPS.md linked to a regular file is read" "$(ol trap list 2>&1)" 'tf32'
rm "$W/TRAPS.md"
mv "$T_TMP/shared-TRAPS.md" "$W/TRAPS.md"

swap "$W/docs/draft.md" fifo
out=$(ol contract 2>&1); rc=$?
t_is "contract with a FIFO draft.md: exit 2, no hang" "$rc" 2
unswap "$W/docs/draft.md"

# --- import and parse -------------------------------------------------------
mkfifo "$T_TMP/log.fifo"
out=$(ol import "$T_TMP/log.fifo" 2>&1); rc=$?
t_is "import of a FIFO: exit 2, no hang" "$rc" 2
t_like "and says what it is" "$out" "log.fifo is a FIFO, not a regular file; replace it with a file"
ln -s /dev/zero "$T_TMP/zero.md"
out=$(ol import "$T_TMP/zero.md" 2>&1); rc=$?
t_is "import of a link to /dev/zero: exit 2 (no abort)" "$rc" 2
t_unlike "no out-of-memory BUG" "$out" 'BUG'
truncate -s 65M "$T_TMP/huge.md"
out=$(ol import "$T_TMP/huge.md" 2>&1); rc=$?
t_is "import of a 65 MiB file: exit 2" "$rc" 2
t_like "and says the cap" "$out" 'huge.md is 65 MiB, more than the 64 MiB optloop reads from one file'
out=$(ol import - <"$W/OPT_LOG.md" 2>&1); rc=$?
t_is "import - reads standard input" "$rc" 0
out=$(head -c 70000000 /dev/zero | ol import - 2>&1); rc=$?
t_is "import of an endless standard input stops at the cap: exit 2" "$rc" 2
t_like "and says so" "$out" 'standard input holds more than the 64 MiB'

out=$(ol parse "$T_TMP/log.fifo" 2>&1); rc=$?
t_is "parse of a FIFO: exit 2, no hang" "$rc" 2
t_like "and says what it is" "$out" "log.fifo is a FIFO, not a regular file"
out=$(ol parse "$T_TMP/zero.md" 2>&1); rc=$?
t_is "parse of a link to /dev/zero: exit 2" "$rc" 2
printf 'Correctness gate: (full)\nGATE PASSED.\n' >"$T_TMP/v.log"
out=$(ol parse - --exit-status 0 <"$T_TMP/v.log" 2>&1); rc=$?
t_is "parse - still reads standard input" "$rc" 0
t_like "and reads the gate" "$out" 'pass'
out=$(cat "$T_TMP/v.log" | ol parse /dev/stdin --exit-status 0 2>&1); rc=$?
t_is "parse /dev/stdin from a pipe reads it" "$rc" 0

# --- a frozen file replaced by a FIFO after the baseline ---------------------
ol verify --quiet >/dev/null 2>&1
t_ok "baseline logged and committed" ol log --direction baseline --commit
mv tests/ops/test_linear_attn.c "$T_TMP/test.orig"
mkfifo tests/ops/test_linear_attn.c
out=$(ol verify 2>&1); rc=$?
t_is "verify with a frozen file made a FIFO: refused (exit 3), no hang" "$rc" 3
t_like "naming the frozen file" "$out" 'frozen file tests/ops/test_linear_attn.c changed'
rm tests/ops/test_linear_attn.c
mv "$T_TMP/test.orig" tests/ops/test_linear_attn.c

# --- dispatch add: an unreadable dispatch.md refuses before the row is stored --
swap "$W/dispatch.md" fifo
out=$(ol dispatch add --bucket 'T <= 64' --entry chunk --evidence 0 2>&1); rc=$?
t_is "dispatch add with a FIFO dispatch.md: exit 2" "$rc" 2
t_like "naming it" "$out" 'dispatch.md is a FIFO'
t_is "no row was stored" "$(ol dispatch list --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["rows"]))')" 0
unswap "$W/dispatch.md"

# --- view: the read-only panes on hostile neighbours -------------------------
cp "$W/OPT_LOG.md" "$T_TMP/OPT_LOG.md"
ln -s /dev/urandom "$T_TMP/dispatch.md"
mkfifo "$T_TMP/TRAPS.md"
tui_start 120 30 -- "$OPTLOOP" view "$T_TMP/OPT_LOG.md"
if tui_wait 'read-only view' 15; then
	t_pass "view opens with dispatch.md linked to /dev/urandom and a FIFO TRAPS.md"
	tui_keys p
	tui_wait 'dispatch.md' 5
	t_like "its problems name dispatch.md's link" "$(tui_screen)" 'dispatch.md.*character'
	t_like "and the FIFO TRAPS.md" "$(tui_screen)" 'TRAPS.md.*FIFO'
	tui_keys Escape
	tui_keys q
	t_is "view quits cleanly" "$(tui_exit_status 10)" 0
else
	t_fail "view opens with dispatch.md linked to /dev/urandom and a FIFO TRAPS.md" "$(tui_screen)"
fi
tui_stop
rm -f "$T_TMP/dispatch.md" "$T_TMP/TRAPS.md"
mkfifo "$T_TMP/OPT_LOG.fifo.md"
tui_start 120 30 -- "$OPTLOOP" view "$T_TMP/OPT_LOG.fifo.md"
t_is "view of a FIFO log exits 2 at once" "$(tui_exit_status 15)" 2
t_like "saying what the file is" "$(cat "$TUI_STDERR")" 'OPT_LOG.fifo.md is a FIFO, not a regular file'
tui_stop
tui_check_stderr

# trace/ and docs/ as links to a folder outside: nothing is written through
# them; the command says which folder and what to do.
out_dir="$T_TMP/elsewhere"
mkdir -p "$out_dir/trace" "$out_dir/docs"
mv "$W/trace" "$W/trace.orig" && ln -s "$out_dir/trace" "$W/trace"
out=$(ol verify 2>&1); rc=$?
t_is "verify with trace/ a link to a folder outside: exit 3" "$rc" 3
t_like "  naming the link and what to do" "$out" 'trace is a link \(to .*elsewhere/trace\).*replace it with a folder of its own'
t_is "  nothing was written through it" "$(ls -A "$out_dir/trace")" ""
rm "$W/trace" && mv "$W/trace.orig" "$W/trace"
cp "$W/docs/draft.md" "$out_dir/docs/draft.md"
mv "$W/docs" "$W/docs.orig" && ln -s "$out_dir/docs" "$W/docs"
before=$(cat "$out_dir/docs/draft.md")
out=$(ol contract --set "languages=C99" 2>&1); rc=$?
t_is "contract --set with docs/ a link to a folder outside: exit 3" "$rc" 3
t_like "  naming the link" "$out" 'docs is a link \(to .*elsewhere/docs\)'
t_is "  the draft outside is untouched" "$(cat "$out_dir/docs/draft.md")" "$before"
rm "$W/docs" && mv "$W/docs.orig" "$W/docs"
t_ok "with the folders back, contract --set works" ol contract --set "languages=C99"

t_done
