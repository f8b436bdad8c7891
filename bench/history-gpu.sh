#!/usr/bin/env bash
# Issue 37 on the GPU machine: nightly runs recorded in one call, one real setting changed
# part way, kept in a history; the change point must come out at the run where the setting
# changed and name the setting.
#   threads: 20 runs of gdsb-io -x 1 (16 KiB sequential reads, O_DIRECT) of one file on the
#            disk, the first 10 with -w 8, the last 10 with -w 1 -> a throughput drop at run
#            11, attributed to "thread count went from 8 to 1". Required. (At 1 MiB the virtual
#            disk gave about the same at 1 and 8 threads: the change showed in latency only; a
#            tmpfs gives no figure to keep: its reads are the page cache's.)
#   cufile:  20 runs of -x 0 with CUFILE_ENV_PATH_JSON pointing at a cufile.json whose
#            properties.max_direct_io_size_kb is 16384 for the first 10 and 64 for the last 10
#            (with per_buffer_cache_size_kb 64: cuFile refuses a direct I/O size below it) ->
#            attributed to that key if the figure moves. Reported, not required: GDS may be
#            waived on the machine (no udev record, no GPU). Then one run with 64 alone, which
#            cuFile refuses: the history gate must fail on that newest run, naming why.
# Writes under $OUT: threads.db, threads.html, threads.json, threads-gate.{xml,md}, and the
# same for cufile; summary lines on stdout. Exit 0 when the threads series shows the change.
# Environment: OUT, GDSB_TEST_DIR (a directory on a real disk), HISTORY_RUNS (default 10 a side),
# HISTORY_SECONDS (default 3 a run).
set -uo pipefail
cd "$(dirname "$0")/.."
io=$PWD/build/release/apps/gdsb-io/gdsb-io
rep=$PWD/build/release/apps/gdsb-report/gdsb-report
OUT=${OUT:?set OUT}
dir=${GDSB_TEST_DIR:-$PWD/build/gpu-test-files}
n=${HISTORY_RUNS:-10}
secs=${HISTORY_SECONDS:-3}
mkdir -p "$OUT/docs" "$dir"
file="$dir/gdsb-history.dat"
rm -f "$file"
# gdsb-io writes the file it then reads (and marks it as its own).
"$io" -f "$file" -x 1 -I 1 -s 1G -i 1M -w 4 >"$OUT/fill.txt" 2>&1 || { cat "$OUT/fill.txt"; echo "cannot write $file"; exit 1; }
status=0

# series NAME 'gdsb-io args before' 'after' [env before] [env after]
series() {
  local name=$1 before=$2 after=$3 env_before=${4:-} env_after=${5:-} i args env
  for i in $(seq 1 $((2 * n))); do
    if [ "$i" -le "$n" ]; then args=$before env=$env_before; else args=$after env=$env_after; fi
    # shellcheck disable=SC2086
    env $env "$io" -f "$file" -I 0 -s 1G -T "$secs" $args --json "$OUT/docs/$name-$(printf %02d "$i").json" \
      >>"$OUT/$name-runs.txt" 2>&1
    echo "$name run $i ($args $env): rc=$?"
    sleep 1  # each document its own start second: the history orders runs by time
  done
  "$rep" history add "$OUT/$name.db" "$OUT"/docs/"$name"-*.json | tail -1
  "$rep" history show "$OUT/$name.db" --html "$OUT/$name.html" --json "$OUT/$name.json"
  "$rep" gate --history "$OUT/$name.db" --junit "$OUT/$name-gate.xml" --markdown "$OUT/$name-gate.md"
  echo "$name: gate --history rc=$?"
}

series threads "-x 1 -w 8 -i 16K" "-x 1 -w 1 -i 16K"

echo '{"logging": {"level": "ERROR"}, "properties": {"max_direct_io_size_kb": 16384, "allow_compat_mode": true}}' \
  >"$OUT/cufile-a.json"
echo '{"logging": {"level": "ERROR"}, "properties": {"max_direct_io_size_kb": 64, "per_buffer_cache_size_kb": 64, "allow_compat_mode": true}}' \
  >"$OUT/cufile-b.json"
series cufile "-x 0 -w 4 -i 1M" "-x 0 -w 4 -i 1M" "CUFILE_ENV_PATH_JSON=$OUT/cufile-a.json" "CUFILE_ENV_PATH_JSON=$OUT/cufile-b.json"
# A night cuFile refuses its configuration: the run fails, its document says why, and the
# history's gate fails on it (exit 3) instead of judging the last night that worked.
echo '{"logging": {"level": "ERROR"}, "properties": {"max_direct_io_size_kb": 64, "allow_compat_mode": true}}' \
  >"$OUT/cufile-c.json"
CUFILE_ENV_PATH_JSON=$OUT/cufile-c.json "$io" -f "$file" -I 0 -s 1G -T "$secs" -x 0 -w 4 -i 1M \
  --json "$OUT/docs/cufile-99.json" >"$OUT/cufile-refused.txt" 2>&1
echo "cufile refused night: rc=$? (1 expected)"; grep -A3 "gdsb-io:" "$OUT/cufile-refused.txt" | head -6
"$rep" history add "$OUT/cufile.db" "$OUT/docs/cufile-99.json" | tail -1
"$rep" gate --history "$OUT/cufile.db" >"$OUT/cufile-gate-refused.txt"; rc=$?
echo "cufile: gate --history after the refused night rc=$rc (3 expected)"; grep -i "no figure" "$OUT/cufile-gate-refused.txt" | head -3
[ "$rc" = 3 ] || status=1

python3 - "$OUT" "$n" <<'PY' || status=1
import json, sys
out, n = sys.argv[1], int(sys.argv[2])
def changes(name):
    d = json.load(open(f"{out}/{name}.json"))
    for s in d["series"]:
        for c in s["change_points"]:
            print(f"{name}: {c['sentence']} [p={c['p_value']:.2g}]")
    return d
t = changes("threads")
runs = {r["id"]: r for r in t["runs"]}
ok = False
for s in t["series"]:
    if s["metric"] != "throughput":
        continue
    for c in s["change_points"]:
        names = {f["fact"]: (f["before"], f["after"]) for f in c["context_changes"]}
        if abs(c["run"] - (n + 1)) <= 1 and names.get("threads") == ("8", "1"):
            ok = True
print("threads: change point at run", n + 1, "naming the thread count:", "yes" if ok else "NO")
c = changes("cufile")
print("cufile: series", [s["title"] for s in c["series"]])
for name, d in (("threads", t), ("cufile", c)):
    for s in d["series"]:
        if s["metric"] == "throughput":
            print(name, "throughput by run", [round(p["value"], 3) for p in s["points"]])
sys.exit(0 if ok else 1)
PY
rm -f "$file"
exit "$status"
