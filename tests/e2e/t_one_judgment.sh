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
jget() {
	python3 -c 'import json,sys
v=json.load(sys.stdin)
for k in sys.argv[1].split("."):
    v=v[int(k)] if isinstance(v,list) else v[k]
print("null" if v is None else v)' "$1"
}
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

t_done
