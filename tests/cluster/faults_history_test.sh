#!/usr/bin/env bash
# An Xid of an earlier boot in the fleet view (issue 42, items 1 and 3): listed as history, once,
# apart from the same Xid of this boot, never making a node odd. Nodes recorded from the real
# HGX H100 (tests/topo/fixtures/real/hgx-h100-lspci-vvv.txt, GPU6 = 0000:cb:00.0, all 8 GPUs
# present) and saved by gdsb-topo --save-snapshot:
#   node0  no kernel log (healthy)
#   node1  reboot-xid79-kern.log: Xid 79 on cb:00.0 at 10:43:35, then a second "Linux version"
#          record at 11:02:17 and the driver loading again: history
#   node2  the Xid 79 record of NVIDIA/open-gpu-kernel-modules issue 1151 moved onto cb:00.0
#          (ogkm1151-xid79-journalctl.log, one boot, 19:02:39), the GPU still on the bus:
#          critical, drained
# (tests/topo/fixtures/real/kernel-logs/SOURCES.md). Expected: exit 3, node2 alone odd; the
# critical Xid 79 row names node2 only; a history row names node1 only, with "in an earlier
# boot, not judged"; in the platform check of node1, the log's line says which boot holds the
# Xid record.
# Usage: faults_history_test.sh GDSB_CLUSTER GDSB_TOPO HGX_LSPCI_TEXT KERNEL_LOG_DIR WORKDIR
set -uo pipefail
cluster=$1 topo=$2 hgx=$3 logs=$4 work=$5
rm -rf "$work" && mkdir -p "$work" || exit 1
sed 's/0000:2b:00/0000:cb:00/' "$logs/ogkm1151-xid79-journalctl.log" >"$work/xid79-cb.log"
"$topo" --lspci-text "$hgx" --save-snapshot "$work/snap-0" -q >/dev/null || { echo "FAIL: snapshot 0"; exit 1; }
"$topo" --lspci-text "$hgx" --kernel-log "$logs/reboot-xid79-kern.log" --save-snapshot "$work/snap-1" -q >/dev/null \
  || { echo "FAIL: snapshot 1"; exit 1; }
"$topo" --lspci-text "$hgx" --kernel-log "$work/xid79-cb.log" --save-snapshot "$work/snap-2" -q >/dev/null \
  || { echo "FAIL: snapshot 2"; exit 1; }
failures=0
# The platform check of node1: the log's line names the boots and where the record is.
"$topo" --lspci-text "$hgx" --kernel-log "$logs/reboot-xid79-kern.log" >"$work/topo-1.txt"
want=" [HISTORY] GPU 0000:cb:00.0 Xid 79 (fallen off the bus) at 10:43:35, in an earlier boot: not judged"
grep -qxF "$want" "$work/topo-1.txt" || { echo "FAIL: node1's FAULTS: $(sed -n '/FAULTS/,/CEILINGS/p' "$work/topo-1.txt")"; failures=$((failures + 1)); }
grep -q "^ kernel log: .*(.*, 6 lines, 2 boots: 0 Xid records in the last, 1 in earlier ones)$" "$work/topo-1.txt" \
  || { echo "FAIL: node1's log line: $(grep '^ kernel log' "$work/topo-1.txt")"; failures=$((failures + 1)); }
for n in 0 1 2; do
  timeout 120 "$cluster" --out "$work/run-$n" --topo-input "snapshot=$work/snap-$n" --no-cuda --no-nvml --no-hwloc \
    --phase-timeout 100 -q >/dev/null 2>"$work/run-$n.err"
  rc=$?
  [ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || { echo "FAIL: run $n: exit $rc: $(tail -3 "$work/run-$n.err")"; exit 1; }
done
python3 - "$work" <<'PY' || exit 1
import glob, json, os, sys
work = sys.argv[1]
os.makedirs(f"{work}/fleet", exist_ok=True)
for i in range(3):
    doc = json.load(open(glob.glob(f"{work}/run-{i}/nodes/*.json")[0]))
    for d in [doc] + ([doc["summary"]] if "summary" in doc else []):
        d["node"] = d["host"] = f"node{i}"
        d["rank"] = i
        if "node_id" in d:
            d["node_id"] = f"node{i}"
    json.dump(doc, open(f"{work}/fleet/node{i}.json", "w"))
PY
timeout 60 "$cluster" --from "$work/fleet"/node*.json --out "$work/out" -q >/dev/null
rc=$?
[ "$rc" -eq 3 ] || { echo "FAIL: --from exit $rc, want 3 (node2 is odd)"; failures=$((failures + 1)); }
python3 - "$work/out" <<'PY' || failures=$((failures + 1))
import json, sys
out = sys.argv[1]
doc = json.load(open(f"{out}/cluster.json"))
assert doc["odd_nodes"] == ["node2"], doc["odd_nodes"]
got = [(f["severity"], f["title"], [(n["node"], n["bdfs"], n["count"]) for n in f["nodes"]]) for f in doc["faults"]]
want = [("critical", "Xid 79 (fallen off the bus)", [("node2", ["0000:cb:00.0"], 1)]),
        ("history", "Xid 79 (fallen off the bus) in an earlier boot, not judged", [("node1", ["0000:cb:00.0"], 1)])]
assert got == want, got
text = open(f"{out}/cluster.txt").read().splitlines()
rows = [l for l in text if l.startswith("    [")]
assert rows == ["    [critical] Xid 79 (fallen off the bus): 1 node(s): node2 (0000:cb:00.0, 1 event(s))",
                "    [history] Xid 79 (fallen off the bus) in an earlier boot, not judged: 1 node(s): "
                "node1 (0000:cb:00.0, 1 event(s))"], rows
assert sum("node1" in l for l in text if "Xid 79" in l) == 1, text
assert text[-1] == "FAIL: odd nodes: node2", text[-1]
print("ok:", out)
PY
[ "$failures" -eq 0 ] && echo "PASS: faults_history_test" || { echo "FAIL: $failures"; exit 1; }
