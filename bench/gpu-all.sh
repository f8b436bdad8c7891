#!/usr/bin/env bash
# One device call for several GPU scripts: builds the release tree once, then runs the
# parts named, each with its own OUT folder, and packs everything into a few files that
# a device call can bring back ($OUT/summary.txt, $OUT/results.tar.gz).
#
#   bench/gpu-all.sh [--debs DIR] [--fio-src DIR] [--nvbandwidth-src DIR] PART...
#
# Parts:
#   gpu-test   ci/gpu-test.sh --create-udev-record (GPU tests, every -x with -V, gdsb-topo)
#   topo       gdsb-topo and gdsb-p2p on this machine, a snapshot saved and replayed
#   workloads  bench/workloads.sh (issue 14 presets against the naive load)
#   doctor     bench/doctor-live.sh on the udev-registered test directory (issue 12)
#   cluster    bench/cluster-one-node.sh (issue 13, a one-node cluster)
#   health     gdsb-topo --save-fingerprint under load (gdsb-io -x 2 from /dev/shm), --health
#              --expect when idle again (exit 0) and --openmetrics on this machine, and a
#              fingerprint that expects one GPU more (exit 3)
#   survey     issue 27: the default survey (gdsb-io without arguments) in the test
#              directory (no page-cache warning caused by its own file; each read row's
#              page_cache_resident_at_start), and gdsb-doctor without arguments (exit 0
#              or 3, nothing written)
#   issue11    bench/gpu-issue11.sh with PARTS from $ISSUE11_PARTS (default: all; PARTS=concurrent
#              is gdsb-p2p --concurrent, nvbandwidth and PyTorch in interleaved rounds)
#   ckpt       bench/checkpoint-sweep.sh on the test directory's disk (issue 35: why -x 2 is
#              slower than the naive load there; threads, I/O size, 1 GPU and all GPUs)
#   faults     issue 36: gdsb-topo --save-fingerprint, then --health (twice, with --state) and
#              --save-snapshot on this machine: the real /dev/kmsg, NVML's error counters and
#              the sysfs AER files, each timed (wall, max RSS) against --timeout; the fault facts
#              recorded (what the snapshot's "hw_faults" holds) and the findings (0 or 3: a
#              machine with a real fault is reported, not failed)
#   issue11    bench/gpu-issue11.sh with PARTS from $ISSUE11_PARTS (default: all)
#   node       issue 35: gdsb-io's node mode (--gpus all: the plan, every GPU reading the
#              test directory's disk at once with -x 1,0,2; a tmpfs is no storage: its reads
#              are the page cache's and not measured); the crash regression (checkpoint-load -x 0 on every GPU, four
#              times: no exit 139 or 134); dataset -x 0 with 9,950 files on the last GPU
#   nvlink     issue 36: which NVLink error counters a healthy machine counts, and how fast:
#              gdsb-topo --save-snapshot and `nvidia-smi nvlink -e` (the oracle) at the start,
#              after NVLINK_IDLE seconds idle (default 60) and after gdsb-p2p's matrix (NVLink
#              load); deltas per GPU, link and counter from both, and the recovery action
#              nvidia-smi -q reports
#   nvlink-oracle  issue 42: which counter `nvidia-smi nvlink -e` shows: ours beside its -e,
#              -ec (per-lane CRC) and -s, before and after NVLINK_IDLE s idle and a gdsb-p2p run,
#              per GPU and link in OUT/side-by-side.txt; WAIVED (exit 0, said why) on 1 GPU
#   history    issue 37: bench/history-gpu.sh: 20 gdsb-io runs with the thread count changed
#              at run 11 (and 20 -x 0 runs with cufile.json's max_direct_io_size_kb changed),
#              kept in a history; history show --html/--json and gate --history under OUT
#   p2pdma     issue 43: gdsb-topo's P2PDMA readiness (text and JSON) beside the raw facts it reads
#              (/proc/kallsyms, config.gz, /proc/driver/nvidia/version and params, nvme_core's
#              multipath, cufile.json, nvidia-smi -q's driver and device lines), and its snapshot
#              replayed to the same facts
#   nights     issue 41: bench/history-nights.sh: real nightly series for the gate's corpus (steady
#              -x 1/-x 2/-x 0 runs and a real thread-count step), series.csv under OUT
#   dataset    issue 43: the dataset preset at its defaults (100,000 files of 128 KiB, 8 threads)
#              in the test directory with -x 0 and -x 2 under this machine's descriptor limit
#              (each file opened, registered, read and closed in turn; per-file costs printed),
#              then bench/dataset-vs-loop.sh on the same files (-x 1 against a plain
#              open/read/close loop; exit 3 when more than 10% slower). Set CREATE_UDEV_RECORD=1
#              for -x 0's cuFile registration (see below)
# Environment: OUT, GDSB_TEST_DIR, CREATE_UDEV_RECORD=1 (see below), ISSUE11_PARTS, BUILD_TARGETS
# (only these targets, e.g. "gdsb-io gdsb-report" for the nights part; default: every target).
# Exit: 0 when every part exited 0 (or 3 where a finding is expected), 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."

debs="" fio_src="" nvb_src=""
parts=()
while [ $# -gt 0 ]; do
  case "$1" in
    --debs) debs="$2"; shift 2 ;;
    --fio-src) fio_src="$2"; shift 2 ;;
    --nvbandwidth-src) nvb_src="$2"; shift 2 ;;
    -*) echo "gpu-all: unknown option $1" >&2; exit 2 ;;
    *) parts+=("$1"); shift ;;
  esac
done
[ ${#parts[@]} -gt 0 ] || { echo "gpu-all: name at least one part" >&2; exit 2; }

OUT="${OUT:-$PWD/gdsb-report/gpu-all}"
mkdir -p "$OUT"
work="$OUT/work"
mkdir -p "$work"
summary="$OUT/summary.txt"
: >"$summary"
note() { echo "gpu-all: $*" | tee -a "$summary"; }

source ci/debs-env.sh "$debs"
export GDSB_WERROR="${GDSB_WERROR:-OFF}"
note "machine: $(uname -r), $(nproc) CPUs, $(nvidia-smi -L 2>&1 | tr '\n' ';')"
status=0
start=$(date +%s)
# -k 0: a target that fails to build (a test, say) does not keep the tools from running.
if ! { cmake --preset release -DGDSB_WARNINGS_AS_ERRORS="$GDSB_WERROR" &&
       cmake --build --preset release -j "$(nproc)" ${BUILD_TARGETS:+--target $BUILD_TARGETS} -- -k 0; } >"$work/build.log" 2>&1; then
  grep -E "error:|FAILED:" "$work/build.log" | head -40 | tee -a "$summary"
  note "build had failures (see build.log); running the parts whose tools were built"
  status=1
fi
note "built in $(( $(date +%s) - start )) s"

testdir="${GDSB_TEST_DIR:-$PWD/build/gpu-test-files}"
mkdir -p "$testdir"
# cuFile needs a udev record for the test directory's disk; a VM without a udev database
# has none. As ci/gpu-test.sh --create-udev-record: a test-machine fixture, never done by
# the product (the doctor part then sees compat mode, not the missing record).
if [ "${CREATE_UDEV_RECORD:-0}" = 1 ]; then
  dev=$(stat -c '%d' "$testdir")
  record="/run/udev/data/b$((dev >> 8)):$((dev & 255))"
  if [ ! -e "$record" ]; then
    mkdir -p /run/udev/data
    printf 'E:ID_FS_USAGE=filesystem\nE:ID_FS_TYPE=%s\n' "$(findmnt -no FSTYPE -T "$testdir" || echo ext4)" >"$record"
    note "created $record for the cuFile runs"
  fi
fi
faults_part() {
  local t=build/release/apps/gdsb-topo/gdsb-topo rc status=0
  sudo -n true 2>/dev/null && t="sudo -n $t"  # /dev/kmsg and extended config need root
  echo "kernel.dmesg_restrict=$(cat /proc/sys/kernel/dmesg_restrict 2>/dev/null)"
  ls /sys/bus/pci/devices/*/aer_dev_correctable 2>/dev/null | wc -l | sed 's/^/devices with AER counters: /'
  $t --save-fingerprint "$OUT/known-good.json" --allow-overwrite; echo "save-fingerprint rc=$?"
  for run in 1 2; do
    /usr/bin/time -f "health run $run: wall %e s, max RSS %M KiB" $t --health --expect "$OUT/known-good.json" \
      --state "$OUT/health-state.json" --openmetrics "$OUT/gdsb-$run.prom" --timeout 15; rc=$?
    echo "health run $run rc=$rc (0, or 3 with a fault line above)"
    case "$rc" in 0|3) ;; *) status=1 ;; esac
  done
  [ -f "$OUT/health-state.json" ] && cat "$OUT/health-state.json"
  /usr/bin/time -f "save-snapshot: wall %e s, max RSS %M KiB" $t --save-snapshot "$OUT/snap" -q; rc=$?
  echo "save-snapshot rc=$rc"
  case "$rc" in 0|3) ;; *) status=1 ;; esac
  [ -n "${SUDO_UID:-}" ] || sudo -n chown -R "$(id -u)" "$OUT" 2>/dev/null
  python3 - "$OUT/snap/snapshot.json" <<'PY'
import json, sys
f = json.load(open(sys.argv[1])).get("hw_faults", {})
k = f.get("kernel_log")
print("kernel log:", "not read: " + f.get("kernel_log_unread", "") if not k else
      "%s %s, %d lines, %d NVRM lines, %d Xid events" % (k["source"], k["format"], k["lines"], k["nvrm_lines"], len(k["xids"])))
for e in (k or {}).get("xids", []):
    print("  Xid %d on %s x%d, last %s" % (e["code"], e["bdf"], e["count"], e["last"]))
print("NVML error counters:", f.get("gpu_errors_unread") or "%d GPUs" % len(f.get("gpu_errors", {})))
for bdf, g in f.get("gpu_errors", {}).items():
    print("  %s %s" % (bdf, json.dumps({k: v for k, v in g.items() if k != "nvlinks"})))
aer = f.get("aer", {})
print("AER counters: %d devices, nonzero:" % len(aer))
for bdf, a in aer.items():
    t = [a.get("total_correctable"), a.get("total_nonfatal"), a.get("total_fatal")]
    if any(t): print("  %s correctable/nonfatal/fatal %s" % (bdf, t))
PY
  return "$status"
}

nvlink_part() {
  local t=build/release/apps/gdsb-topo/gdsb-topo p=build/release/apps/gdsb-p2p/gdsb-p2p i rc status=0
  sample() {  # $1 label
    date +%s.%N >"$OUT/$1.time"
    nvidia-smi nvlink -e >"$OUT/$1-smi.txt" 2>&1
    "$t" --save-snapshot "$OUT/$1-snap" -q >/dev/null 2>&1; echo "$1: snapshot rc=$?"
  }
  nvidia-smi -q | grep -i 'GPU Recovery Action' | sed 's/^/nvidia-smi -q: /'
  "$t" --save-fingerprint "$OUT/known-good.json" --allow-overwrite >/dev/null; echo "save-fingerprint rc=$?"
  sample s0
  sleep "${NVLINK_IDLE:-60}"
  sample s1
  for i in 1 2 3; do "$p" --json "$OUT/p2p-$i.json" >"$OUT/p2p-$i.txt" 2>&1; echo "gdsb-p2p load $i rc=$?"; done
  sample s2
  # The healthy machine's check against the file saved before: exit 0, no NVLink warning.
  "$t" --health --expect "$OUT/known-good.json" --openmetrics "$OUT/nvlink.prom"; rc=$?
  echo "health against the known-good file of ${NVLINK_IDLE:-60} s + load ago: rc=$rc (0 expected)"
  grep -E 'gdsb_health_(gpu_recovery_action|fault_findings)' "$OUT/nvlink.prom" | grep -v '^#' | head -8
  grep -c 'gdsb_health_nvlink_errors{' "$OUT/nvlink.prom" | sed 's/^/nvlink error samples in the metrics: /'
  python3 -c "import json,sys; g=json.load(open(sys.argv[1]))['hw_faults']['gpu_errors']; print('recovery_action (ours):', {b: v.get('recovery_action') for b, v in g.items()})" "$OUT/s2-snap/snapshot.json"
  [ "$rc" -eq 0 ] || status=1
  python3 bench/nvlink_oracle.py "$OUT" "s0:s1:idle" "s1:s2:under gdsb-p2p load"
  return "$status"
}

# Issue 42: which NVLink counter nvidia-smi shows. Ours (NVML through gdsb-topo) beside
# nvidia-smi nvlink -e (per link), -ec (per lane CRC) and -s (state), before and after
# NVLINK_IDLE s idle and before and after a gdsb-p2p run, side by side per GPU and link
# (bench/nvlink_oracle.py) in $OUT/side-by-side.txt. Fewer than 2 GPUs: waived, said why.
nvlink_oracle_part() {
  local t=build/release/apps/gdsb-topo/gdsb-topo p=build/release/apps/gdsb-p2p/gdsb-p2p gpus
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
  nvidia-smi nvlink -s >"$OUT/nvlink-s.txt" 2>&1
  grep -H . /proc/driver/nvidia/params 2>/dev/null | grep -i nvlink >"$OUT/nvlink-params.txt"
  if [ "${gpus:-0}" -lt 2 ]; then
    echo "nvlink-oracle: WAIVED: ${gpus:-0} GPU(s) here; the NVLink counters compared need two GPUs joined by NVLink"
    echo "  (nvidia-smi nvlink -s printed $(wc -l <"$OUT/nvlink-s.txt") line(s); $(cat "$OUT/nvlink-params.txt"))"
    return 0
  fi
  nvidia-smi --query-gpu=index,pci.bus_id,uuid --format=csv,noheader >"$OUT/gpus.csv"
  sample() {  # $1 label
    date +%s.%N >"$OUT/$1.time"
    nvidia-smi nvlink -e >"$OUT/$1-smi.txt" 2>&1
    nvidia-smi nvlink -ec >"$OUT/$1-ec.txt" 2>&1
    nvidia-smi nvlink -s >"$OUT/$1-s.txt" 2>&1
    "$t" --save-snapshot "$OUT/$1-snap" -q >/dev/null 2>&1; echo "$1: snapshot rc=$?"
  }
  sample idle0
  sleep "${NVLINK_IDLE:-60}"
  sample idle1
  sample load0
  "$p" --json "$OUT/p2p.json" >"$OUT/p2p.txt" 2>&1; echo "gdsb-p2p load rc=$?"
  sample load1
  head -3 "$OUT/idle0-smi.txt" "$OUT/idle0-ec.txt" "$OUT/idle0-s.txt"
  python3 bench/nvlink_oracle.py "$OUT" "idle0:idle1:idle" "load0:load1:under gdsb-p2p load" \
    | tee "$OUT/side-by-side.txt"
}

run_part() {  # $1 name, rest: command; accepted exit codes in $ok
  local name="$1"; shift
  local t0 rc=0
  t0=$(date +%s)
  mkdir -p "$work/$name"
  OUT="$work/$name" "$@" >"$work/$name/stdout.txt" 2>&1 || rc=$?
  note "$name: rc=$rc in $(( $(date +%s) - t0 )) s"
  case " $ok " in *" $rc "*) ;; *) status=1 ;; esac
  # Packed after every part, so that a call stopped at its time limit still brings back
  # the parts that finished.
  tar -czf "$OUT/results.tar.gz" -C "$work" . 2>/dev/null
}

topo_part() {
  local t=build/release/apps/gdsb-topo/gdsb-topo p=build/release/apps/gdsb-p2p/gdsb-p2p rc
  "$t" --matrix --json "$OUT/topo.json" --html "$OUT/topo.html" >"$OUT/topo.txt"; rc=$?
  cat "$OUT/topo.txt"
  echo "gdsb-topo rc=$rc"
  # Issue 19: a node whose only storage is virtual (the Firecracker VMs) gets "GDS not
  # applicable" with exit 0; a node with P2P-capable storage is judged as before.
  if grep -q "GDS not applicable" "$OUT/topo.txt"; then
    echo "topo: not-applicable verdict: $(grep -m1 'GDS not applicable' "$OUT/topo.txt")"
    [ "$rc" -eq 0 ] || { echo "topo: not applicable, yet rc=$rc (expected 0)"; rc=1; }
  fi
  "$t" --save-snapshot "$OUT/snap" >/dev/null; echo "save-snapshot rc=$?"
  "$t" --from-snapshot "$OUT/snap" --json "$OUT/topo-replay.json" >"$OUT/topo-replay.txt"
  echo "replay rc=$?"
  "$p" --json "$OUT/p2p.json" --html "$OUT/p2p.html"; echo "gdsb-p2p rc=$?"
  "$p" --from-snapshot "$OUT/snap" >"$OUT/p2p-replay.txt"; echo "gdsb-p2p replay rc=$?"
  cat "$OUT/p2p-replay.txt"
  command -v nvidia-smi >/dev/null && nvidia-smi topo -m >"$OUT/nvidia-smi-topo.txt" 2>&1
  # Issue 25: the network facts read live against ip -j (netlink), the libcufile_rdma probe,
  # and the rdma-stack facts as gdsb-topo -v prints them on this node.
  local live=build/release/tests/topo/topo_live_tests
  if [ -x "$live" ]; then
    "$live" >"$OUT/topo-live-tests.txt" 2>&1 || { echo "topo_live_tests failed"; rc=1; }
    grep -E "^\[  (PASSED|FAILED|SKIPPED)|SKIPPED \]" "$OUT/topo-live-tests.txt"
  fi
  "$t" -v >"$OUT/topo-v.txt" 2>&1
  grep -A12 " rdma-stack: " "$OUT/topo-v.txt" | head -40
  return "$rc"
}

health_part() {
  local t=build/release/apps/gdsb-topo/gdsb-topo rc status=0
  # Issue 24: a fingerprint saved under load (the GPU's link at full speed), checked when
  # the GPU is idle again (NVIDIA GPUs drop to Gen1 when idle): ok, exit 0.
  dd if=/dev/zero of=/dev/shm/gdsb-load bs=1M count=1024 status=none
  build/release/apps/gdsb-io/gdsb-io -f /dev/shm/gdsb-load -x 2 -I 0 -s 1G -i 1M -w 4 -T 15 \
    >"$OUT/load.txt" 2>&1 &
  local load=$!
  sleep 5
  nvidia-smi --query-gpu=pci.bus_id,pcie.link.gen.current,pcie.link.width.current --format=csv \
    | sed 's/^/under load: /'
  "$t" --save-fingerprint "$OUT/known-good.json"; echo "save-fingerprint (under load) rc=$?"
  wait "$load"; rm -f /dev/shm/gdsb-load
  sleep 10
  nvidia-smi --query-gpu=pci.bus_id,pcie.link.gen.current,pcie.link.width.current --format=csv \
    | sed 's/^/idle: /'
  /usr/bin/time -f "health wall %e s, max RSS %M KiB" "$t" --health --expect "$OUT/known-good.json" \
    --openmetrics "$OUT/gdsb.prom"; rc=$?
  echo "health (idle, against the file saved under load) rc=$rc (0 expected)"
  [ "$rc" -eq 0 ] || status=1
  # A known-good file that expects a GPU this node lacks: exit 3, one line naming it.
  python3 - "$OUT/known-good.json" "$OUT/expects-more.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
# gdsbench.fingerprint/2: facts are {kind, bdf, fact, value}; a GPU's presence is
# {kind: gpu, fact: present} (docs/schema/gdsbench.fingerprint-2.schema.json).
gpus = [f for f in d["facts"] if f["kind"] == "gpu" and f["fact"] == "present"]
if gpus:
    extra = dict(gpus[0]); extra["bdf"] = "0000:ff:00.0"; extra.pop("text", None)
    d["facts"].append(extra)
    d["counts"]["gpus"] += 1
json.dump(d, open(sys.argv[2], "w"), indent=1)
PY
  "$t" --health --expect "$OUT/expects-more.json"; rc=$?
  echo "health against a fingerprint with one GPU more: rc=$rc (3 expected)"
  [ "$rc" -eq 3 ] || status=1
  head -40 "$OUT/gdsb.prom"
  return "$status"
}

survey_part() {
  local io=$PWD/build/release/apps/gdsb-io/gdsb-io doc=$PWD/build/release/apps/gdsb-doctor/gdsb-doctor
  local rc status=0 before after
  (cd "$testdir" && "$io" --json "$OUT/survey.json") >"$OUT/survey.txt" 2>&1; rc=$?
  cat "$OUT/survey.txt"; echo "survey rc=$rc"
  [ "$rc" -eq 0 ] || status=1
  if grep -q "in the page cache when the run began" "$OUT/survey.txt"; then
    echo "survey: page-cache warning present"; status=1
  fi
  python3 - "$OUT/survey.json" <<'PY' || status=1
import json, sys
d = json.load(open(sys.argv[1]))
runs = d.get("runs", [])
for r in runs:
    w = r.get("workload", {})
    print("row", w.get("xfer_name"), w.get("io_pattern_name"), r.get("status"), r.get("path_used"),
          "GiB/s", round((r.get("result") or {}).get("throughput_gib_s", 0) or 0, 2),
          "resident at start", r.get("page_cache_resident_at_start"))
PY
  before=$(ls -A "$testdir" | sort | tr '\n' ' ')
  (cd "$testdir" && "$doc") >"$OUT/doctor-noargs.txt" 2>&1; rc=$?
  after=$(ls -A "$testdir" | sort | tr '\n' ' ')
  cat "$OUT/doctor-noargs.txt"; echo "doctor without arguments rc=$rc (0 or 3 expected)"
  case "$rc" in 0|3) ;; *) status=1 ;; esac
  [ "$before" = "$after" ] || { echo "doctor wrote into $testdir: $after"; status=1; }
  return "$status"
}

node_part() {
  local io=$PWD/build/release/apps/gdsb-io/gdsb-io rc status=0 i
  "$io" --gpus all --dry-run >"$OUT/node-plan.txt" 2>&1; rc=$?
  cat "$OUT/node-plan.txt"; echo "node plan rc=$rc"
  [ "$rc" -eq 0 ] || status=1
  (cd "$testdir" && "$io" --gpus all -x 1,0,2 -s "${NODE_SIZE:-2G}" -T "${NODE_SECONDS:-4}" \
     --json "$OUT/node-disk.json" --html "$OUT/node-disk.html") >"$OUT/node-disk.txt" 2>&1; rc=$?
  cat "$OUT/node-disk.txt"; echo "node (disk) rc=$rc"
  [ "$rc" -eq 0 ] || status=1
  # Issue 35: checkpoint-load -x 0 on 4 GPUs crashed inside libcufile in 3 runs of 4.
  for i in 1 2 3 4; do
    (cd "$testdir" && "$io" --workload checkpoint-load -D "$testdir" -x 0 --shards 2 --shard-size 256M -q \
       --allow-overwrite) >"$OUT/ckpt-x0-$i.txt" 2>&1; rc=$?
    echo "checkpoint-load -x 0 on every GPU, run $i: rc=$rc"
    tail -3 "$OUT/ckpt-x0-$i.txt"
    case "$rc" in 134|139) status=1 ;; esac
  done
  # Issue 35: dataset -x 0 with 9,950 files failed with "fd create failed" at fd 9,975.
  echo "descriptors: soft $(ulimit -Sn), hard $(ulimit -Hn), fs.nr_open $(cat /proc/sys/fs/nr_open)"
  local last=$(( $(nvidia-smi -L | grep -c '^GPU ') - 1 ))
  (cd "$testdir" && "$io" --workload dataset -D "$testdir" -x 0 -d "$last" --gpus 1 --files 9950 \
     --file-size 128K -q --allow-overwrite) >"$OUT/dataset-x0.txt" 2>&1; rc=$?
  tail -25 "$OUT/dataset-x0.txt"; echo "dataset -x 0, 9,950 files, GPU $last: rc=$rc"
  [ "$rc" -eq 0 ] || status=1
  rm -rf "$testdir/checkpoint-load" "$testdir/dataset"
  return "$status"
}

dataset_part() {
  local io=$PWD/build/release/apps/gdsb-io/gdsb-io rc status=0 x
  echo "descriptors: soft $(ulimit -Sn), hard $(ulimit -Hn)"
  for x in 0 2; do
    (cd "$testdir" && /usr/bin/time -f "wall %e s, max RSS %M KiB" "$io" --workload dataset -D "$testdir" -x "$x" \
       --allow-overwrite --json "$OUT/dataset-x$x.json") >"$OUT/dataset-x$x.txt" 2>&1; rc=$?
    tail -14 "$OUT/dataset-x$x.txt"; echo "dataset defaults -x $x: rc=$rc"
    [ "$rc" -eq 0 ] || status=1
  done
  ROUNDS="${DATASET_ROUNDS:-3}" bash bench/dataset-vs-loop.sh "$testdir" 100000 8 1; rc=$?
  echo "dataset against the plain loop (-x 1): rc=$rc (0 within 10%, 3 more than 10% slower)"
  case "$rc" in 0|3) ;; *) status=1 ;; esac
  rm -rf "$testdir/dataset"
  return "$status"
}

# Issue 43: the P2PDMA readiness check live, beside the raw facts it reads (the oracle): a fact
# line of gdsb-topo must say what the file next to it says.
p2pdma_part() {
  local t=build/release/apps/gdsb-topo/gdsb-topo rc status=0
  $t --json "$OUT/topo.json" --save-snapshot "$OUT/snap" --allow-overwrite >"$OUT/topo.txt" 2>&1; rc=$?
  echo "gdsb-topo rc=$rc (0, or 3 where a check fails)"
  case "$rc" in 0|3) ;; *) status=1 ;; esac
  echo "== gdsb-topo: gds-stack P2PDMA mode (text)"
  sed -n '/gds-stack: P2PDMA mode/,/^ \[/p' "$OUT/topo.txt" | sed '$d'
  echo "== gdsb-topo: p2pdma (JSON) | raw facts"
  python3 - "$OUT/topo.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["p2pdma"]
print("verdict:", p["verdict"], "| ready:", p["ready"])
for f in p["facts"]:
    print("  %-28s %-10s %s%s" % (f["name"], f["state"], f["evidence"], "  FIX: " + f["fix"] if f["fix"] else ""))
PY
  echo "-- kernel: uname -r $(uname -r), uname -m $(uname -m)"
  echo "-- grep p2pdma /proc/kallsyms:"; grep -i p2pdma /proc/kallsyms | awk '{print "   ", $2, $3, $4}'
  echo "-- CONFIG_PCI_P2PDMA:"; { zcat /proc/config.gz 2>/dev/null || cat "/boot/config-$(uname -r)" 2>/dev/null; } | grep -E "CONFIG_PCI_P2PDMA[= ]" | sed 's/^/    /'
  echo "-- /proc/driver/nvidia/version:"; sed 's/^/    /' /proc/driver/nvidia/version 2>&1
  echo "-- /proc/driver/nvidia/params:"; grep -E "^RegistryDwords" /proc/driver/nvidia/params 2>&1 | sed 's/^/    /'
  echo "-- /sys/module/nvme_core/parameters/multipath: $(cat /sys/module/nvme_core/parameters/multipath 2>&1)"
  echo "-- cufile.json: $(grep -h use_pci_p2pdma "${CUFILE_ENV_PATH_JSON:-/etc/cufile.json}" 2>&1 | tr -s ' ')"
  echo "-- nvidia-smi -q:"; nvidia-smi -q 2>&1 | grep -E "Driver Version|Product Name|Product Architecture|Device Id|Bus Id" | sed 's/^/   /'
  # The snapshot replays the same facts (what a support engineer is sent).
  $t --from-snapshot "$OUT/snap" --json "$OUT/replay.json" -q >/dev/null 2>&1
  python3 - "$OUT/topo.json" "$OUT/replay.json" <<'PY'
import json, sys
a, b = (json.load(open(f))["p2pdma"] for f in sys.argv[1:3])
print("snapshot replay:", "same facts" if a == b else "DIFFERS: %s" % json.dumps(b))
sys.exit(0 if a == b else 1)
PY
  [ $? -eq 0 ] || status=1
  return "$status"
}

for part in "${parts[@]}"; do
  case "$part" in
    gpu-test) ok="0"; run_part gpu-test bash ci/gpu-test.sh --create-udev-record ;;
    topo) ok="0 3"; run_part topo topo_part ;;
    workloads) ok="0"; run_part workloads bash bench/workloads.sh ;;
    doctor) ok="0 3"; run_part doctor bash bench/doctor-live.sh "$testdir" 60s ;;
    cluster) ok="0 3"; GDSB_TEST_DIR="$testdir" run_part cluster bash bench/cluster-one-node.sh ;;
    health) ok="0"; run_part health health_part ;;
    faults) ok="0"; run_part faults faults_part ;;
    survey) ok="0"; run_part survey survey_part ;;
    node) ok="0"; run_part node node_part ;;
    ckpt) ok="0"; run_part ckpt bash bench/checkpoint-sweep.sh "$testdir/ckpt-sweep" ;;
    nvlink) ok="0"; run_part nvlink nvlink_part ;;
    nvlink-oracle) ok="0"; run_part nvlink-oracle nvlink_oracle_part ;;
    p2pdma) ok="0"; run_part p2pdma p2pdma_part ;;
    history) ok="0"; GDSB_TEST_DIR="$testdir" run_part history bash bench/history-gpu.sh ;;
    nights) ok="0"; GDSB_TEST_DIR="$testdir" run_part nights bash bench/history-nights.sh ;;
    dataset) ok="0"; run_part dataset dataset_part ;;
    issue11)
      ok="0"
      args=()
      [ -n "$fio_src" ] && args+=(--fio-src "$fio_src")
      [ -n "$nvb_src" ] && args+=(--nvbandwidth-src "$nvb_src")
      PARTS="${ISSUE11_PARTS:-}" run_part issue11 bash bench/gpu-issue11.sh "${args[@]}" ;;
    *) note "unknown part $part"; status=1 ;;
  esac
done
note "total $(( $(date +%s) - start )) s, status $status"
tar -czf "$OUT/results.tar.gz" -C "$work" . 2>/dev/null
exit "$status"
