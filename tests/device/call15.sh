#!/usr/bin/env bash
# One device call of the noise / session recording (tests/fixtures/fla-h200-noise,
# tests/fixtures/fla-h200-session2).  Run from the root of the repository copy
# on the device, with DIR (default .dev15) holding bundle/ (tests/device/bundle.sh,
# plus assets/) and these scripts:
#
#   bash DIR/call15.sh N        N = 1, 2, 3 ...
#
# Everything that must survive between calls lives under STATE (/tmp/dev15):
# the bundle copy with the optloop workspace, the FLA trees, the Triton cache,
# step markers and results.  Call 1 runs the session up to its baseline, then
# noise runs; call 2 the session's iteration and reports, FLA's --base mode,
# then noise runs; later calls noise runs only.  BUDGET (seconds, default 550)
# bounds the call; what is there is packed into $OUT/dev15-callN.tar.gz.
set -uo pipefail
call=${1:?usage: call15.sh N}
root=$(pwd)
src=$root/${DIR:-.dev15}
t0=$(date +%s)
export DEADLINE=$((t0 + ${BUDGET:-550}))
export STATE=/tmp/dev15 BUNDLE=/tmp/dev15/bundle CALL=$call
mkdir -p "$STATE/res/env" "$STATE/steps"
[ -d "$BUNDLE" ] || cp -a "$src/bundle" "$BUNDLE"
cp "$src"/*.sh "$src"/*.py "$STATE/"
export PATH="$BUNDLE/bin:$PATH" LD_LIBRARY_PATH="$BUNDLE/lib" OPTLOOP_ASSETS="$BUNDLE/assets"
export PIP_NO_INDEX=1 PYTHONUNBUFFERED=1 TRITON_CACHE_DIR=$STATE/triton-cache
echo "== call $call on $(hostname) at $(date -u +%FT%TZ); state: $(ls "$STATE/steps" | tr '\n' ' ')"

if [ ! -e "$STATE/steps/env" ]; then
	{
		nvidia-smi
		nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem,power.limit,pstate --format=csv
		uname -r
		nproc
		python3 -c 'import sys, torch, triton; print("python", sys.version.split()[0]); print("torch", torch.__version__, "cuda", torch.version.cuda); print("triton", triton.__version__); print(torch.cuda.get_device_name(0), torch.cuda.get_device_properties(0).multi_processor_count, "SMs")'
		python3 -m pip show flash-linear-attention fla-core 2>&1 | head -3
		optloop version
	} >"$STATE/res/env/env.txt" 2>&1
	touch "$STATE/steps/env"
fi

case $call in
1) SESSION_UNTIL=baseline bash "$STATE/session2.sh"
   bash "$STATE/noise.sh" ;;
2) SESSION_UNTIL=reports bash "$STATE/session2.sh"
   bash "$STATE/base_ref.sh"
   bash "$STATE/noise.sh" ;;
*) SESSION_UNTIL=reports bash "$STATE/session2.sh"
   bash "$STATE/base_ref.sh"
   bash "$STATE/noise.sh" ;;
esac

echo "== call $call done after $(($(date +%s) - t0))s; steps: $(ls "$STATE/steps" | tr '\n' ' ')"
tar -czf "$OUT/dev15-call$call.tar.gz" -C "$STATE" res steps
ls -la "$OUT"
