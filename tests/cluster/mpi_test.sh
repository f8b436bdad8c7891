#!/usr/bin/env bash
# A real MPI cluster of 4 on localhost (mpirun --oversubscribe): each rank reads its own
# recorded node (make_cluster_fixture: node1 ACS redirect, node2 a GPU at x8, node3 slow
# copies on the fake GPU service). The report must name exactly ranks 1, 2 and 3, exit 3;
# --from on the node reports must say the same; a rank that leaves is reported, not hung.
# Usage: mpi_test.sh GDSB_CLUSTER MAKE_CLUSTER_FIXTURE WORKDIR
set -uo pipefail
bin=$1 make_fixture=$2 work=$3
rm -rf "$work" && mkdir -p "$work/io" || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
"$make_fixture" "$work/fx" >/dev/null || { echo "FAIL: make_cluster_fixture"; exit 1; }
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# Small, sleep-dominated figures: the fake GPU's copy delay (5 ms healthy, 50 ms slow) sets
# them, not this shared machine's noise; --min-deviation 50 keeps noise from naming a node.
common=(--topo-input "sysfs-root=$work/fx/node{rank}/root" --fake-gpu "$work/fx/node{rank}/fake-gpu.json"
        --io-dir "$work/io" --io-modes 3 --io-size 8M --io-block 1M --io-time 1
        --p2p-size 64K --p2p-repetitions 1 --p2p-loops 1 --min-deviation 50 -q)

start=$SECONDS
timeout 100 mpirun --allow-run-as-root --oversubscribe -np 4 "$bin" --out "$work/out" \
  --phase-timeout 40 "${common[@]}" >"$work/run.log" 2>&1
rc=$?
echo "mpirun -np 4: exit $rc in $((SECONDS - start)) s"
[ "$rc" -eq 3 ] || fail "exit $rc, want 3 ($(tail -5 "$work/run.log"))"
for f in cluster.json cluster.html cluster.txt cluster.junit.xml cluster.prom; do
  [ -s "$work/out/$f" ] || fail "no $f"
done
n=$(ls "$work/out/nodes/"*.json 2>/dev/null | wc -l)
[ "$n" -eq 4 ] || fail "$n node reports, want 4"

schema="$(cd "$(dirname "$0")/../.." && pwd)/docs/schema/gdsbench.cluster-1.schema.json"
python3 - "$work/out/cluster.json" "$schema" <<'PY' || failures=$((failures + 1))
import json, sys
import jsonschema
doc = json.load(open(sys.argv[1]))
jsonschema.validate(doc, json.load(open(sys.argv[2])))
assert doc["schema"] == "gdsbench.cluster/1", doc["schema"]
odd = sorted(n.rsplit(".", 1)[1] for n in doc["odd_nodes"])
assert odd == ["1", "2", "3"], f"odd nodes {doc['odd_nodes']}, want ranks 1, 2, 3"
by = {}
for f in doc["findings"]:
    by.setdefault(f["node"].rsplit(".", 1)[-1], []).append(f)
kinds = lambda r: {f["kind"] for f in by.get(r, [])}
texts = lambda r: " | ".join(f["text"] for f in by.get(r, []))
assert "port 0000:02:00.0 ACS SV+RR+CR+UF (3 others: off)" in texts("1"), texts("1")
assert "GPU 0000:83:00.0 link Gen5 x8 of x16 (3 others: Gen5 x16)" in texts("2"), texts("2")
assert kinds("3") == {"outlier"}, texts("3")
assert any(f["metric"] == "io_x3_read_gb_s" for f in by["3"]), texts("3")
print("ok: cluster.json names ranks 1 (ACS), 2 (x8), 3 (slow) and nothing else")
PY
grep -q 'gdsb_cluster_h2d_gb_s{node="[^"]*",gpu="1"}' "$work/out/cluster.prom" || fail "no per-GPU gauge"
[ "$(grep -c '<failure' "$work/out/cluster.junit.xml")" -eq 3 ] || fail "JUnit failures != 3"

# The io phase reads the file it wrote itself: every read starts with none of it in the
# page cache ($work is on this machine's disk, where the runner's drop holds).
python3 - "$work/out/nodes/"*.json <<'PY' || fail "an io phase read its own file from the page cache"
import json, sys
for path in sys.argv[1:]:
    runs = json.load(open(path))["io"]["runs"]
    assert runs, f"{path}: no io runs"
    for r in runs:
        assert r["status"] == "ok", (path, r["status"], r["reason"])
        assert r["page_cache_resident_at_start"] == 0, (path, r["page_cache_resident_at_start"])
print("ok: every node's io reads started out of the page cache")
PY

# The same judgement from the node reports alone (no MPI).
"$bin" --from "$work/out/nodes/"*.json --out "$work/again" --min-deviation 50 -q >"$work/from.log" 2>&1
rc=$?
[ "$rc" -eq 3 ] || fail "--from exit $rc, want 3"
python3 -c "
import json,sys
a=json.load(open('$work/out/cluster.json'))['odd_nodes']; b=json.load(open('$work/again/cluster.json'))['odd_nodes']
sys.exit(0 if a==b else 'odd nodes differ: %s vs %s' % (a,b))" || fail "--from names other nodes"

# A rank that leaves before its first phase: reported as missing, the run ends (exit 3).
start=$SECONDS
timeout 60 mpirun --allow-run-as-root --oversubscribe -np 3 "$bin" --out "$work/lost" \
  --phase-timeout 3 --simulate-lost-rank 2 "${common[@]}" >"$work/lost.log" 2>&1
rc=$?
echo "lost rank: exit $rc in $((SECONDS - start)) s"
[ "$rc" -eq 3 ] || fail "lost rank: exit $rc, want 3 ($(tail -3 "$work/lost.log"))"
python3 -c "
import json,sys
d=json.load(open('$work/lost/cluster.json'))
m=[f for f in d['findings'] if f['kind']=='missing-node' and f['node']=='rank2']
sys.exit(0 if m else 'rank2 not reported missing: %s' % d['findings'])" || fail "lost rank not reported"

[ "$failures" -eq 0 ] && echo "PASS" || { echo "$failures failure(s); logs in $work"; exit 1; }
