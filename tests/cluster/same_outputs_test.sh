#!/usr/bin/env bash
# gdsb-cluster --from writes what gdsbench 42dd339 wrote (issue 28: the fingerprints' new
# memory layout changes no output). A fleet of 60 nodes is made from a recorded HGX node
# (fixtures/hgx-node-template.json, through bench/make_node_reports.py: jittered figures
# and four odd nodes), once as it is with one report passed twice, once with every node
# failing nvidia-fs. The outputs, with what depends on the machine and the moment taken
# out (context, times, version), must hash to what the 42dd339 binary gave
# (fixtures/same-outputs.sha256), save for fields added since, each digest change explained
# in the commit that made it (issue 26: cluster.json gained the classes' "comparison" and
# the management NIC fields of classes and node rows). cluster.html is a view of
# cluster.json and carries the machine in its text: compare it with
# bench/cluster-same-outputs.sh OLD_BIN NEW_BIN.
# Usage: same_outputs_test.sh GDSB_CLUSTER WORKDIR [--write-digests]
set -euo pipefail
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
work=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work"
cd "$work"  # relative paths: argv is the same wherever the test runs
python3 "$here/../../bench/make_node_reports.py" "$here/fixtures/hgx-node-template.json" 60 nodes --summary-only
python3 "$here/../../bench/make_node_reports.py" "$here/fixtures/hgx-node-template.json" 60 fails --summary-only \
  --every-node-fails nvidia-fs
mkdir -p bin
ln -s "$bin" bin/gdsb-cluster
PATH=$work/bin:$PATH
rc=0
gdsb-cluster --from nodes/*.json nodes/node0003.json --out plain -q >/dev/null || rc=$?
[ "$rc" = 3 ] || { echo "FAIL: plain fleet exit $rc, expected 3 (odd nodes)"; exit 1; }
rc=0
gdsb-cluster --from fails/*.json --out fails-out -q >/dev/null || rc=$?
[ "$rc" = 3 ] || { echo "FAIL: fleet-wide fleet exit $rc, expected 3"; exit 1; }
python3 - plain fails-out <<'PY'
import json, re, sys
for d in sys.argv[1:]:
    for name in ("cluster.txt", "cluster.json", "cluster.junit.xml", "cluster.prom", "fingerprint-class1.json"):
        text = open(f"{d}/{name}").read()
        if name == "cluster.json":  # the machine it ran on; the key order is kept
            doc = json.loads(text)
            doc["context"] = {}
            # Issue 36 added the fleet's hardware-fault listing; these fleets have no fault,
            # so an empty list is the only new text, and everything else must stay the same.
            if doc.get("faults") == []:
                del doc["faults"]
            text = json.dumps(doc, indent=1)
        text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "TIME", text)
        text = re.sub(r'("version": |version=)"[^"]*"', r'\1"VERSION"', text)
        open(f"{d}/{name}.norm", "w").write(text)
PY
sha256sum plain/*.norm fails-out/*.norm > digests
if [ "${3:-}" = --write-digests ]; then
  cp digests "$here/fixtures/same-outputs.sha256"
  echo "wrote $here/fixtures/same-outputs.sha256"
  exit 0
fi
if ! diff "$here/fixtures/same-outputs.sha256" digests; then
  echo "FAIL: outputs differ from 42dd339's (normalized copies: $work/*/*.norm)"
  exit 1
fi
echo "PASS: the outputs of two fleets of 60 nodes are those of 42dd339"
