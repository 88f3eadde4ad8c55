#!/usr/bin/env bash
# The workbench while the verify child prints at full speed: 1 GiB of output
# (by default; BENCH_LIVE_BYTES changes it) before the real gate and bench.
# Measured inside the program (OPTLOOP_PASS_LOG): each event-loop pass (draw,
# keys, pumping the child's output) at p99, and peak RSS at the end.
# Targets: p99 <= 20 ms, peak RSS <= 64 MB.
set -u
tmp=${BENCH_TMP:-$(mktemp -d)}
root=${OPTLOOP_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
mk="$root/tests/fixtures/make_tiny_project.sh"
if [ ! -x "$mk" ]; then
	echo "bench tui_live: no tiny project fixture in this tree [target p99 <= 20 ms] MISS"
	exit 0
fi
bytes=${BENCH_LIVE_BYTES:-1073741824}
d="$tmp/live"
"$mk" "$d" >/dev/null
cd "$d" || exit 1
cat >verify-flood <<EOF2
#!/bin/sh
yes 'tests/ops/test_case.py::test_chunk[B1-T4096-H16-D128] PASSED                  [ 50%]' | head -c $bytes
exec ./verify "\$@"
EOF2
chmod +x verify-flood
git add verify-flood && git commit -qm flood
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@optloop.invalid
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@optloop.invalid
"$OPTLOOP" init --op tiny --kernel kernel --test-file tests/test_compute.sh --naive ref/naive.sh \
	--verify ./verify-flood >/dev/null 2>&1
"$OPTLOOP" contract --set "target=2x" --set languages=sh --set "promotion=full gate" >/dev/null 2>&1
sock="optloop-bench-live-$$"
pl="$tmp/live-pass.log"
rm -f "$pl"
start=$(date +%s.%N)
tmux -L "$sock" -f /dev/null new-session -d -x 160 -y 48 \
	"cd $d && env TERM=screen-256color OPTLOOP_PASS_LOG=$pl $OPTLOOP tui"
for _ in $(seq 100); do
	tmux -L "$sock" capture-pane -p 2>/dev/null | grep -q 'NEED_BASELINE' && break
	sleep 0.1
done
tmux -L "$sock" send-keys v
# Keys keep arriving while the child floods: the loop must stay responsive.
for _ in $(seq 6000); do
	tmux -L "$sock" capture-pane -p 2>/dev/null | grep -q 'finished ' && break
	tmux -L "$sock" send-keys j
	sleep 0.2
done
end=$(date +%s.%N)
tmux -L "$sock" send-keys q
for _ in $(seq 100); do [ -s "$pl" ] && break; sleep 0.1; done
tmux -L "$sock" kill-server 2>/dev/null
line=$(grep '^passes' "$pl" 2>/dev/null)
if [ -z "$line" ]; then
	echo "bench tui_live: no figure (the program did not report) [target p99 <= 20 ms] MISS"
	exit 0
fi
p99=$(awk '{print $6}' <<<"$line")
mx=$(awk '{print $8}' <<<"$line")
n=$(awk '{print $2}' <<<"$line")
rss=$(awk '{print $10}' <<<"$line")
rss_mb=$(awk -v k="$rss" 'BEGIN { printf "%.1f", k / 1024 }')
secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
mib=$(awk -v b="$bytes" 'BEGIN { printf "%.0f", b / 1048576 }')
load=$(cut -d' ' -f1 /proc/loadavg)
v1=$(awk -v p="$p99" 'BEGIN { print (p <= 20) ? "PASS" : "MISS" }')
v2=$(awk -v r="$rss_mb" 'BEGIN { print (r <= 64) ? "PASS" : "MISS" }')
echo "bench tui_live_pass: p99 ${p99} ms, max ${mx} ms over ${n} passes while the child printed ${mib} MiB in ${secs}s (load ${load}) [target p99 <= 20 ms] $v1"
echo "bench tui_live_rss: peak RSS ${rss_mb} MB after ${mib} MiB of output [target <= 64 MB] $v2"
