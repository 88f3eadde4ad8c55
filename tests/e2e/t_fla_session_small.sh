#!/usr/bin/env bash
# The first real session on an NVIDIA H200 against flash-linear-attention,
# at small shapes (tests/fixtures/fla-h200-session/small-shapes/, made by an
# earlier tests/device/session.sh) replayed
# on a machine without a GPU: every raw verify log goes through `optloop
# parse`, the recorded OPT_LOG.md through `optloop import`, and the whole
# iteration sequence through the real engine again (a validation command
# that prints the captured output with its recorded exit status).  The
# numbers must match what the device recorded.
. "$(dirname "$0")/lib.sh"
fx="$OPTLOOP_ROOT/tests/fixtures/fla-h200-session/small-shapes"
jget() { python3 -c 'import json,sys
v=json.load(sys.stdin)
for k in sys.argv[1].split("."):
    v=v[int(k)] if isinstance(v,list) else v.get(k)
print("null" if v is None else v)' "$1"; }

# 1. optloop parse on each raw log, with the exit status the device recorded.
declare -A exit_of=([0]=0 [1]=0 [2]=1)
declare -A gate_of=([0]=pass [1]=pass [2]=fail)
declare -A bench_of=([0]=0.425 [1]=0.788 [2]=null)
for i in 0 1 2; do
	j=$("$OPTLOOP" parse "$fx/trace/iter-$i.log" --exit-status "${exit_of[$i]}" --json)
	t_is "iter $i: parse gate" "$(printf '%s' "$j" | jget gate)" "${gate_of[$i]}"
	t_is "iter $i: a -k subset gate" "$(printf '%s' "$j" | jget gate_scope)" subset
	t_is "iter $i: the -k expression" "$(printf '%s' "$j" | jget gate_k)" "test_chunk and T63"
	rec=$(jget bench_ms <"$fx/verify-json/$(ls "$fx/verify-json" | sed -n "$((i + 1))p")")
	if [ "${bench_of[$i]}" = null ]; then
		t_is "iter $i: no table after a failed gate" "$(printf '%s' "$j" | jget rows)" "[]"
		t_is "iter $i: nothing benchmarked on the device either" "$rec" null
	else
		t_is "iter $i: the table's median matches the OPT_LOG row" \
			"$(printf '%s' "$j" | jget rows.0.new_ms)" "${bench_of[$i]}"
		t_is "iter $i: and the device's recorded measurement" "$rec" "${bench_of[$i]}"
	fi
done
j=$("$OPTLOOP" parse "$fx/trace/iter-0.log" --exit-status 0 --json)
t_is "env: device" "$(printf '%s' "$j" | jget env.device)" "NVIDIA H200"
t_is "env: backend" "$(printf '%s' "$j" | jget env.backend)" "CUDA 13.0"
t_is "env: PyTorch" "$(printf '%s' "$j" | jget env.pytorch)" "2.11.0+cu130"
t_is "env: Triton" "$(printf '%s' "$j" | jget env.triton)" "3.6.0"
t_is "pytest counts: 29 deselected" "$(printf '%s' "$j" | jget pytest.deselected)" 29
j=$("$OPTLOOP" parse "$fx/call-1-iter-3.log" --exit-status 0 --json)
t_is "first call, iteration 3: two shapes in the table" "$(printf '%s' "$j" | jget rows.1.T)" 1024
j=$("$OPTLOOP" parse "$fx/trace/iter-2.log" --json)
t_is "a failed gate read without its exit status is still a failure" "$(printf '%s' "$j" | jget gate)" fail

# 2. optloop import on the recorded OPT_LOG.md.
j=$("$OPTLOOP" import "$fx/OPT_LOG.md" --json)
t_is "import: three rows" "$(printf '%s' "$j" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["rows"]))')" 3
for i in 0 1 2; do
	t_is "import: row $i bench" "$(printf '%s' "$j" | jget rows.$i.bench_ms)" "${bench_of[$i]}"
done
t_is "import: statuses" "$(printf '%s' "$j" | python3 -c 'import json,sys; print(" ".join(r["status"] for r in json.load(sys.stdin)["rows"]))')" "base revert drop"

# 3. The same iterations through the engine, replaying the captured output.
repo="$T_TMP/fla"
mkdir -p "$repo/fla/ops/common" "$repo/tests/ops" "$repo/fla/ops/linear_attn"
cd "$repo" || exit 1
git init -q
echo "BK = 64" >fla/ops/common/chunk_o.py
echo "def test_chunk(): pass" >tests/ops/test_linear_attn.py
echo "def naive(): pass" >fla/ops/linear_attn/naive.py
git add -A && git commit -qm upstream
"$OPTLOOP" init --op chunk_linear_attn --kernel fla/ops/common/chunk_o.py \
	--test-file tests/ops/test_linear_attn.py --naive fla/ops/linear_attn/naive.py \
	--verify 'cat "$REPLAY_LOG"; exit "$REPLAY_EXIT"' >/dev/null
"$OPTLOOP" contract --set "target=replay the recorded session, 1.1x geomean" --set "languages=Triton" --set "promotion=full gate" >/dev/null
replay() { # ITER EXIT -> runs verify on the captured log
	REPLAY_LOG="$fx/trace/iter-$1.log" REPLAY_EXIT=$2 "$OPTLOOP" verify --json 2>/dev/null
}
# The device measured its baseline under a -k subset of the gate: now an
# attempt, not the baseline.  The replay then stands the full gate's banner in
# for the -k one; every time stays the device's.
j=$(replay 0 0)
t_is "the device's -k baseline is an attempt" "$(printf '%s' "$j" | jget attempt)" True
t_is "which leaves the workspace needing a baseline" "$("$OPTLOOP" status --json | jget state)" need_baseline
sed 's/^\(  Correctness gate: .*\) (-k .*)$/\1 (full)/' "$fx/trace/iter-0.log" >"$T_TMP/iter-0-full.log"
j=$(REPLAY_LOG="$T_TMP/iter-0-full.log" REPLAY_EXIT=0 "$OPTLOOP" verify --json 2>/dev/null)
t_is "replayed baseline: bench" "$(printf '%s' "$j" | jget bench_ms)" 0.425
"$OPTLOOP" log --direction "baseline: upstream kernels unchanged" >/dev/null && "$OPTLOOP" commit >/dev/null
echo "BK = 64  # stages 2" >fla/ops/common/chunk_o.py
j=$(replay 1 0)
t_is "replayed iteration 1: bench" "$(printf '%s' "$j" | jget bench_ms)" 0.788
t_is "replayed iteration 1: slower than the baseline" "$(printf '%s' "$j" | jget verdict)" slow
t_like "replayed iteration 1: vs best against the baseline" "$(printf '%s' "$j" | jget vs_best)" '^-0\.85'
"$OPTLOOP" log --direction "chunk_fwd_kernel_o: 64x64 tile with 2 pipeline stages instead of 3" \
	--status revert >/dev/null && "$OPTLOOP" commit >/dev/null
echo "BK = 64  # strict mask" >fla/ops/common/chunk_o.py
REPLAY_LOG="$fx/trace/iter-2.log" REPLAY_EXIT=1 "$OPTLOOP" verify --json >"$T_TMP/v2.json" 2>/dev/null
t_is "replayed iteration 2: verify exits 1 on the failed gate" "$?" 1
t_is "replayed iteration 2: gate" "$(jget gate <"$T_TMP/v2.json")" fail
"$OPTLOOP" log --direction "chunk_fwd_kernel_o: strict causal mask (drops the diagonal term)" \
	--status drop >/dev/null && "$OPTLOOP" commit >/dev/null
# The rebuilt table matches the device's row for row (vs best aside: the
# device build predates comparing against a -k baseline, so it showed "—";
# and the baseline's gate is the full one the replay stood in).
strip_vs() { grep -E '^\| [0-9]' "$1" | awk -F' \\| ' '{print $1"|"$2"|"$3"|"$4"|"$6}' |
	sed 's/^| 0|\(.*\)|pass|/| 0|\1|pass (-k)|/'; }
t_is "OPT_LOG.md rows match the device's" "$(strip_vs profile/chunk_linear_attn-opt/OPT_LOG.md)" "$(strip_vs "$fx/OPT_LOG.md")"
t_like "and row 1 now carries its vs best" "$(cat profile/chunk_linear_attn-opt/OPT_LOG.md)" '\| 1 \| .* \| 0\.788 \| -85% \| revert \|'

# A run killed after a test case failed is a failure, not merely incomplete.
echo "BK = 64  # again" >fla/ops/common/chunk_o.py
REPLAY_LOG="$fx/trace/iter-2.log" REPLAY_EXIT='0; sleep 60' "$OPTLOOP" verify --timeout 3 --json \
	>"$T_TMP/v3.json" 2>/dev/null
t_is "killed after a failed case: gate fail" "$(jget gate <"$T_TMP/v3.json")" fail
echo "BK = 64  # cut" >fla/ops/common/chunk_o.py
REPLAY_LOG="$fx/trace/iter-0.log" REPLAY_EXIT='0; sleep 60' "$OPTLOOP" log --direction x --status drop >/dev/null 2>&1
"$OPTLOOP" commit --set-aside >/dev/null 2>&1
t_done
