#!/usr/bin/env python3
"""Writes a fleet of 8 recorded nodes made from the real HGX H100 recording (lspci -vvv,
tests/topo/fixtures/real/hgx-h100-lspci-vvv.txt), one lspci text file a node, for
gdsb-cluster --topo-input 'lspci-text=DIR/node{rank}.txt' under mpirun or srun:
  node0, node2, node4, node7  healthy (the recording as it is)
  node1  GPU 0000:3b:00.0 trained at x8 (LnkSta "Width x8 (downgraded)", capable x16)
  node3  ACS request and completion redirect on the switch port 0000:17:01.0 (above GPU 19:00.0)
  node5  GPU 0000:19:00.0 removed (its stanza gone, as when it falls off the bus)
  node6  NVMe 0000:18:00.0 removed
DIR/expected.json names the faulty nodes by rank, with the PCI address of each fault, for
tests/cluster/check_fleet.py.
Usage: make_fleet.py HGX_LSPCI_TEXT DIR"""
import json
import os
import re
import sys

FAULTS = {
    1: {"fault": "GPU at x8", "pci": "0000:3b:00.0", "words": ["x8"]},
    3: {"fault": "ACS redirect", "pci": "0000:17:01.0", "words": ["ACS"]},
    5: {"fault": "GPU removed", "pci": "0000:19:00.0", "words": [], "missing": "GPUs"},
    6: {"fault": "NVMe removed", "pci": "0000:18:00.0", "words": [], "missing": "drives"},
}


def stanzas(text):
    """The recording's device blocks, keyed by their bus address (bb:dd.f)."""
    blocks = [b for b in re.split(r"\n(?=[0-9a-f]{2}:[0-9a-f]{2}\.[0-9a-f] )", text.strip("\n"))]
    return [(b.split(" ", 1)[0], b.strip("\n")) for b in blocks]


def edit(blocks, bdf, old, new):
    for i, (addr, b) in enumerate(blocks):
        if addr == bdf:
            assert old in b, f"{bdf}: '{old}' not in its stanza"
            blocks[i] = (addr, b.replace(old, new, 1))
            return
    raise SystemExit(f"make_fleet: {bdf} not in the recording")


def drop(blocks, bdf):
    kept = [x for x in blocks if x[0] != bdf]
    assert len(kept) == len(blocks) - 1, f"{bdf} not in the recording"
    return kept


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    base = stanzas(open(sys.argv[1]).read())
    os.makedirs(sys.argv[2], exist_ok=True)
    for n in range(8):
        blocks = list(base)
        if n == 1:
            edit(blocks, "3b:00.0", "LnkSta:\tSpeed 32GT/s (ok), Width x16 (ok)",
                 "LnkSta:\tSpeed 32GT/s (ok), Width x8 (downgraded)")
        if n == 3:
            edit(blocks, "17:01.0", "ACSCtl:\tSrcValid- TransBlk- ReqRedir- CmpltRedir-",
                 "ACSCtl:\tSrcValid- TransBlk- ReqRedir+ CmpltRedir+")
        if n == 5:
            blocks = drop(blocks, "19:00.0")
        if n == 6:
            blocks = drop(blocks, "18:00.0")
        with open(os.path.join(sys.argv[2], f"node{n}.txt"), "w") as f:
            f.write("\n\n".join(b for _, b in blocks) + "\n")
    with open(os.path.join(sys.argv[2], "expected.json"), "w") as f:
        json.dump({str(k): v for k, v in FAULTS.items()}, f, indent=1)


if __name__ == "__main__":
    main()
