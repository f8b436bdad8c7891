#!/usr/bin/env bash
# The fleet of 8 nodes built from the real HGX recording (make_fleet.py: healthy nodes, a GPU
# at x8, ACS redirect on one port, a GPU removed, an NVMe removed) through a real
# `mpirun -np 8` on localhost: exactly the faulty nodes are named, missing hardware first,
# each fault by PCI address (check_fleet.py). ci/slurm-test.sh runs the same fleet under srun.
# Usage: fleet_mpi_test.sh GDSB_CLUSTER HGX_LSPCI_TEXT WORKDIR
set -uo pipefail
bin=$1 hgx=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work" || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
python3 "$here/make_fleet.py" "$hgx" "$work/fleet" || exit 1
start=$SECONDS
timeout 150 mpirun --allow-run-as-root --oversubscribe -np 8 "$bin" --out "$work/out" \
  --topo-input "lspci-text=$work/fleet/node{rank}.txt" --no-cuda --no-nvml --no-hwloc \
  --phase-timeout 100 -q >"$work/run.log" 2>&1
rc=$?
echo "mpirun -np 8: exit $rc in $((SECONDS - start)) s: $(tail -1 "$work/run.log")"
[ "$rc" -eq 3 ] || { echo "FAIL: exit $rc, want 3 ($(tail -5 "$work/run.log"))"; exit 1; }
python3 "$here/check_fleet.py" "$work/out/cluster.json" "$work/fleet/expected.json" || {
  echo "FAIL: see $work/out/cluster.txt"; exit 1; }
echo PASS
