#!/usr/bin/env bash
# GPU path performance (issue 3, "Performance"): in one run, with the file in the page
# cache and cold, the host-to-device ceiling (pinned copy), -x 1, 2, 3, 0, 5, 6 at 1 MiB
# and 4 KiB for 1, 4 and 16 threads, and a naive baseline (buffered read into pageable memory,
# then a copy). Every type is also run once with -V. Prints a markdown table and the
# ratios the issue sets as targets; writes everything to $OUT/gpu-paths.json.
#
#   bench/gpu-paths.sh [FILE] [SIZE]      defaults: $GDSB_SCRATCH/gdsb-gpu-bench, 2G
# Environment: SECONDS_PER_RUN (default 2), THREADS ("1 4 16"), TYPES ("1 2 3 0 5 6"),
#   SIZES ("1M 4K"), OUT (default ./gdsb-report/gpu-paths). Cold runs need root
#   (echo 3 > /proc/sys/vm/drop_caches); without it they are reported as waived.
# The defaults are trimmed (2 s per run, threads 1/4/16, a 2 GiB file: 72 timed runs per
# cache state, about 3.5 minutes in all) so that ci/gpu-test.sh and this script fit in one
# device session of under 9 minutes with the build; THREADS="1 2 4 8 16" SECONDS_PER_RUN=5
# SIZE 4G is the full matrix (about 12 minutes). Without a GPU it says so and exits 1.
set -uo pipefail
cd "$(dirname "$0")/.."
file="${1:-${GDSB_SCRATCH:-$PWD}/gdsb-gpu-bench}"
size="${2:-2G}"
secs="${SECONDS_PER_RUN:-2}"
threads="${THREADS:-1 4 16}"
types="${TYPES:-1 2 3 0 5 6}"
sizes="${SIZES:-1M 4K}"
OUT="${OUT:-$PWD/gdsb-report/gpu-paths}"
source ci/debs-env.sh ""
gdsb_require_gpu gpu-paths "; nothing to measure"
mkdir -p "$OUT/runs"
cli=build/release/apps/gdsb-io/gdsb-io
ceiling=build/release/bench/gpu/gdsb-gpu-ceiling
if [ ! -x "$cli" ] || [ ! -x "$ceiling" ]; then
  cmake --preset release >/dev/null && cmake --build --preset release -j "$(nproc)" \
    --target gdsb-io gdsb-gpu-ceiling >/dev/null || { echo "gpu-paths: build failed" >&2; exit 1; }
fi
[ -x "$cli" ] || { echo "gpu-paths: $cli does not exist (needs the gdsb-io CLI of issue 2)" >&2; exit 1; }

can_drop=0
[ "$(id -u)" = 0 ] && [ -w /proc/sys/vm/drop_caches ] && can_drop=1
drop() { sync; echo 3 > /proc/sys/vm/drop_caches; }

echo "gpu-paths: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null), $(uname -r), $(nproc) CPUs, $(date -u +%FT%TZ)"
echo "gpu-paths: writing $size pattern file $file"
"$cli" -f "$file" -x 1 -I 1 -s "$size" -i 1M -w 4 -V --allow-overwrite --json "$OUT/runs/prepare.json" >/dev/null || { echo "gpu-paths: writing $file failed" >&2; exit 1; }

"$ceiling" h2d $((1 << 30)) > "$OUT/ceiling.jsonl"
cat "$file" > /dev/null   # warm the page cache for the naive baseline
"$ceiling" naive "$file" $((1 << 20)) >> "$OUT/ceiling.jsonl"
cat "$OUT/ceiling.jsonl"

for cache in cached cold; do
  if [ "$cache" = cold ] && [ $can_drop = 0 ]; then echo "gpu-paths: cold runs waived (need root to drop caches)"; continue; fi
  [ "$cache" = cached ] && cat "$file" > /dev/null
  for io in $sizes; do
    for x in $types; do
      for t in $threads; do
        [ "$cache" = cold ] && drop
        j="$OUT/runs/$cache-x$x-$io-w$t.json"
        "$cli" -f "$file" -x "$x" -I 0 -s "$size" -i "$io" -w "$t" -T "$secs" --json "$j" >/dev/null 2>"$j.err"
        echo "gpu-paths: $cache -x $x -i $io -w $t: rc=$?"
      done
    done
  done
done
for x in $types; do   # verification pass of every type
  "$cli" -f "$file" -x "$x" -I 0 -s 256M -i 1M -w 2 -V --json "$OUT/runs/verify-x$x.json" >/dev/null 2>&1
  echo "gpu-paths: -V -x $x: rc=$?"
done

python3 - "$OUT" <<'PY'
import glob, json, os, re, sys
out = sys.argv[1]
ceil = {}
for line in open(os.path.join(out, "ceiling.jsonl")):
    d = json.loads(line); ceil[d["measure"]] = d["gib_s"]
rows = {}
for p in glob.glob(os.path.join(out, "runs", "*.json")):
    m = re.match(r"(cached|cold)-x(\d)-(\w+)-w(\d+)\.json", os.path.basename(p))
    if not m: continue
    try: run = json.load(open(p))["runs"][0]
    except Exception: continue
    key = (m[1], m[3], int(m[4]))
    v = run.get("result", {}).get("throughput_gib_s") if run["status"] == "ok" else None
    rows.setdefault(key, {})[int(m[2])] = (v, run.get("path_used"), run.get("reason"))
verified = {}
for p in glob.glob(os.path.join(out, "runs", "verify-x*.json")):
    try: r = json.load(open(p))["runs"][0]
    except Exception: continue
    verified[r["workload"]["xfer_type"]] = r["status"] == "ok" and r.get("verify_errors", 1) == 0
types = sorted({x for r in rows.values() for x in r})
print(f'\nH2D ceiling (pinned): {ceil.get("h2d_pinned", 0):.2f} GiB/s; naive pageable: {ceil.get("naive_pageable", 0):.2f} GiB/s')
print("\n| cache | io | threads | " + " | ".join(f"-x {x}" for x in types) + " | x3/min(x1,H2D) | x3/x2 |")
print("|---|---|---|" + "---|" * len(types) + "---|---|")
summary = []
for key in sorted(rows, key=lambda k: (k[0], k[1], k[2])):
    r = rows[key]
    cell = lambda x: "waived" if x in r and r[x][0] is None else (f"{r[x][0]:.2f}" if x in r else "-")
    g = lambda x: r.get(x, (None,))[0]
    ratio1 = ratio2 = None
    if g(3) and g(1): ratio1 = g(3) / min(g(1), ceil.get("h2d_pinned", 1e9))
    if g(3) and g(2): ratio2 = g(3) / g(2)
    print(f"| {key[0]} | {key[1]} | {key[2]} | " + " | ".join(cell(x) for x in types) +
          f" | {ratio1:.2f} |" if ratio1 else f"| {key[0]} | {key[1]} | {key[2]} | " + " | ".join(cell(x) for x in types) + " | - |", end="")
    print(f" {ratio2:.2f} |" if ratio2 else " - |")
    summary.append({"cache": key[0], "io": key[1], "threads": key[2],
                    "gib_s": {str(x): r[x][0] for x in r}, "path_used": {str(x): r[x][1] for x in r},
                    "x3_vs_min_x1_h2d": ratio1, "x3_vs_x2": ratio2})
print("\nverified with -V: " + ", ".join(f"-x {x}: {'yes' if ok else 'NO'}" for x, ok in sorted(verified.items())))
json.dump({"ceiling_gib_s": ceil, "rows": summary, "verified": verified},
          open(os.path.join(out, "gpu-paths.json"), "w"), indent=1)
PY
