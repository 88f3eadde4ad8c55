#!/usr/bin/env bash
# The demo project's verify script: FLA-shaped gate, exit codes and tables,
# on the pristine kernel and on copies with real bugs injected.
. "$(dirname "$0")/lib.sh"

demo="$OPTLOOP_ROOT/assets/demo"
export DEMO_BENCH_WARMUP_MS=5 DEMO_BENCH_REP_MS=20 # keep the suite quick

# A fresh git repository holding a copy of the demo project.
fresh() {
	local d="$T_TMP/$1"
	cp -R "$demo" "$d"
	rm -rf "$d/build"
	git -C "$d" init -q -b main
	git -C "$d" add -A
	git -C "$d" commit -qm "demo project"
	printf '%s' "$d"
}
# run DIR ARGS... : stdout to $out, stderr to $err, exit status to $rc
run() {
	local d=$1
	shift
	"$d/verify" "$@" >"$T_TMP/out" 2>"$T_TMP/err"
	rc=$?
	out=$(cat "$T_TMP/out")
	err=$(cat "$T_TMP/err")
}
# Replace text in a file and fail loudly when it was not there.
inject() {
	local file=$1 from=$2 to=$3
	grep -qF -- "$from" "$file" || { t_fail "injection point '$from' exists in $file"; return; }
	python3 -c 'import sys; p,a,b=sys.argv[1:]; s=open(p).read(); open(p,"w").write(s.replace(a,b,1))' \
		"$file" "$from" "$to"
}
# What optloop's own parser reads from the last run (stdout, then stderr):
# parsed 'PYTHON EXPR over r' prints the expression over the parse JSON.
parsed() {
	printf '%s\n%s\n' "$out" "$err" >"$T_TMP/run.log"
	"$OPTLOOP" parse "$T_TMP/run.log" --exit-status "$rc" --json 2>&1 |
		python3 -c 'import json,sys; r=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1" 2>&1
}
row_re='^ {10} +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+  chunk_linear_attn +[0-9]+\.[0-9]{3}$'

# --- pristine kernel, full gate -------------------------------------------------
p=$(fresh pristine)
# Timed with the default benchmark budgets.  The machine is shared, so the
# bound is checked on CPU time (verify and all its children); wall time is
# reported beside it.
TIMEFORMAT='%U %S %R'
{ time DEMO_BENCH_WARMUP_MS='' DEMO_BENCH_REP_MS='' run "$p" --op chunk_linear_attn; } 2>"$T_TMP/time"
read -r t_user t_sys t_wall <"$T_TMP/time"
cpu=$(awk -v u="$t_user" -v s="$t_sys" 'BEGIN { printf "%.2f", u + s }')
t_is "pristine: exit 0" "$rc" 0
t_like "pristine: full gate banner" "$out" '^  Correctness gate: tests/ops/test_linear_attn\.c \(full\)$'
t_like "pristine: a progress line per case" "$(grep -cE '^PASSED +\[ *[0-9]+%\]$' <<<"$out")" '^6$'
t_like "pristine: last case at 100%" "$out" 'PASSED {67}\[100%\]'
t_like "pristine: case ids look like pytest's" "$out" '^tests/ops/test_linear_attn\.c::test_chunk\[B1-T63-H1-D64\] $'
t_like "pristine: pytest summary line" "$out" '^=+ 6 passed in [0-9.]+s =+$'
t_like "pristine: GATE PASSED" "$out" '^  GATE PASSED\.$'
t_like "pristine: Machine line with compiler and branch[sha]" "$out" \
	'^  Machine: .+ \| CPU (gcc|clang) [0-9.]+ \| main\[[0-9a-f]{7}\]$'
t_like "pristine: table header" "$out" '^  fwd +B +T +H +D  op +main\[[0-9a-f]{7}\]\(ms\)$'
t_is "pristine: a table row per shape" "$(grep -cE "$row_re" <<<"$out")" 3
t_is "pristine: nothing on stderr" "$err" ""
t_ok "pristine: full verify takes under 10 s (cpu ${cpu}s, wall ${t_wall}s)" awk -v s="$cpu" 'BEGIN { exit !(s < 10) }'
t_is "pristine: optloop parse reads a full pass with three rows" \
	"$(parsed 'r["gate"], r["gate_scope"], r["pytest"]["passed"], len(r["rows"])')" "('pass', 'full', 6, 3)"
t_is "pristine: optloop parse splits the Machine line" \
	"$(parsed 'r["env"]["backend"].split()[0], r["env"]["branch"], len(r["env"]["sha"])')" "('CPU', 'main', 7)"
t_is "pristine: verify leaves the tree clean" "$(git -C "$p" status --porcelain)" ""

# --- a real numeric bug: the causal sum skips the diagonal ---------------------------
b=$(fresh bug)
inject "$b/ops/linear_attn/chunk.c" 'for (int s = t0; s <= t; s++)' 'for (int s = t0; s < t; s++)'
run "$b" --op chunk_linear_attn
t_is "numeric bug: exit 1" "$rc" 1
t_like "numeric bug: GATE FAILED on stderr" "$err" '^  GATE FAILED — correctness regressed\. Not benchmarking\.'
t_like "numeric bug: failed cases reported" "$out" '^FAILED +\[ *[0-9]+%\]$'
t_like "numeric bug: pytest summary counts" "$out" '^=+ 6 failed in [0-9.]+s =+$'
t_like "numeric bug: the assertion names the error ratio" "$out" 'AssertionError: +o diff: [0-9.]+ ratio: [0-9.]+'
t_is "numeric bug: optloop parse reads a failed gate, no rows" \
	"$(parsed 'r["gate"], r["pytest"]["failed"], len(r["rows"])')" "('fail', 6, 0)"
t_unlike "numeric bug: nothing benchmarked" "$out" 'Machine:|Warming up|chunk_linear_attn +[0-9]+\.[0-9]{3}$'

# --- an output element the kernel never writes ---------------------------------
u=$(fresh unwritten)
inject "$u/ops/linear_attn/chunk.c" 'ot[j] = acc;' 'if (t != T - 1 || j != D - 1) ot[j] = acc;'
run "$u" --op chunk_linear_attn
t_is "unwritten element: exit 1" "$rc" 1
t_like "unwritten element: NaN poison caught" "$out" 'AssertionError: o: NaN detected in tri'
t_like "unwritten element: points at the last element" "$out" 'first mismatch at b=[0-9]+ t=[0-9]+ h=[0-9]+ d=[0-9]+: ref=[-0-9.]+ tri=nan'
t_like "unwritten element: GATE FAILED" "$err" 'GATE FAILED'
t_unlike "unwritten element: no table" "$out" 'Machine:'

# --- compiled objects are reused only for identical preprocessed sources -------
h=$(fresh header)
printf '#define CAUSAL_SHIFT 0\n' >"$h/ops/linear_attn/tuning.h"
inject "$h/ops/linear_attn/chunk.c" '#include "linear_attn.h"' '#include "linear_attn.h"
#include "tuning.h"'
inject "$h/ops/linear_attn/chunk.c" 'for (int s = t0; s <= t; s++)' 'for (int s = t0; s <= t - CAUSAL_SHIFT; s++)'
run "$h" --op chunk_linear_attn --no-gate
objs=$(ls "$h/build/cache" | wc -l)
run "$h" --op chunk_linear_attn --no-gate
t_is "object cache: an unchanged run compiles nothing new" "$(ls "$h/build/cache" | wc -l)" "$objs"
printf '#define CAUSAL_SHIFT 1\n' >"$h/ops/linear_attn/tuning.h"
run "$h" --op chunk_linear_attn
t_is "object cache: a bug in an included header alone still fails the gate" "$rc" 1

# --- --gate-k selection ---------------------------------------------------------
run "$p" --op chunk_linear_attn --gate-k "T63"
t_is "-k: exit 0" "$rc" 0
t_like "-k: banner names the expression" "$out" '^  Correctness gate: tests/ops/test_linear_attn\.c \(-k T63\)$'
t_like "-k: summary with deselected" "$out" '^=+ 1 passed, 5 deselected in [0-9.]+s =+$'
t_is "-k: optloop parse reads a subset pass" \
	"$(parsed 'r["gate"], r["gate_scope"], r["gate_k"], r["pytest"]["deselected"]')" "('pass', 'subset', 'T63', 5)"
t_is "-k: only the selected case ran" "$(grep -c '::test_chunk\[' <<<"$out")" 1
run "$p" --op chunk_linear_attn --gate-k "B1 and (T1- or T257) and not D64"
t_like "-k: and/or/not/parentheses" "$out" '::test_chunk\[B1-T257-H2-D128\] $'
t_like "-k: and/or/not counts" "$out" ' 1 passed, 5 deselected in '
run "$b" --op chunk_linear_attn --gate-k "test_chunk and T63"
t_is "-k on the buggy kernel: exit 1" "$rc" 1
t_like "-k on the buggy kernel: 1 failed, 5 deselected" "$out" '^=+ 1 failed, 5 deselected in [0-9.]+s =+$'
run "$p" --op chunk_linear_attn --gate-k "nosuchcase"
t_is "-k selecting nothing: the gate fails" "$rc" 1
t_like "-k selecting nothing: all deselected" "$out" ' 6 deselected in '
run "$p" --op chunk_linear_attn --gate-k "T63 and"
t_is "-k malformed: the gate fails" "$rc" 1
t_like "-k malformed: pytest's message" "$err" "Wrong expression passed to '-k'"

# --- gate test missing, usage, listing --------------------------------------------
m=$(fresh missing)
rm "$m/tests/ops/test_linear_attn.c"
run "$m" --op chunk_linear_attn
t_is "missing test: exit 2" "$rc" 2
t_like "missing test: Gate test not found" "$err" '^  Gate test not found: tests/ops/test_linear_attn\.c$'
t_is "missing test: optloop parse reads a harness error" "$(parsed 'r["gate"]')" error
t_unlike "missing test: nothing benchmarked" "$out" 'Machine:'
run "$p" --op chunk_linear_attn --test-file tests/ops/test_nope.c
t_is "--test-file to a missing file: exit 2" "$rc" 2
run "$p"
t_is "no --op: usage error" "$rc" 2
t_like "no --op: says so" "$err" '--op is required'
run "$p" --op chunk_linear_attn --modes fwdbwd
t_is "--modes fwdbwd: usage error" "$rc" 2
run "$p" --op nope
t_is "unknown op: usage error" "$rc" 2
run "$p" --list
t_like "--list: the registered op" "$out" '^  chunk_linear_attn +\[simple_qkv\]  ops\.linear_attn$'

# --- a kernel that does not compile ------------------------------------------------
c=$(fresh nocompile)
inject "$c/ops/linear_attn/chunk.c" 'free(S);' 'free(S) /* syntax error */'
run "$c" --op chunk_linear_attn
t_is "compile error: exit 1" "$rc" 1
t_like "compile error: reported as a collection error" "$out" '_ ERROR collecting tests/ops/test_linear_attn\.c _'
t_like "compile error: pytest's error summary" "$out" '^=+ 1 error in [0-9.]+s =+$'
t_like "compile error: GATE FAILED" "$err" 'GATE FAILED'

# --- --no-gate ------------------------------------------------------------------
run "$b" --op chunk_linear_attn --no-gate
t_is "--no-gate: exit 0 even on a buggy kernel" "$rc" 0
t_like "--no-gate: loud warning" "$out" 'WARNING: --no-gate set\. Correctness is NOT verified'
t_unlike "--no-gate: no gate banner" "$out" 'Correctness gate:'
t_is "--no-gate: still a table" "$(grep -cE "$row_re" <<<"$out")" 3

# --- --base after a committed kernel change --------------------------------------
inject "$p/ops/linear_attn/chunk.c" '#define CHUNK_SIZE 64' '#define CHUNK_SIZE 32'
git -C "$p" commit -qam "chunk size 32"
new_sha=$(git -C "$p" rev-parse --short=7 HEAD)
old_sha=$(git -C "$p" rev-parse --short=7 HEAD~1)
run "$p" --op chunk_linear_attn --base HEAD~1 --json "$T_TMP/res.json"
t_is "--base: exit 0" "$rc" 0
t_like "--base: worktree notice" "$out" "^  Benchmarking at 'HEAD~1' \(via git worktree\)\.\.\.$"
t_like "--base: old/new/speedup header" "$out" \
	"^  fwd +B +T +H +D  op +HEAD~1\[$old_sha\]\(ms\) +main\[$new_sha\]\(ms\)  speedup$"
t_is "--base: a speedup row per shape" \
	"$(grep -cE '^ {10} +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+  chunk_linear_attn +[0-9.]+ +[0-9.]+ +[0-9]+\.[0-9]{2}x$' <<<"$out")" 3
t_like "--base: the last table is the comparison" "$(grep '^  fwd' <<<"$out" | tail -n 1)" 'speedup$'
t_is "--base: optloop parse reads the comparison columns" \
	"$(parsed 'r["columns"]["base"], r["columns"]["new"], all(x["speedup"] > 0 for x in r["rows"]), len(r["rows"])')" \
	"('HEAD~1[$old_sha]', 'main[$new_sha]', True, 3)"
t_is "--base: the worktree is removed" "$(git -C "$p" worktree list | wc -l)" 1
t_is "--base: the tree is still clean" "$(git -C "$p" status --porcelain)" ""
t_like "--json: per-shape median, p20, p80" "$(cat "$T_TMP/res.json" 2>&1)" '"median_ms": [0-9.]+, "p20_ms": [0-9.]+, "p80_ms": [0-9.]+'
t_like "--json: the baseline too" "$(cat "$T_TMP/res.json" 2>&1)" "\"baseline_label\": \"HEAD~1\\[$old_sha\\]\""
# Cancelled (SIGTERM to the process group, as optloop's runner does) while
# the baseline is being measured: the worktree and the build scratch go.
mkdir -p "$T_TMP/vtmp"
TMPDIR="$T_TMP/vtmp" setsid "$p/verify" --op chunk_linear_attn --base HEAD~1 >"$T_TMP/cancel.out" 2>&1 &
vpid=$!
for _ in $(seq 1 300); do
	grep -q "Benchmarking at" "$T_TMP/cancel.out" && break
	sleep 0.1
done
kill -TERM -- -"$vpid" 2>/dev/null
wait "$vpid"
t_is "cancelled during --base: exit 143" "$?" 143
t_is "cancelled during --base: the worktree is removed" "$(git -C "$p" worktree list | wc -l)" 1
# (the compiler's own scratch files, ccXXXXXX.s and the like, are its to
# clean: a cancel that lands mid-compile kills it before it can)
t_is "cancelled during --base: no temporary directory left" \
	"$(ls -A "$T_TMP/vtmp" | grep -vE '^cc[A-Za-z0-9]{6}\.[a-z]+$')" ""
t_is "cancelled during --base: no build scratch left" "$(ls "$p/build" | grep -v '^cache$')" ""
# A baseline worktree left by a SIGKILLed run is pruned by the next --base run.
git -C "$p" worktree add -q --detach "$T_TMP/stale" HEAD~1
rm -rf "$T_TMP/stale"
run "$p" --op chunk_linear_attn --base HEAD~1
t_is "stale worktree: the next --base run still works" "$rc" 0
t_is "stale worktree: pruned" "$(git -C "$p" worktree list | wc -l)" 1
run "$p" --op chunk_linear_attn --base no-such-ref
t_is "--base to a missing ref: still exit 0" "$rc" 0
t_like "--base to a missing ref: warned" "$err" "Failed to benchmark at 'no-such-ref'"
t_like "--base to a missing ref: one-column table" "$out" '^  fwd +B +T +H +D  op +main\[[0-9a-f]{7}\]\(ms\)$'

t_done
