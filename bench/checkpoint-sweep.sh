#!/usr/bin/env bash
# Why is checkpoint-load's -x 2 slower than the naive load on some storage (issue 35: 0.89x on
# one virtio disk with 4 GPUs)? The same shards, in one call: the preset's -x 2 at several
# thread counts and I/O sizes, on 1 GPU and on every GPU, each run with its own naive load (the
# preset drops the shards' pages before each phase), plus -x 1 (storage alone, O_DIRECT, no GPU)
# and a buffered read of the shards by dd (what the naive load's read(2) gets from read-ahead).
# Prints one table row a run: GPUs, -x, threads a GPU, I/O size, load s, naive s, naive/load,
# and for -x 2/3 the load's phases per I/O (storage, copy, DMA; issue 43: -x 3's copy phase).
#
#   bench/checkpoint-sweep.sh DIR      (OUT: where the JSON and logs go; default ./gdsb-report/ckpt)
# Environment: SHARDS (4), SHARD_SIZE (512M), GPU_COUNTS ("1 all").
set -uo pipefail
cd "$(dirname "$0")/.."
dir="${1:?usage: bench/checkpoint-sweep.sh DIR}"
OUT="${OUT:-$PWD/gdsb-report/ckpt}"
shards="${SHARDS:-4}"
shard_size="${SHARD_SIZE:-512M}"
cli=build/release/apps/gdsb-io/gdsb-io
mkdir -p "$OUT" "$dir"
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
[ "$ngpu" -gt 0 ] || { echo "checkpoint-sweep: no GPU here; nothing to measure"; exit 1; }
table="$OUT/sweep.md"
echo "| GPUs | -x | threads a GPU | I/O size | load s | naive s | naive/load | naive shards resident at start | phases per I/O: storage / copy / DMA us | slower than naive because |" >"$table"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |" >>"$table"
row() {  # gpus x threads io
  local g="$1" x="$2" w="$3" io="$4" json="$OUT/g$1-x$2-w$3-i$4.json"
  local gsel=(); [ "$g" != all ] && gsel=(--gpus "$g")
  "$cli" --workload checkpoint-load -D "$dir" -x "$x" --shards "$shards" --shard-size "$shard_size" \
    -w "$w" -i "$io" "${gsel[@]}" -q --allow-overwrite --json "$json" >"${json%.json}.log" 2>&1
  local rc=$?
  python3 - "$json" "$g" "$x" "$w" "$io" "$rc" >>"$table" <<'PY'
import json, sys
path, g, x, w, io, rc = sys.argv[1:]
try:
    d = json.load(open(path))
    s = d["workload_summary"]
    load = s["time_to_result"]["node_s"]
    naive = s["naive"]["node_s"]
    facts = s["naive"].get("facts") or {}
    res = facts.get("cached_share")
    res = "-" if res is None else f"{100 * res:.0f}%"
    ph = [r["result"]["phases"] for r in d.get("runs", [])
          if r["workload"].get("name", "").startswith("load") and (r.get("result") or {}).get("phases")]
    mean = lambda k: sum(p[k]["us"]["mean"] * p[k]["count"] for p in ph) / max(1, sum(p[k]["count"] for p in ph))
    phases = f"{mean('storage'):.0f} / {mean('copy'):.1f} / {mean('dma'):.1f}" if ph else "-"
    why = (s.get("slower_than_naive") or {}).get("why", "-")
    print(f"| {g} | {x} | {w} | {io} | {load:.2f} | {naive:.2f} | {naive / load:.2f} | {res} | {phases} | {why} |")
except Exception as e:  # the row says why it has no figure
    print(f"| {g} | {x} | {w} | {io} | - | - | - | exit {rc}: {type(e).__name__} {e} |")
PY
}
for g in ${GPU_COUNTS:-1 all}; do
  for cfg in "2 4 4M" "3 4 4M" "2 1 4M" "3 1 4M" "2 4 16M" "2 1 16M" "2 4 1M" "1 4 4M"; do
    set -- $cfg
    row "$g" "$1" "$2" "$3"
  done
done
# What the naive load's buffered read(2) gets from the block layer: dd of every shard, cold.
shards_dir="$dir/checkpoint-load"
if ls "$shards_dir"/*.safetensors >/dev/null 2>&1; then
  sync; echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || echo "(drop_caches refused)" >>"$table"
  start=$(date +%s.%N)
  for f in "$shards_dir"/*.safetensors; do dd if="$f" of=/dev/null bs=4M status=none & done; wait
  end=$(date +%s.%N)
  bytes=$(cat "$shards_dir"/*.safetensors | wc -c)
  echo "" >>"$table"
  echo "dd, buffered, every shard at once (one dd a shard), cold: $(python3 -c "print(f'{$bytes/($end-$start)/1e9:.2f} GB/s over {$end-$start:.2f} s')")" >>"$table"
  for f in /sys/block/*/queue/read_ahead_kb; do echo "$f: $(cat "$f")" >>"$table"; done
fi
cat "$table"
