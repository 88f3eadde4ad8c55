#!/usr/bin/env bash
# What a run through Slurm costs on top of the same run here, in one run of
# the benchmark: two demo workspaces, one with Runner: local and one with
# Runner: slurm on a private single-node cluster (tests/e2e/slurm_lib.sh),
# each timing `optloop noise --runs 5` (the demo's verify --no-gate, with
# the GPU probe before and after every run), sessions interleaved.
#   slurm_run_overhead  (median slurm session - median local session) / 5
#                       [target <= 150 ms per run]
#   slurm_allocations   salloc calls for all the Slurm sessions [target 1]
# Skipped (no target checked) where the cluster cannot run.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
T_TMP="${BENCH_TMP:-$(mktemp -d)}/slurm"
mkdir -p "$T_TMP"
. "$root/tests/e2e/slurm_lib.sh"
export GIT_AUTHOR_NAME="optloop bench" GIT_AUTHOR_EMAIL="bench@optloop.invalid"
export GIT_COMMITTER_NAME="$GIT_AUTHOR_NAME" GIT_COMMITTER_EMAIL="$GIT_AUTHOR_EMAIL"
export DEMO_BENCH_WARMUP_MS=1 DEMO_BENCH_REP_MS=1

if ! slurm_up "$T_TMP/cluster"; then
	echo "bench slurm_run_overhead: skipped: $SLURM_WHY"
	exit 0
fi
trap 'for f in "$T_TMP"/s/profile/*/slurm-*.idle; do [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null; done; slurm_down' EXIT

setup() { # setup DIR RUNNER: a demo workspace with its baseline logged
	"$OPTLOOP" demo "$1" >/dev/null || return 1
	(cd "$1" && "$OPTLOOP" contract --set "runner=$2" >/dev/null &&
		"$OPTLOOP" verify >/dev/null 2>&1 &&
		"$OPTLOOP" log --direction baseline --commit >/dev/null)
}
setup "$T_TMP/l" local || { echo "bench slurm_run_overhead: setup failed MISS"; exit 0; }
setup "$T_TMP/s" "slurm --partition=test --gres=gpu:1 --time=30" ||
	{ echo "bench slurm_run_overhead: setup through Slurm failed MISS"; exit 0; }

runs=5
session() { # session DIR: seconds for one noise session
	local t0 t1
	t0=$(date +%s.%N)
	(cd "$1" && "$OPTLOOP" noise --runs "$runs" >/dev/null 2>&1) || echo "noise failed in $1" >&2
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", b - a }'
}
: >"$T_TMP/l.t"
: >"$T_TMP/s.t"
for i in 1 2 3 4 5; do
	session "$T_TMP/l" >>"$T_TMP/l.t"
	session "$T_TMP/s" >>"$T_TMP/s.t"
done
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ml=$(median "$T_TMP/l.t")
ms=$(median "$T_TMP/s.t")
per=$(awk -v l="$ml" -v s="$ms" -v n="$runs" 'BEGIN { printf "%.0f", (s - l) / n * 1000 }')
load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null)
ok=$(awk -v p="$per" 'BEGIN { print (p <= 150) ? "PASS" : "MISS" }')
echo "bench slurm_run_overhead: ${per} ms extra per run through srun in a held allocation (a session of $runs demo runs: median ${ml} s here, ${ms} s through Slurm, 5 sessions each, interleaved; load ${load}) [target <= 150 ms] $ok"
db=$T_TMP/s/profile/chunk_linear_attn-opt/optloop.db
nalloc=$(sqlite3 "$db" "SELECT count(*) FROM slurm_allocs")
nruns=$(sqlite3 "$db" "SELECT count(*) FROM slurm_steps")
njobs=$(sqlite3 "$db" "SELECT count(DISTINCT job) FROM slurm_steps")
ok=$([ "$nalloc" = 1 ] && [ "$njobs" = 1 ] && echo PASS || echo MISS)
echo "bench slurm_allocations: $nalloc salloc request(s), $njobs job(s) for $nruns runs in $((5 + 1)) optloop processes [target 1] $ok"
