#!/usr/bin/env bash
# gdsb-doctor's live ladder on the GPU test machine (issue 12): topology, pinned H2D/D2H,
# -x 1, -x 2, -x 0 within a 60 s budget, text + JSON + HTML under $OUT. On that machine
# (compat mode, no NVMe, no nvidia-fs) the first finding must be "cuFile in compat mode:
# nvidia-fs is not loaded" with the measured figures; the script checks it and exits 3
# when it is missing (the doctor itself exits 3 there: a certain finding).
#
#   bench/doctor-live.sh [DIR] [BUDGET]     defaults: $GDSB_SCRATCH or $PWD, 60s
# Environment: OUT (default ./gdsb-report/doctor), SIZE (scratch file, default 1G).
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
"$cli" --io-dir "$dir" --budget "$budget" --size "${SIZE:-1G}" --json "$OUT/doctor.json" \
  --html "$OUT/doctor.html" --allow-overwrite >"$OUT/doctor.txt" 2>"$OUT/doctor.err" || rc=$?
cat "$OUT/doctor.txt"
echo "doctor-live: gdsb-doctor rc=$rc (0 nothing wrong, 3 a finding, 1/2 errors)"
if [ "$rc" -eq 1 ] || [ "$rc" -eq 2 ]; then cat "$OUT/doctor.err" >&2; exit "$rc"; fi
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
