#!/usr/bin/env bash
# A person watches while an agent drives: a workbench in a real terminal
# (tmux) on a workspace whose rows another process logs through the CLI.
#
#   screen latency  from `optloop log --commit` returning in the driver to
#                   the row being on the workbench's screen (the screen
#                   polled every 5 ms), over 50 rows; targets p50 <= 50 ms,
#                   p99 <= 250 ms
#   idle CPU        the workbench with nobody touching the workspace, over
#                   60 s (TUI_IDLE_S) from /proc/<pid>/stat; target <= 0.5 %
#                   of one core
set -u
. "$(dirname "$0")/idle_cpu.sh"
root=${OPTLOOP_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
rows=${TUI_ROWS:-50}
idle=${TUI_IDLE_S:-60}
tmp=$(mktemp -d "${BENCH_TMP:-/tmp}/tuiclients.XXXXXX")
sock="optloop-bench-$$"
trap 'tmux -L "$sock" kill-server 2>/dev/null; [ -n "${BENCH_KEEP:-}" ] || rm -rf "$tmp"' EXIT
if ! command -v tmux >/dev/null 2>&1; then
	echo "bench tui_clients: tmux is not installed MISS"
	exit 0
fi
repo="$tmp/repo"
"$root/tests/fixtures/make_tiny_project.sh" "$repo" >/dev/null
cd "$repo" || exit 1
"$OPTLOOP" init --op tiny --kernel kernel --test-file tests/test_compute.sh --naive ref/naive.sh \
	--verify ./verify --target "2x" --languages sh --promotion "full gate" >/dev/null
"$OPTLOOP" verify >/dev/null && "$OPTLOOP" log --direction baseline --commit >/dev/null
tmux -L "$sock" -f /dev/null new-session -d -x 140 -y 60 \
	"env TERM=screen-256color LANG=C.UTF-8 $OPTLOOP tui; sleep 600"
for _ in $(seq 100); do
	tmux -L "$sock" capture-pane -p | grep -q 'iter 1' && break
	sleep 0.05
done
# the driver, and a poller that stamps when each row reaches the screen
python3 - "$OPTLOOP" "$sock" "$rows" "$tmp" <<'PY'
import os, subprocess, sys, time
optloop, sock, rows, tmp = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
def screen():
    return subprocess.run(["tmux", "-L", sock, "capture-pane", "-p"], capture_output=True,
                          text=True).stdout
def run(*a):
    subprocess.run([optloop, *a], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
lat = []
for i in range(1, rows + 1):
    with open("kernel/compute.sh", "a") as f:
        f.write(f"# row {i}\n")
    run("verify")
    tag = f"bench row {i:03d}"
    run("log", "--direction", tag, "--status", "drop", "--commit")
    t0 = time.monotonic()
    while tag not in screen():
        if time.monotonic() - t0 > 5:
            break
        time.sleep(0.005)
    lat.append((time.monotonic() - t0) * 1000)
    st = subprocess.run([optloop, "status", "--json"], capture_output=True, text=True).stdout
    if '"state": "stalled"' in st:
        time.sleep(1.1)
        p = f"profile/tiny-opt/trace/profile-{i}.txt"
        open(p, "w").write("# Samples: 1K of event cycles\n# Overhead  Command  Shared Object  Symbol\n    93.00%  sh  sh  [.] compute\n")
        run("reassess", "--profile", p.split("tiny-opt/")[1], "--axes", "comments",
            "--techniques", "none", "--next", f"row {i + 1}")
lat.sort()
n = len(lat)
p50, p99 = lat[n // 2], lat[min(n - 1, int(0.99 * n))]
ok = p50 <= 50 and p99 <= 250 and lat[-1] < 5000
print(f"bench tui_clients_latency: {n} rows, p50 {p50:.1f} ms, p99 {p99:.1f} ms "
      f"[target p50 <= 50 ms, p99 <= 250 ms] {'PASS' if ok else 'MISS'}")
PY
pid=$(pgrep -f "$OPTLOOP tui" | head -1)
if [ -z "$pid" ]; then
	echo "bench tui_clients_idle: the workbench is not running MISS"
	exit 0
fi
sleep 1
idle_cpu tui_clients_idle "$pid" "$idle"
