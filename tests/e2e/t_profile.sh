#!/usr/bin/env bash
# Profiler evidence through optloop: verify --profile passes the harness's
# own --profile on, and the trace the harness writes into the workspace
# during that run (FLA's verify writes <op>_trace.json there) is attached
# as the iteration's profiler evidence; a trace left by an earlier run is
# not.  promote --attach reads a torch.profiler trace (Chrome JSON) too.
. "$(dirname "$0")/lib.sh"
mk="$OPTLOOP_ROOT/tests/fixtures/make_tiny_project.sh"
d="$T_TMP/tiny"
"$mk" "$d" >/dev/null
cd "$d" || exit 1
ws=profile/tiny-opt
# a harness that, given --profile, writes a trace as torch.profiler's
# export_chrome_trace does, after the bench
cat >verify-prof <<'EOF'
#!/bin/sh
prof=0
for a in "$@"; do [ "$a" = --profile ] && prof=1; done
./verify "$@"
rc=$?
if [ $prof = 1 ] && [ $rc = 0 ]; then
	printf '{"schemaVersion": 1, "deviceProperties": [{"name": "tiny"}], "traceEvents": [{"ph": "X", "cat": "kernel", "name": "compute", "dur": 12}]}\n' \
		>profile/tiny-opt/tiny_trace.json
	echo "  Chrome trace: profile/tiny-opt/tiny_trace.json"
fi
exit $rc
EOF
chmod +x verify-prof
git add verify-prof && git commit -qm "a harness with a profiler"
"$OPTLOOP" init --op tiny --kernel kernel --test-file tests/test_compute.sh --naive ref/naive.sh \
	--verify ./verify-prof --target 2x --languages sh --promotion "full gate" >/dev/null
"$OPTLOOP" verify >/dev/null 2>&1 && "$OPTLOOP" log --direction baseline --commit >/dev/null

sed -i 's/\$(( \$1 \* 2 ))/$(( $1 << 1 ))/' kernel/compute.sh
out=$("$OPTLOOP" verify --profile 2>&1); rc=$?
t_is "verify --profile runs (exit 0)" "$rc" 0
t_like "  the harness got --profile" "$out" 'optloop: running ./verify-prof --profile'
t_like "  the trace it wrote is attached" "$out" \
	"profile: .*$ws/tiny_trace.json attached as iteration 1's profiler evidence"
arts() { "$OPTLOOP" export --json | python3 -c 'import json,sys; print(" ".join(a["path"] for a in json.load(sys.stdin)["tables"]["stats_artifacts"] if a["iter"] == int(sys.argv[1])))' "$1"; }
t_like "  recorded as iteration 1's artifact" "$(arts 1)" 'tiny_trace.json'

# a trace left by an earlier run is no reading of this kernel
"$OPTLOOP" log --direction shift --status drop --commit >/dev/null
printf '# again\n' >>kernel/compute.sh
touch -d '2000-01-01' $ws/tiny_trace.json
"$OPTLOOP" contract --set "validation=./verify" >/dev/null
out=$("$OPTLOOP" verify --profile 2>&1 --json)
t_like "  --json names no trace" "$out" '"profile_trace": null'
t_like "a run that wrote no trace: the old one is not attached" "$out" \
	'tiny_trace.json was not written during iteration 2.s verify \(an earlier run.s trace\): not attached'
t_is "  nor recorded" "$(arts 2)" ""

# promote --attach reads a torch.profiler trace
printf '{"traceEvents": [{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel"}], "deviceProperties": []}\n' \
	>$ws/trace/manual_trace.json
out=$("$OPTLOOP" promote --attach $ws/trace/manual_trace.json 2>&1); rc=$?
t_is "promote --attach takes a torch.profiler trace (exit 0)" "$rc" 0
t_like "  naming its kind" "$out" 'torch.profiler trace'
printf '{"traceEvents": []}\n' >$ws/trace/empty.json
t_exit "  an unrelated JSON file is refused (exit 2)" 2 "$OPTLOOP" promote --attach $ws/trace/empty.json
t_done
