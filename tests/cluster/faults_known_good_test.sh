#!/usr/bin/env bash
# The fleet view judges a node's faults against that node's known-good facts (issue 42, item
# 3). Nodes recorded from the real HGX H100 (tests/topo/fixtures/real/hgx-h100-lspci-vvv.txt,
# GPU6 = 0000:cb:00.0): three healthy, and node3 whose GPU6 fell off the bus and left PCI (its
# lspci stanza removed) with the Xid 79 record of NVIDIA/open-gpu-kernel-modules issue 1151
# (tests/topo/fixtures/real/kernel-logs/SOURCES.md) moved onto its address (2b:00 -> cb:00),
# saved by gdsb-topo --save-snapshot and run by gdsb-cluster --topo-input snapshot=DIR.
#  1. The class's known-good (its reference, the file gdsb-cluster writes for it) lists
#     cb:00.0 as a GPU: node3's Xid is for a GPU it should have: critical, "missing", the
#     node odd and its fault the first finding; both routes (the ranks' summary blocks, the
#     documents without them) agree.
#  2. Alone (no class to compare), node3's report whose log is its own (read in the boot the
#     facts were collected in, as a live /dev/kmsg read records it: the same boot id on both)
#     is the same verdict; with a log file of unknown boot it is the warning it was (a log of
#     another node?), and the node is not odd for it.
# Usage: faults_known_good_test.sh GDSB_CLUSTER GDSB_TOPO HGX_LSPCI_TEXT KERNEL_LOG_DIR WORKDIR
set -uo pipefail
cluster=$1 topo=$2 hgx=$3 logs=$4 work=$5
rm -rf "$work" && mkdir -p "$work" || exit 1
python3 - "$hgx" "$logs/ogkm1151-xid79-journalctl.log" "$work" <<'PY' || exit 1
import re, sys
hgx, log, work = sys.argv[1:4]
text = open(hgx).read()
blocks = re.split(r"\n\n", text)
kept = [b for b in blocks if not b.lstrip("\n").startswith("cb:00.0 ")]
assert len(kept) == len(blocks) - 1, "the recording has one cb:00.0 stanza"
open(f"{work}/hgx-without-cb.txt", "w").write("\n\n".join(kept))
open(f"{work}/xid79-cb.log", "w").write(open(log).read().replace("0000:2b:00", "0000:cb:00"))
PY
"$topo" --lspci-text "$hgx" --save-snapshot "$work/snap-ok" -q >/dev/null || { echo "FAIL: snapshot ok"; exit 1; }
"$topo" --lspci-text "$work/hgx-without-cb.txt" --kernel-log "$work/xid79-cb.log" --save-snapshot "$work/snap-sick" -q \
  >/dev/null || { echo "FAIL: snapshot sick"; exit 1; }
# The sick node's snapshot as a live collection writes it when its log is its own /dev/kmsg.
cp -r "$work/snap-sick" "$work/snap-own"
python3 - "$work/snap-own/snapshot.json" <<'PY' || exit 1
import json, sys
p = sys.argv[1]
s = json.load(open(p))
hw = s["hw_faults"]
assert hw["kernel_log"]["xids"][0]["bdf"] == "0000:cb:00.0", hw["kernel_log"]
hw["boot_id"] = hw["kernel_log"]["boot_id"] = "5b1f3c2e-8a4d-4e9b-a7c6-0d2e9f8b1a34"
json.dump(s, open(p, "w"))
PY
for n in ok sick own; do
  timeout 120 "$cluster" --out "$work/run-$n" --topo-input "snapshot=$work/snap-$n" --no-cuda --no-nvml --no-hwloc \
    --phase-timeout 100 -q >/dev/null 2>"$work/run-$n.err"
  rc=$?
  [ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || { echo "FAIL: the $n run: exit $rc: $(tail -3 "$work/run-$n.err")"; exit 1; }
done
python3 - "$work" <<'PY' || exit 1
import glob, json, os, sys
work = sys.argv[1]
def one(n):
    return json.load(open(glob.glob(f"{work}/run-{n}/nodes/*.json")[0]))
def named(doc, name, rank, block=True):
    doc = json.loads(json.dumps(doc))
    for d in [doc] + ([doc["summary"]] if "summary" in doc else []):
        d["node"] = d["host"] = name
        d["rank"] = rank
        if "node_id" in d:
            d["node_id"] = name
    if not block:
        doc.pop("summary", None)
    return doc
ok, sick, own = one("ok"), one("sick"), one("own")
for route, block in (("block", True), ("facts", False)):
    os.makedirs(f"{work}/{route}", exist_ok=True)
    for i in range(3):
        json.dump(named(ok, f"node{i}", i, block), open(f"{work}/{route}/node{i}.json", "w"))
    json.dump(named(sick, "node3", 3, block), open(f"{work}/{route}/node3.json", "w"))
os.makedirs(f"{work}/alone-own", exist_ok=True)
os.makedirs(f"{work}/alone-file", exist_ok=True)
json.dump(named(own, "node3", 0), open(f"{work}/alone-own/node3.json", "w"))
json.dump(named(sick, "node3", 0), open(f"{work}/alone-file/node3.json", "w"))
PY
failures=0
words="GPU 0000:cb:00.0 missing: Xid 79 (fallen off the bus) at 19:02:39: drain, reboot"
for route in block facts; do
  timeout 60 "$cluster" --from "$work/$route"/node*.json --out "$work/out-$route" -q >/dev/null
  rc=$?
  [ "$rc" -eq 3 ] || { echo "FAIL: $route: --from exit $rc, want 3 (node3 is odd)"; failures=$((failures + 1)); }
  python3 - "$work/out-$route" "$words" <<'PY' || failures=$((failures + 1))
import json, sys
out, words = sys.argv[1:3]
doc = json.load(open(f"{out}/cluster.json"))
assert doc["verdict"] == "fail" and doc["odd_nodes"] == ["node3"], (doc["verdict"], doc["odd_nodes"])
first = doc["findings"][0]
assert (first["kind"], first["node"], first["text"]) == ("hardware-fault", "node3", "node3: " + words), first
got = [(f["kind"], f["severity"], f["xid"], [(n["node"], n["bdfs"]) for n in f["nodes"]]) for f in doc["faults"]]
want = [("xid", "critical", 79, [("node3", ["0000:cb:00.0"])])]
assert got == want, got
row = {n["node"]: n for n in doc["nodes"]}["node3"]
assert [(f["kind"], f["severity"], f["words"], f["when"]) for f in row["faults"]] == \
    [("xid", "critical", words, "19:02:39")], row["faults"]
text = open(f"{out}/cluster.txt").read().splitlines()
findings = [l for l in text if l.startswith("  [")]
assert findings[0] == "  [hardware-fault] node3: " + words, findings
assert not any("not a GPU of the node" in l for l in text), text
assert text[-1] == "FAIL: odd nodes: node3", text[-1]
print("ok:", out)
PY
done
timeout 60 "$cluster" --from "$work/alone-own/node3.json" --out "$work/out-own" -q >/dev/null
rc=$?
[ "$rc" -eq 3 ] || { echo "FAIL: own log alone: exit $rc, want 3"; failures=$((failures + 1)); }
grep -qxF "  [hardware-fault] node3: $words" "$work/out-own/cluster.txt" \
  || { echo "FAIL: own log alone: $(cat "$work/out-own/cluster.txt")"; failures=$((failures + 1)); }
timeout 60 "$cluster" --from "$work/alone-file/node3.json" --out "$work/out-file" -q >/dev/null
rc=$?
[ "$rc" -eq 0 ] || { echo "FAIL: a log file alone: exit $rc, want 0"; failures=$((failures + 1)); }
grep -q "\[warning\] Xid for a PCI address that is not a GPU of the node: 1 node(s): node3 (0000:cb:00.0" \
  "$work/out-file/cluster.txt" || { echo "FAIL: a log file alone: $(cat "$work/out-file/cluster.txt")"; failures=$((failures + 1)); }
[ "$failures" -eq 0 ] && echo "PASS: faults_known_good_test" || { echo "FAIL: $failures"; exit 1; }
