#!/usr/bin/env python3
"""gdsb-doctor on a node of several GPUs (issue 35): every GPU judged from one run in which all
of them read at once, and a fact common to several GPUs said once. Groups:
  DoctorNodeIo    gdsb-io --gpus all on 4 and 8 fake GPUs, then gdsb-doctor --io of its report
  DoctorNodeLive  the live doctor on 4 and 8 fake GPUs (--fake-gpu): one node read per step
Every figure the checks expect is recomputed here from the runs (bytes / seconds) and written
in words by this script's own formatting, so nothing is shared with the doctor's code.
Run: doctor_node_test.py --gdsb-io PATH --gdsb-doctor PATH GROUP"""
import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

GDSB_IO = GDSB_DOCTOR = None


def gb_number(v):
    """GB/s in words: one decimal from 1 GB/s up, two significant digits below (never 0.0)."""
    digits = min(9, 1 - math.floor(math.log10(v))) if 0 < v < 0.95 else 1
    return "%.*f" % (digits, v)


def span(values, fmt):
    lo, hi = fmt(min(values)), fmt(max(values))
    return lo if lo == hi else lo + "-" + hi


def gpu_set(indexes):
    """GPU0-3, GPU5: consecutive indexes as a range, two in a row listed."""
    out, i, idx = [], 0, sorted(indexes)
    while i < len(idx):
        j = i
        while j + 1 < len(idx) and idx[j + 1] == idx[j] + 1:
            j += 1
        if j == i:
            out.append(f"GPU{idx[i]}")
        elif j == i + 1:
            out += [f"GPU{idx[i]}", f"GPU{idx[j]}"]
        else:
            out.append(f"GPU{idx[i]}-{idx[j]}")
        i = j + 1
    return ", ".join(out)


def rate(run):
    r = run["result"]
    return r["bytes"] / r["seconds"] / 1e9


class NodeCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="gdsb-doctor-node-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.tmp, name)

    def fake(self, n):
        spec = self.path(f"fake{n}.json")
        with open(spec, "w") as f:
            json.dump({"devices": n}, f)
        return spec

    def run_tool(self, tool, args, timeout=300):
        return subprocess.run([tool] + args, cwd=self.tmp, capture_output=True, text=True, timeout=timeout)

    def figures(self, runs, n):
        """Each GPU's read (its -x 2 run) and its own storage alone (its -x 1 run), GB/s."""
        read, storage = {}, {}
        for r in runs:
            w = r["workload"]
            if r["status"] != "ok":
                continue
            if w["xfer_type"] == 2:
                read[w["gpu"]] = max(read.get(w["gpu"], 0), rate(r))
            elif w["xfer_type"] == 1:
                storage[w["gpu"]] = max(storage.get(w["gpu"], 0), rate(r))
        self.assertEqual(sorted(read), list(range(n)), "every GPU needs its own measured read")
        self.assertEqual(sorted(storage), list(range(n)), "every GPU needs its own storage alone")
        return read, storage

    def check_together(self, runs, xfer, n):
        """The GPUs' runs of one type went at once: every interval overlaps every other."""
        mine = [r["result"] for r in runs if r["status"] == "ok" and r["workload"]["xfer_type"] == xfer]
        self.assertEqual(len(mine), n)
        self.assertLess(max(r["t0_unix_s"] for r in mine), min(r["end_unix_s"] for r in mine),
                        f"the -x {xfer} reads of the {n} GPUs did not overlap: not one run")

    def check_said_once(self, text, doc, read, storage):
        """Headline and verdict as this script writes them from the figures, each clause once."""
        n = len(read)
        for g in doc["gpus"]:
            i = int(g["gpu"][3:])
            self.assertAlmostEqual(g["measured_gb_s"], read[i], delta=1e-6 * read[i], msg=g["gpu"])
            self.assertAlmostEqual(g["storage_gb_s"], storage[i], delta=1e-6 * storage[i], msg=g["gpu"])
        ratio = {i: read[i] / storage[i] for i in range(n)}
        bound = [i for i in range(n) if ratio[i] >= 0.9]
        rest = [i for i in range(n) if ratio[i] < 0.9]

        def clause(gpus, tail):
            verb = "reads at" if len(gpus) == 1 else "read at"
            return (f"{gpu_set(gpus)} {verb} {span([read[i] for i in gpus], gb_number)} GB/s, "
                    f"{span([ratio[i] for i in gpus], lambda r: '%.0f' % (100 * r))}% of storage alone "
                    f"({span([storage[i] for i in gpus], gb_number)} GB/s){tail}")

        headline = [l for l in text.splitlines() if l.startswith("Diagnosis: ")]
        self.assertEqual(len(headline), 1, text)
        if bound:
            want = "storage-bound: " + clause(bound, ": the storage, not the GPU path, sets the figure")
            if rest:
                want += "; " + clause(rest, ", below the storage-bound GPUs")
            self.assertEqual(headline[0], f"Diagnosis: {want}.", text)
            self.assertEqual(text.count("storage-bound: "), 1, text)
        self.assertEqual(headline[0].count("of storage alone"), (1 if bound else 0) + (1 if bound and rest else 0))
        # GPUs below 90% of their ceiling (storage alone): one note for all of them.
        if rest:
            many = len(rest) > 1
            note = (f"Note: {gpu_set(rest)} {'read' if many else 'reads'} at "
                    f"{span([read[i] for i in rest], gb_number)} GB/s, "
                    f"{span([ratio[i] for i in rest], lambda r: '%.0f' % (100 * r))}% of "
                    f"{'their ceilings' if many else 'its ceiling'} ~{span([storage[i] for i in rest], gb_number)} "
                    "GB/s; no rule found a certain or likely cause")
            self.assertEqual([l for l in text.splitlines() if l.startswith("Note: ") and "no rule found" in l], [note],
                             text)
        verdict = [l for l in text.splitlines() if l.startswith("Verdict: ")]
        self.assertEqual(len(verdict), 1, text)
        if not bound:
            self.assertEqual(verdict[0], "Verdict: no certain or likely cause found", text)
        if not verdict[0].startswith("Verdict: nothing wrong: "):
            return  # a finding decides the verdict; the GPUs' clauses are not in it
        # The verdict: GPUs within 90% of their ceiling (storage alone binds each), those at or
        # below it and those above it (the clause says why) each said once.
        groups = []
        for above in (False, True):
            gpus = [i for i in bound if (ratio[i] > 1.0) == above]
            if gpus:
                groups.append(gpus)
        groups.sort(key=lambda g: g[0])
        parts = []
        for gpus in groups:
            storage_span = span([storage[i] for i in gpus], gb_number)
            verb = "reads at" if len(gpus) == 1 else "read at"
            c = (f"{gpu_set(gpus)} {verb} {span([read[i] for i in gpus], gb_number)} GB/s, "
                 f"{span([ratio[i] for i in gpus], lambda r: '%.0f' % (100 * r))}% of the ceiling "
                 f"~{storage_span} GB/s set by storage alone {storage_span} GB/s measured")
            if ratio[gpus[0]] > 1.0:
                c += f" (above it: storage alone {storage_span} GB/s measured does not bound this read as measured)"
            parts.append(c)
        self.assertEqual(verdict[0], "Verdict: nothing wrong: " + "; ".join(parts), text)
        self.assertEqual(verdict[0].count("set by storage alone"), len(groups), text)


class DoctorNodeIo(NodeCase):
    """gdsb-io's node mode writes the report; the doctor judges every GPU from it."""

    def check(self, n):
        io = self.path("io.json")
        p = self.run_tool(GDSB_IO, ["--gpus", "all", "--fake-gpu", self.fake(n), "-D", self.tmp, "-x", "2,1", "-s",
                                    "8M", "-i", "1M", "-T", "1", "-q", "--json", io])
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        report = json.load(open(io))
        self.check_together(report["runs"], 2, n)
        self.check_together(report["runs"], 1, n)
        read, storage = self.figures(report["runs"], n)
        out = self.path("doctor.json")
        d = self.run_tool(GDSB_DOCTOR, ["--io", io, "--json", out])
        self.assertIn(d.returncode, (0, 3), d.stdout + d.stderr)
        doc = json.load(open(out))
        self.assertEqual(len(doc["gpus"]), n, d.stdout)
        self.check_said_once(d.stdout, doc, read, storage)
        # No figure rounded to nothing (issue 35: "reads at 0.0 GB/s").
        self.assertNotIn(" 0.0 GB/s", d.stdout)

    def test_four_fake_gpus(self):
        self.check(4)

    def test_eight_fake_gpus(self):
        self.check(8)


class DoctorNodeLive(NodeCase):
    """The live ladder's storage steps read on every GPU at once (no --gpu)."""

    def check(self, n):
        io_dir = self.path("io")
        os.mkdir(io_dir)
        out = self.path("doctor.json")
        p = self.run_tool(GDSB_DOCTOR, ["--io-dir", io_dir, "--fake-gpu", self.fake(n), "--budget", "5", "--size",
                                        "8M", "--no-nvml", "--json", out])
        self.assertIn(p.returncode, (0, 3), p.stdout + p.stderr)
        doc = json.load(open(out))
        self.assertEqual(os.listdir(io_dir), [], "the doctor left its files behind")
        self.assertEqual(len(doc["gpus"]), n, p.stdout)
        runs = doc["runs"]  # the runs the diagnosis used, as gdsbench.io/1 runs
        self.check_together(runs, 2, n)
        self.check_together(runs, 1, n)
        read, storage = self.figures(runs, n)
        self.check_said_once(p.stdout, doc, read, storage)
        # One step a type for all GPUs, its detail naming them once.
        step = [l for l in p.stdout.splitlines() if "ran     [5/6] CPU bounce (-x 2)" in l]
        self.assertEqual(len(step), 1, p.stdout)
        self.assertIn(f"GPU0-{n - 1} at once", step[0])
        # The reason -x 0 could not run: once in the steps, once in the notes, not once a GPU.
        for prefix in ("  not run [6/6] cuFile (-x 0)", "Note: "):
            lines = [l for l in p.stdout.splitlines() if l.startswith(prefix) and "no cuFile with the fake GPU" in l]
            self.assertEqual(len(lines), 1, p.stdout)

    def test_four_fake_gpus(self):
        self.check(4)

    def test_eight_fake_gpus(self):
        self.check(8)

    def test_one_gpu_with_gpu_option(self):
        io_dir = self.path("io")
        os.mkdir(io_dir)
        out = self.path("doctor.json")
        p = self.run_tool(GDSB_DOCTOR, ["--io-dir", io_dir, "--fake-gpu", self.fake(4), "--gpu", "2", "--budget",
                                        "5", "--size", "8M", "--no-nvml", "--json", out])
        self.assertIn(p.returncode, (0, 3), p.stdout + p.stderr)
        doc = json.load(open(out))
        measured = [g["gpu"] for g in doc["gpus"] if g["measured_gb_s"] is not None]
        self.assertEqual(measured, ["GPU2"], p.stdout)
        bad = self.run_tool(GDSB_DOCTOR, ["--io-dir", io_dir, "--fake-gpu", self.fake(4), "--gpu", "7", "--budget",
                                          "5", "--size", "8M", "--no-nvml"])
        self.assertEqual(bad.returncode, 2, bad.stderr)
        self.assertIn("--gpu 7", bad.stderr)


def main():
    global GDSB_IO, GDSB_DOCTOR
    ap = argparse.ArgumentParser()
    ap.add_argument("--gdsb-io", required=True)
    ap.add_argument("--gdsb-doctor", required=True)
    ap.add_argument("group")
    a = ap.parse_args()
    GDSB_IO, GDSB_DOCTOR = os.path.abspath(a.gdsb_io), os.path.abspath(a.gdsb_doctor)
    suite = unittest.TestLoader().loadTestsFromTestCase(globals()[a.group])
    return 0 if unittest.TextTestRunner(verbosity=2).run(suite).wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
