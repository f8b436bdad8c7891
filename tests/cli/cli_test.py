#!/usr/bin/env python3
"""CLI tests for gdsb-io: exit codes, messages, files created or not, JSON, the survey
and signals. Run one group:  cli_test.py --gdsb-io PATH --schema PATH GROUP
Groups: BadInput RuntimeErrors Safety JobFiles Integration Schema Survey Signals.
Exit 77 (CTest SKIP_RETURN_CODE) when every test of the group was skipped."""
import argparse
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import unittest

GDSB_IO = None
SCHEMA = None

GDSIO_LINE = re.compile(
    r"^IoType: (READ|WRITE|RANDREAD|RANDWRITE) XferType: (\S+) Threads: (\d+)( IoDepth: \d+)? "
    r"DataSetSize: (\d+)/(\d+)\(KiB\) IOSize: (\d+)\(KiB\) Throughput: (\d+\.\d{6}) GiB/sec, "
    r"Avg_Latency: (\d+\.\d{6}) usecs ops: (\d+) total_time (\d+\.\d{6}) secs$")


def run(args, cwd=None, env=None, timeout=120, as_nobody=False):
    cmd = [GDSB_IO] + args
    if as_nobody:
        cmd = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"] + cmd
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run(cmd, cwd=cwd, env=full_env, capture_output=True, text=True, timeout=timeout)


def make_file(path, size):
    with open(path, "wb") as f:
        chunk = bytes(range(256)) * 4096  # 1 MiB
        left = size
        while left > 0:
            f.write(chunk[: min(left, len(chunk))])
            left -= len(chunk)


class Base(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="gdsb-cli-")
        os.chmod(self.tmp, 0o755)  # reachable by 'nobody' in the permission tests

    def tearDown(self):
        for root, dirs, _ in os.walk(self.tmp):
            for d in dirs:
                os.chmod(os.path.join(root, d), 0o755)
        shutil.rmtree(self.tmp, ignore_errors=True)

    def path(self, *parts):
        return os.path.join(self.tmp, *parts)

    def listing(self):
        return sorted(os.listdir(self.tmp))

    def assertExit(self, proc, code, *needles, stream="stderr"):
        text = getattr(proc, stream)
        self.assertEqual(proc.returncode, code,
                         f"exit {proc.returncode}, expected {code}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
        for n in needles:
            self.assertIn(n, text, f"{stream} lacks {n!r}:\n{text}")
        self.assertNotIn("Traceback", proc.stderr)
        self.assertNotIn("terminate called", proc.stderr)


class BadInput(Base):
    """Usage errors: exit 2, the message names the option, nothing is created."""

    def usage(self, args, *needles):
        before = self.listing()
        p = run(args, cwd=self.tmp)
        self.assertExit(p, 2, *needles)
        self.assertEqual(self.listing(), before, "a usage error created files")
        return p

    def test_unknown_option(self):
        self.usage(["--bogus", "-f", self.path("f"), "-s", "1M"], "--bogus")

    def test_file_and_dir_together(self):
        self.usage(["-f", self.path("f"), "-D", self.tmp, "-s", "1M", "-I", "1"], "-f/--file", "-D/--dir")

    def test_size_not_a_number(self):
        self.usage(["-f", self.path("f"), "-s", "lots", "-I", "1"], "-s/--size", "lots")

    def test_io_size_not_a_number(self):
        self.usage(["-f", self.path("f"), "-s", "1M", "-i", "4Q", "-I", "1"], "-i/--io-size", "4Q")

    def test_threads_not_a_number(self):
        self.usage(["-f", self.path("f"), "-s", "1M", "-w", "two"], "--threads")

    def test_io_size_larger_than_file(self):
        self.usage(["-f", self.path("f"), "-s", "1M", "-i", "2M", "-I", "1"], "-i/--io-size", "larger than the file size")

    def test_odirect_unaligned_io_size(self):
        self.usage(["-f", self.path("f"), "-s", "1M", "-i", "1000", "-I", "1"], "-i/--io-size", "4096")

    def test_odirect_unaligned_offset(self):
        self.usage(["-f", self.path("f"), "-s", "1M", "-i", "4K", "-o", "100", "-I", "1"], "-o/--offset", "4096")

    def test_odirect_unaligned_random_offsets(self):
        self.usage(["-f", self.path("f"), "-s", "1M", "-i", "4K", "-I", "3", "-U"], "-U/--unaligned")

    def test_unaligned_and_alignment_conflict(self):
        self.usage(["-f", self.path("f"), "-s", "1M", "-i", "4K", "-I", "3", "-U", "-a", "8K", "-O", "1"],
                   "-U/--unaligned", "-a/--alignment")

    def test_iodepth_needs_io_uring(self):
        self.usage(["-f", self.path("f"), "-s", "1M", "-I", "1", "--iodepth", "8"], "--iodepth", "io_uring")

    def test_bad_copy_timing_variable(self):
        before = self.listing()
        p = run(["-f", self.path("x"), "-s", "1M", "-i", "1M", "-x", "2", "-I", "1", "--json",
                 self.path("r.json")], cwd=self.tmp, env={"GDSB_COPY_TIMING": "nvtx"})
        self.assertExit(p, 2, "GDSB_COPY_TIMING=nvtx", "'events'", "'host'")
        self.assertEqual(self.listing(), before, "a usage error created files")

    def test_unknown_engine(self):
        self.usage(["-f", self.path("f"), "-s", "1M", "--engine", "libaio"], "--engine")

    def test_unknown_xfer_type(self):
        self.usage(["-f", self.path("f"), "-s", "1M", "-x", "9"], "-x/--xfer-type")

    def test_unknown_io_type(self):
        self.usage(["-f", self.path("f"), "-s", "1M", "-I", "7"], "-I/--io-type")

    def test_mixed_read_out_of_range(self):
        self.usage(["-f", self.path("f"), "-s", "1M", "-I", "1", "-M", "150"], "-M/--mixed-read")

    def test_bad_size_range(self):
        self.usage(["-f", self.path("f"), "-s", "1M", "-i", "64K:4K:4K", "-I", "1"], "-i")

    def test_rdma_is_refused(self):
        self.usage(["-f", self.path("f"), "-s", "1M", "-P", "rdma://host"], "RDMA is not supported")

    def test_no_target(self):
        self.usage(["-s", "1M", "-w", "2"], "-f/--file", "-D/--dir")

    def test_size_required_for_new_file(self):
        self.usage(["-f", self.path("new"), "-I", "1"], "-s/--size")

    def test_runner_usage_error_creates_no_report(self):
        # -s split over -w threads leaves less than one I/O each: found by the runner.
        f = self.path("f")
        make_file(f, 1 << 20)
        before = self.listing()
        p = run(["-f", f, "-s", "1M", "-i", "512K", "-w", "4", "--json", self.path("r.json")], cwd=self.tmp)
        self.assertExit(p, 2, "-w")
        self.assertEqual(self.listing(), before)

    def test_bad_format(self):
        self.usage(["-f", self.path("f"), "-s", "1M", "--format", "xml"], "--format")

    def test_json_refuses_unrelated_file(self):
        target = self.path("notes.json")
        with open(target, "w") as f:
            f.write('{"mine": true}\n')
        before = self.listing()
        p = run(["-f", self.path("f"), "-s", "1M", "-I", "1", "--json", target], cwd=self.tmp)
        self.assertExit(p, 2, "--json", "notes.json", "--allow-overwrite")
        self.assertEqual(self.listing(), before)
        with open(target) as f:
            self.assertEqual(f.read(), '{"mine": true}\n')

    def test_html_refuses_unrelated_file(self):
        target = self.path("page.html")
        with open(target, "w") as f:
            f.write("<p>mine</p>\n")
        before = self.listing()
        p = run(["-f", self.path("f"), "-s", "1M", "-I", "1", "--html", target], cwd=self.tmp)
        self.assertExit(p, 2, "page.html", "--allow-overwrite")
        self.assertEqual(self.listing(), before)
        with open(target) as f:
            self.assertEqual(f.read(), "<p>mine</p>\n")

    def test_job_file_with_workload_option(self):
        job = self.path("a.gdsio")
        with open(job, "w") as f:
            f.write("[job1]\nfilename=%s\nsize=1M\nrw=write\n" % self.path("f"))
        self.usage([job, "-w", "4"], "--threads", "job file")


class JobFiles(Base):
    def write_job(self, text):
        job = self.path("t.gdsio")
        with open(job, "w") as f:
            f.write(text)
        return job

    def test_unknown_key_names_key_and_line(self):
        job = self.write_job("[global]\nrw=read\n\n[job1]\nfilename=x\nsize=1M\nfrobnicate=3\n")
        before = self.listing()
        p = run([job], cwd=self.tmp)
        self.assertExit(p, 2, "t.gdsio:7", "frobnicate")
        self.assertEqual(self.listing(), before)

    def test_unknown_section_names_line(self):
        job = self.write_job("[global]\nrw=read\n[jobs]\nsize=1M\n")
        self.assertExit(run([job], cwd=self.tmp), 2, "t.gdsio:3", "[jobs]")

    def test_bad_value_names_key_and_line(self):
        job = self.write_job("[job1]\nfilename=x\nsize=1M\nbs=big\n")
        self.assertExit(run([job], cwd=self.tmp), 2, "t.gdsio:4", "bs", "big")

    def test_global_conflict_reported_with_line(self):
        job = self.write_job("[global]\ndirectory=%s\n[job1]\nfilename=x\nsize=1M\nrw=write\n" % self.tmp)
        self.assertExit(run([job], cwd=self.tmp), 2, "filename", "directory")

    def test_missing_job_file(self):
        p = run([self.path("nope.gdsio")], cwd=self.tmp)
        self.assertExit(p, 1, "nope.gdsio", "No such file")

    def test_jobs_run_in_sequence_with_global_defaults(self):
        data = self.path("data")
        job = self.write_job(
            "# two jobs sharing [global]\n[global]\nname=seq\nsize=4M\nbs=256K\nfilename=%s\nxfer_type=cpu_only\n"
            "[job1]\nrw=write\nnum_threads=1\n[job2]\nrw=read\nnum_threads=2\n" % data)
        out = self.path("r.json")
        p = run([job, "--json", out, "-q"], cwd=self.tmp)
        self.assertExit(p, 0)
        lines = [l for l in p.stdout.splitlines() if l.startswith("IoType:")]
        self.assertEqual(len(lines), 2, p.stdout)
        self.assertTrue(lines[0].startswith("IoType: WRITE XferType: CPUONLY Threads: 1 "), lines[0])
        self.assertTrue(lines[1].startswith("IoType: READ XferType: CPUONLY Threads: 2 "), lines[1])
        doc = json.load(open(out))
        self.assertEqual([r["workload"]["name"] for r in doc["runs"]], ["seq/job1", "seq/job2"])

    def test_run_together(self):
        a, b = self.path("a"), self.path("b")
        make_file(a, 4 << 20)
        make_file(b, 4 << 20)
        job = self.write_job("[global]\nrun_together=1\nsize=4M\nbs=64K\nruntime=2\nrw=randread\n"
                             "[job1]\nfilename=%s\n[job2]\nfilename=%s\nengine=io_uring\niodepth=4\n" % (a, b))
        out = self.path("r.json")
        t0 = time.monotonic()
        p = run([job, "--json", out, "-q"], cwd=self.tmp)
        elapsed = time.monotonic() - t0
        self.assertExit(p, 0)
        doc = json.load(open(out))
        self.assertEqual(len(doc["runs"]), 2)
        self.assertEqual(doc["runs"][1]["workload"]["engine"], "io_uring")
        # Together means overlapping: each job starts before the other ends (ISO 8601 with
        # milliseconds, so string order is time order).
        a_run, b_run = doc["runs"]
        self.assertLess(a_run["started_at"], b_run["ended_at"])
        self.assertLess(b_run["started_at"], a_run["ended_at"])
        self.assertLess(elapsed, 30)
        self.assertEqual(len([l for l in p.stdout.splitlines() if GDSIO_LINE.match(l)]), 2)


class RuntimeErrors(Base):
    """Runtime errors: exit 1, naming the path and the system error."""

    def test_missing_file_for_read(self):
        p = run(["-f", self.path("missing"), "-s", "1M", "-I", "0"], cwd=self.tmp)
        self.assertExit(p, 1, self.path("missing"), "No such file or directory")
        self.assertNotIn("missing", self.listing())

    def test_file_shorter_than_size(self):
        f = self.path("short")
        make_file(f, 1 << 20)
        p = run(["-f", f, "-s", "4M", "-I", "0", "-i", "64K"], cwd=self.tmp)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn(f, p.stderr)

    def test_unreadable_file(self):
        f = self.path("secret")
        make_file(f, 1 << 20)
        os.chmod(f, 0)
        p = run(["-f", f, "-s", "1M", "-i", "64K"], cwd=self.tmp, as_nobody=os.geteuid() == 0)
        self.assertExit(p, 1, f, "Permission denied")

    def test_unwritable_directory(self):
        d = self.path("ro")
        os.mkdir(d)
        os.chmod(d, 0o555)
        p = run(["-D", d, "-s", "1M", "-i", "64K", "-I", "1"], cwd=self.tmp, as_nobody=os.geteuid() == 0)
        self.assertExit(p, 1, d, "Permission denied")
        self.assertEqual(os.listdir(d), [])

    def test_disk_full(self):
        # A 1 MiB tmpfs in a private mount namespace: needs root (or user namespaces).
        small = self.path("small")
        os.mkdir(small)
        mount = 'mount -t tmpfs -o size=1m tmpfs "$0" && exec "$@"'
        probe = subprocess.run(["unshare", "-m", "sh", "-c", mount, small, "true"], capture_output=True)
        if probe.returncode != 0:
            self.skipTest("cannot mount a small tmpfs here (needs root): " + probe.stderr.decode().strip())
        target = os.path.join(small, "f")
        p = subprocess.run(["unshare", "-m", "sh", "-c", mount, small, GDSB_IO, "-f", target, "-x", "4",
                            "-I", "1", "-s", "8M", "-i", "64K"], capture_output=True, text=True, timeout=60)
        self.assertExit(p, 1, target, "No space left on device")

    def test_gpu_type_not_available(self):
        f = self.path("data")
        make_file(f, 1 << 20)
        p = run(["-f", f, "-s", "1M", "-i", "64K", "-x", "gpu_direct"], cwd=self.tmp)
        if p.returncode == 0:
            self.skipTest("GPU path runs on this machine")
        self.assertExit(p, 1, "not available:", stream="stdout")

    GPU_REASONS = ("no NVIDIA driver", "no GPU (", "CUDA driver too old",
                   "built without the CUDA toolkit")

    def test_every_gpu_type_waived_with_the_reason_without_a_gpu(self):
        f = self.path("data")
        make_file(f, 1 << 20)
        for x in ("0", "2", "3", "5", "6", "7"):
            out = self.path(f"x{x}.json")
            p = run(["-f", f, "-s", "1M", "-i", "64K", "-x", x, "-V", "--json", out], cwd=self.tmp)
            if p.returncode == 0:
                self.skipTest("GPU paths run on this machine")
            self.assertExit(p, 1, "not available:", stream="stdout")
            r = json.load(open(out))["runs"][0]
            self.assertEqual(r["status"], "waived")
            self.assertTrue(any(k in r["reason"] for k in self.GPU_REASONS), r["reason"])
            self.assertIn(r["reason"], p.stdout)

    def test_cached_gpu_without_a_gpu_runs_host_only_and_says_why(self):
        f = self.path("data")
        out = self.path("x4.json")
        p = run(["-f", f, "-s", "2M", "-i", "64K", "-x", "4", "-I", "1", "-V", "--json", out],
                cwd=self.tmp)
        self.assertExit(p, 0)
        r = json.load(open(out))["runs"][0]
        if r["path_used"] == "page-cache":
            self.skipTest("a GPU is usable here")
        self.assertEqual(r["path_used"], "page-cache (host only)")
        lines = p.stdout.splitlines()
        self.assertTrue(GDSIO_LINE.match(lines[0]), p.stdout)
        self.assertTrue(lines[1].startswith("warning: CPU_CACHED_GPU: the copy to the GPU was not done ("),
                        p.stdout)
        self.assertIn(r["warnings"][0], lines[1])
        self.assertTrue(any(k in r["warnings"][0] for k in self.GPU_REASONS), r["warnings"][0])


class Safety(Base):
    def test_never_writes_block_device(self):
        if os.geteuid() == 0:
            node = self.path("blk")
            os.mknod(node, 0o600 | stat.S_IFBLK, os.makedev(7, 250))  # an unattached loop minor
        elif os.path.exists("/dev/loop0"):
            node = "/dev/loop0"
        else:
            self.skipTest("no block device node to try")
        p = run(["-f", node, "-s", "1M", "-I", "1", "--allow-overwrite"], cwd=self.tmp)
        self.assertExit(p, 2, "block device")

    def test_no_overwrite_of_foreign_file(self):
        f = self.path("precious")
        with open(f, "wb") as fh:
            fh.write(b"keep me" * 1000)
        p = run(["-f", f, "-s", "64K", "-i", "4K", "-I", "1"], cwd=self.tmp)
        self.assertIn(p.returncode, (1, 2), p.stderr)
        self.assertIn(f, p.stderr)
        self.assertIn("--allow-overwrite", p.stderr)
        with open(f, "rb") as fh:
            self.assertEqual(fh.read(), b"keep me" * 1000)

    def test_overwrite_allowed_when_asked(self):
        f = self.path("scratch")
        make_file(f, 1 << 20)
        p = run(["-f", f, "-s", "1M", "-i", "64K", "-I", "1", "--allow-overwrite"], cwd=self.tmp)
        self.assertExit(p, 0)

    def test_rewrite_of_own_file_is_fine(self):
        f = self.path("own")
        args = ["-f", f, "-s", "1M", "-i", "64K", "-I", "1"]
        self.assertExit(run(args, cwd=self.tmp), 0)
        self.assertExit(run(args, cwd=self.tmp), 0)

    def test_json_replaces_own_report(self):
        f, out = self.path("d"), self.path("r.json")
        args = ["-f", f, "-s", "1M", "-i", "64K", "-I", "1", "--json", out]
        self.assertExit(run(args, cwd=self.tmp), 0)
        self.assertExit(run(args, cwd=self.tmp), 0)
        self.assertEqual(json.load(open(out))["schema"], "gdsbench.io/1")
        self.assertEqual([n for n in self.listing() if ".tmp." in n], [])


class Integration(Base):
    def run_json(self, extra, size="8M"):
        f, out = self.path("data"), self.path("r.json")
        if not os.path.exists(f):
            make_file(f, 8 << 20)
        p = run(["-f", f, "-s", size, "-q", "--json", out] + extra, cwd=self.tmp)
        self.assertExit(p, 0)
        return p, json.load(open(out))

    def test_html_report_embeds_the_document(self):
        f, page = self.path("data"), self.path("r.html")
        make_file(f, 8 << 20)
        p = run(["-f", f, "-s", "8M", "-i", "1M", "-q", "--html", page], cwd=self.tmp)
        self.assertExit(p, 0)
        html = open(page).read()
        self.assertIn('"gdsbench.io/1"', html)
        self.assertIn("<svg", html)
        self.assertFalse([n for n in os.listdir(self.tmp) if ".tmp" in n], "temp file left")

    def check_doc(self, doc, runs):
        self.assertEqual(doc["schema"], "gdsbench.io/1")
        self.assertEqual(doc["tool"]["name"], "gdsb-io")
        self.assertFalse(doc["interrupted"])
        ctx = doc["context"]
        for key in ("host", "kernel", "os", "cpu_model", "started_at", "ended_at"):
            self.assertTrue(ctx[key], key)
        self.assertGreaterEqual(ctx["cpus"], 1)
        for k in ctx["env"]:
            self.assertTrue(k.startswith("CUFILE_") or k.startswith("CUDA_"), k)
        self.assertEqual(len(doc["runs"]), runs)
        for r in doc["runs"]:
            self.assertEqual(r["status"], "ok", r.get("reason"))
            m = r["result"]
            self.assertGreater(m["bytes"], 0)
            self.assertEqual(m["bytes"], m["ops"] * r["workload"]["io_size"])
            self.assertGreater(m["seconds"], 0)
            self.assertAlmostEqual(m["throughput_gib_s"], m["bytes"] / m["seconds"] / 2**30, delta=1e-6 + m["throughput_gib_s"] * 1e-6)
            lat = m["latency_us"]
            self.assertLessEqual(lat["min"], lat["p50"])
            self.assertLessEqual(lat["p50"], lat["p99"])
            self.assertLessEqual(lat["p99"], lat["max"] * 1.01)
            self.assertIn("user_percent", m["cpu"])
            self.assertIsInstance(m["timeseries"], list)

    def test_psync_sequential_read_gdsio_line(self):
        p, doc = self.run_json(["-x", "1", "-I", "0", "-i", "1M", "-w", "2"])
        self.check_doc(doc, 1)
        lines = p.stdout.strip().splitlines()
        m = GDSIO_LINE.match(lines[0])
        self.assertIsNotNone(m, lines[0])
        self.assertEqual(m.group(2), "CPUONLY")
        self.assertEqual(m.group(3), "2")
        r = doc["runs"][0]
        self.assertEqual(int(m.group(10)), r["result"]["ops"])
        self.assertEqual(int(m.group(5)), r["result"]["bytes"] // 1024)
        self.assertEqual(r["workload"]["engine"], "psync")
        self.assertEqual(doc["argv"][1:3], ["-f", self.path("data")])

    def test_read_without_size_uses_the_file(self):
        f = self.path("data")
        make_file(f, 8 << 20)
        p = run(["-f", f, "-i", "1M", "-o", "1M", "-q"], cwd=self.tmp)
        self.assertExit(p, 0)
        m = GDSIO_LINE.match(p.stdout.splitlines()[0])
        self.assertEqual((m.group(5), m.group(6)), ("7168", "7168"), p.stdout)

    def test_io_uring_random_read(self):
        p, doc = self.run_json(["-x", "cpu_only", "-I", "randread", "-i", "4K", "-w", "2", "-T", "1",
                                "--engine", "io_uring", "--iodepth", "8"])
        self.check_doc(doc, 1)
        w = doc["runs"][0]["workload"]
        self.assertEqual((w["engine"], w["iodepth"], w["io_pattern_name"]), ("io_uring", 8, "RANDREAD"))
        self.assertTrue(GDSIO_LINE.match(p.stdout.splitlines()[0]))

    def test_cached_write_then_verify(self):
        f = self.path("v")
        p = run(["-f", f, "-s", "4M", "-i", "64K", "-x", "4", "-I", "1", "-V", "-q"], cwd=self.tmp)
        self.assertExit(p, 0)
        self.assertTrue(GDSIO_LINE.match(p.stdout.splitlines()[0]), p.stdout)

    def test_verify_mismatch_exits_3(self):
        f = self.path("v")
        self.assertExit(run(["-f", f, "-s", "1M", "-i", "64K", "-I", "1", "-V", "-q"], cwd=self.tmp), 0)
        with open(f, "r+b") as fh:  # corrupt one byte in the second I/O
            fh.seek(65536 + 100)
            b = fh.read(1)
            fh.seek(65536 + 100)
            fh.write(bytes([b[0] ^ 0xFF]))
        out = self.path("r.json")
        p = run(["-f", f, "-s", "1M", "-i", "64K", "-I", "0", "-V", "-q", "--json", out], cwd=self.tmp)
        self.assertExit(p, 3, f, "offset 65636", "expected", "found")
        self.assertEqual(json.load(open(out))["runs"][0]["status"], "failed")

    def test_size_range_runs_one_job_per_size(self):
        p, doc = self.run_json(["-i", "64K:256K:64K", "-I", "0"])
        self.check_doc(doc, 4)
        self.assertEqual([r["workload"]["io_size"] for r in doc["runs"]], [65536, 131072, 196608, 262144])
        self.assertEqual(len([l for l in p.stdout.splitlines() if GDSIO_LINE.match(l)]), 4)

    def test_table_format_and_per_job_stats(self):
        p, doc = self.run_json(["-i", "256K", "--format", "table"])
        self.assertIn("GiB/s", p.stdout)
        self.assertIn("p99.9 us", p.stdout)
        self.assertNotIn("IoType:", p.stdout)
        p, doc = self.run_json(["-i", "256K", "-J"])
        self.assertIn("latency_us: min", p.stdout)

    def test_repeat_reports_each_repetition(self):
        p, doc = self.run_json(["-i", "256K", "--repeat", "3"])
        self.assertEqual(len(doc["runs"][0]["repetitions"]), 3)

    def test_no_progress_when_not_a_terminal(self):
        p, _ = self.run_json(["-i", "1M", "-T", "1"])
        self.assertNotIn("\r", p.stderr)
        self.assertNotIn("GiB/s", p.stderr)


class Schema(Base):
    def test_real_output_validates(self):
        try:
            import jsonschema
        except ImportError:
            self.skipTest("python3-jsonschema is not installed (ci/install-deps.sh installs it)")
        schema = json.load(open(SCHEMA))
        f, out = self.path("data"), self.path("r.json")
        make_file(f, 4 << 20)
        p = run(["-f", f, "-s", "4M", "-i", "256K", "-q", "--json", out, "--repeat", "2"], cwd=self.tmp)
        self.assertExit(p, 0)
        doc = json.load(open(out))
        jsonschema.validate(doc, schema)
        # A waived run validates too (it has no "result").
        p = run(["-f", f, "-s", "4M", "-i", "256K", "-x", "0", "-q", "--json", out], cwd=self.tmp)
        jsonschema.validate(json.load(open(out)), schema)
        # A bounce run's phases (-x 2/3/4; none run without a GPU, so shaped here from the
        # run's own latency object, as the runner writes them) validate; a negative count not.
        result = doc["runs"][0]["result"]
        phase = {"count": result["ops"], "us": result["latency_us"]}
        result["phases"] = {k: dict(phase) for k in ("storage", "copy", "dma", "wait")}
        result["phases"].update({"storage_gib_s": 6.2, "sync_ceiling_gib_s": 5.5})
        jsonschema.validate(doc, schema)
        result["phases"]["copy"]["count"] = -1
        with self.assertRaises(jsonschema.ValidationError):
            jsonschema.validate(doc, schema)
        del result["phases"]
        # And the schema is not vacuous: a broken document fails.
        doc["runs"][0]["status"] = "fine"
        with self.assertRaises(jsonschema.ValidationError):
            jsonschema.validate(doc, schema)


class Survey(Base):
    def test_survey_small(self):
        env = {"GDSB_SCRATCH": self.tmp, "GDSB_SURVEY_SIZE": "32M", "GDSB_SURVEY_SECONDS": "0.3"}
        t0 = time.monotonic()
        p = run([], cwd=self.tmp, env=env)
        self.assertExit(p, 0)
        self.assertLess(time.monotonic() - t0, 60)
        self.assertIn("status/path", p.stdout)
        doc = json.load(open(self.path("gdsb-report", "io.json")))
        self.assertEqual(doc["schema"], "gdsbench.io/1")
        self.assertEqual(len(doc["runs"]), 16)
        self.assertEqual(sorted({r["workload"]["xfer_type"] for r in doc["runs"]}), list(range(8)))
        ok = [r for r in doc["runs"] if r["status"] == "ok"]
        self.assertGreaterEqual(len(ok), 2, "cpu_only should run everywhere")
        for r in doc["runs"]:
            if r["status"] == "waived":
                self.assertTrue(r["reason"])
                self.assertIn(r["reason"], p.stdout)
        # Without a GPU every GPU type but -x 4 (which runs its host part) is waived.
        if all(r["status"] == "waived" for r in doc["runs"] if r["workload"]["xfer_type"] == 0):
            for r in doc["runs"]:
                x = r["workload"]["xfer_type"]
                if x in (0, 2, 3, 5, 6, 7):
                    self.assertEqual(r["status"], "waived", x)
                if x == 4:
                    self.assertEqual((r["status"], r["path_used"]), ("ok", "page-cache (host only)"))
        self.assertEqual([n for n in self.listing() if n.startswith("gdsb-survey")], [])
        # The scratch file is the tool's own: every read row starts with none of it in the
        # page cache (this directory is on the machine's disk, where the advice holds).
        measured = [r for r in doc["runs"] if r["status"] != "waived"]
        for r in measured:
            self.assertEqual(r["status"], "ok", r["reason"])
            self.assertEqual(r["page_cache_resident_at_start"], 0, r["workload"])
        self.assertIn(4, [r["workload"]["xfer_type"] for r in measured], "-x 4 reads buffered")
        self.assertNotIn("in the page cache when the run began", p.stdout + p.stderr)
        self.validate(doc)

    def validate(self, doc):
        try:
            import jsonschema
        except ImportError:
            return
        jsonschema.validate(doc, json.load(open(SCHEMA)))

    def test_survey_on_tmpfs_says_page_cache(self):
        shm = "/dev/shm"
        if not os.path.isdir(shm) or not os.access(shm, os.W_OK) or \
                subprocess.run(["stat", "-f", "-c", "%T", shm], capture_output=True, text=True).stdout.strip() != "tmpfs":
            self.skipTest("no writable tmpfs at /dev/shm")
        scratch = tempfile.mkdtemp(prefix="gdsb-cli-", dir=shm)
        try:
            env = {"GDSB_SCRATCH": scratch, "GDSB_SURVEY_SIZE": "16M", "GDSB_SURVEY_SECONDS": "0.2"}
            p = run([], cwd=self.tmp, env=env)
            self.assertExit(p, 0)  # a survey that ran, whatever it found
            self.assertEqual(os.listdir(scratch), [])
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        doc = json.load(open(self.path("gdsb-report", "io.json")))
        measured = [r for r in doc["runs"] if r["status"] != "waived"]
        self.assertTrue(measured)
        for r in measured:
            self.assertEqual(r["status"], "page cache", r["workload"])
            self.assertIn("stayed in the page cache after posix_fadvise(DONTNEED)", r["reason"])
            self.assertIn("throughput_gib_s", r["result"])  # shown, not hidden
            self.assertEqual(r["page_cache_resident_at_start"], 1)
        self.assertIn("page cache: ", p.stdout)
        self.validate(doc)

    def test_survey_interrupted_removes_scratch(self):
        env = dict(os.environ, GDSB_SCRATCH=self.tmp, GDSB_SURVEY_SIZE="32M", GDSB_SURVEY_SECONDS="5")
        proc = subprocess.Popen([GDSB_IO], cwd=self.tmp, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(2.0)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        self.assertEqual(proc.returncode, 130, err)
        self.assertEqual([n for n in self.listing() if n.startswith("gdsb-survey")], [])
        self.assertTrue(json.load(open(self.path("gdsb-report", "io.json")))["interrupted"])


class Signals(Base):
    def interrupt(self, sig):
        f, out = self.path("data"), self.path("r.json")
        make_file(f, 16 << 20)
        proc = subprocess.Popen([GDSB_IO, "-f", f, "-s", "16M", "-i", "64K", "-I", "2", "-T", "30", "--json", out],
                                cwd=self.tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(1.5)
        t0 = time.monotonic()
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=20)
        self.assertLess(time.monotonic() - t0, 5, "stopping took too long")
        self.assertEqual(proc.returncode, 130, stderr)
        self.assertIn("interrupted", stderr)
        self.assertTrue(GDSIO_LINE.match(stdout.splitlines()[0]), stdout)
        doc = json.load(open(out))
        self.assertTrue(doc["interrupted"])
        self.assertTrue(doc["runs"][0]["interrupted"])
        self.assertGreater(doc["runs"][0]["result"]["ops"], 0)

    def test_sigint(self):
        self.interrupt(signal.SIGINT)

    def test_sigterm(self):
        self.interrupt(signal.SIGTERM)


def main():
    global GDSB_IO, SCHEMA
    ap = argparse.ArgumentParser()
    ap.add_argument("--gdsb-io", required=True)
    ap.add_argument("--schema", required=True)
    ap.add_argument("group")
    ap.add_argument("tests", nargs="*")
    a = ap.parse_args()
    GDSB_IO, SCHEMA = os.path.abspath(a.gdsb_io), os.path.abspath(a.schema)
    loader = unittest.TestLoader()
    cls = globals()[a.group]
    suite = loader.loadTestsFromNames(a.tests, cls) if a.tests else loader.loadTestsFromTestCase(cls)
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    if not result.wasSuccessful():
        return 1
    if result.testsRun > 0 and len(result.skipped) == result.testsRun:
        return 77
    return 0


if __name__ == "__main__":
    sys.exit(main())
