#!/usr/bin/env python3
"""Writes N gdsbench.cluster-node/1 reports made from one real node report (TEMPLATE, e.g.
written by a gdsb-cluster singleton run), for the aggregation benchmark and the browser
check. Figures get a deterministic +-1.5% jitter; a few nodes are made odd on purpose:
  node0007: GPU1 H2D at half speed      node0017: ACS RR+CR on the first ACS port
  node0040: GPU1 link at x8             node0023: one GPU fewer (fell off the bus)
With --every-node-fails CHECK, every node also fails that topology check (a VM fleet
without nvidia-fs): gdsb-cluster must report it once, as fleet-wide, with no odd node.
Only what the edits touch is copied per node (the topology document is shared), so 10,000
reports of an HGX node are written in about a minute.
With --summary-only, each report holds only its schema and summary block (what --from
reads; a few KB instead of the node's full documents): for the browser check at 10,000.
Usage: make_node_reports.py TEMPLATE N DIR [--every-node-fails CHECK] [--summary-only]"""
import argparse
import copy
import json
import os
import random
import sys


def jitter(rng, v):
    return v * (1 + rng.uniform(-0.015, 0.015)) if isinstance(v, (int, float)) else v


def median(values):
    v = sorted(values)
    n = len(v)
    return None if n == 0 else (v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2)


def resummarize(d):
    """Keeps the summary block (written by the rank, read by --from) equal to the edited
    documents, as gdsb-cluster's summarize() would make it (docs/gdsb-cluster.md)."""
    s = d.get("summary")
    if s is None:
        return
    m = d["p2p"]["measurements"]
    s["node"], s["host"], s["rank"] = d["node"], d["host"], d["rank"]
    if "node_id" in d:
        s["node_id"] = d["node_id"]
    s["hardware"] = d["hardware"]
    s["fingerprint"] = d["fingerprint"]
    for key in ("h2d", "d2h"):
        if isinstance(m[key], list):
            s["gpu_metrics"][key + "_gb_s"] = [i["gb_s"] for i in m[key]]
    cells = (m.get("d2d_uni", {}).get("cells") or m.get("d2d_uni_no_p2p", {}).get("cells"))
    if cells and any(v is not None for row in cells for v in row):
        s["gpu_metrics"]["d2d_gb_s"] = [median([v for v in row if v is not None]) for row in cells]
    elif m.get("d2d_uni_no_p2p", {}).get("cells"):
        cells = m["d2d_uni_no_p2p"]["cells"]
        s["gpu_metrics"]["d2d_gb_s"] = [median([v for v in row if v is not None]) for row in cells]
    for run in (d.get("io") or {}).get("runs", []):
        if "result" in run and run["status"] == "ok":
            key = "io_x%d_read_gb_s" % run["workload"]["xfer_type"]
            s["node_metrics"][key] = run["result"]["throughput_gib_s"] * 1.073741824


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("template")
    ap.add_argument("n", type=int)
    ap.add_argument("dir")
    ap.add_argument("--every-node-fails", metavar="CHECK")
    ap.add_argument("--summary-only", action="store_true")
    a = ap.parse_args()
    template = json.load(open(a.template))
    n, out, every_fails = a.n, a.dir, a.every_node_fails
    edited = ("p2p", "io", "fingerprint", "hardware", "summary")
    os.makedirs(out, exist_ok=True)
    rng = random.Random(13)
    # The documents no node edits are encoded once: json.dumps of the whole report (its keys in
    # the template's order, ", " and ": ") is the same text, a few times faster.
    shared = {k: json.dumps(v) for k, v in template.items() if k not in edited + ("node", "host", "rank", "node_id")}
    for i in range(n):
        d = dict(template)  # shallow: the big unchanged documents are shared, not copied
        for key in edited:
            if key in template:
                d[key] = copy.deepcopy(template[key])
        name = "node%04d" % i
        d["node"] = d["host"] = name
        d["rank"] = i
        if "node_id" in template:  # each a node of its own (docs/gdsb-cluster.md, node identity)
            d["node_id"] = name + " / generated from " + template["node_id"]
        m = d["p2p"]["measurements"]
        for key in ("h2d", "d2h"):
            for item in m[key] if isinstance(m[key], list) else []:
                item["gb_s"] = jitter(rng, item["gb_s"])
        for key in ("d2d_uni", "d2d_uni_no_p2p"):
            cells = m.get(key, {}).get("cells")
            if cells:
                m[key]["cells"] = [[jitter(rng, v) for v in row] for row in cells]
        for run in (d.get("io") or {}).get("runs", []):
            if "result" in run:
                run["result"]["throughput_gib_s"] = jitter(rng, run["result"]["throughput_gib_s"])
        fp = d["fingerprint"]
        if i == 7 and isinstance(m["h2d"], list) and len(m["h2d"]) > 1:
            m["h2d"][1]["gb_s"] *= 0.5
        if i == 17:
            # Fingerprint keys by PCI address (topology/src/fingerprint.cpp): "port <bdf> ACS".
            acs = sorted(k for k in fp if k.startswith("port ") and k.endswith(" ACS") and fp[k] == "off")
            if acs:
                fp[acs[0]] = "RR+CR"
        if i == 40:
            links = sorted(k for k in fp if k.startswith("GPU ") and k.endswith(" link"))
            if len(links) > 1:  # the second GPU, "GPU <bdf> link"
                fp[links[1]] = fp[links[1]].split(" x")[0] + " x8"
        if i == 23 and isinstance(m["h2d"], list) and d["hardware"]["gpus"] > 1:
            d["hardware"]["gpus"] -= 1
            # The lost GPU leaves the fingerprint too: its presence and every fact of it.
            gone = sorted(k for k in fp if k.startswith("GPU ") and k.count(" ") == 1)[-1]
            for k in [k for k in fp if k == gone or k.startswith(gone + " ")]:
                del fp[k]
            for key in ("h2d", "d2h"):
                if isinstance(m[key], list):
                    m[key].pop()
        resummarize(d)
        if every_fails and "summary" in d:
            d["summary"]["failing_checks"].append(
                {"id": every_fails, "verdict": "fail", "summary": every_fails + ": absent on this node"})
        with open(os.path.join(out, name + ".json"), "w") as f:
            if a.summary_only:
                f.write(json.dumps({"schema": d["schema"], "summary": d["summary"]}))
            else:  # dumps: the C encoder (json.dump iterates in Python)
                f.write("{" + ", ".join(json.dumps(k) + ": " + (shared[k] if k in shared else json.dumps(v))
                                        for k, v in d.items()) + "}")


if __name__ == "__main__":
    main()
