# idle_cpu.sh — sourced by the b_*.sh benchmarks (not one itself).
#
# idle_cpu NAME PID SECONDS: the CPU (user + system, from /proc/PID/stat)
# the process spends in SECONDS with nobody touching it, as a share of one
# core, printed as the bench line NAME against the target of 0.5 %.
idle_cpu() {
	local name=$1 pid=$2 secs=$3 hz t0 t1
	hz=$(getconf CLK_TCK)
	t0=$(awk '{print $14 + $15}' "/proc/$pid/stat")
	sleep "$secs"
	t1=$(awk '{print $14 + $15}' "/proc/$pid/stat")
	awk -v n="$name" -v ticks=$((t1 - t0)) -v hz="$hz" -v s="$secs" 'BEGIN {
		pct = 100 * ticks / hz / s
		printf "bench %s: %d clock ticks in %d s, %.3f %% of one core [target <= 0.5 %%] %s\n",
			n, ticks, s, pct, pct <= 0.5 ? "PASS" : "MISS"
	}'
}
