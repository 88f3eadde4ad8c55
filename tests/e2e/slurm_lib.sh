# slurm_lib.sh — a private single-node Slurm cluster for one test.
#
#   . tests/e2e/slurm_lib.sh
#   slurm_up DIR || { t_skip "..." "$SLURM_WHY"; t_done; exit 0; }
#   ... salloc/srun/squeue (SLURM_CONF is exported) ...
#   slurm_down                       (also on EXIT: slurm_up sets the trap)
#
# Everything lives under DIR: a munge key made for the test and munged on its
# own socket, a generated slurm.conf (this host as the one node, one GPU
# declared without a real device), slurmctld and slurmd in the foreground as
# background processes on free ports.  slurm_up returns 1 with SLURM_WHY set
# when the cluster cannot run here (no Slurm or munge installed, not root,
# a daemon that does not come up); every wait has a timeout.

SLURM_DIR=""
SLURM_PIDS=()
SLURM_WHY=""
SLURM_NODE=""

# A TCP port nobody listens on (from the ephemeral range's lower end).
slurm_free_port() {
	local p
	for p in $(shuf -i 20000-29999 -n 40 2>/dev/null || seq 21000 21039); do
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

# wait_for SECONDS COMMAND...: poll every 0.2 s until the command succeeds.
slurm_wait_for() {
	local secs=$1 i=0
	shift
	while [ "$i" -lt $((secs * 5)) ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
		i=$((i + 1))
	done
	return 1
}

slurm_up() {
	local d=$1 c
	for c in slurmctld slurmd munged salloc srun squeue scancel scontrol; do
		if ! command -v "$c" >/dev/null 2>&1 && ! [ -x "/usr/sbin/$c" ]; then
			SLURM_WHY="$c is not installed (Debian: slurm-wlm, munge)"
			return 1
		fi
	done
	if [ "$(id -u)" != 0 ]; then
		SLURM_WHY="slurmd must run as root to start job steps"
		return 1
	fi
	export PATH="$PATH:/usr/sbin"
	SLURM_DIR=$d
	mkdir -p "$d/munge" "$d/state" "$d/spool" "$d/log" "$d/run"
	chmod 700 "$d/munge"
	# a key of our own: never the machine's /etc/munge key
	if command -v mungekey >/dev/null 2>&1; then
		mungekey --create --keyfile="$d/munge/munge.key" --force >/dev/null 2>&1
	fi
	[ -s "$d/munge/munge.key" ] ||
		dd if=/dev/urandom of="$d/munge/munge.key" bs=1024 count=1 2>/dev/null
	chmod 400 "$d/munge/munge.key"
	munged --foreground --force --key-file="$d/munge/munge.key" \
		--socket="$d/munge/munge.sock" --pid-file="$d/munge/munged.pid" \
		--seed-file="$d/munge/seed" --log-file="$d/log/munged.log" \
		>"$d/log/munged.out" 2>&1 &
	SLURM_PIDS+=($!)
	trap 'slurm_down; rm -rf "$T_TMP"' EXIT
	if ! slurm_wait_for 10 test -S "$d/munge/munge.sock"; then
		SLURM_WHY="munged did not start: $(tail -n 3 "$d/log/munged.out" "$d/log/munged.log" 2>/dev/null | tr '\n' ' ')"
		return 1
	fi

	local ctl_port node_port cpus mem
	ctl_port=$(slurm_free_port) && node_port=$(slurm_free_port) || {
		SLURM_WHY="no free TCP port"
		return 1
	}
	[ "$ctl_port" = "$node_port" ] && node_port=$((node_port + 1))
	SLURM_NODE=$(hostname -s)
	cpus=$(nproc)
	mem=$(awk '/MemTotal/ { printf "%d", $2 / 1024 / 2 }' /proc/meminfo)
	cat >"$d/slurm.conf" <<EOF
ClusterName=optloop-test
SlurmctldHost=$SLURM_NODE
SlurmctldPort=$ctl_port
SlurmdPort=$node_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$d/munge/munge.sock
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/run/slurmctld.pid
SlurmdPidFile=$d/run/slurmd.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
SchedulerType=sched/backfill
GresTypes=gpu
InactiveLimit=0
KillWait=2
MinJobAge=5
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName=$SLURM_NODE NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem Gres=gpu:1 State=UNKNOWN
PartitionName=test Nodes=$SLURM_NODE Default=YES MaxTime=INFINITE State=UP
EOF
	# a GPU slurmd can hand out without a device behind it
	cat >"$d/gres.conf" <<EOF
AutoDetect=off
NodeName=$SLURM_NODE Name=gpu File=/dev/null
EOF
	export SLURM_CONF="$d/slurm.conf"
	slurmctld -D -f "$d/slurm.conf" >"$d/log/slurmctld.out" 2>&1 &
	SLURM_PIDS+=($!)
	slurmd -D -f "$d/slurm.conf" -N "$SLURM_NODE" >"$d/log/slurmd.out" 2>&1 &
	SLURM_PIDS+=($!)
	if ! slurm_wait_for 30 slurm_node_idle; then
		SLURM_WHY="the node did not become idle: $(tail -n 2 "$d/log/slurmctld.log" "$d/log/slurmd.log" \
			"$d/log/slurmctld.out" "$d/log/slurmd.out" 2>/dev/null | tr '\n' ' ' | cut -c1-400)"
		return 1
	fi
	return 0
}

slurm_node_idle() {
	sinfo -h -N -o '%t' 2>/dev/null | grep -qx 'idle'
}

# Cancel every job, stop the daemons (SIGTERM, then SIGKILL after 5 s).
slurm_down() {
	[ -n "$SLURM_DIR" ] || return 0
	if [ -n "${SLURM_CONF:-}" ]; then
		timeout 5 scancel --full -u "$(id -un)" >/dev/null 2>&1
	fi
	local p i
	for ((i = ${#SLURM_PIDS[@]} - 1; i >= 0; i--)); do
		kill "${SLURM_PIDS[$i]}" 2>/dev/null
	done
	for p in "${SLURM_PIDS[@]}"; do
		for i in $(seq 25); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.2
		done
		kill -9 "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	# a step daemon slurmd started outlives it: find ours by the
	# configuration in its environment, end each by its pid
	local e
	for e in /proc/[0-9]*/environ; do
		p=${e#/proc/}
		p=${p%/environ}
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = slurmstepd ] || continue
		# (it may end between the two reads)
		{ tr '\0' '\n' <"$e"; } 2>/dev/null | grep -qxF "SLURM_CONF=$SLURM_DIR/slurm.conf" || continue
		kill -9 "$p" 2>/dev/null
	done
	SLURM_PIDS=()
	SLURM_DIR=""
}
