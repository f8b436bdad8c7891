#!/usr/bin/env bash
# Workload presets on a GPU machine (issue 14): checkpoint-load through -x 2, 3 and 0 with
# the naive load (-x 4, buffered) measured in the same run, on a RAM-backed tmpfs and on
# the disk, then checkpoint-save, kv-offload and dataset briefly. Every GPU of the node
# takes part. Also measures, as a peer, the framework's naive load into pageable memory
# (bench/gpu gdsb-gpu-ceiling naive) on one shard. Prints a markdown table for
# docs/PERFORMANCE.md; writes every JSON under $OUT.
#
#   bench/workloads.sh                    about 3 minutes on 1-2 GPUs with the defaults
# Environment: OUT (default ./gdsb-report/workloads), RAM_DIR (/mnt/ram: a tmpfs mounted
#   there when root and not yet mounted), DISK_DIR ($GDSB_SCRATCH or ./gdsb-workloads),
#   SHARDS (4 per GPU), SHARD_SIZE (512M), TYPES ("2 3 0"), KV_SECONDS (5),
#   DATASET_FILES (10000). Without a GPU it says so and exits 1.
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
mkdir -p "$OUT"
cli=build/release/apps/gdsb-io/gdsb-io
topo=build/release/apps/gdsb-topo/gdsb-topo
ceiling=build/release/bench/gpu/gdsb-gpu-ceiling
if [ ! -x "$cli" ] || [ ! -x "$topo" ] || [ ! -x "$ceiling" ]; then
  cmake --preset release >/dev/null && cmake --build --preset release -j "$(nproc)" \
    --target gdsb-io gdsb-topo gdsb-gpu-ceiling >/dev/null || { echo "workloads: build failed" >&2; exit 1; }
fi
echo "workloads: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sort | uniq -c | xargs), $(uname -r), $(nproc) CPUs, $(date -u +%FT%TZ)"

"$topo" --json "$OUT/topo.json" >/dev/null 2>"$OUT/topo.err" || true
topo_arg=()
[ -s "$OUT/topo.json" ] && topo_arg=(--topo-json "$OUT/topo.json")

if [ "$(id -u)" = 0 ]; then
  mkdir -p "$ram"
  mountpoint -q "$ram" || mount -t tmpfs -o size=20g tmpfs "$ram" || echo "workloads: cannot mount tmpfs on $ram"
fi
targets=()
mountpoint -q "$ram" 2>/dev/null && targets+=("ram:$ram/gdsb")
targets+=("disk:$disk")

run() {  # name json args...
  local name="$1" json="$2"
  shift 2
  echo "== $name"
  "$cli" "$@" -q --allow-overwrite "${topo_arg[@]}" --json "$json" 2>&1 | tail -n 12
}

for t in "${targets[@]}"; do
  label="${t%%:*}"
  dir="${t#*:}"
  mkdir -p "$dir"
  for x in $types; do
    run "$label checkpoint-load -x $x" "$OUT/$label-checkpoint-load-x$x.json" \
      --workload checkpoint-load -D "$dir" -x "$x" --shards "$shards" --shard-size "$shard_size" -V
  done
  shard=$(ls "$dir"/checkpoint-load/*.safetensors 2>/dev/null | head -n 1)
  if [ -n "$shard" ]; then
    cat "$shard" >/dev/null  # the reference figure was taken on a cached file
    "$ceiling" naive "$shard" $((1 << 20)) > "$OUT/$label-naive-pageable.jsonl" 2>&1 || true
    "$ceiling" h2d $((1 << 30)) >> "$OUT/$label-naive-pageable.jsonl" 2>&1 || true
    echo "== $label framework-style naive load of one cached shard (pageable) and the pinned H2D ceiling"
    cat "$OUT/$label-naive-pageable.jsonl"
  fi
  run "$label checkpoint-save -x 2" "$OUT/$label-checkpoint-save-x2.json" \
    --workload checkpoint-save -D "$dir" -x 2 --shards "$shards" --shard-size 256M -V
  run "$label kv-offload -x 2" "$OUT/$label-kv-offload-x2.json" \
    --workload kv-offload -D "$dir" -x 2 --iodepth 8 -w 4 -T "$kv_secs" -V
  run "$label dataset -x 2" "$OUT/$label-dataset-x2.json" \
    --workload dataset -D "$dir" -x 2 --files "$files" -V
  run "$label dataset -x 0" "$OUT/$label-dataset-x0.json" \
    --workload dataset -D "$dir" -x 0 --files "$files" -V
done

python3 - "$OUT" <<'EOF'
import glob, json, os, sys
out = sys.argv[1]
print("\n| storage | preset | -x | time to result (node) | GB/s | naive (-x 4) | naive GB/s | naive / time |")
print("|---|---|---|---|---|---|---|---|")
for f in sorted(glob.glob(os.path.join(out, "*-*.json"))):
    try:
        doc = json.load(open(f))
    except Exception:
        continue
    s = doc.get("workload_summary")
    if not s:
        continue
    label = os.path.basename(f).split("-")[0]
    t = s.get("time_to_result") or {}
    n = s.get("naive") or {}
    def g(d, k, fmt):
        v = d.get(k)
        return fmt % v if isinstance(v, (int, float)) else "n/a"
    if s["preset"] in ("checkpoint-load", "checkpoint-save"):
        sp = s.get("speedup_vs_naive")
        print(f"| {label} | {s['preset']} | {s['xfer_type']} | {g(t, 'node_s', '%.3f s')} | {g(t, 'gb_s', '%.2f')} | "
              f"{g(n, 'node_s', '%.3f s')} | {g(n, 'gb_s', '%.2f')} | {('%.2fx' % sp) if sp else 'n/a'} |")
    elif s["preset"] == "kv-offload":
        for j in s.get("requests", []):
            print(f"| {label} | kv-offload {j['job']} | {s['xfer_type']} | request p99 {j['request_latency']['p99_us']:.0f} us | "
                  f"{j['gb_s']:.2f} | block p99 {j['block_latency']['p99_us']:.0f} us | | |")
    elif s["preset"] == "dataset":
        u = s.get("setup", {})
        print(f"| {label} | dataset | {s['xfer_type']} | {g(t, 'seconds', '%.3f s')} ({g(t, 'files_per_s', '%.0f')} files/s) | "
              f"{g(t, 'gb_s', '%.2f')} | open {g(u, 'open_mean_us', '%.1f')} us/file | start {g(u, 'path_start_per_file_us', '%.1f')} us/file | |")
EOF
