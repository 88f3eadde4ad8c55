#!/usr/bin/env bash
# Every judgment said once and right, on the demo: rows the tool cannot back
# never become the best, a set-aside edit comes back without the dropped
# change, the promotion check's lines say what they check.
. "$(dirname "$0")/lib.sh"
export DEMO_BENCH_WARMUP_MS=5 DEMO_BENCH_REP_MS=20

d="$T_TMP/demo"
"$OPTLOOP" demo "$d" </dev/null >/dev/null 2>&1 || t_fail "optloop demo"
cd "$d" || exit 1
ws=profile/chunk_linear_attn-opt
kernel=ops/linear_attn/chunk.c
"$OPTLOOP" verify >/dev/null 2>&1 && "$OPTLOOP" log --direction baseline --commit >/dev/null ||
	t_fail "baseline"
base_ms=$("$OPTLOOP" status --json | jget best.bench_ms)
t_like "the baseline is the best" "$base_ms" '^[0-9.]+$'

# ---- a hand-typed row is never the best (repair --rebuild) -------------------
cp "$ws/OPT_LOG.md" "$T_TMP/log.before"
printf '| 1 | hand-typed | pass | 0.001 | +99%% | keep |\n' >>"$ws/OPT_LOG.md"
out=$("$OPTLOOP" repair --rebuild 2>&1); rc=$?
t_is "repair --rebuild refuses a keep row with no run and no commit (exit 3)" "$rc" 3
t_like "  saying why and what to do" "$out" \
	'row 1 .*no run in the database and no commit carries it.*Set its Status to drop'
t_is "  the best is still the baseline's number" "$("$OPTLOOP" status --json | jget best.bench_ms)" "$base_ms"
t_unlike "  no commit carries the forged row" "$(git log --format=%B)" 'hand-typed'
t_like "  OPT_LOG.md is left as the user wrote it" "$(cat "$ws/OPT_LOG.md")" 'hand-typed'
t_exit "  commit has nothing to commit for it" 3 "$OPTLOOP" commit
sed -i 's/| hand-typed | pass | 0.001 | +99% | keep |/| hand-typed | pass | 0.001 | +99% | drop |/' "$ws/OPT_LOG.md"
out=$("$OPTLOOP" repair --rebuild 2>&1); rc=$?
t_is "as a drop row it is taken back" "$rc" 0
t_is "  and the best is still the baseline's number" "$("$OPTLOOP" status --json | jget best.bench_ms)" \
	"$base_ms"
t_ok "  and committed, as the next step says" "$OPTLOOP" commit

# ---- a set-aside edit comes back without the dropped change ---------------
# (log --status drop --set-aside --commit: only the edit made after the
# measurement may return)
best_kernel=$(cat "$kernel")
sed -i '1i /* change A: measured, then dropped */' "$kernel"
"$OPTLOOP" verify >/dev/null 2>&1
printf '/* change B: made after the measurement */\n' >>"$kernel"
out=$("$OPTLOOP" log --direction "change A" --status drop --set-aside --commit 2>&1); rc=$?
t_is "drop with --set-aside and --commit succeeds" "$rc" 0
t_unlike "  the dropped change A is not back in the kernel" "$(cat "$kernel")" 'change A'
t_like "  the set-aside edit B is back" "$(cat "$kernel")" 'change B: made after the measurement'
t_is "  the kernel is the best plus B, nothing else" "$(sed '$d' "$kernel")" "$best_kernel"
t_unlike "  HEAD's kernel is the best's (the restore commit)" "$(git show HEAD:"$kernel")" 'change A|change B'
t_like "  the iteration's own commit holds change A" "$(git show HEAD~1:"$kernel")" 'change A'
t_is "  the state is editing: B is the next change" "$("$OPTLOOP" status --json | jget state)" editing
t_is "  no set-aside ref is left" "$(git for-each-ref refs/optloop/ --format='%(refname)' | grep -c aside)" 0

# the edit overlaps the dropped change: nothing is written, and it says how
git checkout -q -- "$kernel"
sed -i '1i /* change C */' "$kernel"
"$OPTLOOP" verify >/dev/null 2>&1
sed -i '1s|.*|/* change C, edited again */|' "$kernel"
out=$("$OPTLOOP" log --direction "change C" --status drop --set-aside --commit 2>&1); rc=$?
t_is "an overlapping set-aside edit: exit 3" "$rc" 3
t_like "  says the edit overlaps and how to apply it by hand" "$out" \
	'iteration 3 is committed .*overlaps the change that was measured.*git apply -3'
t_unlike "  the kernel is the best's, nothing of C" "$(cat "$kernel")" 'change C'
t_is "  the edit is kept under its ref" "$(git for-each-ref refs/optloop/ --format='%(refname)' | grep -c aside)" 1
t_like "  the iteration is committed and the loop goes on (three drops: stalled)" \
	"$("$OPTLOOP" status --json | jget state)" '^stalled$'

# ---- a -k keep: promotion needs the full gate, and a re-verify counts -------
# (the confirm's numbers come from confirm_lib's benchmark, which follows the
# kernel in the work tree, not the machine's load)
. "$(dirname "$0")/confirm_lib.sh"
cd "$T_TMP" && rm -rf demo
confirm_bench
confirm_setup "$T_TMP/bench --op chunk_linear_attn"
"$OPTLOOP" verify --gate-k T63 >/dev/null 2>&1
t_is "iteration 1 verified on a -k subset" "$("$OPTLOOP" status --json | jget state)" measured
out=$("$OPTLOOP" confirm --max-pairs 8 --json 2>/dev/null)
t_is "  its confirm is fast" "$(printf '%s' "$out" | jget verdict)" fast
"$OPTLOOP" log --direction "three repetitions" --status keep --commit >/dev/null
t_is "  kept: it is the best" "$("$OPTLOOP" status --json | jget best.iter)" 1
out=$("$OPTLOOP" promote --check 2>&1)
t_like "promote --check: MISSING full gate for the -k best" "$out" \
	'MISSING +full gate: the best.s verify ran a -k subset: verify the same kernel with the full gate'
t_unlike "  no MISSING line says the gate passed" "$out" 'MISSING +full gate: .*passed the full gate'
t_like "  the confirmed win is there" "$out" 'ok +confirmed win: iteration 1'
t_exit "report final refuses the -k best (exit 3)" 3 "$OPTLOOP" report final
t_like "  naming the -k subset and what to do" "$("$OPTLOOP" report final 2>&1)" \
	'the best \(iteration 1\) passed only a -k subset of the gate; verify the same kernel'
t_unlike "  not 'not measured yet'" "$("$OPTLOOP" report final 2>&1)" 'not measured yet'
t_exit "report pr refuses it too (it ticked the full gate)" 3 "$OPTLOOP" report pr
# the same kernel verified again with the full gate
"$OPTLOOP" verify >/dev/null 2>&1
out=$("$OPTLOOP" promote --check 2>&1)
t_like "after a full-gate verify of the same kernel the gate counts" "$out" \
	'ok +full gate: the best.s kernel passed the full gate when verified again'
"$OPTLOOP" log --direction "the best verified with the full gate" --status revert --commit >/dev/null
t_is "  the best is still iteration 1" "$("$OPTLOOP" status --json | jget best.iter)" 1
out=$("$OPTLOOP" report pr 2>&1); rc=$?
t_is "report pr now works" "$rc" 0
t_like "  ticking the full gate with the command optloop ran" "$out" \
	'- \[x\] full correctness gate passed: `.*/bench --op chunk_linear_attn`'
t_unlike "  not a --base command it never ran" "$out" 'full correctness gate passed: .*--base'
out=$("$OPTLOOP" report final 2>&1); rc=$?
t_is "report final now works" "$rc" 0
t_like "  its evidence names the full-gate run" "$out" '^Full correctness gate: run [0-9]+, `'
out=$("$OPTLOOP" report header 1 2>&1)
t_like "report header 1: the parent is the baseline, the best before it" "$out" \
	'^- parent: iteration 0, commit'
t_exit "report header of a revert row is refused" 3 "$OPTLOOP" report header 2
out=$("$OPTLOOP" report header 99 2>&1); rc=$?
t_is "report header of an iteration with no row: not found, exit 2" "$rc" 2
t_like "  saying there is none, the iterations there are, and the keep rows" "$out" \
	'there is no iteration 99 \(the log has iterations 0 to 2\); give the iteration of a keep row \(1\)'
out=$("$OPTLOOP" report header 99 --json 2>/dev/null)
t_is "  --json: code not_found" "$(printf '%s' "$out" | jget error.code)" not_found

t_done
