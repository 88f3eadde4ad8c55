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

t_done
