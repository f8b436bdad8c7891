#!/usr/bin/env python3
"""gdsb-topo --health --npd run as node-problem-detector's plugin runner runs it.

NPD (kubernetes/node-problem-detector v1.36.0, pkg/custompluginmonitor/plugin/plugin.go and
pkg/util/exec_unix.go) starts the rule's path and args in a new process group with stdout and
stderr on pipes, reads both to their end (4 KiB kept each), kills the group with SIGKILL at the
rule's timeout, trims stdout (strings.TrimSpace) and cuts it at max_output_length bytes, and maps
the exit code: 0 -> condition False, 1 -> True, anything else (a kill too) -> Unknown.

The rules are the shipped ones (deploy/kubernetes/gdsb-custom-plugin-monitor.json): their args,
with the known-good and metrics paths moved into WORKDIR and the recorded inputs appended
(--lspci-text of the 517-device HGX H100, a --kernel-log from fixtures/real/kernel-logs).
Expected lines are written from reading those recordings (kernel-logs/SOURCES.md).

Usage: npd_plugin_test.py GDSB_TOPO FAKE_NVML REAL_FIXTURES DEPLOY_DIR WORKDIR
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

topo, fake_nvml, real, deploy, work = sys.argv[1:6]
hgx = os.path.join(real, "hgx-h100-lspci-vvv.txt")
logs = os.path.join(real, "kernel-logs")
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
failures = []


def fail(msg):
    print("FAIL:", msg)
    failures.append(msg)


def duration(text):
    """A Go duration as NPD's config holds it ("5s", "500ms", "1m")."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s|m)", text)
    assert m, text
    return float(m.group(1)) * {"ms": 0.001, "s": 1, "m": 60}[m.group(2)]


config = json.load(open(os.path.join(deploy, "gdsb-custom-plugin-monitor.json")))
glob = config["pluginConfig"]
max_output = glob.get("max_output_length", 80)
rules = {r["condition"]: r for r in config["rules"]}


class Result:
    def __init__(self, status, message, stderr, seconds):
        self.status, self.message, self.stderr, self.seconds = status, message, stderr, seconds

    def __repr__(self):
        return "%s %r (%.2f s)" % (self.status, self.message, self.seconds)


def npd_run(argv, timeout, env=None, on_start=None):
    """One plugin run as plugin.go's run(): the status and the message NPD keeps."""
    start = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                         env=env)
    if on_start:
        on_start(p)
    killed = False
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        killed = True
        os.killpg(p.pid, signal.SIGKILL)
        try:
            out, err = p.communicate(timeout=2)
        except subprocess.TimeoutExpired:
            # NPD reads the pipes to their end before it waits: a process that still holds them
            # (a child left behind in uninterruptible sleep) keeps NPD's reader waiting with it.
            return Result("Hung", "the plugin's pipes stayed open after its kill", "", time.monotonic() - start)
    seconds = time.monotonic() - start
    out, err = out[:4096], err[:4096]
    message = out.strip().decode("utf-8", "replace")
    if killed:
        message = 'Timeout when running plugin "%s"' % argv[0]
    message = message.encode()[:max_output].decode("utf-8", "replace")
    rc = p.returncode
    status = "False" if rc == 0 and not killed else "True" if rc == 1 and not killed else "Unknown"
    return Result(status, message, err.decode("utf-8", "replace"), seconds)


def rule_argv(condition, known_good, extra, metrics=None):
    r = rules[condition]
    args = list(r["args"])
    for i, a in enumerate(args[:-1]):
        if a == "--expect":
            args[i + 1] = known_good
        if a == "--openmetrics":
            args[i + 1] = metrics or os.path.join(work, "gdsb.prom")
    timeout = min(duration(r["timeout"]), duration(glob["timeout"])) if "timeout" in r else duration(glob["timeout"])
    return [topo] + args + extra, timeout


def check(name, condition, known_good, extra, status, message=None, prefix=None, env=None, on_start=None):
    argv, timeout = rule_argv(condition, known_good, extra)
    r = npd_run(argv, timeout, env, on_start)
    print("%s, %s: %s" % (name, condition, r))
    if r.status != status:
        fail("%s, %s: status %s, want %s (%r; stderr %s)" % (name, condition, r.status, status, r.message, r.stderr))
    if message is not None and r.message != message:
        fail("%s, %s: message %r, want %r" % (name, condition, r.message, message))
    if prefix is not None and not r.message.startswith(prefix):
        fail("%s, %s: message %r, want it to start with %r" % (name, condition, r.message, prefix))
    if len(r.message.encode()) > 80:
        fail("%s, %s: message of %d bytes" % (name, condition, len(r.message.encode())))
    if r.seconds >= timeout:
        fail("%s, %s: %.2f s, not within NPD's %.0f s" % (name, condition, r.seconds, timeout))
    return r


known = os.path.join(work, "known-good.json")
if subprocess.run([topo, "--lspci-text", hgx, "--save-fingerprint", known], capture_output=True).returncode != 0:
    sys.exit("FAIL: --save-fingerprint of the HGX recording")
hw, kg, un = "GDSPathHardwareFault", "GDSPathNotAsKnownGood", "GDSPathUnchecked"
recording = ["--lspci-text", hgx]

# Healthy: the HGX as recorded, a kernel log with no NVIDIA record (AER lines of a Wi-Fi card).
healthy = recording + ["--kernel-log", os.path.join(logs, "dasharo815-aer-no-nvrm-dmesg-T.log")]
check("healthy", hw, known, healthy, "False", "ok: no critical hardware fault")
check("healthy", kg, known, healthy, "False", "ok: as known good")
check("healthy", un, known, healthy, "False", "ok: checked")
prom = open(os.path.join(work, "gdsb.prom")).read()
if 'Hostname="' not in prom or 'pci_bus_id="00000000:19:00.0"' not in prom:
    fail("the hardware rule's metrics lack dcgm-exporter's labels for GPU 19:00.0")

# Critical: gpud PR 46's log, Xid 109 (context switch timeout) on PCI:0000:cb:00 at 11:43:14
# after three Xid 13. The catalog's action for 109 is a GPU reset; Xid 13 alone is a warning.
xid109 = recording + ["--kernel-log", os.path.join(logs, "gpud-pr46-xid13-xid109-dmesg-T.log")]
check("Xid 109", hw, known, xid109, "True", "GPU cb:00.0 Xid 109 (context switch timeout) at 11:43:14: reset the GPU")
check("Xid 109", kg, known, xid109, "False")
check("Xid 109", un, known, xid109, "False")

# A reason longer than 80 bytes: Xid 119 five times on 9b:00.0, the last at 16:30:13.
xid119 = recording + ["--kernel-log", os.path.join(logs, "gpud-xid119-dmesg-T.log")]
r = check("Xid 119 x5", hw, known, xid119, "True", prefix="GPU 9b:00.0 Xid 119 (GSP firmware did not answer) x5")

# A known-good difference: GPU 19:00.0 retrained at x8 (its LnkSta edited).
x8 = os.path.join(work, "x8.txt")
text = open(hgx).read()
block = re.search(r"^19:00\.0 .*?(?=^\n|\Z)", text, re.S | re.M)
assert block and "Width x16 (ok)" in block.group(0)
open(x8, "w").write(text[:block.start()] + block.group(0).replace("Width x16 (ok)", "Width x8 (downgraded)") +
                    text[block.end():])
narrow = ["--lspci-text", x8, "--kernel-log", os.path.join(logs, "dasharo815-aer-no-nvrm-dmesg-T.log")]
check("x8", kg, known, narrow, "True", "GPU 19:00.0 link Gen5 x8 of x16, expected Gen5 x16")
check("x8", hw, known, narrow, "False")
# Both at once, the plain --npd (every kind): the hardware fault first, the other counted.
both = ["--lspci-text", x8, "--kernel-log", os.path.join(logs, "gpud-pr46-xid13-xid109-dmesg-T.log")]
r = npd_run([topo, "--health", "--npd", "--expect", known] + both, 5)
print("x8 and Xid 109, --npd:", r)
if r.status != "True" or not r.message.startswith("GPU cb:00.0 Xid 109") or not r.message.endswith(" (+1 more)"):
    fail("x8 and Xid 109: %r" % r)

# Failed collection: a kernel log that is not text (gzip bytes). Every condition is True: nothing
# was checked, so none may say False. With --npd-unchecked-unknown the user asked for Unknown.
gz = os.path.join(work, "dmesg.gz")
open(gz, "wb").write(b"\x1f\x8b\x08\x00\x00\x00")
unreadable = recording + ["--kernel-log", gz]
for c in (hw, kg, un):
    check("binary kernel log", c, known, unreadable, "True", prefix="not checked: ")
check("binary kernel log", un, known, unreadable + ["--npd-unchecked-unknown"], "Unknown", prefix="not checked: ")
# No known-good file, and a command line that does not parse: not checked either.
check("no known-good file", un, os.path.join(work, "absent.json"), recording, "True", prefix="not checked: ")
check("bad option", un, known, recording + ["--npd-kind", "gpu"], "True", prefix="not checked: usage: ")

# A hung driver: the collecting child frozen in a cgroup-v1 freezer (D state, deaf to SIGKILL,
# as in health_hang_test.sh) once it is in the fake NVML, which hangs there. The check must answer "not checked"
# (True) before NPD's timeout, and leave NPD's pipes: NPD reads them to their end.
freezer = "/sys/fs/cgroup/freezer"
group = os.path.join(freezer, "gdsb-npd-hang.%d" % os.getpid())
try:
    os.mkdir(group)
except OSError as e:
    print("SKIP: the hung-driver case: no writable cgroup-v1 freezer at %s (%s)" % (freezer, e))
    group = None
if group:
    live = ["--nvml-lib", fake_nvml, "--no-hwloc"]
    live_known = os.path.join(work, "live-known-good.json")
    if subprocess.run([topo, "--save-fingerprint", live_known] + live, capture_output=True).returncode != 0:
        fail("--save-fingerprint with the fake NVML")
    env = dict(os.environ, GDSB_FAKE_NVML_FAULT="hang")

    def freeze_child(p):
        # Frozen once it is inside NVML (the fake library mapped), where a hung driver's ioctl
        # blocks: not in the first instants after fork, where no driver call is made. Looked
        # for over the whole deadline, the machine may be busy.
        for _ in range(450):
            try:
                kid = open("/proc/%d/task/%d/children" % (p.pid, p.pid)).read().split()[0]
                in_nvml = os.path.basename(fake_nvml) in open("/proc/%s/maps" % kid).read()
            except (OSError, IndexError):
                in_nvml = False
            if in_nvml:
                open(os.path.join(group, "cgroup.procs"), "w").write(kid)
                open(os.path.join(group, "freezer.state"), "w").write("FROZEN")
                return
            time.sleep(0.01)
        fail("the check's collecting child never reached NVML")

    try:
        check("hung driver", un, live_known, live, "True", prefix="not checked: ", env=env, on_start=freeze_child)
    finally:
        open(os.path.join(group, "freezer.state"), "w").write("THAWED")
        for _ in range(100):
            if not open(os.path.join(group, "cgroup.procs")).read().strip():
                break
            time.sleep(0.05)
        os.rmdir(group)

print("PASS: the NPD plugin protocol" if not failures else "FAILED: %d" % len(failures))
sys.exit(1 if failures else 0)
