#!/usr/bin/env bash
# Every diff lint provoked on the demo project through `optloop lint`: the
# kernel directory is the kernel path, so a change to chunk.c or a new file
# beside it is linted.  Each finding names its trap; the clean diff has none.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/guards_lib.sh"
d="$T_TMP/demo"
demo_ws "$d" ops/linear_attn
cd "$d" || exit 1

t_exit "a clean tree has no findings (exit 0)" 0 "$OPTLOOP" lint

# provoke LINT TRAP FILE: FILE's new content is on stdin; the lint must
# report LINT with TRAP, then the change is undone.
provoke() {
	local lint=$1 trap=$2 file=$3 out rc
	cat >"$file"
	out=$("$OPTLOOP" lint --json); rc=$?
	t_is "$lint: lint exits 1" "$rc" 1
	t_like "$lint: found, naming trap $trap" "$out" "\"lint\": \"$lint\",
 *\"trap\": \"$trap\""
	git checkout -q -- ops 2>/dev/null
	git clean -qfd ops
}
py=ops/linear_attn/fast.py
cs=ops/linear_attn/chunk.c

provoke tf32-enabled symmetric-flags $py <<'P'
import torch
torch.backends.cuda.matmul.allow_tf32 = True
P
provoke input-precision symmetric-flags $py <<'P'
b_o = tl.dot(b_q, b_k, input_precision="tf32")
P
provoke accumulator-lowered symmetric-flags $py <<'P'
b_h = tl.zeros([BK, BV], dtype=tl.bfloat16)
P
# tolerance needs a before and an after: commit the tight version first
printf 'assert_close("o", ref, tri, 0.004)\n' >$py
git add $py && git commit -qm "tight tolerance"
printf 'assert_close("o", ref, tri, 0.05)\n' >$py
out=$("$OPTLOOP" lint --json)
t_like "tolerance-loosened: found with the numbers" "$out" '"lint": "tolerance-loosened".*|0.004 -> 0.05'
t_like "tolerance-loosened: names relative-tolerance" "$out" '"trap": "relative-tolerance"'
printf 'assert_close("o", ref, tri, 0.002)\n' >$py
t_exit "a tightened tolerance is not a finding" 0 "$OPTLOOP" lint
printf '@pytest.mark.parametrize("T", [1, 63, 64, 65])\n' >$py
git commit -qam "cases"
printf '@pytest.mark.parametrize("T", [1, 64])\n' >$py
t_like "parametrize-values-removed: found" "$("$OPTLOOP" lint --json)" '"lint": "parametrize-values-removed"'
git checkout -q -- $py
provoke skip-marker shrunken-gate ops/linear_attn/test_extra.py <<'P'
@pytest.mark.skip(reason="flaky on T=63")
def test_t63(): pass
P
provoke program-id-times-stride int64-addressing $py <<'P'
    p_x = x + tl.program_id(0) * stride_xm
P
provoke module-tensor-cache tensor-cache $py <<'P'
_out_cache = {}
P
provoke vendor-delegation vendor-delegation $py <<'P'
def chunk_linear_attn(q, k, v):
    return torch.matmul(torch.matmul(q, k.transpose(-1, -2)).tril(), v)
P
# the ways to time less than the work
provoke side-stream side-stream $py <<'P'
side = torch.cuda.Stream()
P
provoke patched-timer patched-timer $py <<'P'
triton.testing.do_bench = lambda fn, **kw: 0.001
P
provoke lazy-tensor lazy-tensor $py <<'P'
class Deferred(torch.Tensor):
    pass
P
provoke identity-cache tensor-cache $py <<'P'
    hit = _cache.get(q.data_ptr())
P
provoke input-downcast input-downcast $py <<'P'
    q = q.to(torch.bfloat16)
P
provoke output-alias output-alias $py <<'P'
    q.copy_(o)
P
# C lints on the kernel itself
cp $cs "$T_TMP/chunk.c"
{ echo '#pragma GCC optimize ("Ofast")'; cat "$T_TMP/chunk.c"; } | provoke fast-math symmetric-flags $cs
sed 's/^#define CHUNK_SIZE 64/#define CHUNK_SIZE 64\nstatic float *last_out_cache;/' "$T_TMP/chunk.c" |
	provoke c-static-cache tensor-cache $cs
sed 's/^#define CHUNK_SIZE 64/#define CHUNK_SIZE 64\nstatic int row_offset(int row, int stride) { int off = row * stride; return off; }/' "$T_TMP/chunk.c" |
	provoke c-index-int32 int64-addressing $cs
sed 's/^#define CHUNK_SIZE 64/#define CHUNK_SIZE 64\nstatic float sum_all(const float *x, int n) { float total = 0; for (int i = 0; i < n; i++) total += x[i]; return total; }/' "$T_TMP/chunk.c" |
	provoke c-accumulator-lowered symmetric-flags $cs

# the text report
sed -i 's/^#define CHUNK_SIZE 64/#define CHUNK_SIZE 64\nstatic float *last_out_cache;/' $cs
out=$("$OPTLOOP" lint)
t_like "the text report names file, line, lint and trap" "$out" 'ops/linear_attn/chunk.c:25 c-static-cache \[trap tensor-cache\]'
t_like "and says how to acknowledge" "$out" 'optloop log .* --ack'
t_like "the trap is marked hit for the iteration" "$("$OPTLOOP" trap list)" '^\[!\] tensor-cache'
git checkout -q -- $cs
t_exit "lint rejects unknown arguments" 2 "$OPTLOOP" lint --all
t_done
