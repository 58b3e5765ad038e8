#!/usr/bin/env bash
# A single-node Slurm cluster on localhost, for testing `ispsim sweep --slurm`
# (Debian's slurm-wlm and munge; tools/setup.sh installs them). Everything
# lives in one folder: its own munge key and socket, slurm.conf, state, logs;
# nothing under /etc is touched and no system service is started.
#
#   local_cluster.sh start DIR   start munged, slurmctld and slurmd; wait until the
#                                node is idle; print "export SLURM_CONF=DIR/slurm.conf"
#   local_cluster.sh stop DIR    stop the three daemons (by their pid files)
#
# Commands reach the cluster through SLURM_CONF. If the cluster does not come up
# within 60 s, start prints one line saying why and exits 1.
set -euo pipefail

action="${1:-}"
dir="${2:-}"
[ -n "$action" ] && [ -n "$dir" ] || { echo "usage: local_cluster.sh start|stop DIR" >&2; exit 2; }

stop_daemon() {  # pid file
  [ -f "$1" ] || return 0
  local pid
  pid="$(cat "$1")"
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$1"
}

if [ "$action" = stop ]; then
  stop_daemon "$dir/slurmd.pid"
  stop_daemon "$dir/slurmctld.pid"
  stop_daemon "$dir/munged.pid"
  exit 0
fi
[ "$action" = start ] || { echo "local_cluster.sh: unknown action '$action' (start or stop)" >&2; exit 2; }

fail() { echo "local_cluster.sh: the Slurm cluster did not start: $*" >&2; exit 1; }
for tool in munged slurmctld slurmd sbatch sinfo; do
  command -v "$tool" >/dev/null || fail "$tool is not installed (bash tools/setup.sh installs slurm-wlm and munge)"
done

mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
chmod 700 "$dir"
mkdir -p "$dir/munge" "$dir/state" "$dir/spool"
chmod 700 "$dir/munge"
user="$(id -un)"
host="$(hostname -s)"
cpus="$(nproc)"
# Ports from the folder's name, so two clusters in different folders do not collide.
base=$(( 20000 + $(printf '%s' "$dir" | cksum | cut -d' ' -f1) % 20000 ))

[ -f "$dir/munge/munge.key" ] || { head -c 1024 /dev/urandom >"$dir/munge/munge.key"; chmod 400 "$dir/munge/munge.key"; }
munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
  --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munge/munge.seed" \
  || fail "munged failed: $(tail -n 1 "$dir/munged.log" 2>/dev/null)"

cat >"$dir/slurm.conf" <<CONF
ClusterName=ispsimlocal
SlurmctldHost=$host(127.0.0.1)
SlurmUser=$user
SlurmdUser=root
SlurmctldPort=$base
SlurmdPort=$((base + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=300
NodeName=ispsimnode NodeHostname=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=local Nodes=ispsimnode Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$dir/slurm.conf"

slurmctld -i || fail "slurmctld failed: $(tail -n 1 "$dir/slurmctld.log" 2>/dev/null)"
slurmd -N ispsimnode || fail "slurmd failed: $(tail -n 1 "$dir/slurmd.log" 2>/dev/null)"

for _ in $(seq 120); do
  state="$(sinfo -h -n ispsimnode -o %T 2>/dev/null || true)"
  case "$state" in
    idle|idle*) echo "export SLURM_CONF=$dir/slurm.conf"; exit 0 ;;
  esac
  sleep 0.5
done
fail "node state '${state:-none}' after 60 s; slurmctld: $(tail -n 1 "$dir/slurmctld.log" 2>/dev/null); slurmd: $(tail -n 1 "$dir/slurmd.log" 2>/dev/null)"
