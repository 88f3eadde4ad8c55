#!/usr/bin/env bash
# One device call of issue 41's recording: the in-process A/A and A/B dataset
# (ab.sh), Nsight Compute on the baseline's and the candidate's forward
# (ncu_fwd.py), then full-gate times of chunk_retention (gate_times.sh).
# Run from the root of the repository copy on the device, with DIR holding
# bundle/ (tests/device/bundle.sh), assets/ and tests/device/ (these scripts):
#
#   BUDGET=SECONDS bash DIR/tests/device/call41.sh N        N = 1, 2, 3 ...
#
# Resumable: everything that must survive between calls on the still-warm
# machine lives under STATE (default /tmp/s41): the bundle copy, the FLA
# trees, the Triton caches, step markers and results.  Each step starts only
# when its minimum is left of BUDGET (seconds, default 560); what is there is
# packed into $OUT/s41-callN.tar.gz.  Steps, in order: env (nvidia-smi, the
# versions, and whether ncu reads a counter), ab (AB_MAX entries, default
# 24: six processes for each of A/A and A/B at each shape), ncu, gate
# (chunk_retention on 16 workers, cold then warm, each capped at what is
# left of the call).
set -uo pipefail
call=${1:?usage: call41.sh N}
here=$(cd "$(dirname "$0")/../.." && pwd)
t0=$(date +%s)
deadline=$((t0 + ${BUDGET:-560}))
export STATE=${STATE:-/tmp/s41}
export BUNDLE=$STATE/bundle CALL=$call
mkdir -p "$STATE/res/env" "$STATE/res/ncu" "$STATE/steps"
[ -d "$BUNDLE" ] || cp -a "$here/bundle" "$BUNDLE"
export PATH="$BUNDLE/bin:$PATH" LD_LIBRARY_PATH="$BUNDLE/lib" OPTLOOP_ASSETS="$here/assets"
export PIP_NO_INDEX=1 PYTHONUNBUFFERED=1 TRITON_CACHE_DIR=$STATE/triton-cache
left() { echo $((deadline - $(date +%s))); }
echo "== call $call at $(date -u +%FT%TZ), $(left)s; done: $(ls "$STATE/steps" | tr '\n' ' ')"
env_dir=$STATE/res/env

if [ ! -e "$STATE/steps/env" ]; then
	{
		nvidia-smi
		nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem,power.limit,pstate --format=csv
		uname -r
		nproc
		python3 -c 'import sys, torch, triton; print("python", sys.version.split()[0]); print("torch", torch.__version__, "cuda", torch.version.cuda); print("triton", triton.__version__); p = torch.cuda.get_device_properties(0); print(torch.cuda.get_device_name(0), p.multi_processor_count, "SMs", p.total_memory >> 20, "MiB")'
		ncu --version
		optloop version
	} >"$env_dir/env.txt" 2>&1
	nvidia-smi -q >"$env_dir/nvidia-smi-q.txt" 2>&1
	# can ncu read a hardware counter here?
	timeout 120 ncu --csv --clock-control none -c 2 \
		--metrics gpu__time_duration.sum,sm__cycles_elapsed.avg,dram__bytes_read.sum \
		python3 -c 'import torch; x = torch.ones(1 << 24, device="cuda"); print((x * 2).sum().item())' \
		>"$env_dir/ncu-probe.csv" 2>&1
	echo "$?" >"$env_dir/ncu-probe.rc"
	touch "$STATE/steps/env"
fi
cat "$env_dir/env.txt"; head -20 "$env_dir/nvidia-smi-q.txt"
echo "== ncu probe exit $(cat "$env_dir/ncu-probe.rc")"; tail -6 "$env_dir/ncu-probe.csv"

if [ ! -e "$STATE/steps/ab" ]; then
	AB_MAX=${AB_MAX:-24} DEADLINE=$deadline bash "$here/tests/device/ab.sh"
	[ "$(cat "$STATE/res/ab/next" 2>/dev/null)" -ge "${AB_MAX:-24}" ] 2>/dev/null && touch "$STATE/steps/ab"
fi
[ -f "$STATE/res/ab/runs.tsv" ] && python3 "$here/tests/device/ab_summary.py" "$STATE/res/ab/runs.tsv"

# Nsight Compute: one forward per shape, the baseline (upstream) and the
# candidate (the normalize change, fla-pair's HEAD), at the GPU's own clocks.
if [ -e "$STATE/steps/ab" ] && [ ! -e "$STATE/steps/ncu" ] && [ "$(cat "$env_dir/ncu-probe.rc")" = 0 ] &&
	[ "$(left)" -ge "${NCU_MIN:-150}" ]; then
	echo "== ncu ($(left)s left)"
	for side in base:"$BUNDLE/fla" candidate:"$STATE/fla-pair"; do
		name=${side%%:*} tree=${side#*:}
		(cd "$tree" && PYTHONPATH=$tree timeout 150 ncu --profile-from-start off --clock-control none --csv \
			--section SpeedOfLight \
			--metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
			--log-file "$STATE/res/ncu/ncu-fwd-$name.csv" \
			python3 "$here/tests/device/ncu_fwd.py" B4_T2048_H16_D64 B8_T8192_H16_D64) \
			>"$STATE/res/ncu/ncu-fwd-$name.out" 2>&1
		echo "$name exit $?, $(grep -c '"gpu__time_duration.sum"' "$STATE/res/ncu/ncu-fwd-$name.csv" 2>/dev/null) kernels" |
			tee -a "$STATE/res/ncu/ncu-fwd.rc"
	done
	git -C "$STATE/fla-pair" log --format='%h %s' -2 >"$STATE/res/ncu/trees.txt"
	touch "$STATE/steps/ncu"
fi

# Full-gate times: chunk_retention on 16 workers, cold, then warm.
if [ -e "$STATE/steps/ab" ] && [ "$(left)" -ge "${GATE_MIN:-240}" ]; then
	b=$(left) s=$STATE
	(cd "$here" && OUT=$s/res/gate STATE=$s/gate BUDGET=$b CAP=$((b - 40)) \
		bash "$here/tests/device/gate_times.sh" probe ret-par)
fi

echo "== call $call done after $(($(date +%s) - t0))s; steps: $(ls "$STATE/steps" | tr '\n' ' ')"
tar -czf "$OUT/s41-call$call.tar.gz" -C "$STATE" res steps
ls -la "$OUT"
