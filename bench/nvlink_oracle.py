#!/usr/bin/env python3
"""Our NVLink error counters beside nvidia-smi's, per GPU and link (bench/gpu-all.sh parts
nvlink and nvlink-oracle; issue 36 and 42).

Each sample LABEL in DIR holds:
  LABEL.time          the Unix time it was taken
  LABEL-snap/         gdsb-topo --save-snapshot (NVML's counters: hw_faults.gpu_errors[bdf].nvlinks)
  LABEL-smi.txt       nvidia-smi nvlink -e   (per link: the counters this driver prints)
  LABEL-ec.txt        nvidia-smi nvlink -ec  (per link and lane: CRC errors), optional
  LABEL-s.txt         nvidia-smi nvlink -s   (link state and speed), optional, copied as is
and DIR/gpus.csv, optional: `nvidia-smi --query-gpu=index,pci.bus_id --format=csv,noheader`,
which GPU index nvidia-smi's "GPU N:" is (else NVML's index from the snapshot's gpu_facts).

Usage: nvlink_oracle.py DIR FROM:TO:WHAT [FROM:TO:WHAT ...]
Prints, for each interval, the rise of every counter summed over the links, then one line per
link where any counter rose: ours (replay, recovery, crc_flit, crc_data) | nvidia-smi -e's |
the sum of nvidia-smi -ec's lanes. nvidia-smi's counters are keyed by the words it prints
("Replay Errors", "CRC Errors"), never renamed: what it prints on this driver is the finding.
"""
import json
import os
import re
import sys

OURS = ("replay", "recovery", "crc_flit", "crc_data")


def ours(out, label):
    doc = json.load(open(f"{out}/{label}-snap/snapshot.json"))
    faults = doc.get("hw_faults", {})
    counters = {}
    for bdf, g in faults.get("gpu_errors", {}).items():
        for link in g.get("nvlinks", []):
            for k in OURS:
                if link.get(k) is not None:
                    counters[(bdf, link["link"], k)] = link[k]
    index = {g["nvml_index"]: bdf for bdf, g in doc.get("gpu_facts", {}).items() if g.get("nvml_index") is not None}
    return counters, index, faults.get("gpu_errors_unread", "")


def smi(path):
    """nvidia-smi nvlink -e / -ec text: {(gpu index, link, counter words): value}."""
    counters, gpu = {}, None
    if not os.path.exists(path):
        return counters
    for line in open(path, errors="replace"):
        m = re.match(r"GPU (\d+):", line)
        if m:
            gpu = int(m.group(1))
            continue
        m = re.match(r"\s*Link (\d+): (.+?):\s*(\d+)\s*$", line)
        if m and gpu is not None:
            counters[(gpu, int(m.group(1)), m.group(2))] = int(m.group(3))
    return counters


def gpu_bdfs(out, snapshot_index):
    path = f"{out}/gpus.csv"
    if not os.path.exists(path):
        return snapshot_index
    index = {}
    for line in open(path):
        parts = [p.strip() for p in line.split(",")]
        if len(parts) >= 2 and parts[0].isdigit():
            bus = parts[1].lower()
            index[int(parts[0])] = bus[4:] if len(bus.split(":")[0]) == 8 else bus  # 00000000:19:00.0 -> 0000:19:00.0
    return index


def rises(a, b):
    return {k: b[k] - a[k] for k in b if k in a and b[k] != a[k]}


def interval(out, a, b, what):
    secs = float(open(f"{out}/{b}.time").read()) - float(open(f"{out}/{a}.time").read())
    (x, index, why), (y, _, _) = ours(out, a), ours(out, b)
    bdf_of = gpu_bdfs(out, index)
    mine = rises(x, y)
    e = rises(smi(f"{out}/{a}-smi.txt"), smi(f"{out}/{b}-smi.txt"))
    ec = rises(smi(f"{out}/{a}-ec.txt"), smi(f"{out}/{b}-ec.txt"))
    print(f"{what}, {secs:.0f} s:")
    if why:
        print(f"  ours: not read: {why}")
    total = {}
    for (_, _, k), d in mine.items():
        total[k] = total.get(k, 0) + d
    print(f"  ours (NVML, {len(x)} counters): rises {total or 'none'}")
    for name, got, n in (("nvidia-smi nvlink -e", e, len(smi(f'{out}/{a}-smi.txt'))),
                         ("nvidia-smi nvlink -ec", ec, len(smi(f'{out}/{a}-ec.txt')))):
        t = {}
        for (_, _, k), d in got.items():
            t[k] = t.get(k, 0) + d
        print(f"  {name} ({n} counters): rises {t or 'none'}")
    links = {(bdf, link) for (bdf, link, _) in mine}
    links |= {(bdf_of.get(g, f"GPU {g}"), link) for (g, link, _) in list(e) + list(ec)}
    if links:
        print("  per link, rises: ours replay/recovery/crc_flit/crc_data | nvidia-smi -e | nvidia-smi -ec lanes summed")
    gpu_of = {v: k for k, v in bdf_of.items()}
    for bdf, link in sorted(links):
        g = gpu_of.get(bdf)
        o = "/".join(str(mine.get((bdf, link, k), 0)) for k in OURS)
        s = ", ".join(f"{k} {d}" for (gg, l, k), d in sorted(e.items()) if gg == g and l == link) or "none"
        lanes = sum(d for (gg, l, _), d in ec.items() if gg == g and l == link)
        print(f"    {bdf} link {link}: {o} | {s} | {lanes}  ({max(mine.get((bdf, link, 'crc_data'), 0), 0) / secs:.2f} data CRC/s)")


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: nvlink_oracle.py DIR FROM:TO:WHAT [FROM:TO:WHAT ...]")
    out = sys.argv[1]
    for spec in sys.argv[2:]:
        a, b, what = spec.split(":", 2)
        interval(out, a, b, what)


if __name__ == "__main__":
    main()
