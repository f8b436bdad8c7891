#!/usr/bin/env python3
"""gdsb-io records where each run's data lay (issue 41, item 6): the run's `storage` (file
system type, mount source, mount point, device number) for a run on this machine's real file
systems, judged against findmnt(8) (`findmnt -T FILE`, from /proc/self/mountinfo: another
reader than gdsb-io's /proc/mounts) and stat(2) of the file as the oracles.
Run:  storage_test.py --gdsb-io PATH --schema PATH Storage"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cli_test  # noqa: E402  (run, Base, main)
from cli_test import Base, make_file, run  # noqa: E402


def findmnt(path):
    """The mounts findmnt says hold `path` (several where mounts are stacked on one point)."""
    if shutil.which("findmnt") is None:
        raise unittest.SkipTest("findmnt (util-linux) is not installed")
    p = subprocess.run(["findmnt", "-J", "-o", "FSTYPE,SOURCE,TARGET", "-T", path],
                       capture_output=True, text=True, check=True)
    # findmnt writes a bind mount's or btrfs subvolume's source as "/dev/sda2[/@home]"; the
    # bracket is its own addition (mountinfo's root), not /proc/mounts' source field.
    return [{"fs_type": f["fstype"], "source": re.sub(r"\[[^\]]*\]$", "", f["source"]),
             "mount_point": f["target"]} for f in json.loads(p.stdout)["filesystems"]]


def dev_of(path):
    d = os.stat(path).st_dev
    return f"{os.major(d)}:{os.minor(d)}"


class Storage(Base):
    def storages(self, args, out):
        p = run(args + ["-q", "--json", out], cwd=self.tmp)
        self.assertIn(p.returncode, (0, 1), p.stderr)  # 1: a GPU type waived here
        self.assertNotIn("Traceback", p.stderr)
        doc = json.load(open(out))
        try:
            import jsonschema
            jsonschema.validate(doc, json.load(open(cli_test.SCHEMA)))
        except ImportError:
            pass
        return [r.get("storage") for r in doc["runs"]]

    def assertStorage(self, got, path):
        self.assertIsNotNone(got, f"no storage for a run on {path}")
        self.assertEqual(got["dev"], dev_of(path))
        self.assertIn({k: got.get(k) for k in ("fs_type", "source", "mount_point")}, findmnt(path))

    def test_a_run_on_a_file_records_the_mount_holding_it(self):
        f = self.path("data")
        make_file(f, 1 << 20)
        [st] = self.storages(["-f", f, "-s", "1M", "-i", "256K", "-x", "1", "-T", "1"], self.path("r.json"))
        self.assertStorage(st, f)

    def test_a_directory_run_and_a_waived_run_record_it_too(self):
        # -D: the threads' files DIR/gdsio.N; a waived GPU type never opens its file, and its
        # series key must still name the same storage (a run that gave no figure is judged).
        d = self.path("d")
        os.mkdir(d)
        [st] = self.storages(["-D", d, "-w", "2", "-s", "1M", "-i", "256K", "-x", "1", "-I", "1", "-T", "1"],
                             self.path("d.json"))
        self.assertStorage(st, os.path.join(d, "gdsio.0"))
        [waived] = self.storages(["-f", self.path("never-written"), "-s", "1M", "-i", "256K", "-x", "0",
                                  "-I", "1", "-T", "1"], self.path("w.json"))
        self.assertStorage(waived, self.tmp)

    def test_another_file_system_through_a_symbolic_link(self):
        # /dev/shm is a tmpfs of its own on Linux: the run's file reached through a link in our
        # directory lies there, not on the directory's file system.
        if not os.path.isdir("/dev/shm") or dev_of("/dev/shm") == dev_of(self.tmp):
            self.skipTest("no /dev/shm on another file system here")
        shm = tempfile.mkdtemp(prefix="gdsb-cli-", dir="/dev/shm")
        try:
            os.symlink(shm, self.path("link"))
            f = os.path.join(self.path("link"), "data")
            make_file(f, 1 << 20)
            [st] = self.storages(["-f", f, "-s", "1M", "-i", "256K", "-x", "0", "-T", "1"], self.path("s.json"))
            self.assertStorage(st, os.path.join(shm, "data"))
            self.assertNotEqual(st["dev"], dev_of(self.tmp))
        finally:
            shutil.rmtree(shm, ignore_errors=True)


if __name__ == "__main__":
    cli_test.Storage = Storage  # main() looks the group up in cli_test
    sys.exit(cli_test.main())
