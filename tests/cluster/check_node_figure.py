#!/usr/bin/env python3
"""Checks gdsb-cluster's node figure (issue 35) from the node reports, by its own arithmetic:
each node_figure phase's per-GPU rate is its run's bytes / seconds / 1e9, the aggregate all
bytes over the window from the first start to the last end; the summary's node metric is that
aggregate; cluster.json judged the nodes by it (stats of node_x<M>_read_gb_s, the odd node named).
Usage: check_node_figure.py OUT --gpus N --mode M [--odd NODE_INDEX] [--one-node] [--from]"""
import argparse
import glob
import json
import sys

ap = argparse.ArgumentParser()
ap.add_argument("out")
ap.add_argument("--gpus", type=int, required=True)
ap.add_argument("--mode", type=int, required=True)
ap.add_argument("--odd", type=int)
ap.add_argument("--one-node", action="store_true")
ap.add_argument("--from", dest="from_", action="store_true", help="OUT was made by --from: no node reports")
a = ap.parse_args()
metric = f"node_x{a.mode}_read_gb_s"
close = lambda x, y: abs(x - y) <= 1e-9 * max(1.0, abs(y))

if not a.from_:
    measured = 0
    for path in sorted(glob.glob(a.out + "/nodes/*.json")):
        doc = json.load(open(path))
        phase = [p for p in doc["phases"] if p["name"] == "node_figure"]
        assert len(phase) == 1, f"{path}: phases {doc['phases']}"
        if a.one_node and doc["rank"] != 0:
            assert phase[0]["status"] == "waived", phase
            assert phase[0]["error"] == "measured once for the node, by rank 0", phase
            assert doc["node_figure"] is None and metric not in doc["summary"]["node_metrics"], path
            continue
        assert phase[0]["status"] == "ok", f"{path}: {phase}"
        measured += 1
        fig = doc["node_figure"]
        runs = [r for r in fig["runs"] if r["workload"]["xfer_type"] == a.mode]
        assert [r["workload"]["gpu"] for r in runs] == list(range(a.gpus)), [r["workload"]["gpu"] for r in runs]
        assert all(r["status"] == "ok" for r in runs), [r.get("reason") for r in runs]
        mode = [m for m in fig["node"]["modes"] if m["xfer_type"] == a.mode][0]
        for e, r in zip(mode["per_gpu"], runs):
            assert close(e["gb_s"], r["result"]["bytes"] / r["result"]["seconds"] / 1e9), (e, r["result"])
        t0 = min(r["result"]["t0_unix_s"] for r in runs)
        end = max(r["result"]["end_unix_s"] for r in runs)
        assert max(r["result"]["t0_unix_s"] for r in runs) < min(r["result"]["end_unix_s"] for r in runs), \
            f"{path}: the GPUs did not read at once"
        agg = sum(r["result"]["bytes"] for r in runs) / (end - t0) / 1e9
        assert abs(mode["aggregate_gb_s"] - agg) <= 1e-6 * agg, (mode["aggregate_gb_s"], agg)
        print(f"{doc['node']}: -x {a.mode} aggregate {mode['aggregate_gb_s']:.3f} GB/s, per GPU "
              + ", ".join(f"GPU{e['gpu']} {e['gb_s']:.3f}" for e in mode["per_gpu"])
              + f"; node ceiling {fig['node']['ceiling']['gb_s']} ({fig['node']['ceiling']['limited_by']})")
        got = doc["summary"]["node_metrics"][metric]
        assert close(got, mode["aggregate_gb_s"]), (got, mode["aggregate_gb_s"])
        per = doc["summary"]["gpu_metrics"][f"node_x{a.mode}_gpu_read_gb_s"]
        assert len(per) == a.gpus and all(close(p, e["gb_s"]) for p, e in zip(per, mode["per_gpu"])), per
    want = 1 if a.one_node else 4
    assert measured == want, f"{measured} node runs, want {want} (one per node)"
    print(f"ok: {measured} node run(s) of {a.gpus} GPUs, every figure recomputed")

cluster = json.load(open(a.out + "/cluster.json"))
stats = [s for s in cluster.get("stats", []) if s.get("metric") == metric]
assert a.one_node or stats, f"the fleet view does not compare nodes by {metric}: {[s.get('metric') for s in cluster.get('stats', [])]}"
if a.odd is not None:
    odd = [f for f in cluster["findings"] if f.get("kind") == "outlier" and f.get("metric") == metric]
    names = sorted(f["node"] for f in odd)
    values = {n["node"]: n.get("node_metrics", {}).get(metric) for n in cluster["nodes"]}
    assert len(names) == 1 and names[0].endswith(f".{a.odd}"), \
        f"outliers by {metric}: {names}; the nodes' figures {values}; stats {stats}"
    print(f"ok: the fleet names {names[0]} by {metric}")
