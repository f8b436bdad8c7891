#!/usr/bin/env python3
"""The comparison table of bench/p2p-concurrent.sh: for every tool and direction, the
all-GPU figure of each round, its median over the rounds and its spread (min-max, and
(max-min)/median), then the ratios of the medians. Two figures are kept apart because they
differ by definition: the sum of the per-GPU figures (each GPU's bytes over its own interval:
nvbandwidth's "sum") and the aggregate (all bytes over the interval that holds every copy:
gdsb-p2p's common interval, PyTorch's wall time of the set), which is lower when the GPUs do
not finish together.

  concurrent_rounds.py WORK ROUNDS
"""
import json
import os
import statistics
import sys


def load(path):
    if not os.path.exists(path):
        return None
    text = open(path).read()
    try:
        return json.loads(text[text.index("{"):])
    except ValueError as e:
        return {"unreadable": str(e)}


def figures(work, r):
    """{(direction, figure): {tool: GB/s}} of one round; why a tool has none, by tool."""
    out, why = {}, {}
    nvb = load(f"{work}/round{r}-nvbandwidth.json")
    if nvb and "nvbandwidth" in nvb:
        for t in nvb["nvbandwidth"].get("testcases", []):
            d = {"host_to_all_memcpy_ce": "h2d", "all_to_host_memcpy_ce": "d2h"}.get(t.get("name"))
            if d and t.get("sum") not in (None, "N/A"):
                out.setdefault((d, "sum"), {})["nvbandwidth"] = float(t["sum"])
    else:
        why["nvbandwidth"] = "no report" if nvb is None else str(nvb)[:120]
    p2p = load(f"{work}/round{r}-p2p.json")
    if p2p and "measurements" in p2p:
        for d in ("h2d", "d2h"):
            s = p2p["measurements"].get(f"{d}_concurrent", {})
            if "groups" in s:
                g = s["groups"][0]
                out.setdefault((d, "sum"), {})["gdsb-p2p"] = sum(g["per_gpu_gb_s"])
                out.setdefault((d, "aggregate"), {})["gdsb-p2p"] = g["gb_s"]
            else:
                why["gdsb-p2p"] = s.get("waived", "no concurrent series")
    else:
        why["gdsb-p2p"] = "no report" if p2p is None else str(p2p)[:120]
    torch = load(f"{work}/round{r}-torch.json")
    if torch and "h2d" in torch:
        for d in ("h2d", "d2h"):
            out.setdefault((d, "sum"), {})["torch"] = torch[d]["sum_of_per_gpu_gb_s"]
            out.setdefault((d, "aggregate"), {})["torch"] = torch[d]["aggregate_gb_s"]
    else:
        why["torch"] = "no report" if torch is None else torch.get("waived", str(torch)[:120])
    return out, why


def main():
    work, rounds = sys.argv[1], int(sys.argv[2])
    series, whys = {}, {}
    for r in range(1, rounds + 1):
        f, why = figures(work, r)
        for key, tools in f.items():
            for tool, v in tools.items():
                series.setdefault(key, {}).setdefault(tool, []).append(v)
        for tool, w in why.items():
            whys.setdefault(tool, set()).add(w)
    print(f"## All GPUs at once: gdsb-p2p, nvbandwidth and PyTorch in {rounds} interleaved rounds\n")
    print("Each round runs the three tools one after the other, the order rotated every round.\n")
    print("| direction | figure | tool | rounds (GB/s, in order) | median | min-max | spread |")
    print("|---|---|---|---|---:|---:|---:|")
    med = {}
    for (d, fig) in sorted(series):
        for tool in ("gdsb-p2p", "nvbandwidth", "torch"):
            v = series[(d, fig)].get(tool)
            if not v:
                continue
            m = statistics.median(v)
            med[(d, fig, tool)] = (m, min(v), max(v))
            print(f"| {d} | {fig} | {tool} | {', '.join(f'{x:.1f}' for x in v)} | {m:.1f} | "
                  f"{min(v):.1f}-{max(v):.1f} | {(max(v) - min(v)) / m * 100:.1f}% |")
    print("\n| direction | figure | ratio of medians | value | the two ranges overlap |")
    print("|---|---|---|---:|---|")
    for (d, fig) in sorted(series):
        for a, b in (("gdsb-p2p", "nvbandwidth"), ("gdsb-p2p", "torch"), ("nvbandwidth", "torch")):
            if (d, fig, a) in med and (d, fig, b) in med:
                (ma, la, ha), (mb, lb, hb) = med[(d, fig, a)], med[(d, fig, b)]
                ratio = ma / mb
                overlap = "yes" if la <= hb and lb <= ha else "no"
                flag = "" if 0.95 <= ratio <= 1.05 else " (outside 0.95..1.05)"
                print(f"| {d} | {fig} | {a} / {b} | {ratio:.3f}{flag} | {overlap} |")
    for tool, w in sorted(whys.items()):
        print(f"\n{tool}: not measured in some rounds: {'; '.join(sorted(w))}")


if __name__ == "__main__":
    main()
