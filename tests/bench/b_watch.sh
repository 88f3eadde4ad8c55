#!/usr/bin/env bash
# optloop watch, the feed agents and dashboards read:
#
#   event latency  from `optloop log --commit` returning in the driver to
#                  the watcher's commit event for that row (its "t", taken
#                  when the watcher saw the change), over 50 rows; target
#                  p99 <= 50 ms
#   idle CPU       a watcher on a workspace nobody touches, over 60 s
#                  (WATCH_IDLE_S), from /proc/<pid>/stat; target <= 0.5 % of
#                  one core
set -u
. "$(dirname "$0")/idle_cpu.sh"
root=${OPTLOOP_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
rows=${WATCH_ROWS:-50}
idle=${WATCH_IDLE_S:-60}
tmp=$(mktemp -d "${BENCH_TMP:-/tmp}/watchbench.XXXXXX")
trap 'kill $wpid 2>/dev/null; [ -n "${BENCH_KEEP:-}" ] || rm -rf "$tmp"' EXIT
repo="$tmp/repo"
"$root/tests/fixtures/make_tiny_project.sh" "$repo" >/dev/null
cd "$repo" || exit 1
"$OPTLOOP" init --op tiny --kernel kernel --test-file tests/test_compute.sh --naive ref/naive.sh \
	--verify ./verify --target "2x" --languages sh --promotion "full gate" >/dev/null
"$OPTLOOP" verify >/dev/null && "$OPTLOOP" log --direction baseline --commit >/dev/null

"$OPTLOOP" watch --json >"$tmp/events.jsonl" 2>&1 &
wpid=$!
sleep 0.5
: >"$tmp/returned"
for i in $(seq "$rows"); do
	echo "# row $i" >>kernel/compute.sh
	"$OPTLOOP" verify >/dev/null 2>&1
	"$OPTLOOP" log --direction "row $i" --status drop --commit >/dev/null 2>&1
	echo "$i $(date +%s.%N)" >>"$tmp/returned"
	if [ "$("$OPTLOOP" status --json | sed -n 's/^  "state": "\(.*\)",$/\1/p')" = stalled ]; then
		sleep 1.1
		printf '# Samples: 1K of event cycles\n# Overhead  Command  Shared Object  Symbol\n    93.00%%  sh  sh  [.] compute\n' >profile/tiny-opt/trace/profile-$i.txt
		"$OPTLOOP" reassess --profile "trace/profile-$i.txt" --axes comments \
			--techniques none --next "row $((i + 1))" >/dev/null
	fi
done
sleep 0.5
python3 - "$tmp/events.jsonl" "$tmp/returned" <<'PY'
import json, sys
commits = {}
for line in open(sys.argv[1]):
    try:
        o = json.loads(line)
    except ValueError:
        continue
    if o.get("event") == "commit":
        commits[o["iteration"]] = o["t"]
lat = []
for line in open(sys.argv[2]):
    i, t = line.split()
    it = int(i)  # row i is iteration i (iteration 0 is the baseline)
    if it in commits:
        lat.append(max(0.0, commits[it] - float(t)) * 1000)
lat.sort()
n = len(lat)
if n == 0:
    print("bench watch_latency: no commit events seen MISS")
    sys.exit(0)
p = lambda q: lat[min(n - 1, int(q * n))]
ok = n == int(sum(1 for _ in open(sys.argv[2]))) and p(0.99) <= 50
print(f"bench watch_latency: {n} commits, p50 {p(0.5):.1f} ms, p99 {p(0.99):.1f} ms "
      f"[target p99 <= 50 ms, every commit seen] {'PASS' if ok else 'MISS'}")
PY
# idle: nobody touches the workspace
idle_cpu watch_idle "$wpid" "$idle"
