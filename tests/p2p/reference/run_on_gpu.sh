#!/usr/bin/env bash
# Builds gdsb-p2p on a GPU machine, runs its GPU tests and a --measure report, and records
# NVIDIA's own view (nvidia-smi topo) and an independent copy timing next to it.
# Usage: bash tests/p2p/reference/run_on_gpu.sh OUTDIR [DEBS_DIR]
# DEBS_DIR holds libpci/liburing .debs for machines without those -dev packages.
set -uo pipefail
out=${1:?usage: run_on_gpu.sh OUTDIR [DEBS_DIR]}
debs=${2:-}
src=$(cd "$(dirname "$0")/../../.." && pwd)
mkdir -p "$out"
if [ -n "$debs" ]; then
  for f in "$debs"/*.deb; do dpkg -x "$f" /opt/debs; done
  export PKG_CONFIG_PATH=/opt/debs/usr/lib/x86_64-linux-gnu/pkgconfig PKG_CONFIG_SYSROOT_DIR=/opt/debs
  export LD_LIBRARY_PATH=/opt/debs/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
cuda=$(ls -d /usr/local/cuda-1* /usr/local/cuda 2>/dev/null | head -1)
export PATH=$cuda/bin:$PATH
{
  date -u; uname -r; nvidia-smi --query-gpu=index,name,pci.bus_id,pcie.link.gen.max,pcie.link.width.max,driver_version --format=csv
  nvidia-smi topo -m
  for m in r w n a p; do echo "== nvidia-smi topo -p2p $m"; nvidia-smi topo -p2p $m; done
  nvidia-smi nvlink -s 2>&1 | head -40
  command -v nvbandwidth p2pBandwidthLatencyTest || echo "nvbandwidth, p2pBandwidthLatencyTest: not installed"
} > "$out/nvidia-smi.txt" 2>&1
b=/tmp/gdsb-p2p-build
cmake -S "$src" -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGDSB_BUILD_BENCH=OFF \
  -DCMAKE_CUDA_COMPILER=$cuda/bin/nvcc > "$out/build.log" 2>&1 &&
  cmake --build $b -j"$(nproc)" --target gdsb-p2p p2p_gpu_tests p2p_unit_tests p2p_fixture_tests \
    p2p_cli_tests >> "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
(cd $b && ctest -L 'unit|fixture|cli|gpu' --output-on-failure) > "$out/tests.log" 2>&1
$b/tests/p2p/p2p_gpu_tests >> "$out/tests.log" 2>&1
p2p=$b/apps/gdsb-p2p/gdsb-p2p
$p2p --measure --sm-copy --json "$out/p2p.json" --expect all-gpu-p2p --expect min-h2d=40GB/s \
  > "$out/p2p.txt" 2>&1; echo "exit $?" >> "$out/p2p.txt"
$p2p --expect all-gpu-nvlink --quiet >> "$out/p2p.txt" 2>&1; echo "exit $?" >> "$out/p2p.txt"
# CUDA ordinal 0 is then NVML's GPU1: the two views must still be joined on the bus id.
CUDA_VISIBLE_DEVICES=1 $p2p 2>&1 | sed -n 3,12p >> "$out/p2p.txt"
nvcc -O2 -o /tmp/peer_reference "$src/tests/p2p/reference/peer_reference.cu" &&
  /tmp/peer_reference 256 11 > "$out/reference.txt" 2>&1
tail -5 "$out/tests.log"; cat "$out/p2p.txt" | tail -60; cat "$out/reference.txt"
