#!/usr/bin/env bash
# optloop parse: the captured FLA fixtures and synthetic logs through the
# real binary, human and --json output, exit statuses, usage errors.
. "$(dirname "$0")/lib.sh"

fix="$OPTLOOP_ROOT/tests/fixtures/fla-h200"
syn="$OPTLOOP_ROOT/tests/fixtures/synthetic"

# The copies in the tree are the captured files, byte for byte.
shared="$OPTLOOP_ROOT/../shared/fixtures/fla-h200"
if [ -d "$shared" ]; then
	for f in "$shared"/*; do
		t_ok "fixture copy of $(basename "$f") matches" cmp -s "$f" "$fix/$(basename "$f")"
	done
else
	t_skip "fixture copies match the captured ones" "no ../shared beside the checkout"
fi

out=$("$OPTLOOP" parse "$fix/verify-gate-fail-k.txt" --exit-status 1 --json); rc=$?
t_is "gate failure exits 1" "$rc" 1
t_like "json gate fail" "$out" '"gate": "fail"'
t_like "json subset scope" "$out" '"gate_scope": "subset"'
t_like "json -k expression" "$out" '"gate_k": "test_chunk and T63"'
t_like "json deselected count" "$out" '"deselected": 29'
t_like "json rows empty" "$out" '"rows": \[\]'

out=$("$OPTLOOP" parse "$fix/verify-gate-pass-k-bench-timeout.txt" --killed --json); rc=$?
t_is "killed run exits 4" "$rc" 4
t_like "killed run is incomplete" "$out" '"gate": "incomplete"'
t_like "killed run not complete" "$out" '"complete": false'
t_like "env triton" "$out" '"triton": "3.6.0"'
t_like "env sha" "$out" '"sha": "35f8256"'

out=$("$OPTLOOP" parse "$fix/runpy-base-main.txt" --exit-status 0 --json); rc=$?
t_is "plain run.py exits 0" "$rc" 0
t_like "no gate at all" "$out" '"gate": "none"'
t_like "base column label" "$out" '"base": "main\[ce250a9\]"'
t_like "numbers are JSON numbers" "$out" '"speedup": 2.16[0-9]*,?$'
t_is "last table wins: two rows" "$(printf '%s\n' "$out" | grep -c '"op": "chunk_linear_attn"')" 2

out=$("$OPTLOOP" parse "$syn/l-column.txt" --exit-status 0 --json)
t_like "L column in rows" "$out" '"L": 4'
t_like "missing baseline cell is null" "$out" '"base_ms": null'

out=$("$OPTLOOP" parse "$syn/no-gate.txt" --exit-status 0)
t_like "no-gate is unverified" "$out" '^gate: +unverified'
t_like "harness warning shown" "$out" "Failed to benchmark at 'main'"

out=$("$OPTLOOP" parse "$syn/kernelbench-pass.txt" --patterns kernelbench --json --exit-status 0)
t_like "kernelbench set: pass" "$out" '"gate": "pass"'
t_like "kernelbench set: runtime" "$out" '"new_ms": 0.0412'
t_like "json names the set" "$out" '"patterns": "kernelbench"'

out=$("$OPTLOOP" parse - --exit-status 1 --json <"$fix/verify-gate-fail-k.txt")
t_like "reads standard input with -" "$out" '"gate": "fail"'

t_exit "traceback is a harness error (exit 4)" 4 "$OPTLOOP" parse "$syn/traceback.txt" --exit-status 1
t_exit "a missing file is a usage error" 2 "$OPTLOOP" parse "$T_TMP/nope.txt"
t_exit "no file is a usage error" 2 "$OPTLOOP" parse
t_exit "bad exit status" 2 "$OPTLOOP" parse "$syn/no-gate.txt" --exit-status x
t_exit "killed and exit status together" 2 "$OPTLOOP" parse "$syn/no-gate.txt" --killed --exit-status 0
err=$("$OPTLOOP" parse "$syn/no-gate.txt" --patterns nosuchset 2>&1)
t_like "unknown pattern set says what exists" "$err" "no pattern set 'nosuchset'.*fla, kernelbench"

# A workspace's own set, picked up with --op.
mkdir -p "$T_TMP/ws/profile/k-opt/patterns"
printf '@extends fla\npass ^ALL GOOD$\n' >"$T_TMP/ws/profile/k-opt/patterns/mine.pat"
printf 'ALL GOOD\n' >"$T_TMP/ws/log.txt"
out=$("$OPTLOOP" -C "$T_TMP/ws" --op k parse log.txt --patterns mine --exit-status 0)
t_like "workspace pattern set" "$out" '^gate: +pass'

# run.py --json results are a result table; input that is not a run's
# output is said, not read as "no gate"
out=$("$OPTLOOP" parse "$fix/runpy-base-main.json"); rc=$?
t_is "run.py --json results: exit 0" "$rc" 0
t_like "read as run.py results" "$out" 'read from run.py --json results'
t_like "its machine_info is the environment" "$out" 'env: +NVIDIA H200 \| CUDA 13.0 \| PyTorch 2.11.0\+cu130 \| Triton 3.6.0 \| opt-a\[35f8256\]'
t_like "its medians are the rows" "$out" 'fwd +B=4 T=2048 H=16 D=64 +chunk_linear_attn +- +0.450'
j=$("$OPTLOOP" parse "$fix/runpy-base-main.json" --json)
t_like "JSON names the source" "$j" '"source": "run.py --json results"'
for f in "$fix/nvidia-smi-idle.csv" /dev/null; do
	err=$("$OPTLOOP" parse "$f" 2>&1); rc=$?
	t_is "$(basename "$f"): not a run's output is a usage error" "$rc" 2
	t_like "$(basename "$f"): and says so" "$err" 'no verify or benchmark output was recognised'
done
printf '{"results": 3}' >"$T_TMP/other.json"
t_exit "other JSON is not a run either" 2 "$OPTLOOP" parse "$T_TMP/other.json"
# the full gate on 16 pytest-xdist workers, captured on an H200 and cut by a
# timeout (tests/fixtures/fla-h200-gate): each worker's line counts
x="$OPTLOOP_ROOT/tests/fixtures/fla-h200-gate"
j=$("$OPTLOOP" parse "$x/gate-chunk_retention-w16-warm.log" --killed --json)
t_is "xdist's lines count: 28 passed, at 96 %" \
	"$(printf '%s' "$j" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["cases"]["passed"], d["progress"], d["gate"])')" \
	"28 96 incomplete"
j=$("$OPTLOOP" parse "$x/gate-chunk_retention-w16-cold.log" --killed --json)
t_is "  the cold run: 7 passed, at 24 %" \
	"$(printf '%s' "$j" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["cases"]["passed"], d["progress"])')" \
	"7 24"
# a worker's failure stands though the run was then cut off
{ head -40 "$x/gate-chunk_retention-w16-warm.log"
  printf '[gw4] [ 97%%] FAILED tests/ops/test_retention.py::test_chunk[B4-T2048-H4-K64-torch.float16]\n'; } >"$T_TMP/xfail.log"
t_like "  an xdist FAILED line fails the gate of a cut-off run" \
	"$("$OPTLOOP" parse "$T_TMP/xfail.log" --killed)" '^gate: +fail'

# the final table of the captured run with its first shape printed twice,
# once with a different time: no bench from it, and the warning says why
awk '/opt-a\[35f8256\]\(ms\)/ { t = 1 } { print } t && /^ +4 +2048/ { sub(/0\.450/, "0.500"); print; t = 0 }' \
	"$fix/runpy-base-main.txt" >"$T_TMP/twice.txt"
out=$("$OPTLOOP" parse "$T_TMP/twice.txt")
t_like "a shape listed twice with different times: no result table" "$out" 'results: +no result table'
t_like "  and the warning says which shape and what to do" "$out" \
	'warning: +the result table lists fwd B=4 T=2048 H=16 D=64 chunk_linear_attn more than once with different times .*print each shape once'
t_done
