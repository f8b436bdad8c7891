#!/usr/bin/env bash
# gdsb-cluster's fleet view of hardware faults (issue 36): node reports of one recorded node
# (the cluster fixture's node0, run as an MPI singleton), copied to four nodes; two carry an
# Xid 79 and one a rise of correctable AER errors in their topology snapshot's fault facts
# (values from real recordings: the Xid 79 record of tests/topo/fixtures/real/kernel-logs/
# pastebin-jJdbRLSr-xid79-dmesg.log, the BadTLP count of tests/topo/fixtures/real/aer-sysfs;
# the addresses are this node's GPU and drive). The copies carry no summary block, so
# `gdsb-cluster --from` summarizes each from its facts. The expected listing is recomputed
# here from the facts written: Xid 79 is critical (NVIDIA's catalog: reboot), 3 correctable
# errors in 600 s is past the 10/h rate (a warning); critical first, each node once. A node
# with a critical fault is odd, its fault the first finding (issue 42); a warning is not.
# Usage: faults_test.sh GDSB_CLUSTER MAKE_CLUSTER_FIXTURE WORKDIR
set -uo pipefail
bin=$1 make_fixture=$2 work=$3
rm -rf "$work" && mkdir -p "$work" || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
"$make_fixture" "$work/fx" >/dev/null || { echo "FAIL: make_cluster_fixture"; exit 1; }
timeout 120 "$bin" --out "$work/one" --topo-input "sysfs-root=$work/fx/node0/root" \
  --fake-gpu "$work/fx/node0/fake-gpu.json" --p2p-size 64K --p2p-repetitions 1 --p2p-loops 1 -q >/dev/null \
  || { echo "FAIL: the singleton run"; exit 1; }
python3 - "$work" <<'PY' || exit 1
import copy, glob, json, os, sys
work = sys.argv[1]
src = json.load(open(glob.glob(f"{work}/one/nodes/*.json")[0]))
snap = src["topology"]["snapshot"]
gpus = sorted(d["bdf"] for d in snap["devices"] if d.get("role") == "gpu")
drives = sorted(d["bdf"] for d in snap["devices"] if d.get("role") == "nvme")
assert gpus and drives, "the fixture node has GPUs and drives"
none = {"uptime_s": None, "wall": "", "seq": None}
def xid79(bdf):
    t = {"uptime_s": 5107.644336, "wall": "", "seq": None}
    return {"source": "dmesg.log", "format": "dmesg", "bytes": 0, "lines": 0, "nvrm_lines": 1,
            "xids": [{"bdf": bdf, "code": 79, "count": 1, "first": t, "last": t,
                      "last_text": "GPU has fallen off the bus.)", "process": "", "recovery_action": None}],
            "dropped": 0, "unparsed": 0, "before_cursor": 0, "last_seq": None, "boot_id": ""}
def aer_badtlp():
    return {"counters_known": True, "correctable": {"RxErr": 0, "BadTLP": 3, "BadDLLP": 0, "Rollover": 0,
            "Timeout": 0, "NonFatalErr": 0, "CorrIntErr": 0, "HeaderOF": 0}, "nonfatal": {}, "fatal": {},
            "total_correctable": 3, "total_nonfatal": None, "total_fatal": None, "status_known": False,
            "status_correctable": [], "status_uncorrectable": []}
facts = {"node1": ("xid", gpus[0]), "node2": ("xid", gpus[-1]), "node3": ("aer", drives[0])}
os.makedirs(f"{work}/fleet", exist_ok=True)
for i in range(4):
    name = f"node{i}"
    doc = copy.deepcopy(src)
    doc.pop("summary", None)
    doc["node"] = doc["host"] = name
    doc["rank"] = i
    doc["node_id"] = name
    hw = doc["topology"]["snapshot"].setdefault("hw_faults", {})
    hw["uptime_s"] = 600.0
    if name in facts:
        kind, bdf = facts[name]
        if kind == "xid":
            hw["kernel_log"] = xid79(bdf)
        else:
            hw.setdefault("aer", {})[bdf] = aer_badtlp()
    json.dump(doc, open(f"{work}/fleet/{name}.json", "w"))
# The expected listing, from the facts above.
expected = [{"kind": "xid", "severity": "critical", "xid": 79,
             "nodes": [("node1", [gpus[0]]), ("node2", [gpus[-1]])]},
            {"kind": "aer_correctable_rate", "severity": "warning", "xid": None,
             "nodes": [("node3", [drives[0]])]}]
json.dump(expected, open(f"{work}/expected.json", "w"))
PY
failures=0
timeout 60 "$bin" --from "$work"/fleet/node*.json --out "$work/out" -q >/dev/null
rc=$?
[ "$rc" -eq 3 ] || { echo "FAIL: --from exit $rc, want 3 (node1 and node2 would be drained)"; failures=$((failures + 1)); }
python3 - "$work" <<'PY' || failures=$((failures + 1))
import json, sys
work = sys.argv[1]
want = json.load(open(f"{work}/expected.json"))
doc = json.load(open(f"{work}/out/cluster.json"))
got = [{"kind": f["kind"], "severity": f["severity"], "xid": f["xid"],
        "nodes": [[n["node"], n["bdfs"]] for n in f["nodes"]]} for f in doc["faults"]]
want = [{**w, "nodes": [list(n) for n in w["nodes"]]} for w in want]
assert got == want, f"cluster.json faults: {json.dumps(got)} != {json.dumps(want)}"
# Each node's summary row carries its own faults; the healthy node0 none.
rows = {n["node"]: n for n in doc["nodes"]}
assert "faults" not in rows["node0"], rows["node0"].get("faults")
assert [f["xid"] for f in rows["node1"]["faults"]] == [79]
# The text lists the same, critical first, each node once.
text = open(f"{work}/out/cluster.txt").read().splitlines()
lines = [l for l in text if l.startswith("    [critical]") or l.startswith("    [warning]")]
assert len(lines) == 2, text
assert lines[0].startswith("    [critical] Xid 79 (") and "node1 (" in lines[0] and "node2 (" in lines[0], lines[0]
assert lines[1].startswith("    [warning] ") and "node3 (" in lines[1] and "node1" not in lines[1], lines[1]
assert all(l.count("node0") == 0 for l in lines), lines
# The nodes the health check would drain are odd, first; the warning's node3 is not.
assert doc["odd_nodes"] == ["node1", "node2"], doc["odd_nodes"]
first = [(f["kind"], f["node"]) for f in doc["findings"][:2]]
assert first == [("hardware-fault", "node1"), ("hardware-fault", "node2")], doc["findings"]
assert text[-1] == "FAIL: odd nodes: node1, node2", text[-1]
print("ok: faults listed as recomputed")
PY
# The summary block a rank writes carries the faults: --from of reports with the block gives
# the same listing (the block route, summary_reader).
python3 - "$work" <<'PY' || failures=$((failures + 1))
import json, sys
work = sys.argv[1]
rows = {n["node"]: n for n in json.load(open(f"{work}/out/cluster.json"))["nodes"]}
for i in range(4):
    name = f"node{i}"
    doc = json.load(open(f"{work}/fleet/{name}.json"))
    block = dict(rows[name]); block.pop("fingerprint_entries", None)
    block["fingerprint"] = doc["fingerprint"]
    # the block first, as ranks write it; the facts stay behind it, unread
    out = {"schema": doc["schema"], "summary": block}
    out.update({k: v for k, v in doc.items() if k not in out})
    json.dump(out, open(f"{work}/fleet/block-{name}.json", "w"))
PY
timeout 60 "$bin" --from "$work"/fleet/block-node*.json --out "$work/out-block" -q >/dev/null
python3 -c "
import json,sys
a=json.load(open('$work/out/cluster.json'))['faults']; b=json.load(open('$work/out-block/cluster.json'))['faults']
sys.exit(0 if a==b else 'summary block route: ' + json.dumps(b))" || failures=$((failures + 1))
[ "$failures" -eq 0 ] && echo "PASS: faults_test" || { echo "FAIL: $failures"; exit 1; }
