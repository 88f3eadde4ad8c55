#!/usr/bin/env bash
# One device call of the full-gate and Nsight Compute recording
# (tests/fixtures/fla-gates): full-gate wall times of chunk_retention and
# chunk_linear_attn through tests/device/gate_times.sh, then a real optloop
# workspace on chunk_linear_attn whose baseline gets an Nsight Compute CSV
# of its forward attached with `optloop promote --attach`.
#
#   bash DIR/call_gates.sh N        (from the repository root; N = 1, 2, ...)
#
# DIR (SRC, default .devb) is what tests/device/bundle.sh made (bin/, lib/,
# fla/); this script may sit in it or in tests/device/.  Everything that must
# survive between calls on the still-warm machine lives under STATE (default
# /tmp/hg): the bundle copy, gate_times.sh's FLA tree, Triton caches and
# markers, the results.  Steps run in a fixed order of priority and the call
# ends at the first one that does not fit in what is left of BUDGET
# (seconds, default 575), so the next call goes on from there:
#   env      nvidia-smi, versions, ncu --version
#   init     optloop init on both ops (gate_times.sh init)
#   ret-cold chunk_retention, 16 workers, empty Triton cache  (cap <= 560 s)
#   ret-warm the same again on the cache the cold run left    (cap <= 300 s)
#   la-cold  chunk_linear_attn, 16 workers, empty cache      (cap <= 420 s)
#   la-warm  the same again                                   (cap <= 240 s)
#   ncu      contract, baseline verify (full gate, one bench shape), log
#            --commit, ncu --csv of one forward into trace/, promote --attach
#   ret-ser  chunk_retention serially on the warm cache       (cap <= 400 s)
#   la-ser   chunk_linear_attn serially on the warm cache     (cap <= 300 s)
# What is there is packed into $OUT/hg-callN.tar.gz.
set -uo pipefail
call=${1:?usage: call_gates.sh N}
root=$(pwd)
src=$root/${SRC:-.devb}
here=$(cd "$(dirname "$0")" && pwd) # gate_times.sh beside this script
t0=$(date +%s)
deadline=$((t0 + ${BUDGET:-575}))
S=${STATE:-/tmp/hg}
res=$S/res
mkdir -p "$res/item2" "$S/steps"
[ -d "$S/bundle" ] || cp -a "$src" "$S/bundle"
export PATH="$S/bundle/bin:$PATH" LD_LIBRARY_PATH="$S/bundle/lib" OPTLOOP_ASSETS="$root/assets"
export PIP_NO_INDEX=1 PYTHONUNBUFFERED=1
left() { echo $((deadline - $(date +%s))); }
say() { echo "== $(date -u +%T) call $call: $* ($(left)s left)"; }
timings=$res/timings.tsv
[ -f "$timings" ] || printf 'call\tstep\tstart_utc\tseconds\texit\n' >"$timings"
timed() { # STEP CMD...
	local name=$1 s e rc st
	shift
	st=$(date -u +%T)
	s=$(date +%s.%N)
	"$@"
	rc=$?
	e=$(date +%s.%N)
	printf '%s\t%s\t%s\t%s\t%d\n' "$call" "$name" "$st" "$(python3 -c "print(f'{$e - $s:.1f}')")" "$rc" >>"$timings"
	return $rc
}
say "start on $(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1); done: $(ls "$S/steps" | tr '\n' ' ')"

if [ ! -e "$S/steps/env" ]; then
	{
		date -u +%FT%TZ
		nvidia-smi
		nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem,power.limit,pstate --format=csv
		uname -r
		nproc
		free -g | head -2
		python3 -c 'import sys, torch, triton; print("python", sys.version.split()[0]); print("torch", torch.__version__, "cuda", torch.version.cuda); print("triton", triton.__version__); p = torch.cuda.get_device_properties(0); print(torch.cuda.get_device_name(0), p.multi_processor_count, "SMs", p.total_memory >> 20, "MiB")'
		python3 -m pytest --version
		python3 -c 'import xdist; print("pytest-xdist", xdist.__version__)'
		ncu --version
		optloop version
	} >"$res/env.txt" 2>&1
	touch "$S/steps/env"
fi

# gate STEP JOB CAPMAX MIN: one gate_times.sh job, capped at CAPMAX or what
# is left of the call; not started when the cap would be under MIN.
gate() {
	local step=$1 job=$2 capmax=$3 min=$4 cap
	cap=$(($(left) - 20))
	[ "$cap" -gt "$capmax" ] && cap=$capmax
	if [ "$cap" -lt "$min" ]; then
		say "stop before $step: a cap of ${cap}s is under its ${min}s"
		return 1
	fi
	say "$step ($job), cap ${cap}s"
	(OUT=$res/gate STATE=$S/gate BUNDLE=$S/bundle BUDGET=$((cap + 12)) CAP=$cap \
		timed "$step" bash "$here/gate_times.sh" "$job")
	touch "$S/steps/$step"
}

# ncu: the baseline of a real workspace, and a profiler reading attached to it
item2() {
	local fla=$S/gate/fla op=chunk_linear_attn ws r=$res/item2
	ws=$fla/profile/$op-opt
	if [ "$(left)" -lt 200 ]; then
		say "stop before ncu: under 200s"
		return 1
	fi
	say "ncu: contract, baseline verify, ncu, attach"
	cd "$fla" || return 1
	export TRITON_CACHE_DIR=$S/gate/cache-$op-par PYTHONPATH=$fla
	cp "$root/tests/device/fla_verify_small.py" "$ws/fla_verify_small.py"
	local shp='{"B8_T8192_H16_D64": {"B": 8, "T": 8192, "H": 16, "D": 64}}'
	timed contract optloop --op $op contract \
		--set "validation=OPTLOOP_FLA_SHAPES='$shp' python3 profile/$op-opt/fla_verify_small.py --op $op --modes fwd" \
		--set "benchmark=OPTLOOP_FLA_SHAPES='$shp' python3 profile/$op-opt/fla_verify_small.py --op $op --no-gate --modes fwd" \
		--set "target=chunk_linear_attn fwd, shape B8-T8192-H16-D64 (bf16), >= 3 % geomean speedup" \
		--set "languages=Triton kernels and the PyTorch code around their launches" \
		--set "promotion=full gate of tests/ops/test_linear_attn.py green; confirmed win beyond noise; profiler reading attached" \
		>"$r/contract.txt" 2>&1
	optloop --op $op contract --check >>"$r/contract.txt" 2>&1
	timed baseline.verify optloop --op $op verify --quiet --timeout $(($(left) - 90)) --json \
		>"$r/baseline.verify.json" 2>"$r/baseline.verify.err"
	local rc=$?
	cp "$ws/trace/iter-0.log" "$r/iter-0.log" 2>/dev/null
	if [ $rc != 0 ]; then
		say "baseline verify exit $rc: no best, nothing to attach to"
		touch "$S/steps/ncu"
		return 1
	fi
	timed baseline.log optloop --op $op log --direction "baseline: upstream kernels unchanged" --commit \
		>"$r/baseline.log.txt" 2>&1
	timed ncu timeout $(($(left) - 25)) ncu --profile-from-start off --clock-control none --csv \
		--section SpeedOfLight \
		--metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
		--log-file "$ws/trace/ncu-fwd-base.csv" \
		python3 "$root/tests/device/ncu_fwd.py" B8_T8192_H16_D64 >"$r/ncu-fwd-base.out" 2>&1
	echo "ncu exit $?" >>"$r/ncu-fwd-base.out"
	cp "$ws/trace/ncu-fwd-base.csv" "$r/" 2>/dev/null
	timed attach optloop --op $op promote --attach trace/ncu-fwd-base.csv >"$r/promote-attach.txt" 2>&1
	echo "exit $?" >>"$r/promote-attach.txt"
	optloop --op $op promote --check >"$r/promote-check.txt" 2>&1
	optloop --op $op status --json >"$r/status.json" 2>&1
	cp "$ws/OPT_LOG.md" "$ws/docs/draft.md" "$r/" 2>/dev/null
	git log --format='%h %s' -3 >"$r/git-log.txt" 2>&1
	cd "$root" || return 1
	touch "$S/steps/ncu"
}

step() { [ -e "$S/steps/$1" ]; }
go() {
	step init || { (OUT=$res/gate STATE=$S/gate BUNDLE=$S/bundle BUDGET=60 \
		timed init bash "$here/gate_times.sh" probe init) && touch "$S/steps/init"; } || return
	step ret-cold || gate ret-cold ret-par-cold 560 200 || return
	step ret-warm || gate ret-warm ret-par-warm 300 120 || return
	step la-cold || gate la-cold la-par-cold 420 200 || return
	step la-warm || gate la-warm la-par-warm 240 90 || return
	step ncu || item2 || return
	step ret-ser || gate ret-ser ret-ser 400 150 || return
	step la-ser || gate la-ser la-ser 300 90 || return
}
go
say "done; steps: $(ls "$S/steps" | tr '\n' ' ')"
cat "$res/gate/gate_times.tsv" 2>/dev/null
cat "$timings"
tar -czf "$OUT/hg-call$call.tar.gz" -C "$S" res steps
ls -la "$OUT"
