#!/usr/bin/env bash
# gdsb-cluster as a one-node cluster on a GPU machine with real GPUs: builds gdsb-cluster
# (release preset), then runs it under `mpirun -np 1` and once more as an MPI singleton
# (no launcher), with the read ladder on GDSB_TEST_DIR. Leaves under $OUT (default
# ./gdsb-report/cluster-one-node): mpirun/ and singleton/ (cluster.json, cluster.html,
# cluster.txt, cluster.junit.xml, cluster.prom, nodes/<host>.json), build.log, run.log,
# aggregate-bench.txt (bench/cluster-aggregate.sh: --from on 1000 generated reports), storage/
# (the shared-storage phase with two ranks and the GPU modes).
#   bench/cluster-one-node.sh [--debs DIR]     (--debs: as ci/gpu-test.sh, for libpci/liburing)
# Exit: gdsb-cluster's (0 alike, 3 a check failed: on a Firecracker VM the topology checks
# may warn or fail for real reasons, which the report then names), 1 build failure.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-$PWD/gdsb-report/cluster-one-node}
mkdir -p "$out"
debs=""
[ "${1:-}" = "--debs" ] && debs="${2:-}"
source ci/debs-env.sh "$debs"
{ cmake --preset release -DGDSB_WARNINGS_AS_ERRORS=OFF &&
  cmake --build --preset release -j"$(nproc)" --target gdsb-cluster make_cluster_fixture; } >"$out/build.log" 2>&1 \
  || { tail -30 "$out/build.log"; echo "cluster-one-node: build failed"; exit 1; }
bin=build/release/apps/gdsb-cluster/gdsb-cluster
[ -x "$bin" ] || { grep -i mpi "$out/build.log"; echo "cluster-one-node: gdsb-cluster not built (MPI?)"; exit 1; }
testdir=${GDSB_TEST_DIR:-$PWD/build/cluster-io}
mkdir -p "$testdir"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
nvidia-smi -L >"$out/nvidia-smi.txt" 2>&1 || true
args=(--io-dir "$testdir" --io-size 1G --io-time 5 --p2p-size 256M --allow-overwrite)
echo "== mpirun -np 1" | tee "$out/run.log"
timeout 900 mpirun --allow-run-as-root -np 1 "$bin" --out "$out/mpirun" "${args[@]}" 2>&1 | tee -a "$out/run.log"
rc=${PIPESTATUS[0]}
echo "== singleton (no launcher)" | tee -a "$out/run.log"
timeout 900 "$bin" --out "$out/singleton" "${args[@]}" 2>&1 | tee -a "$out/run.log"
single=${PIPESTATUS[0]}
# Issue 35: the node's own figure (every GPU reading at once, -x 2), measured once for the node,
# recomputed from the node report's runs.
gpus=$(grep -c '^GPU ' "$out/nvidia-smi.txt")
if [ "$gpus" -gt 0 ]; then
  python3 tests/cluster/check_node_figure.py "$out/mpirun" --gpus "$gpus" --mode 2 --one-node 2>&1 | tee -a "$out/run.log"
fi
# The shared-storage phase (issue 26) with the GPU modes: two ranks on this one node share
# GDSB_TEST_DIR as a cluster shares its file system; -x 1, 2 and 0 at 1 and 2 ranks, the GPU
# count at 2 GB/s a GPU, and a checkpoint of a 2B-parameter bf16 model (4 GB).
echo "== mpirun -np 2 --scale 1,2 (shared storage)" | tee -a "$out/run.log"
timeout 900 mpirun --allow-run-as-root --oversubscribe -np 2 "$bin" --out "$out/storage" --io-dir "$testdir" \
  --io-modes 1,2,0 --io-size 1G --storage-time 3 --scale 1,2 --demand-per-gpu 2GB/s --model-bytes 2B:bf16 \
  --p2p-size 64M --allow-overwrite 2>&1 | tee -a "$out/run.log"
storage=${PIPESTATUS[0]}
python3 tests/cluster/check_storage.py "$out/storage" --scale 1,2 --ops write,read --checkpoint 2>&1 | tee -a "$out/run.log"
# The aggregation benchmark on this (idle, 16-core) machine too: docs/PERFORMANCE.md.
bash bench/cluster-aggregate.sh build/release 1000 "$testdir/agg-bench" 2>&1 | tee "$out/aggregate-bench.txt"
rm -rf "$testdir/agg-bench"
echo "cluster-one-node: mpirun exit $rc, singleton exit $single, shared storage exit $storage; reports in $out" | tee -a "$out/run.log"
exit "$rc"
