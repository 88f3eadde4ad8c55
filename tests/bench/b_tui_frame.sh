#!/usr/bin/env bash
# First complete frame with 10,000 iterations, in a real terminal (tmux),
# measured inside the program (OPTLOOP_PASS_LOG): from the moment optloop
# starts reading to the first doupdate().  Target: <= 100 ms (median of 5
# starts), for both
#   view   `optloop view OPT_LOG.md` on a 10,000-row log, and
#   tui    `optloop tui` on a workspace with 10,000 logged and committed
#          iterations (database, git history with one commit each, OPT_LOG.md),
#          counted from before the workspace is opened, so the start-up
#          reconciliation of the database, git and OPT_LOG.md is included.
# CPU is the process's user+system time up to the frame (start-up included).
set -u
tmp=${BENCH_TMP:-$(mktemp -d)}
root=${OPTLOOP_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
n=10000

# ---- the rows: one generator for the log and for the commits -----------------
gen_rows() { # prints "iter<TAB>direction<TAB>gate<TAB>bench<TAB>vs<TAB>status" rows
	python3 - "$n" <<'PY'
import random, sys
random.seed(7)
n = int(sys.argv[1])
best = 1.0
print("0\tbaseline\tpass\t1.000\t—\tbase")
for i in range(1, n):
    ms = best * random.uniform(0.97, 1.08)
    st = "keep" if ms < best else random.choice(["revert", "drop"])
    gate = random.choice(["pass"] * 8 + ["FAIL", "pass (-k)"])
    if gate == "FAIL":
        print(f"{i}\tdirection number {i} tried\tFAIL\t—\t—\trevert")
        continue
    print(f"{i}\tdirection number {i} tried\t{gate}\t{ms:.3f}\t{(best - ms) / best * 100:+.1f}%\t{st}")
    if st == "keep":
        best = ms
PY
}
gen_rows >"$tmp/rows.tsv"

log="$tmp/OPT_LOG.md"
{
	printf '# Optimization log — bench\n\nEnv: CPU | gcc 12 | main[0000000]\n'
	printf 'Baseline (main): 1.000 ms\nTarget: 2x\n\n## Summary\n\n'
	printf '| Iter | Direction (one line) | Gate | Bench (median ms) | vs best | Status |\n'
	printf '|---|---|---|---|---|---|\n'
	awk -F'\t' '{ printf "| %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6 }' "$tmp/rows.tsv"
} >"$log"

# ---- the workspace: the tiny project, one optloop commit per row (with the
# trailers optloop writes), the rows rebuilt from them by `optloop repair`,
# then a re-assessment and one real iteration on top -------------------------
ws="$tmp/ws"
(
	set -e
	"$root/tests/fixtures/make_long_workspace.sh" "$ws" "$tmp/rows.tsv"
	cd "$ws"
	sleep 1.1
	printf '# Samples: 1K of event cycles\n# Overhead  Command  Shared Object  Symbol\n    93.00%%  sh  sh  [.] compute\n' >profile/tiny-opt/trace/profile-1.txt
	"$OPTLOOP" reassess --profile trace/profile-1.txt --axes "comments" \
		--techniques "none known" --next "a real iteration" >/dev/null
	printf '# one more\n' >>kernel/compute.sh
	"$OPTLOOP" verify >/dev/null
	"$OPTLOOP" log --direction "a real last iteration" --status drop >/dev/null
	"$OPTLOOP" commit >/dev/null
)
ws_rows=$(cd "$ws" 2>/dev/null && "$OPTLOOP" status --json 2>/dev/null | sed -n 's/^  "iteration": \([0-9]*\),$/\1/p')

sock="optloop-bench-$$"
median() { printf '%s\n' "$@" | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

# measure NAME DIR SCREEN-REGEX COMMAND...: 5 starts, one line of figures
measure() {
	local name=$1 dir=$2 ready=$3
	shift 3
	local figs=() cpus=() pl f c
	for run in 1 2 3 4 5; do
		pl="$tmp/pass-$name-$run.log"
		rm -f "$pl"
		tmux -L "$sock" -f /dev/null new-session -d -x 160 -y 48 -c "$dir" \
			"env TERM=screen-256color OPTLOOP_PASS_LOG=$pl $*"
		for _ in $(seq 600); do
			tmux -L "$sock" capture-pane -p 2>/dev/null | grep -qE "$ready" && break
			sleep 0.05
		done
		tmux -L "$sock" send-keys q
		for _ in $(seq 100); do [ -s "$pl" ] && break; sleep 0.05; done
		tmux -L "$sock" kill-server 2>/dev/null
		f=$(sed -n 's/^first_frame_ms //p' "$pl" 2>/dev/null)
		[ -n "$f" ] && figs+=("$f")
		c=$(sed -n 's/^first_frame_cpu_ms //p' "$pl" 2>/dev/null)
		[ -n "$c" ] && cpus+=("$c")
	done
	if [ "${#figs[@]}" -eq 0 ]; then
		echo "bench tui_first_frame_$name: no figure (the program did not report) [target <= 100 ms] MISS"
		return
	fi
	local med cmed load verdict
	med=$(median "${figs[@]}")
	cmed=$(median "${cpus[@]}")
	load=$(cut -d' ' -f1 /proc/loadavg)
	verdict=$(awk -v m="$med" 'BEGIN { print (m <= 100) ? "PASS" : "MISS" }')
	echo "bench tui_first_frame_$name: ${med} ms median first frame over ${#figs[@]} starts, $n iterations (all: ${figs[*]}; CPU ${cmed} ms; load ${load}) [target <= 100 ms] $verdict"
}

measure view "$tmp" "Timeline · $n iterations" "$OPTLOOP" view "$log"
if [ "${ws_rows:-0}" -gt "$n" ]; then
	measure tui "$ws" "Timeline · $((n + 1)) iterations" "$OPTLOOP" tui
else
	echo "bench tui_first_frame_tui: no figure (the $n-iteration workspace could not be built) [target <= 100 ms] MISS"
fi
