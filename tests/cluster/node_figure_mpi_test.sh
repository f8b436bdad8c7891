#!/usr/bin/env bash
# The node's own figure in gdsb-cluster (issue 35) under a real mpirun on this one host:
#  1. four recorded nodes (each rank reads a recording of its own), each with 4 fake GPUs, node3's
#     copies slow (20 ms each): every node report carries the node_figure phase, an io document
#     whose "node" section has 4 per-GPU figures and the aggregate, recomputed here from its runs
#     (check_node_figure.py, no code shared with gdsb-cluster); the summary's node metric
#     node_x2_read_gb_s is that aggregate; the fleet view compares nodes by it and names node3;
#  2. four ranks on one host with 8 fake GPUs: one node, so the node run happens once, on rank 0;
#     ranks 1-3 say by whom it was measured, and the figure has all 8 GPUs.
# Usage: node_figure_mpi_test.sh GDSB_CLUSTER MAKE_CLUSTER_FIXTURE WORKDIR
set -uo pipefail
bin=$1 make_fixture=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work/io" "$work/rec" || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
"$make_fixture" "$work/fx" >/dev/null || { echo "FAIL: make_cluster_fixture"; exit 1; }
for n in 0 1 2 3; do
  ln -s "$work/fx/node0/root" "$work/rec/n$n"
  echo "{\"devices\": 4, \"copy_delay_us\": $([ "$n" = 3 ] && echo 100000 || echo 0)}" >"$work/fake$n.json"
done
echo '{"devices": 8}' >"$work/fake8.json"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
quick=(--io-modes 2 --io-size 4M --io-block 1M --io-time 1 --p2p-size 64K --p2p-repetitions 1 --p2p-loops 1
       --no-hwloc --phase-timeout 60 --min-deviation 50 -q)
mpi=(timeout 150 mpirun --allow-run-as-root --oversubscribe)

# 1. Four nodes of 4 fake GPUs, node3 slow.
"${mpi[@]}" -np 4 "$bin" --out "$work/fleet" --io-dir "$work/io" --topo-input "sysfs-root=$work/rec/n{rank}" \
  --fake-gpu "$work/fake{rank}.json" "${quick[@]}" >"$work/fleet.log" 2>&1
rc=$?
[ "$rc" -eq 3 ] || fail "four nodes: exit $rc, want 3 (node3 is odd) ($(tail -3 "$work/fleet.log"))"
python3 "$here/check_node_figure.py" "$work/fleet" --gpus 4 --mode 2 --odd 3 || fail "four nodes: the node figures"
[ -z "$(ls "$work/io")" ] || fail "files left in the io directory: $(ls "$work/io")"
# --from judges the node figures the same.
"$bin" --from "$work/fleet/nodes/"*.json --out "$work/fleet-from" -q >/dev/null 2>&1
python3 "$here/check_node_figure.py" "$work/fleet-from" --gpus 4 --mode 2 --odd 3 --from ||
  fail "--from: the node figures"

# 2. Four ranks, one host, 8 fake GPUs: one node run.
"${mpi[@]}" -np 4 "$bin" --out "$work/one" --io-dir "$work/io" --fake-gpu "$work/fake8.json" "${quick[@]}" \
  >"$work/one.log" 2>&1
rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || fail "one host: exit $rc ($(tail -3 "$work/one.log"))"
python3 "$here/check_node_figure.py" "$work/one" --gpus 8 --mode 2 --one-node || fail "one host: the node figure"

[ "$failures" -eq 0 ] && echo "PASS: node_figure_mpi" || echo "FAILED: $failures"
exit $((failures > 0))
