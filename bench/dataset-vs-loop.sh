#!/usr/bin/env bash
# Issue 43: the dataset preset against a plain loader loop over the same files on the same
# disk. gdsb-io --workload dataset (each thread opens, reads and closes one file after
# another inside the measured time) and bench/dataset_loop.c (the same files in the same
# order per thread, O_DIRECT, pread in -i pieces, close; nothing else) run in alternating
# rounds; the medians of files/s and their ratio are printed. Target: the preset within 10%
# of the loop (it pays for its statistics and its transfer path, the loop for nothing).
# fio is not used: it cannot hand each of T threads every T-th file of a 100,000-name list
# (no file-list option; a colon list of that length breaks its option parser).
#
#   bench/dataset-vs-loop.sh DIR [FILES] [THREADS] [XFER]
#     DIR: the data set goes to DIR/dataset (created once, reused); FILES default 20000,
#     THREADS 8 (the preset's default), XFER 1 (the loop's own path: storage to host).
# Environment: ROUNDS (default 3), GDSB_IO (default build/release/apps/gdsb-io/gdsb-io).
# Exit: 0 within 10%, 3 the preset more than 10% slower, 1 a run failed, 2 usage.
set -uo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] && [ -d "$1" ] || { echo "usage: bench/dataset-vs-loop.sh DIR [FILES] [THREADS] [XFER] (DIR must exist)" >&2; exit 2; }
dir=$(cd "$1" && pwd) files="${2:-20000}" threads="${3:-8}" xfer="${4:-1}" rounds="${ROUNDS:-3}"
io="${GDSB_IO:-$PWD/build/release/apps/gdsb-io/gdsb-io}"
[ -x "$io" ] || { echo "dataset-vs-loop: $io not built (cmake --build --preset release --target gdsb-io)" >&2; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cc -O2 -pthread -o "$tmp/dataset_loop" bench/dataset_loop.c || { echo "dataset-vs-loop: cannot compile bench/dataset_loop.c" >&2; exit 1; }

echo "dataset-vs-loop: $(uname -n), $(uname -r), $(nproc) CPUs, $(date -u +%FT%TZ)"
echo "dataset-vs-loop: $files files of 128 KiB in $dir/dataset ($(findmnt -no FSTYPE,SOURCE -T "$dir" | tr -s ' ')), $threads threads, -x $xfer, $rounds rounds"
ours=() loop=()
for r in $(seq 1 "$rounds"); do
  "$io" --workload dataset -D "$dir" -x "$xfer" --files "$files" --file-size 128K -w "$threads" -q \
    --json "$tmp/ours.json" --allow-overwrite >"$tmp/ours.txt" 2>&1 || { cat "$tmp/ours.txt"; exit 1; }
  o=$(python3 -c 'import json,sys; print("%.0f" % json.load(open(sys.argv[1]))["workload_summary"]["time_to_result"]["files_per_s"])' "$tmp/ours.json")
  [ "$r" = 1 ] && grep "per file" "$tmp/ours.txt"
  "$tmp/dataset_loop" "$dir/dataset/files.list" "$threads" 131072 >"$tmp/loop.txt" || exit 1
  l=$(awk '{print $6}' "$tmp/loop.txt")
  echo "round $r: preset $o files/s, loop $l files/s"
  ours+=("$o") loop+=("$l")
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
mo=$(median "${ours[@]}") ml=$(median "${loop[@]}")
ratio=$(awk -v o="$mo" -v l="$ml" 'BEGIN {printf "%.3f", o / l}')
echo "median: preset $mo files/s, loop $ml files/s, ratio $ratio (target >= 0.90)"
awk -v r="$ratio" 'BEGIN {exit !(r >= 0.9)}' && exit 0
echo "dataset-vs-loop: the preset is more than 10% slower than the plain loop"
exit 3
