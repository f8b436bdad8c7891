#!/usr/bin/env python3
"""gdsb-io's node mode (issue 35): every GPU reading at once. Groups:
  NodeBadInput  usage errors (exit 2, the option named, nothing created)
  NodePlan      --dry-run on the recorded HGX H100 (8 GPUs, 8 NVMe drives at Gen4 x4)
  NodeFake      real runs on 8 and 4 fake GPUs: every per-GPU and aggregate figure
                recomputed here from the runs in the JSON report (no code shared with gdsb-io)
Run: node_mode_test.py --gdsb-io PATH --schema PATH GROUP"""
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cli_test  # noqa: E402  (run, Base, main)
from cli_test import Base, run  # noqa: E402

REAL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "topo", "fixtures", "real")
HGX = os.path.join(REAL, "hgx-h100-lspci-vvv.txt")

# Read from the recording by hand (lspci -vvv, LnkSta of each NVMe drive): each H100 sits on
# the bus after its own drive, and every drive is Micron or Intel NVMe at 16GT/s x4.
HGX_PAIRS = [("0000:19:00.0", "0000:18:00.0"), ("0000:3b:00.0", "0000:3a:00.0"),
             ("0000:4c:00.0", "0000:4b:00.0"), ("0000:5d:00.0", "0000:5c:00.0"),
             ("0000:9b:00.0", "0000:9a:00.0"), ("0000:bb:00.0", "0000:ba:00.0"),
             ("0000:cb:00.0", "0000:ca:00.0"), ("0000:db:00.0", "0000:da:00.0")]
GEN4_X4_GB_S = 16e9 * 4 * 128 / 130 / 8 / 1e9  # 7.877 GB/s per direction


class NodeBadInput(Base):
    def bad(self, args, *needles):
        before = self.listing()
        p = run(args, cwd=self.tmp)
        self.assertExit(p, 2, *needles)
        self.assertEqual(self.listing(), before, "a usage error created files")

    def test_bad_gpu_lists(self):
        self.bad(["--gpus", "0,0", "--dry-run", "--lspci-text", HGX], "--gpus 0,0", "listed twice")
        self.bad(["--gpus", "two", "--dry-run", "--lspci-text", HGX], "--gpus")
        self.bad(["--gpus", "0", "--dry-run", "--lspci-text", HGX], "--gpus 0")
        self.bad(["--gpus", "0,9", "--dry-run", "--lspci-text", HGX], "GPU 9 is not here", "8 GPU(s)")

    def test_options_of_other_modes(self):
        self.bad(["--gpus", "all", "-f", self.path("x"), "--dry-run", "--lspci-text", HGX], "--file", "node mode")
        self.bad(["--gpus", "all", "--shards", "2", "--dry-run", "--lspci-text", HGX], "--shards", "--workload")
        self.bad(["--gpus", "all", "-x", "1,1", "--dry-run", "--lspci-text", HGX], "listed twice")
        self.bad(["--gpus", "all", "-I", "write", "--dry-run", "--lspci-text", HGX], "-I/--io-type", "reads")
        self.bad(["--fake-gpu", self.path("none.json"), "-f", self.path("f")], "--fake-gpu", "--gpus")
        self.bad(["--gpus", "all", "--fake-gpu", self.path("none.json"), "-D", self.tmp], "--fake-gpu",
                 "cannot open")
        self.bad(["--workload", "dataset", "--gpus", "0,1", "-D", self.tmp], "a preset takes all or a count")

    def test_a_recording_is_planned_not_measured(self):
        self.bad(["--gpus", "all", "--lspci-text", HGX, "-D", self.tmp], "--dry-run only")


class NodePlan(Base):
    def test_hgx_node_ceiling_is_the_sum_of_eight_local_drives(self):
        p = run(["--gpus", "all", "--dry-run", "--lspci-text", HGX], cwd=self.tmp)
        self.assertExit(p, 0, stream="stdout")
        lines = p.stdout.splitlines()
        for i, (gpu, drive) in enumerate(HGX_PAIRS):
            row = [l for l in lines if l.split()[:2] == [str(i), gpu]]
            self.assertEqual(len(row), 1, f"GPU {i} row:\n{p.stdout}")
            self.assertIn(drive, row[0])
            self.assertTrue(row[0].rstrip().endswith(f"{GEN4_X4_GB_S:.1f}"), row[0])
        node = [l for l in lines if l.startswith("node ceiling:")]
        self.assertEqual(len(node), 1, p.stdout)
        self.assertIn(f"~{8 * GEN4_X4_GB_S:.1f} GB/s", node[0])  # 63.0, not one GPU's 7.9
        # The shared directory is said once for all eight GPUs, not eight times.
        self.assertEqual(sum(1 for l in lines if "reads ." in l), 1, p.stdout)
        self.assertIn("GPU0-7: reads .", p.stdout)
        self.assertEqual(self.listing(), [], "--dry-run created files")

    def test_table_columns_never_run_together(self):
        """Issue 43: on the 4 x H100 VM the plan printed "0000:00:01.0 (vda), 0000:00:02.0 (vdb)-":
        a source list wider than its column ran into the ceiling. Read from the recording by hand
        (tests/topo/fixtures/real/h100x4-vm/snapshot.json): four H100 (10de:2330) at 0000:00:06.0-09.0,
        virtio disks vda at 0000:00:01.0 and vdb at 0000:00:02.0, no ceiling (virtual storage)."""
        snap = os.path.join(self.tmp, "snap")
        os.mkdir(snap)
        with open(os.path.join(REAL, "h100x4-vm", "snapshot.json")) as src, open(os.path.join(snap, "snapshot.json"), "w") as dst:
            dst.write(src.read())
        p = run(["--gpus", "all", "--dry-run", "--from-snapshot", snap], cwd=self.tmp)
        self.assertExit(p, 0, stream="stdout")
        lines = p.stdout.splitlines()
        head = [l for l in lines if l.startswith("GPU ")]
        self.assertEqual(len(head), 1, p.stdout)
        cells = [c for c in head[0].split("  ") if c.strip()]
        self.assertEqual([c.strip() for c in cells], ["GPU", "bus id", "nearest source", "ceiling GB/s"], p.stdout)
        for i in range(4):
            row = [l for l in lines if l.startswith(f"{i} ")]
            self.assertEqual(len(row), 1, p.stdout)
            # Cells two spaces apart at least, each where its header starts.
            self.assertEqual([c.strip() for c in row[0].split("  ") if c.strip()],
                             [str(i), f"0000:00:0{6 + i}.0", "0000:00:01.0 (vda), 0000:00:02.0 (vdb)", "-"], p.stdout)
            starts = [head[0].index(h) for h in ("bus id", "nearest source", "ceiling GB/s")]
            for start, value in zip(starts, [f"0000:00:0{6 + i}.0", "0000:00:01.0 (vda)", "-"]):
                self.assertEqual(row[0][start:start + len(value)], value, p.stdout)

    def test_a_subset_counts_only_its_gpus(self):
        p = run(["--gpus", "0,2", "--dry-run", "--lspci-text", HGX], cwd=self.tmp)
        self.assertExit(p, 0, stream="stdout")
        self.assertIn(f"~{2 * GEN4_X4_GB_S:.1f} GB/s", p.stdout)


class NodeFake(Base):
    def fake(self, n, delay_us=0):
        spec = self.path(f"fake{n}.json")
        with open(spec, "w") as f:
            json.dump({"devices": n, "copy_delay_us": delay_us}, f)
        return spec

    def check_figures(self, doc, gpus, modes):
        node = doc["node"]
        self.assertEqual([g["gpu"] for g in node["gpus"]], list(range(gpus)))
        runs = [r for r in doc["runs"] if r["workload"]["name"].startswith("node-gpu")]
        for mode in node["modes"]:
            x = mode["xfer_type"]
            mine = [r for r in runs if r["workload"]["xfer_type"] == x]
            self.assertEqual(len(mine), gpus)
            if "waived" in mode:
                self.assertNotIn(x, modes)
                self.assertTrue(all(r["status"] == "waived" for r in mine))
                continue
            self.assertIn(x, modes)
            ok = [r for r in mine if r["status"] == "ok"]
            self.assertEqual(len(ok), gpus, json.dumps(mine)[:2000])
            by_gpu = {r["workload"]["gpu"]: r for r in ok}
            self.assertEqual(sorted(by_gpu), list(range(gpus)))
            for e in mode["per_gpu"]:
                res = by_gpu[e["gpu"]]["result"]
                self.assertGreater(res["bytes"], 0)
                self.assertAlmostEqual(e["gb_s"], res["bytes"] / res["seconds"] / 1e9, places=9)
            total = sum(r["result"]["bytes"] for r in ok)
            t0 = min(r["result"]["t0_unix_s"] for r in ok)
            end = max(r["result"]["end_unix_s"] for r in ok)
            self.assertEqual(mode["bytes"], total)
            self.assertAlmostEqual(mode["window_s"], end - t0, places=6)
            self.assertAlmostEqual(mode["aggregate_gb_s"], total / (end - t0) / 1e9, places=6)
            # They ran together: every GPU's interval overlaps every other's.
            last_start = max(r["result"]["t0_unix_s"] for r in ok)
            first_end = min(r["result"]["end_unix_s"] for r in ok)
            self.assertLess(last_start, first_end, "the GPUs' reads did not overlap")

    def test_eight_fake_gpus_read_at_once(self):
        out = self.path("node.json")
        p = run(["--gpus", "all", "--fake-gpu", self.fake(8, 200), "-D", self.tmp, "-x", "2,0,1", "-s", "8M",
                 "-i", "1M", "-T", "1", "-q", "--json", out], cwd=self.tmp, timeout=300)
        self.assertExit(p, 0, stream="stdout")
        doc = json.load(open(out))
        self.check_figures(doc, 8, {1, 2})
        self.assertIn("waived on every GPU: -x 0: no cuFile with the fake GPU service", p.stdout)
        self.assertEqual(p.stdout.count("no cuFile with the fake GPU service"), 1, p.stdout)
        self.assertIn("GPU0-7: reads " + self.tmp + " (-D, given for every GPU)", p.stdout)
        self.assertEqual([f for f in os.listdir(self.tmp) if f.startswith("gdsb-node.")], [],
                         "the node's files were left behind")
        try:
            import jsonschema
        except ImportError:
            self.skipTest("python3-jsonschema is not installed (ci/install-deps.sh installs it)")
        jsonschema.validate(doc, json.load(open(cli_test.SCHEMA)))

    def test_a_list_of_four(self):
        out = self.path("node4.json")
        p = run(["--gpus", "1,3,5,7", "--fake-gpu", self.fake(8), "-D", self.tmp, "-x", "2", "-s", "4M",
                 "-T", "1", "-q", "--json", out], cwd=self.tmp, timeout=300)
        self.assertExit(p, 0, stream="stdout")
        doc = json.load(open(out))
        self.assertEqual([g["gpu"] for g in doc["node"]["gpus"]], [1, 3, 5, 7])
        self.assertEqual([e["gpu"] for e in doc["node"]["modes"][0]["per_gpu"]], [1, 3, 5, 7])
        self.assertIn("GPU1, GPU3, GPU5, GPU7: reads", p.stdout)


if __name__ == "__main__":
    cli_test.NodeBadInput = NodeBadInput  # main() looks the group up in cli_test
    cli_test.NodePlan = NodePlan
    cli_test.NodeFake = NodeFake
    sys.exit(cli_test.main())
