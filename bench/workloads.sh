#!/usr/bin/env bash
# Workload presets on a GPU machine (issue 14), in one call: every preset on a RAM-backed
# tmpfs and on the disk, with every GPU of the node: checkpoint-load (through each -x of
# TYPES, with the framework-style naive load, buffered reads into pageable memory and a
# cudaMemcpy per tensor, measured in the same run) and checkpoint-save on all GPUs at once;
# kv-offload and dataset (one-GPU presets) on each GPU in turn. The platform ceiling is
# collected live by gdsb-io (gdsb-topo's collector). Peers in the same call, on one shard
# (bench/gpu gdsb-gpu-ceiling): the naive pageable load and the pinned H2D ceiling.
# Prints the markdown table for docs/PERFORMANCE.md and what could not be done, and why;
# writes every JSON and log under $OUT.
#
#   bench/workloads.sh          about 4 minutes on one GPU, 6 on two, with the defaults
# Environment: OUT (default ./gdsb-report/workloads), RAM_DIR (/mnt/ram: a tmpfs mounted
#   there when root and not yet mounted), DISK_DIR ($GDSB_SCRATCH or ./gdsb-workloads),
#   SHARDS (4 per GPU), SHARD_SIZE (512M), TYPES ("2 3 0"), KV_SECONDS (5),
#   DATASET_FILES (10000; lowered to fit the descriptor hard limit, and said so).
# Without a GPU it says so and exits 1.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/gdsb-report/workloads}"
ram="${RAM_DIR:-/mnt/ram}"
disk="${DISK_DIR:-${GDSB_SCRATCH:-$PWD}/gdsb-workloads}"
shards="${SHARDS:-4}"
shard_size="${SHARD_SIZE:-512M}"
types="${TYPES:-2 3 0}"
kv_secs="${KV_SECONDS:-5}"
files="${DATASET_FILES:-10000}"
source ci/debs-env.sh ""
gdsb_require_gpu workloads "; nothing to measure"
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
mkdir -p "$OUT"
gaps=()  # what could not be done, and why
gap() { gaps+=("$*"); echo "workloads: cannot: $*" >&2; }
cli=build/release/apps/gdsb-io/gdsb-io
topo=build/release/apps/gdsb-topo/gdsb-topo
ceiling=build/release/bench/gpu/gdsb-gpu-ceiling
if [ ! -x "$cli" ] || [ ! -x "$topo" ] || [ ! -x "$ceiling" ]; then
  cmake --preset release >/dev/null && cmake --build --preset release -j "$(nproc)" \
    --target gdsb-io gdsb-topo gdsb-gpu-ceiling >/dev/null || { echo "workloads: build failed" >&2; exit 1; }
fi
echo "workloads: $ngpu GPU(s): $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sort | uniq -c | xargs), $(uname -r), $(nproc) CPUs, $(date -u +%FT%TZ)"
# For the record only: gdsb-io collects the same topology itself (no --topo-json given).
"$topo" --json "$OUT/topo.json" >"$OUT/topo.txt" 2>&1 || true

# The dataset preset keeps every file open at once (its per-file open and cuFile handle
# registration are measured before the reads), and cuFile opens a second descriptor of its
# own per registered file; gdsb-io raises the soft descriptor limit as far as the hard one
# itself, so the hard limit bounds the file count at half of it (the same count for every
# -x, so that their figures compare).
hard=$(ulimit -Hn)
if [ "$hard" != unlimited ] && [ "$files" -gt $(((hard - 100) / 2)) ]; then
  gap "dataset with $files files: the descriptor hard limit here is $hard (ulimit -Hn), two per file for cuFile; ran $(((hard - 100) / 2)) files"
  files=$(((hard - 100) / 2))
fi

if [ "$(id -u)" = 0 ]; then
  mkdir -p "$ram"
  mountpoint -q "$ram" || mount -t tmpfs -o size=20g tmpfs "$ram" || gap "tmpfs: mount on $ram failed"
else
  mountpoint -q "$ram" 2>/dev/null || gap "tmpfs: not root, and nothing mounted on $ram (RAM_DIR)"
fi
targets=()
mountpoint -q "$ram" 2>/dev/null && targets+=("ram:$ram/gdsb")
targets+=("disk:$disk")

run() {  # name json args...
  local name="$1" json="$2" rc
  shift 2
  echo "== $name"
  "$cli" "$@" -q --allow-overwrite --json "$json" >"${json%.json}.log" 2>&1
  rc=$?
  tail -n 25 "${json%.json}.log"
  [ "$rc" = 0 ] || gap "$name: gdsb-io exit $rc (log ${json%.json}.log)"
}

for t in "${targets[@]}"; do
  label="${t%%:*}"
  dir="${t#*:}"
  mkdir -p "$dir"
  for x in $types; do
    run "$label checkpoint-load -x $x, $ngpu GPU(s)" "$OUT/$label-checkpoint-load-x$x.json" \
      --workload checkpoint-load -D "$dir" -x "$x" --shards "$shards" --shard-size "$shard_size" -V
  done
  shard=$(ls "$dir"/checkpoint-load/*.safetensors 2>/dev/null | head -n 1)
  if [ -n "$shard" ]; then
    cat "$shard" >/dev/null  # the peer's figure is for a cached file
    "$ceiling" naive "$shard" $((1 << 20)) > "$OUT/$label-peer-naive.jsonl" 2>&1 || gap "$label peer naive load (gdsb-gpu-ceiling)"
    "$ceiling" h2d $((1 << 30)) >> "$OUT/$label-peer-naive.jsonl" 2>&1 || gap "$label peer pinned H2D (gdsb-gpu-ceiling)"
    echo "== $label peers: naive load of one cached shard into pageable memory, pinned H2D ceiling"
    cat "$OUT/$label-peer-naive.jsonl"
  fi
  run "$label checkpoint-save -x 2, $ngpu GPU(s)" "$OUT/$label-checkpoint-save-x2.json" \
    --workload checkpoint-save -D "$dir" -x 2 --shards "$shards" --shard-size 256M -V
  for ((g = 0; g < ngpu; g++)); do
    run "$label kv-offload -x 2 GPU $g" "$OUT/$label-kv-offload-x2-gpu$g.json" \
      --workload kv-offload -D "$dir" -x 2 -d "$g" --iodepth 8 -w 4 -T "$kv_secs" -V
    for x in 2 0; do
      run "$label dataset -x $x GPU $g" "$OUT/$label-dataset-x$x-gpu$g.json" \
        --workload dataset -D "$dir" -x "$x" -d "$g" --files "$files" -V
    done
  done
done

python3 bench/workloads_table.py "$OUT"
echo
if [ ${#gaps[@]} -eq 0 ]; then
  echo "workloads: every part ran"
else
  echo "workloads: could not do (and why):"
  for g in "${gaps[@]}"; do echo "- $g"; done
fi
