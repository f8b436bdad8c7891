#!/usr/bin/env python3
"""Recomputes the shared-storage figures of a gdsb-cluster run from its node reports, with
nothing of gdsb-cluster's code: every point's aggregate is the sum of the ranks' bytes over the
time from the earliest start to the latest end (each rank's own timestamps, as IOR computes
its bandwidth), and must match cluster.json's within 1%. Ranks that share a node (the same
node_id in their reports) are one node: a point on k nodes must carry exactly the ranks of the
first k nodes (nodes ordered by their lowest rank), and each node's share is its ranks' bytes
over the window (min, median, max within 1%).

Usage: check_storage.py OUT [--scale 1,2,4] [--ops read,write] [--checkpoint]
        [--expect-flat R_GB_S] (the throttled run: see storage_mpi_test.sh)
Exit 0 when everything holds, 1 with the reasons otherwise."""
import argparse
import glob
import json
import sys

ap = argparse.ArgumentParser()
ap.add_argument("out")
ap.add_argument("--scale", default="1,2,4")
ap.add_argument("--ops", default="write,read")
ap.add_argument("--checkpoint", action="store_true")
ap.add_argument("--expect-flat", type=float, default=None,
                help="per-group rate r: the curve must read r, 2r, 2r (two throttled groups)")
args = ap.parse_args()

problems = []
cluster = json.load(open(f"{args.out}/cluster.json"))
ss = cluster.get("shared_storage")
if ss is None:
    print("FAIL: cluster.json has no shared_storage")
    sys.exit(1)

# The ranks' samples, read from the node reports' own storage document (not the summary).
samples = {}
node_of_rank = {}
for path in sorted(glob.glob(f"{args.out}/nodes/*.json")):
    doc = json.load(open(path))
    node_of_rank[doc["rank"]] = doc.get("node_id") or f"{doc['node']} rank {doc['rank']}"
    for s in doc["storage"]["samples"]:
        s = dict(s, rank=doc["rank"], node_id=node_of_rank[doc["rank"]])
        samples.setdefault((s["op"], s["mode"], s["nodes"]), []).append(s)
nodes_in_order = []
for r in sorted(node_of_rank):
    if node_of_rank[r] not in nodes_in_order:
        nodes_in_order.append(node_of_rank[r])
print(f"  {len(node_of_rank)} rank(s) on {len(nodes_in_order)} node(s)")


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2

want_scale = [int(k) for k in args.scale.split(",")]
points = {(p["op"], p["mode"], p["nodes"]): p for p in ss["points"]}
for op in args.ops.split(","):
    got = sorted(k for (o, m, k) in points if o == op)
    if got != want_scale:
        problems.append(f"{op}: points at {got} nodes, want {want_scale}")

for key, p in points.items():
    ranks = samples.get(key, [])
    first_k = set(nodes_in_order[: key[2]])
    want_ranks = sorted(r for r, n in node_of_rank.items() if n in first_k)
    got_ranks = sorted(s["rank"] for s in ranks)
    if got_ranks != want_ranks:
        problems.append(f"{key}: ranks {got_ranks} carry it, want the ranks of the first {key[2]} node(s): {want_ranks}")
        continue
    if p["ranks"] != len(want_ranks):
        problems.append(f"{key}: cluster.json says {p['ranks']} ranks, the node reports {len(want_ranks)}")
    if p["status"] != "ok":
        problems.append(f"{key}: status {p['status']}: {p['reason']}")
        continue
    start = min(s["start_unix_s"] for s in ranks)
    end = max(s["end_unix_s"] for s in ranks)
    total = sum(s["bytes"] for s in ranks)
    mine = total / (end - start) / 1e9
    theirs = p["aggregate_gb_s"]
    if abs(mine - theirs) > 0.01 * mine:
        problems.append(f"{key}: cluster.json {theirs} GB/s, recomputed {mine} GB/s")
    if p["bytes"] != total:
        problems.append(f"{key}: cluster.json {p['bytes']} bytes, the node reports {total}")
    per_node = {}
    for s in ranks:
        per_node[s["node_id"]] = per_node.get(s["node_id"], 0) + s["bytes"]
    shares = [b / (end - start) / 1e9 for b in per_node.values()]
    for name, want in (("min", min(shares)), ("median", median(shares)), ("max", max(shares))):
        have = p["per_node_gb_s"][name]
        if abs(have - want) > 0.01 * want:
            problems.append(f"{key}: per-node {name} {have} GB/s, recomputed {want} over {len(per_node)} node(s)")
    print(f"  {key[0]} -x {key[1]} on {key[2]} node(s): {total} B over {end - start:.4f} s = "
          f"{mine:.4f} GB/s; cluster.json {theirs:.4f}")

if args.checkpoint:
    ck = ss.get("checkpoint")
    if ck is None:
        problems.append("no checkpoint in shared_storage")
    else:
        for op, name in (("checkpoint-save", "save"), ("checkpoint-load", "load")):
            ranks = [s for (o, m, k), v in samples.items() if o == op for s in v]
            r = ck[name]
            if r["status"] != "ok" or not ranks:
                problems.append(f"checkpoint {name}: {r['status']} {r['reason']}")
                continue
            secs = max(s["end_unix_s"] for s in ranks) - min(s["start_unix_s"] for s in ranks)
            total = sum(s["bytes"] for s in ranks)
            if abs(secs - r["seconds"]) > 0.01 * secs or total < ck["model_bytes"]:
                problems.append(f"checkpoint {name}: {r['seconds']} s / {total} B, recomputed {secs} s "
                                f"of a model of {ck['model_bytes']} B")
            print(f"  checkpoint {name}: {total} B in {secs:.4f} s; cluster.json {r['seconds']:.4f} s")

if args.expect_flat is not None:
    r = args.expect_flat
    curve = [c for c in ss["curves"] if c["op"] == "read"]
    if not curve:
        problems.append("no read curve")
    else:
        c = curve[0]
        agg = dict(zip(c["nodes"], c["aggregate_gb_s"]))
        print(f"  throttled curve: {agg}, limit per group {r} GB/s; stops at {c['scaling_stops_at']}; "
              f"bound {c['bound']}")
        for k, want in ((1, r), (2, 2 * r), (4, 2 * r)):
            if not (0.8 * want <= agg.get(k, 0) <= 1.2 * want):
                problems.append(f"throttled: {k} node(s) read {agg.get(k)} GB/s, want {want} within 20%")
        if c["scaling_stops_at"] != 4:
            problems.append(f"throttled: scaling stops at {c['scaling_stops_at']}, want 4")
        if c["bound"] != "storage":
            problems.append(f"throttled: bound {c['bound']}, want storage: {c['bound_text']}")

for p in problems:
    print("FAIL:", p)
sys.exit(1 if problems else 0)
