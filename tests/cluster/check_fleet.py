#!/usr/bin/env python3
"""Checks gdsb-cluster's report on the fleet of tests/cluster/make_fleet.py (expected.json
says, from reading the edits made to the recording, which rank has which fault and where):
  - exactly the faulty nodes are odd;
  - missing hardware comes first: every missing-hardware finding precedes every check,
    topology and outlier finding;
  - each fault is described in words, by PCI address: some finding of the node names the
    fault's PCI address (with the fault's words: "x8", "ACS"), and a removed device is
    also counted as missing hardware ("7 GPUs, 8 on the other nodes of its class") and is one
    topology line ("GPU 0000:19:00.0 absent; present on the 7 other nodes of its class"),
    never a line for each of its facts or for the devices after it.
Usage: check_fleet.py CLUSTER_JSON EXPECTED_JSON"""
import json
import sys


def rank_of(node):
    return int(node.rsplit(".", 1)[1])  # ranks of one host are named host.rank


def main():
    doc = json.load(open(sys.argv[1]))
    expected = {int(k): v for k, v in json.load(open(sys.argv[2])).items()}
    problems = []
    odd = sorted(rank_of(n) for n in doc["odd_nodes"])
    if odd != sorted(expected):
        problems.append(f"odd ranks {odd}, want {sorted(expected)}")
    order = [f["kind"] for f in doc["findings"] if f["node"]]
    late = [i for i, k in enumerate(order) if k in ("check-failed", "topology", "outlier")]
    missing = [i for i, k in enumerate(order) if k == "missing-hardware"]
    if missing and late and max(missing) > min(late):
        problems.append(f"missing hardware does not come first: {order}")
    for rank, e in sorted(expected.items()):
        texts = [f["text"] for f in doc["findings"] if f["node"] and rank_of(f["node"]) == rank]
        if not any(e["pci"] in t and all(w in t for w in e["words"]) for t in texts):
            problems.append(f"rank {rank} ({e['fault']}): no finding names {e['pci']} "
                            f"with {e['words']}: {texts}")
        if "missing" in e and not any(
                f["kind"] == "missing-hardware" and e["missing"] in f["text"]
                for f in doc["findings"] if f["node"] and rank_of(f["node"]) == rank):
            problems.append(f"rank {rank} ({e['fault']}): not reported as missing {e['missing']}")
        topo_lines = [f["text"] for f in doc["findings"]
                      if f["node"] and rank_of(f["node"]) == rank and f["kind"] == "topology"]
        if "missing" in e and (len(topo_lines) != 1 or "absent" not in topo_lines[0]):
            problems.append(f"rank {rank} ({e['fault']}): a removed device must be one "
                            f"'absent' line, got {topo_lines}")
    if problems:
        print("check_fleet: " + "\n  ".join(problems))
        return 1
    print(f"check_fleet: ok: odd ranks {odd}, missing hardware first, each fault by PCI address")
    return 0


if __name__ == "__main__":
    sys.exit(main())
