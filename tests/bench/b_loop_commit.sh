#!/usr/bin/env bash
# Per-iteration mechanics: `optloop log` + `optloop commit` (verify excluded)
# on a generated repository of 2,000 files / 8 MB, against
# `git add -A && git commit` through the git command line on the same
# repository in the same run.  Target: median <= 30 ms and faster than git.
set -u
root=${OPTLOOP_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
tmp=$(mktemp -d "${BENCH_TMP:-/tmp}/loopbench.XXXXXX")
trap '[ -n "${BENCH_KEEP:-}" ] || rm -rf "$tmp"' EXIT
export HOME="$tmp/home" && mkdir -p "$HOME"
git config --global user.name "optloop bench" && git config --global user.email bench@optloop.invalid
git config --global init.defaultBranch main

repo="$tmp/repo"
"$root/tests/fixtures/make_tiny_project.sh" "$repo" >/dev/null
cd "$repo" || exit 1
# 2,000 files of 4 KiB (8 MB) in 40 directories around the kernel
python3 - <<'PY'
import os, random
random.seed(7)
for d in range(40):
    os.makedirs(f"src/m{d:02d}", exist_ok=True)
    for f in range(50):
        with open(f"src/m{d:02d}/f{f:02d}.py", "w") as fh:
            fh.write("".join(random.choice("abcdefghij \n") for _ in range(4096)))
PY
git add -A && git commit -q -m "2000 files"
echo "bench: $(git ls-files | wc -l) files, $(du -sk --exclude=.git . | cut -f1) KiB" >&2
"$OPTLOOP" init --op tiny --kernel kernel --test-file tests/test_compute.sh --naive ref/naive.sh \
	--verify ./verify --target 2x --languages sh --promotion "full gate" >/dev/null

TIMEFORMAT='%3U %3S'
cpu_ms() { awk '{ printf "%.1f", ($1 + $2) * 1000 }' "$1"; }
ms() { echo $(( ($2 - $1) / 1000000 )).$(( ($2 - $1) / 10000 % 100 )); }
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

ours=() ours_cpu=() theirs_cpu=()
for i in 0 1 2 3; do
	[ "$i" = 0 ] || echo "# change $i" >>kernel/compute.sh
	"$OPTLOOP" verify >/dev/null 2>&1
	[ "$i" = 0 ] && st="" || st="--status keep"
	a=$(date +%s%N)
	{ time { "$OPTLOOP" log --direction "change $i" $st >/dev/null &&
		"$OPTLOOP" commit >/dev/null; }; } 2>"$tmp/cpu" ||
		{ echo "bench loop_commit: log or commit failed MISS"; exit 1; }
	b=$(date +%s%N)
	ours+=("$(ms "$a" "$b")")
	ours_cpu+=("$(cpu_ms "$tmp/cpu")")
done
theirs=()
for i in 1 2 3 4 5; do
	echo "# git change $i" >>kernel/compute.sh
	a=$(date +%s%N)
	{ time { git add -A && git commit -q -m "git change $i"; }; } 2>"$tmp/cpu"
	b=$(date +%s%N)
	theirs+=("$(ms "$a" "$b")")
	theirs_cpu+=("$(cpu_ms "$tmp/cpu")")
done
o=$(printf '%s\n' "${ours[@]}" | median)
g=$(printf '%s\n' "${theirs[@]}" | median)
ratio=$(awk -v o="$o" -v g="$g" 'BEGIN { printf "%.2f", o / g }')
verdict=$(awk -v o="$o" -v g="$g" 'BEGIN { print (o <= 30 && o < g) ? "PASS" : "MISS" }')
oc=$(printf '%s\n' "${ours_cpu[@]}" | median)
gc=$(printf '%s\n' "${theirs_cpu[@]}" | median)
echo "bench loop_commit_cpu: log+commit CPU (user+sys) median $oc ms; git CPU median $gc ms; load average $(cut -d' ' -f1 /proc/loadavg) (figures only)" >&2
echo "bench loop_commit: log+commit median $o ms (runs: ${ours[*]}); git add -A && git commit median $g ms (runs: ${theirs[*]}); ratio $ratio [target <= 30 ms and < git] $verdict"
