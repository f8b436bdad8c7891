#!/usr/bin/env bash
# Ranks that share a node (issue 34, items 5, 6 and 8) under a real mpirun on this one host:
#  1. mpirun -np 4, no recording, --io-size 1M --storage-time 0 (points of a few ms, where the
#     barrier's nap and each rank's setup are as long as the I/O), three times: one node of 4
#     ranks, exit 0, never a [clock] finding (one host, one clock); --io-modes 1,1 is one mode;
#     --from on their reports says the same; with --scale auto one point, and the text says a
#     scaling curve needs two nodes or more, never a shape of that point (issue 43). Then rank
#     3's setup made slow (an LD_PRELOAD delays the open of its file by 300 ms: it begins after
#     the others ended): on one host,
#     and on four recorded nodes, where its barrier exit, not its late start, is what the
#     clock check compares: no finding;
#  2. the same four ranks reading one recording (2 GPUs): one node, its GPUs counted once
#     ("Measured on 1 node(s) with 2 GPU(s)", not 4 with 8);
#  3. two nodes of two ranks, placed round-robin (ranks 0 and 2 read one recording, 1 and 3
#     another): --scale 1,2 runs ranks 0 and 2, then all four; check_storage.py recomputes
#     every aggregate and each node's share from the node reports;
#  4. a mixed fleet: rank 2 has no GPU service, the others a fake one: the checkpoint runs
#     in one mode on every rank (-x 1, the first of --io-modes 2,1 every rank runs), says so,
#     and its save and load are whole;
#  5. SIGINT to the ranks in the middle of a 30 s point: exit 130, the reports written, the
#     stopped samples "interrupted" (none "stonewall").
# Usage: ranks_mpi_test.sh GDSB_CLUSTER MAKE_CLUSTER_FIXTURE WORKDIR SLOW_OPEN_PRELOAD
set -uo pipefail
bin=$1 make_fixture=$2 work=$3 slow_open=$4
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work/io" "$work/rec" || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
"$make_fixture" "$work/fx" >/dev/null || { echo "FAIL: make_cluster_fixture"; exit 1; }
# Recordings of one healthy box (2 GPUs) under different paths: each path is a node of its own.
for n in 0 1 2 3; do ln -s "$work/fx/node0/root" "$work/rec/n$n"; done
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
quick=(--p2p-size 64K --p2p-repetitions 1 --p2p-loops 1 --no-hwloc --phase-timeout 60 --min-deviation 50 -q)
mpi=(timeout 150 mpirun --allow-run-as-root --oversubscribe)

# 1. Four ranks on one host: one node, one clock.
for round in 1 2 3; do
  "${mpi[@]}" -np 4 "$bin" --out "$work/one$round" --io-dir "$work/io" --io-modes 1,1 --io-size 1M --io-block 1M \
    --storage-time 0 --scale auto --demand-per-gpu 1GB/s "${quick[@]}" >"$work/one$round.log" 2>&1
  rc=$?
  [ "$rc" -eq 0 ] || fail "round $round: exit $rc, want 0 ($(grep -h '\[' "$work/one$round/cluster.txt" 2>/dev/null | head -3))"
  grep -q "\[clock\]" "$work/one$round/cluster.txt" 2>/dev/null && fail "round $round: a clock finding on one host"
done
grep -q "^gdsb-cluster: 1 node(s) (4 ranks)," "$work/one1/cluster.txt" ||
  fail "not one node of 4 ranks: $(head -1 "$work/one1/cluster.txt")"
python3 - "$work/one1/cluster.json" <<'PY' || fail "one host: cluster.json"
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["nodes"]) == 1 and d["nodes"][0]["ranks"] == [0, 1, 2, 3], d["nodes"]
pts = d["shared_storage"]["points"]
assert [(p["op"], p["mode"], p["nodes"], p["ranks"]) for p in pts] == [("write", 1, 1, 4), ("read", 1, 1, 4)], pts
print("ok: one node of ranks 0-3; --io-modes 1,1 gives one point an op, on 1 node of 4 ranks")
PY
python3 "$here/check_storage.py" "$work/one1" --scale 1 --ops write,read || fail "one host: the figures disagree"
# --scale auto on one node (issue 43): one point, so the text says a curve needs two nodes and
# the GPUs-fed line says nothing of a curve's shape.
grep -q "^  Scaling: one point (1 node, 4 ranks): a scaling curve needs two nodes or more; launch ranks on more hosts" \
  "$work/one1/cluster.txt" || fail "one host --scale auto: no 'a scaling curve needs two nodes' line: $(grep -i scal "$work/one1/cluster.txt")"
grep -qi "still grows\|one point only\|run --scale" "$work/one1/cluster.txt" "$work/one1/cluster.json" &&
  fail "one host --scale auto: the shape of a one-point curve, or --scale asked for: $(grep -hi "still grows\|one point only\|run --scale" "$work/one1/cluster.txt")"
grep -q "GPUs fed: .*Whether the storage saturates is not known (one point, no curve)" "$work/one1/cluster.txt" ||
  fail "one host --scale auto: GPUs fed: $(grep "GPUs fed" "$work/one1/cluster.txt")"
[ "$(ls "$work/one1/nodes" | grep -c '\.[0-3]\.json$')" -eq 4 ] || fail "node reports: $(ls "$work/one1/nodes")"
# --from on the four reports: the same one node and the same points.
"$bin" --from "$work/one1/nodes/"*.json --out "$work/one1-from" -q >/dev/null 2>&1 || fail "--from: exit $?, want 0"
grep -q "^gdsb-cluster: 1 node(s) (4 ranks)," "$work/one1-from/cluster.txt" || fail "--from: not one node of 4 ranks"
python3 -c "
import json, sys
a, b = (json.load(open(p))['shared_storage']['points'] for p in sys.argv[1:])
sys.exit(0 if a == b else 'the points differ')" "$work/one1/cluster.json" "$work/one1-from/cluster.json" || fail "--from: points"

# Rank 3's setup 300 ms slow: one host, then four recorded nodes. Rank 3 then reads alone while
# the others read together, so its 1 MiB figure differs for real (CI saw +53%): this part is about
# clocks, so figures are not judged here (--min-deviation 1000).
slow=(-x "LD_PRELOAD=$slow_open" -x GDSB_SLOW_OPEN_MATCH=gdsb-cluster.storage.3.dat -x GDSB_SLOW_OPEN_MS=300)
for where in host nodes; do
  extra=()
  [ "$where" = nodes ] && extra=(--topo-input "sysfs-root=$work/rec/n{rank}")
  "${mpi[@]}" "${slow[@]}" -np 4 "$bin" --out "$work/slow-$where" --io-dir "$work/io" --io-modes 1 --io-size 1M \
    --storage-time 0 --aggregate "${extra[@]}" "${quick[@]/#50/1000}" >"$work/slow-$where.log" 2>&1
  rc=$?
  [ "$rc" -eq 0 ] || fail "slow setup on $where: exit $rc, want 0 ($(grep -h '\[' "$work/slow-$where/cluster.txt" 2>/dev/null | head -3))"
  python3 - "$work/slow-$where" <<'PY' || fail "slow setup on $where: rank 3 did not start after the others ended"
import glob, json, sys
s = {json.load(open(p))["rank"]: json.load(open(p))["storage"]["samples"] for p in glob.glob(sys.argv[1] + "/nodes/*.json")}
read = {r: [x for x in v if x["op"] == "read"][0] for r, v in s.items()}
late = read[3]["start_unix_s"] - min(read[r]["end_unix_s"] for r in (0, 1, 2))
assert late > 0.1, f"rank 3 began {late:.3f} s after the first end"
print(f"ok: rank 3 began {late:.3f} s after the first rank ended; no clock finding")
PY
done

# 2. The same with one recording of 2 GPUs for every rank: its GPUs counted once.
"${mpi[@]}" -np 4 "$bin" --out "$work/gpus" --io-dir "$work/io" --topo-input "sysfs-root=$work/rec/n0" \
  --fake-gpu "$work/fx/node0/fake-gpu.json" --io-modes 1 --io-size 4M --storage-time 0 --aggregate \
  --demand-per-gpu 1MB/s "${quick[@]}" >"$work/gpus.log" 2>&1
rc=$?
[ "$rc" -eq 0 ] || fail "one recording: exit $rc, want 0 ($(tail -3 "$work/gpus.log"))"
grep -q "Measured on 1 node(s) with 2 GPU(s)" "$work/gpus/cluster.txt" ||
  fail "GPUs not counted once a node: $(grep -o 'Measured on [^:.]*' "$work/gpus/cluster.txt")"
python3 - "$work/gpus/cluster.json" <<'PY' || fail "one recording: gpus_measured"
import json, sys
g = json.load(open(sys.argv[1]))["shared_storage"]["gpus_fed"]
assert g["gpus_measured"] == 2, g
print("ok: 4 ranks on one node of 2 GPUs: gpus_measured 2")
PY

# 3. Two nodes of two ranks, round-robin: --scale counts nodes.
printf '#!/usr/bin/env bash\nexec "$@" --topo-input "sysfs-root=%s/rec/n$((OMPI_COMM_WORLD_RANK %% 2))"\n' "$work" \
  >"$work/two-nodes.sh"
"${mpi[@]}" -np 4 bash "$work/two-nodes.sh" "$bin" --out "$work/two" --io-dir "$work/io" --io-modes 1 --io-size 8M \
  --storage-time 1 --scale 1,2 "${quick[@]}" >"$work/two.log" 2>&1
rc=$?
[ "$rc" -eq 0 ] || fail "two nodes: exit $rc, want 0 ($(tail -3 "$work/two.log"))"
python3 "$here/check_storage.py" "$work/two" --scale 1,2 --ops write,read || fail "two nodes: the figures disagree"
python3 - "$work/two/cluster.json" <<'PY' || fail "two nodes: cluster.json"
import json, sys
d = json.load(open(sys.argv[1]))
assert sorted(n.get("ranks") for n in d["nodes"]) == [[0, 2], [1, 3]], [n.get("ranks") for n in d["nodes"]]
ranks = {p["nodes"]: p["ranks"] for p in d["shared_storage"]["points"] if p["op"] == "read"}
assert ranks == {1: 2, 2: 4}, ranks
print("ok: nodes of ranks 0,2 and 1,3; the point on 1 node ran 2 ranks, on 2 nodes 4")
PY

# 4. A mixed fleet: the checkpoint's mode is chosen once, for every rank.
printf '#!/usr/bin/env bash\n[ "$OMPI_COMM_WORLD_RANK" = 2 ] && exec "$@"\nexec "$@" --fake-gpu "%s"\n' \
  "$work/fx/node0/fake-gpu.json" >"$work/mixed.sh"
"${mpi[@]}" -np 4 bash "$work/mixed.sh" "$bin" --out "$work/mixed" --io-dir "$work/io" \
  --topo-input "sysfs-root=$work/rec/n{rank}" --io-modes 2,1 --io-size 4M --storage-time 0 --storage-ops read \
  --model-bytes 16M "${quick[@]}" >"$work/mixed.log" 2>&1
rc=$?
[ -s "$work/mixed/cluster.json" ] || fail "mixed fleet: no cluster.json (exit $rc: $(tail -3 "$work/mixed.log"))"
python3 - "$work/mixed/cluster.json" <<'PY' || fail "mixed fleet: the checkpoint"
import json, sys
ck = json.load(open(sys.argv[1]))["shared_storage"]["checkpoint"]
assert ck["modes"] == [1], ck["modes"]
assert ck["save"]["status"] == "ok" and ck["load"]["status"] == "ok", (ck["save"], ck["load"])
assert ck["ranks"] == 4 and ck["save"]["bytes"] == 16 << 20, ck
text = ck.get("mode_text", "")
assert "-x 1 (CPUONLY) on every rank" in text and "-x 2 not on " in text and "(rank 2: " in text, text
print("ok: the checkpoint ran -x 1 on all 4 ranks:", text)
PY

# 5. SIGINT in the middle of a point.
"${mpi[@]}" -np 2 "$bin" --out "$work/int" --io-dir "$work/io" --io-modes 1 --io-size 64M --storage-time 30 \
  --storage-ops read --aggregate "${quick[@]}" >"$work/int.log" 2>&1 &
launcher=$!
for _ in $(seq 1 600); do  # the read point begins once the fill is done: its files are there
  [ "$(ls "$work/io" | grep -c 'gdsb-cluster.storage')" -ge 2 ] && break
  sleep 0.1
done
sleep 4
for p in $(pgrep -P "$launcher"); do
  for q in "$p" $(pgrep -P "$p"); do
    [ "$(cat "/proc/$q/comm" 2>/dev/null)" = gdsb-cluster ] && kill -INT "$q"
  done
done
wait "$launcher"
rc=$?
[ "$rc" -eq 130 ] || fail "SIGINT: exit $rc, want 130 ($(tail -3 "$work/int.log"))"
python3 - "$work/int" <<'PY' || fail "SIGINT: the reports"
import glob, json, sys
stops = [s["stopped_by"] for p in glob.glob(sys.argv[1] + "/nodes/*.json")
         for s in json.load(open(p))["storage"]["samples"]]
assert "interrupted" in stops and "stonewall" not in stops, stops
d = json.load(open(sys.argv[1] + "/cluster.json"))["shared_storage"]
assert d.get("interrupted") is True and d["points"][0]["stopped_by"] == "interrupted", d["points"]
print("ok: SIGINT: exit 130, samples", stops)
PY

[ "$failures" -eq 0 ] && echo "PASS: ranks sharing a node under mpirun" || echo "FAILED: $failures"
exit $((failures > 0))
