#!/usr/bin/env bash
# Stop the single-node SLURM that cluster/slurm-up.sh started: exactly the daemons named by its PID
# files (slurmd, slurmctld, then munged if it started one), never by name. Safe to run twice.
set -euo pipefail

STATE=${INGESTBENCH_SLURM_DIR:-/var/tmp/ingestbench-slurm}

stop() {
	local name=$1 pidfile=$2 pid
	[[ -s $pidfile ]] || return 0
	pid=$(<"$pidfile")
	if [[ -r /proc/$pid/comm ]] && [[ $(<"/proc/$pid/comm") == "$name"* ]]; then
		kill -TERM "$pid"
		for _ in $(seq 100); do
			[[ -e /proc/$pid ]] || break
			sleep 0.1
		done
		if [[ -e /proc/$pid ]]; then
			echo "slurm-down: $name (pid $pid) ignored SIGTERM for 10 s; killing it" >&2
			kill -KILL "$pid" 2>/dev/null || true
		fi
		echo "slurm-down: stopped $name (pid $pid)"
	fi
	rm -f "$pidfile"
}

[[ -d $STATE ]] || exit 0
stop slurmd "$STATE/slurmd.pid"
stop slurmctld "$STATE/slurmctld.pid"
stop munged "$STATE/munge/munged.pid"
