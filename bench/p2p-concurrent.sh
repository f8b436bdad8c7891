#!/usr/bin/env bash
# gdsb-p2p --measure --concurrent next to nvbandwidth's "host to all GPUs at once" and "all
# GPUs to host at once" cases (host_to_all_memcpy_ce, all_to_host_memcpy_ce: each GPU's
# copy timed while every other GPU copies too) and a third reference in PyTorch
# (bench/gpu/concurrent_torch.py: a stream a GPU, bytes over the wall time of the set).
# The all-GPU figure moves ~10% from round to round on 4 GPUs (issue 35), so the three run in
# interleaved rounds, the order rotated each round (a drift or a warm-up cannot favour one
# tool), and they are compared by their medians over the rounds, each with its spread.
# Builds nvbandwidth from its source tree with Boost program_options unpacked from .debs.
#
#   bench/p2p-concurrent.sh --p2p BIN --nvbandwidth-src DIR [--boost-debs DIR] --work DIR
#                           [--rounds N]
#
# --boost-debs defaults to DIR/../boost-debs (the layout of .peers/); --rounds 5. Writes into
# --work: round<r>-{nvbandwidth,p2p,torch}.json, concurrent.md (the comparison, target: the
# medians within 0.95..1.05, or the spread that says the difference is noise).
# Exit 0 when gdsb-p2p ran in every round (whatever the ratios), 1 otherwise.
set -uo pipefail
p2p="" nvb_src="" boost_debs="" work="" rounds=5
while [ $# -gt 0 ]; do
  case "$1" in
    --p2p) p2p="$2"; shift 2 ;;
    --nvbandwidth-src) nvb_src="$2"; shift 2 ;;
    --boost-debs) boost_debs="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    *) echo "p2p-concurrent: unknown option $1 (expected --p2p, --nvbandwidth-src, --boost-debs, --work, --rounds)" >&2
       exit 2 ;;
  esac
done
if [ -z "$p2p" ] || [ -z "$work" ]; then
  echo "p2p-concurrent: --p2p BIN and --work DIR are required" >&2; exit 2
fi
mkdir -p "$work"
size_mib=256  # gdsb-p2p's default --size, so both copy the same bytes per copy
nvb=""
if [ -n "$nvb_src" ] && [ -d "$nvb_src" ]; then
  nvb_src=$(cd "$nvb_src" && pwd)
  boost_debs="${boost_debs:-$nvb_src/../boost-debs}"
  prefix="$work/boost"
  mkdir -p "$prefix"
  for d in "$boost_debs"/*.deb; do dpkg -x "$d" "$prefix"; done
  nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  if cmake -S "$nvb_src" -B "$work/nvbandwidth-build" -DCMAKE_BUILD_TYPE=Release \
       -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_CUDA_COMPILER="$nvcc" \
       -DBoost_ROOT="$prefix/usr" -DCMAKE_PREFIX_PATH="$prefix/usr" > "$work/nvbandwidth-build.log" 2>&1 &&
     cmake --build "$work/nvbandwidth-build" -j "$(nproc)" >> "$work/nvbandwidth-build.log" 2>&1; then
    nvb="$work/nvbandwidth-build/nvbandwidth"
  else
    echo "p2p-concurrent: nvbandwidth did not build:"; tail -20 "$work/nvbandwidth-build.log"
  fi
fi
here=$(cd "$(dirname "$0")" && pwd)
run_tool() {  # tool round
  local t="$1" r="$2" rc=0
  case "$t" in
    nvbandwidth)
      [ -n "$nvb" ] || return 0
      timeout 300 "$nvb" -b "$size_mib" -j -t host_to_all_memcpy_ce all_to_host_memcpy_ce \
        > "$work/round$r-nvbandwidth.json" 2> "$work/round$r-nvbandwidth.err" || rc=$? ;;
    p2p)
      timeout 300 "$p2p" --measure --concurrent --size "${size_mib}MiB" --json "$work/round$r-p2p.json" \
        --allow-overwrite > "$work/round$r-p2p.txt" 2>&1 || { rc=$?; ok=1; } ;;
    torch)
      timeout 300 python3 "$here/gpu/concurrent_torch.py" --size-mib "$size_mib" \
        > "$work/round$r-torch.json" 2> "$work/round$r-torch.err" || rc=$? ;;
  esac
  echo "p2p-concurrent: round $r $t rc=$rc"
}
ok=0
order=(nvbandwidth p2p torch)
for ((r = 1; r <= rounds; r++)); do
  for ((k = 0; k < 3; k++)); do run_tool "${order[$(((r - 1 + k) % 3))]}" "$r"; done
done
python3 "$here/concurrent_rounds.py" "$work" "$rounds" > "$work/concurrent.md"
cat "$work/concurrent.md"
exit $ok
