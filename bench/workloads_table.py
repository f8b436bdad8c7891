#!/usr/bin/env python3
"""The table of bench/workloads.sh for docs/PERFORMANCE.md, from the gdsb-io --workload
JSON reports in DIR (files named LABEL-PRESET-....json, LABEL = ram or disk), and the
list of what did not run and why (failed or waived jobs, figures without a value).

    workloads_table.py DIR
"""
import glob
import json
import os
import sys


def fmt(d, key, spec):
    v = d.get(key) if isinstance(d, dict) else None
    return spec % v if isinstance(v, (int, float)) and not isinstance(v, bool) else "n/a"


def ceiling_text(s):
    c = s.get("ceiling")
    if not isinstance(c, dict):
        return "not known"
    if "per_gpu" not in c:
        return "none: " + c.get("note", "")
    parts = []
    for e in c["per_gpu"]:
        g = e.get("gb_s")
        parts.append(f"{g:.1f} GB/s" if isinstance(g, (int, float)) else "none (" + e.get("limited_by", "") + ")")
    return "; ".join(sorted(set(parts)))


def main(out):
    rows, missing = [], []
    print("\n| storage | preset | -x | GPUs | time to result (node) | GB/s | naive: pageable load | naive GB/s | naive / time | shards cached before naive | platform ceiling |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for f in sorted(glob.glob(os.path.join(out, "*.json"))):
        try:
            doc = json.load(open(f))
        except (OSError, ValueError) as e:
            missing.append(f"{os.path.basename(f)}: not a JSON report ({e})")
            continue
        s = doc.get("workload_summary")
        if not s:
            continue
        label = os.path.basename(f).split("-")[0]
        for r in doc.get("runs", []):
            if r.get("status") != "ok":
                missing.append(f"{label} {s['preset']} -x {s['xfer_type']} job {r['workload'].get('name', '?')}: "
                               f"{r.get('status')}: {r.get('reason', '')}")
            for w in r.get("warnings", []):
                if "no GPU usable" in w or "verification" in w:
                    missing.append(f"{label} {s['preset']} -x {s['xfer_type']} job {r['workload'].get('name', '?')}: {w}")
        t = s.get("time_to_result") or {}
        gpus = s.get("gpus", "?")
        ceil = ceiling_text(s)
        if s["preset"] in ("checkpoint-load", "checkpoint-save"):
            n = s.get("naive") or {}
            facts = n.get("facts") or {}
            sp = s.get("speedup_vs_naive")
            share = facts.get("cached_share")
            cached = f"{100 * share:.0f}%" if isinstance(share, (int, float)) else "n/a"
            if s["preset"] == "checkpoint-save":
                nn = ng = sps = cached = "n/a"
            else:
                nn, ng = fmt(n, "node_s", "%.3f s"), fmt(n, "gb_s", "%.2f")
                sps = f"{sp:.2f}x" if isinstance(sp, (int, float)) else "n/a"
            if t.get("node_s") is None:
                missing.append(f"{label} {s['preset']} -x {s['xfer_type']}: no time to result ({'; '.join(t.get('missing', []))})")
            print(f"| {label} | {s['preset']} | {s['xfer_type']} | {gpus} | {fmt(t, 'node_s', '%.3f s')} | {fmt(t, 'gb_s', '%.2f')} | "
                  f"{nn} | {ng} | {sps} | {cached} | {ceil} |")
        elif s["preset"] == "kv-offload":
            gpu = doc["runs"][0]["workload"].get("gpu", "?") if doc.get("runs") else "?"
            for j in s.get("requests", []):
                print(f"| {label} | kv-offload {j['job']} (GPU {gpu}) | {s['xfer_type']} | 1 | request p99 {j['request_latency']['p99_us']:.0f} us | "
                      f"{j['gb_s']:.2f} | block p99 {j['block_latency']['p99_us']:.0f} us | | | | {ceil} |")
        elif s["preset"] == "dataset":
            u = s.get("per_file", {})
            cost = lambda k: fmt(u.get(k, {}), "mean_us", "%.1f")
            gpu = doc["runs"][0]["workload"].get("gpu", "?") if doc.get("runs") else "?"
            files = s.get("parameters", {}).get("files", "?")
            print(f"| {label} | dataset {files} files (GPU {gpu}) | {s['xfer_type']} | 1 | {fmt(t, 'seconds', '%.3f s')} ({fmt(t, 'files_per_s', '%.0f')} files/s) | "
                  f"{fmt(t, 'gb_s', '%.2f')} | per file: open {cost('open')} us, register {cost('register')} us | read {cost('read')} us, close {cost('close')} us | | | {ceil} |")
    return missing


if __name__ == "__main__":
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        print("usage: workloads_table.py DIR (the OUT of bench/workloads.sh)", file=sys.stderr)
        sys.exit(2)
    gaps = main(sys.argv[1])
    print("\nNot measured in the JSON reports (job, status, reason):" if gaps else "\nEvery job in the JSON reports ran.")
    for g in gaps:
        print("- " + g)
