#!/usr/bin/env bash
# gdsb-cluster under a real Slurm: starts a one-node Slurm (munged, slurmctld, slurmd) as
# root without systemd, with its own key, slurm.conf, state and spool in a temporary
# directory, and stops the daemons by their PIDs at exit, even on failure. Then:
#   1. srun --mpi=pmix -n 8: eight tasks as eight nodes, each reading one node of the fleet
#      built from the real HGX recording (tests/cluster/make_fleet.py); the report must name
#      exactly the four faulty nodes (tests/cluster/check_fleet.py);
#   1b. srun -n 4 --scale auto --model-bytes: the shared-storage phase, each task reading a
#      recording of its own (four nodes), its figures recomputed from the node reports
#      (tests/cluster/check_storage.py);
#   1c. srun -n 4 on this one node, 1 MB points: one node of 4 ranks, no [clock] finding;
#   1d. srun -n 4 on a file system without user xattrs (an LD_PRELOAD), both layouts;
#   2. sbatch --wait of the packaged batch template (slurm/gdsb-cluster.sbatch) on two of
#      them: the job's exit code must be gdsb-cluster's (3: the x8 node among them);
#   3. gdsb-topo --health --expect good.json --slurm-drain on a faulty recording: the node
#      must show DRAIN with the gdsb reason (saved to $OUT/drain.txt), then it is resumed;
#   3b. the same check with its collecting child frozen (D state): ends within --timeout + 1 s,
#      drained through the real scontrol.
# Usage: OUT=DIR bash ci/slurm-test.sh [BUILD_DIR]   (default build/release)
# Leaves DIR/srun/cluster.json, DIR/sbatch/cluster.json and DIR/drain.txt. Exit 0 ok, 1 a
# step failed; when this machine cannot run Slurm's daemons it says exactly why and exits
# $SLURM_TEST_SKIP_RC (default 0; ctest sets 77).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build/release}" && pwd) || exit 1
skip_rc=${SLURM_TEST_SKIP_RC:-0}
out=${OUT:-$(mktemp -d /tmp/gdsb-slurm-out.XXXXXX)}
mkdir -p "$out" && out=$(cd "$out" && pwd)
cluster_bin=$build/apps/gdsb-cluster/gdsb-cluster
topo_bin=$build/apps/gdsb-topo/gdsb-topo
hgx=$root/tests/topo/fixtures/real/hgx-h100-lspci-vvv.txt

skip() { echo "SKIP: slurm-test: $*"; exit "$skip_rc"; }
die() { echo "FAIL: slurm-test: $*"; exit 1; }

# What this machine must offer to run slurmd at all (each is a reason to skip, said exactly).
[ "$(id -u)" -eq 0 ] || skip "slurmd and slurmctld must start as root here (uid $(id -u))"
for b in munged slurmctld slurmd srun sbatch scontrol sinfo; do
  command -v "$b" >/dev/null || skip "$b is not installed (ci/install-deps.sh installs munge," \
                                     "slurmctld, slurmd, slurm-client on Debian 12)"
done
[ -x "$cluster_bin" ] || die "$cluster_bin not built (gdsb-cluster needs MPI)"
[ -x "$topo_bin" ] || die "$topo_bin not built"

tmp=$(mktemp -d /tmp/gdsb-slurm.XXXXXX)
chmod 755 "$tmp"
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null
  done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# munge: its own key (1024 random bytes, mode 0400) and socket; munged refuses group- or
# world-accessible files, so the directory is private too.
mkdir -m 700 "$tmp/munge"
dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$tmp/munge/munge.key"
munged --force --key-file="$tmp/munge/munge.key" --socket="$tmp/munge/munge.sock" \
  --pid-file="$tmp/munge/munged.pid" --log-file="$tmp/munge/munged.log" \
  --seed-file="$tmp/munge/munged.seed" --foreground >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 50); do [ -S "$tmp/munge/munge.sock" ] && break; sleep 0.1; done
[ -S "$tmp/munge/munge.sock" ] || skip "munged did not start: $(tail -3 "$tmp/munge/munged.log" 2>/dev/null)"

# Two free TCP ports, so a Slurm already running here (or a parallel test) is not disturbed.
read -r ctld_port slurmd_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
node=$(hostname -s)
# The node as slurmd sees it (CPUs, sockets, cores, threads, RealMemory): the real machine.
hw=$(slurmd -C 2>/dev/null | head -1 | sed 's/^NodeName=[^ ]* //; s/UpTime=.*//')
[ -n "$hw" ] || skip "slurmd -C could not read this machine's hardware"
mkdir -p "$tmp/state" "$tmp/spool" "$tmp/log"
export SLURM_CONF=$tmp/slurm.conf
cat >"$SLURM_CONF" <<CONF
ClusterName=gdsbtest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge/munge.sock
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SlurmdTimeout=60
InactiveLimit=0
KillWait=5
NodeName=$node NodeAddr=127.0.0.1 $hw State=UNKNOWN
PartitionName=gdsb Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
slurmctld -D -i >"$tmp/log/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -N "$node" >"$tmp/log/slurmd.out" 2>&1 &
pids+=($!)
state=""
for _ in $(seq 60); do
  state=$(sinfo -h -n "$node" -o %T 2>/dev/null)
  [ "$state" = idle ] && break
  for p in "${pids[@]}"; do
    kill -0 "$p" 2>/dev/null || skip "a Slurm daemon exited at start: $(grep -h -i 'error\|fatal' \
      "$tmp"/log/* 2>/dev/null | tail -3)"
  done
  sleep 0.5
done
[ "$state" = idle ] || skip "node $node did not become idle in 30 s (state '$state'): $(grep -h -i \
  'error\|fatal' "$tmp"/log/* 2>/dev/null | tail -3)"
echo "slurm: node $node idle (slurmctld :$ctld_port, slurmd :$slurmd_port, $hw)"
srun --mpi=list 2>&1 | grep -q pmix || die "srun has no pmix plugin (slurm-wlm-basic-plugins): $(srun --mpi=list 2>&1)"

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
python3 "$root/tests/cluster/make_fleet.py" "$hgx" "$tmp/fleet" || die "make_fleet.py"
# Topology only: the fleet's faults are in its recordings; P2P and io are waived (no GPU).
args=(--topo-input "lspci-text=$tmp/fleet/node{rank}.txt" --no-cuda --no-nvml --no-hwloc
      --phase-timeout 60 -q)

# 1. srun: eight tasks on one node (--overcommit: more tasks than CPUs), PMIx wire-up.
rm -rf "$out/srun"
start=$SECONDS
timeout 120 srun --mpi=pmix --overcommit -n 8 "$cluster_bin" --out "$out/srun" "${args[@]}" \
  >"$out/srun.log" 2>&1
rc=$?
echo "srun -n 8: exit $rc in $((SECONDS - start)) s: $(tail -1 "$out/srun.log")"
[ "$rc" -eq 3 ] || fail "srun: exit $rc, want 3 ($(tail -5 "$out/srun.log"))"
python3 "$root/tests/cluster/check_fleet.py" "$out/srun/cluster.json" "$tmp/fleet/expected.json" ||
  fail "srun: the report does not name exactly the faulty nodes"

# 1b. The shared-storage phase (issue 26) under srun -n 4: the aggregate of each point over
# 1, 2 and 4 tasks, the GPU count and a cluster-wide checkpoint save and restore, every figure
# recomputed from the node reports (tests/cluster/check_storage.py). --min-deviation 50: four
# tasks' read ladders on one busy 2-core machine are no fleet to find an outlier in.
# Tasks of one node are one node (issue 34): each task reads the HGX recording under a path
# of its own, to stand for four nodes.
rm -rf "$out/srun-storage" "$tmp/io" "$tmp/rec" && mkdir -p "$tmp/io" "$tmp/rec"
for n in 0 1 2 3; do ln -s "$hgx" "$tmp/rec/n$n.txt"; done
start=$SECONDS
timeout 150 srun --mpi=pmix --overcommit -n 4 "$cluster_bin" --out "$out/srun-storage" --io-dir "$tmp/io" \
  --topo-input "lspci-text=$tmp/rec/n{rank}.txt" --no-cuda --no-nvml \
  --io-modes 1 --io-size 32M --io-block 1M --storage-time 1 --scale auto --demand-per-gpu 100MB/s \
  --model-bytes 64M --p2p-size 64K --p2p-repetitions 1 --p2p-loops 1 --no-hwloc --phase-timeout 60 -q \
  --min-deviation 50 \
  >"$out/srun-storage.log" 2>&1
rc=$?
echo "srun -n 4 --scale auto: exit $rc in $((SECONDS - start)) s"
[ "$rc" -eq 0 ] || fail "srun storage: exit $rc, want 0 ($(tail -5 "$out/srun-storage.log"))"
python3 "$root/tests/cluster/check_storage.py" "$out/srun-storage" --scale 1,2,4 --ops write,read --checkpoint ||
  fail "srun storage: the figures disagree with the node reports"

# 1d. The same phase under srun -n 4 on a file system without user xattrs (NFSv3, VAST,
# default BeeGFS; issue 34): both layouts write and read, a refused fill stops the phase
# with a named error (tests/cluster/storage_no_xattr_test.sh, a C preload in every task).
no_xattr=$build/tests/cluster/libgdsb_no_user_xattr.so
if [ ! -f "$no_xattr" ]; then
  fail "srun no-xattr: $no_xattr not built (cmake --build --preset release --target gdsb_no_user_xattr)"
else
  bash "$root/tests/cluster/storage_no_xattr_test.sh" "$cluster_bin" "$no_xattr" "$build/apps/gdsb-io/gdsb-io" \
    "$tmp/no-xattr" srun --mpi=pmix --overcommit -n 4 >"$out/srun-no-xattr.log" 2>&1 ||
    fail "srun no-xattr: $(grep -E '^(FAIL|FAILED)' "$out/srun-no-xattr.log" | head -5)"
  tail -1 "$out/srun-no-xattr.log"
fi
# 1c. Four tasks on this one node are one node (issue 34): points of 1 MB, where a task's
# setup is as long as the I/O, give no [clock] finding (one node, one clock).
rm -rf "$out/srun-one-node" "$tmp/io" && mkdir -p "$tmp/io"
timeout 150 srun --mpi=pmix --overcommit -n 4 "$cluster_bin" --out "$out/srun-one-node" --io-dir "$tmp/io" \
  --io-modes 1 --io-size 1M --io-block 1M --storage-time 0 --scale auto --p2p-size 64K --p2p-repetitions 1 \
  --p2p-loops 1 --no-hwloc --phase-timeout 60 -q --min-deviation 50 >"$out/srun-one-node.log" 2>&1
rc=$?
echo "srun -n 4 on one node: exit $rc: $(sed -n 2p "$out/srun-one-node/cluster.txt" 2>/dev/null)"
[ "$rc" -eq 0 ] || fail "srun one node: exit $rc, want 0 ($(grep -h '\[' "$out/srun-one-node/cluster.txt" 2>/dev/null | head -3))"
grep -q "^gdsb-cluster: 1 node(s) (4 ranks)," "$out/srun-one-node/cluster.txt" ||
  fail "srun one node: not one node of 4 ranks: $(sed -n 2p "$out/srun-one-node/cluster.txt")"
python3 "$root/tests/cluster/check_storage.py" "$out/srun-one-node" --scale 1 --ops write,read ||
  fail "srun one node: the figures disagree with the node reports"

# 2. sbatch --wait of the packaged template, two tasks on the one node (the template asks
# for --exclusive, where Slurm allows no more tasks than CPUs): nodes 0 and 1 (x8).
rm -rf "$out/sbatch"
start=$SECONDS
GDSB_OUT=$out/sbatch GDSB_CLUSTER=$cluster_bin timeout 120 sbatch --wait -N 1 --ntasks-per-node=2 \
  --no-requeue -o "$out/sbatch.log" "$root/slurm/gdsb-cluster.sbatch" "${args[@]}" >/dev/null
rc=$?
echo "sbatch --wait: exit $rc in $((SECONDS - start)) s: $(grep '^gdsb-cluster: exit' "$out/sbatch.log")"
[ "$rc" -eq 3 ] || fail "sbatch: job exit $rc, want gdsb-cluster's 3 ($(tail -5 "$out/sbatch.log"))"
[ -s "$out/sbatch/cluster.json" ] || fail "sbatch: no cluster.json"
python3 - "$out/sbatch/cluster.json" <<'PY' || fail "sbatch: wrong odd nodes"
import json, sys
odd = sorted(n.rsplit(".", 1)[1] for n in json.load(open(sys.argv[1]))["odd_nodes"])
assert odd == ["1"], f"odd nodes {odd}, want rank 1"
print("sbatch: names rank 1 (x8) and nothing else")
PY

# 3. The health check drains the node through scontrol.
rm -f "$out/drain.txt"
if ! "$topo_bin" --help 2>&1 | grep -q -- '--health'; then
  echo "health: skipped: gdsb-topo has no --health"
else
  "$topo_bin" --lspci-text "$hgx" --save-fingerprint "$tmp/good.json" >/dev/null ||
    fail "gdsb-topo --save-fingerprint failed"
  SLURMD_NODENAME=$node "$topo_bin" --lspci-text "$tmp/fleet/node1.txt" --health --expect "$tmp/good.json" \
    --slurm-drain >"$out/health.log" 2>&1
  rc=$?
  [ "$rc" -eq 3 ] || fail "gdsb-topo --health on the x8 node: exit $rc, want 3 ($(cat "$out/health.log"))"
  scontrol show node "$node" >"$out/drain.txt"
  grep -q 'State=[A-Z+]*DRAIN' "$out/drain.txt" || fail "node not drained: $(grep State= "$out/drain.txt")"
  grep -q 'Reason=gdsb: .*0000:3b:00.0' "$out/drain.txt" ||
    fail "no gdsb reason naming 0000:3b:00.0: $(grep Reason= "$out/drain.txt")"
  echo "health: $(grep -o 'State=[^ ]*' "$out/drain.txt"), $(grep -o 'Reason=.*' "$out/drain.txt")"
  scontrol update NodeName="$node" State=RESUME || fail "scontrol resume"
fi

# 3b. The health check whose collecting child is frozen (D state, deaf to SIGKILL: a hung
# driver) still ends within --timeout + 1 s and drains the node through the real scontrol
# (tests/topo/health/health_hang_test.sh; it skips where no cgroup-v1 freezer is writable).
fake_nvml=$build/tests/p2p/libgdsb_fake_nvml.so
if [ -f "$fake_nvml" ]; then
  bash "$root/tests/topo/health/health_hang_test.sh" "$topo_bin" "$fake_nvml" "$tmp/health-hang" --real-slurm "$node" \
    >"$out/health-hang.log" 2>&1
  rc=$?
  [ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] || fail "health hang: $(grep -E '^(FAIL|FAILED)' "$out/health-hang.log" | head -5)"
  grep -E '^(child|the check ended|drain|SKIP|PASS)' "$out/health-hang.log"
else
  fail "health hang: $fake_nvml not built (cmake --build --preset release --target gdsb_fake_nvml)"
fi

[ "$failures" -eq 0 ] || { echo "$failures failure(s); logs in $out"; exit 1; }
echo "PASS: slurm-test (reports in $out)"
