#!/usr/bin/env bash
# A single-node SLURM cluster on this machine, for the cluster test and for trying the slurm
# profile: installs munge and SLURM (apt, as root) when missing, writes /etc/slurm/slurm.conf for
# this host, starts munged, slurmctld and slurmd by hand (no systemd needed) with their PID files
# in the state directory, and waits until a job runs. Running it again while the daemons are up
# changes nothing. cluster/slurm-down.sh stops exactly the daemons this script started.
#
# Usage: cluster/slurm-up.sh   (state in $INGESTBENCH_SLURM_DIR, default /var/tmp/ingestbench-slurm)
set -euo pipefail

STATE=${INGESTBENCH_SLURM_DIR:-/var/tmp/ingestbench-slurm}
CONF=/etc/slurm/slurm.conf # fixed: the executor's job steps drop SLURM_CONF from the environment
MARK="# Written by ingestbench cluster/slurm-up.sh"
PACKAGES=(slurmctld slurmd slurm-client munge)

say() { echo "slurm-up: $*"; }
die() {
	echo "slurm-up: $*" >&2
	exit 1
}

[[ $(id -u) -eq 0 ]] || die "needs root (it installs packages and starts daemons); run it with sudo."

# A PID file names a live process of the expected program (not a reused PID).
running() {
	local pidfile=$1 name=$2 pid
	[[ -s $pidfile ]] || return 1
	pid=$(<"$pidfile")
	[[ -r /proc/$pid/comm ]] && [[ $(<"/proc/$pid/comm") == "$name"* ]]
}

missing=()
for pkg in "${PACKAGES[@]}"; do
	dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
	command -v apt-get >/dev/null || die "${missing[*]} missing and no apt-get here; install them with your package manager."
	say "installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

mkdir -p "$STATE"/{ctld,spool,log}
NODE=$(hostname -s)
CPUS=$(nproc)
# Leave the OS some memory: SLURM refuses a node whose RealMemory exceeds what it finds.
MEM_MB=$(awk '/^MemTotal:/ {printf "%d", $2 / 1024 * 0.9}' /proc/meminfo)

if [[ -e $CONF ]] && ! grep -qF "$MARK" "$CONF"; then
	die "$CONF exists and was not written by this script; this machine already has a SLURM setup, use it (or move that file away)."
fi
mkdir -p /etc/slurm
tmp=$(mktemp "$CONF.XXXXXX")
cat >"$tmp" <<CONF
$MARK: one node, this host.
ClusterName=ingestbench
SlurmctldHost=$NODE
SlurmUser=root
AuthType=auth/munge
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
# Finished jobs stay visible to squeue this long: the executor's status checks (squeue, no
# accounting database) need at least three times its initial wait.
MinJobAge=300
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/spool
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd.pid
SlurmctldLogFile=$STATE/log/slurmctld.log
SlurmdLogFile=$STATE/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
NodeName=$NODE CPUs=$CPUS RealMemory=$MEM_MB State=UNKNOWN
PartitionName=debug Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
CONF
chmod 644 "$tmp"
mv "$tmp" "$CONF"

# munge: keep a munged that already answers (e.g. the system's); otherwise start ours.
if running "$STATE/munge/munged.pid" munged || munge -n </dev/null >/dev/null 2>&1; then
	say "munged is running"
else
	[[ -s /etc/munge/munge.key ]] || mungekey --create --keyfile=/etc/munge/munge.key
	chown munge:munge /etc/munge/munge.key && chmod 600 /etc/munge/munge.key
	install -d -o munge -g munge -m 755 /run/munge
	install -d -o munge -g munge -m 755 "$STATE/munge" # munged runs as munge and writes here
	runuser -u munge -- munged --pid-file="$STATE/munge/munged.pid" \
		--log-file="$STATE/munge/munged.log" --seed-file="$STATE/munge/munged.seed"
	say "started munged (pid $(<"$STATE/munge/munged.pid"))"
fi

if running "$STATE/slurmctld.pid" slurmctld; then
	say "slurmctld is running"
else
	slurmctld -c # a clean slate: jobs left queued by an earlier, interrupted run would linger
	say "started slurmctld"
fi
if running "$STATE/slurmd.pid" slurmd; then
	say "slurmd is running"
else
	slurmd
	say "started slurmd"
fi

# Ready when a job runs; the daemons write their PID files a moment after they fork.
for _ in $(seq 60); do
	if running "$STATE/slurmd.pid" slurmd && timeout 20 srun --quiet -N1 -t 1 true 2>/dev/null; then
		say "ready: node $NODE, $CPUS CPUs, ${MEM_MB} MB, partition debug (logs in $STATE/log)"
		exit 0
	fi
	sleep 1
done
die "SLURM did not run a test job within a minute; see the logs in $STATE/log."
