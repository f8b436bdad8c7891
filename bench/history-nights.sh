#!/usr/bin/env bash
# Issue 41 on the GPU machine: real series for the gate's labelled corpus. Each "night" is one
# short gdsb-io run, as a CI job would run it; the figures are kept as the history keeps them,
# so the corpus holds the noise of real runs, not a generator's.
#   steady-16k:   NIGHTS runs of -x 1, 16 KiB sequential O_DIRECT reads, -w 8: nothing changes
#   steady-x2:    NIGHTS runs of -x 2 (host bounce into GPU memory), 1 MiB, -w 4: nothing changes
#   steady-x0:    NIGHTS runs of -x 0 (cuFile; compat mode on a VM without nvidia-fs), 1 MiB, -w 4
#   threads-step: NIGHTS runs of -x 1 at 16 KiB, -w 8 for the first half, -w 4 after (the virtio
#                 disk gave the same figure: a change with no effect)
#   threads-drop: the same with -w 1 after: a real step (-46% on 4 x H100, 2026-11-27)
# Writes under $OUT: one history a series (NAME.db), `history export` of each (NAME-csv/), and
# series.csv: series,night,value (GiB/s, the history's throughput figure), the corpus' input.
# Environment: OUT, GDSB_TEST_DIR (a directory on a real disk), NIGHTS (default 40),
# NIGHT_SECONDS (default 1), SERIES (default all four).
set -uo pipefail
cd "$(dirname "$0")/.."
io=$PWD/build/release/apps/gdsb-io/gdsb-io
rep=$PWD/build/release/apps/gdsb-report/gdsb-report
OUT=${OUT:?set OUT}
dir=${GDSB_TEST_DIR:-$PWD/build/gpu-test-files}
n=${NIGHTS:-40}
secs=${NIGHT_SECONDS:-1}
mkdir -p "$OUT/docs" "$dir"
file="$dir/gdsb-nights.dat"
rm -f "$file"
"$io" -f "$file" -x 1 -I 1 -s 2G -i 1M -w 4 >"$OUT/fill.txt" 2>&1 || { cat "$OUT/fill.txt"; echo "cannot write $file"; exit 1; }
echo "series,night,value" >"$OUT/series.csv"
status=0

# series NAME 'args of the first half' 'args of the second half'
series() {
  local name=$1 first=$2 second=$3 i args
  for i in $(seq 1 "$n"); do
    if [ "$i" -le $((n / 2)) ]; then args=$first; else args=$second; fi
    # shellcheck disable=SC2086
    "$io" -f "$file" -I 0 -s 2G -T "$secs" $args --json "$OUT/docs/$name-$(printf %03d "$i").json" \
      >>"$OUT/$name-runs.txt" 2>&1 || echo "$name night $i: rc=$?"
  done
  "$rep" history add "$OUT/$name.db" "$OUT"/docs/"$name"-*.json | tail -1
  "$rep" history export "$OUT/$name.db" --csv "$OUT/$name-csv" >/dev/null || status=1
  python3 - "$OUT/docs" "$name" >>"$OUT/series.csv" <<'PY'
import glob, json, os, sys
docs, name = sys.argv[1], sys.argv[2]
for i, f in enumerate(sorted(glob.glob(os.path.join(docs, name + "-*.json"))), 1):
    runs = [r for r in json.load(open(f)).get("runs", []) if r.get("result", {}).get("throughput_gib_s")]
    if runs:
        print("%s,%d,%.6g" % (name, i, runs[0]["result"]["throughput_gib_s"]))
PY
  echo "$name: $(grep -c "^$name," "$OUT/series.csv") nights with a figure of $n"
}

for s in ${SERIES:-steady-16k steady-x2 steady-x0 threads-step}; do
  case "$s" in
    steady-16k) series "$s" "-x 1 -w 8 -i 16K" "-x 1 -w 8 -i 16K" ;;
    steady-x2) series "$s" "-x 2 -w 4 -i 1M" "-x 2 -w 4 -i 1M" ;;
    steady-x0) series "$s" "-x 0 -w 4 -i 1M" "-x 0 -w 4 -i 1M" ;;
    threads-step) series "$s" "-x 1 -w 8 -i 16K" "-x 1 -w 4 -i 16K" ;;
    threads-drop) series "$s" "-x 1 -w 8 -i 16K" "-x 1 -w 1 -i 16K" ;;
    *) echo "history-nights: unknown series $s"; status=1 ;;
  esac
done
rm -f "$file"
# The documents are large (time series, histograms): keep the first of each series as a sample.
for s in ${SERIES:-steady-16k steady-x2 steady-x0 threads-step}; do
  find "$OUT/docs" -name "$s-*.json" ! -name "$s-001.json" -delete
done
exit "$status"
