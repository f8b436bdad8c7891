#!/usr/bin/env bash
# gdsb-doctor's live ladder on the GPU test machine (issue 12): topology, pinned H2D/D2H,
# -x 1, -x 2, -x 0 within a 60 s budget, text + JSON + HTML under $OUT. On that machine
# (compat mode, no NVMe, no nvidia-fs) the first finding must be "cuFile in compat mode:
# nvidia-fs is not loaded" with the measured figures; the script checks it and exits 3
# when it is missing (the doctor itself exits 3 there: a certain finding).
#
#   bench/doctor-live.sh [DIR] [BUDGET]     defaults: $GDSB_SCRATCH or $PWD, 60s
# Environment: OUT (default ./gdsb-report/doctor), SIZE (each GPU's file; default the doctor's:
# 1 GiB over the GPUs of a directory, at least 256 MiB each).
# Issue 35: on a node of several GPUs the storage steps read on every GPU at once; the script
# checks that every GPU the doctor lists has its own measured read from that one run and
# prints them (exit 3 otherwise).
set -uo pipefail
cd "$(dirname "$0")/.."
dir="${1:-${GDSB_SCRATCH:-$PWD}}"
budget="${2:-60s}"
OUT="${OUT:-$PWD/gdsb-report/doctor}"
mkdir -p "$OUT"
cli=build/release/apps/gdsb-doctor/gdsb-doctor
if [ ! -x "$cli" ]; then
  cmake --preset release >/dev/null && cmake --build --preset release -j "$(nproc)" \
    --target gdsb-doctor >/dev/null || { echo "doctor-live: build failed" >&2; exit 1; }
fi
rc=0
size=()
[ -n "${SIZE:-}" ] && size=(--size "$SIZE")
"$cli" --io-dir "$dir" --budget "$budget" "${size[@]}" --json "$OUT/doctor.json" \
  --html "$OUT/doctor.html" --allow-overwrite >"$OUT/doctor.txt" 2>"$OUT/doctor.err" || rc=$?
cat "$OUT/doctor.txt"
echo "doctor-live: gdsb-doctor rc=$rc (0 nothing wrong, 3 a finding, 1/2 errors)"
if [ "$rc" -eq 1 ] || [ "$rc" -eq 2 ]; then cat "$OUT/doctor.err" >&2; exit "$rc"; fi
python3 - "$OUT/doctor.json" <<'PY' || exit 3
import json, sys
d = json.load(open(sys.argv[1]))
gpus = d["gpus"]
for g in gpus:
    print(f"doctor-live: {g['gpu']} ({g['bdf']}): read {g['measured_gb_s']} GB/s by {g['measured_by']}, "
          f"storage alone {g['storage_gb_s']} GB/s, ceiling {g['ceiling_gb_s']}")
steps = {s["name"]: s for s in d["steps"]}
for name, s in steps.items():
    if "storage alone" in name or "bounce" in name or "cuFile" in name:
        print(f"doctor-live: step {name}: ran={s['ran']} {s['gb_s']} GB/s ({s['detail'] or s['reason']})")
missing = [g["gpu"] for g in gpus if g["measured_gb_s"] is None]
if len(gpus) > 1 and missing:
    sys.exit(f"doctor-live: {len(gpus)} GPUs, no measured read on {', '.join(missing)} (every GPU reads at once)")
if len(gpus) > 1:
    print(f"doctor-live: every one of the {len(gpus)} GPUs has its own measured read from one node run")
PY
# Issue 19: where the only storage is virtual, the first line says so with the measured
# figure, and compat mode is what is expected (no nvidia-fs promise).
if grep -q "virtual storage" <(head -3 "$OUT/doctor.txt"); then
  echo "doctor-live: virtual storage named first: $(grep -m1 'virtual storage' "$OUT/doctor.txt")"
  if grep -q "modprobe nvidia-fs" "$OUT/doctor.txt"; then
    echo "doctor-live: virtual storage, yet a modprobe nvidia-fs promise" >&2; exit 3
  fi
elif grep -q "cuFile in compat mode: nvidia-fs is not loaded" "$OUT/doctor.txt"; then
  echo "doctor-live: compat finding present"
elif [ -e /proc/driver/nvidia-fs ]; then
  echo "doctor-live: nvidia-fs is loaded here: no compat finding expected"
else
  echo "doctor-live: expected 'cuFile in compat mode: nvidia-fs is not loaded' (nvidia-fs absent)" >&2
  exit 3
fi
exit 0
