#!/usr/bin/env bash
# The table of issue 11 on the GPU machine in one call: builds gdsb-io and gdsb-p2p (or
# uses the build), mounts a RAM-backed tmpfs (it accepts O_DIRECT on kernel 6.18), fills an
# 8 GiB file, runs -x 1/2/3 reads and writes at 1/4/8 threads, the pinned host-link figure
# (gdsb-p2p --measure, twice, with its plain cudaMemcpy reference), fio built from source
# against gdsb-io (bench/vs-fio.sh, io_uring QD32), -x 1/0/5/6/7 on the disk with the udev
# record cuFile needs there (both GDSB_CUFILE_COMPLETION modes), an nsys profile of -x 2
# at 8 threads where nsys exists, and prints the ratios with the phase timing of every
# -x 2/-x 3 run (storage, copy, DMA, wait per I/O: gdsb-io's own profile). Results: $OUT/summary.md and
# $OUT/issue11.tar.gz (every JSON, log and profile).
#
#   bench/gpu-issue11.sh [--debs DIR] [--fio-src DIR] [--nvbandwidth-src DIR]
#
# --debs DIR: .deb files of libpci/liburing to unpack into /opt/debs (as ci/gpu-test.sh).
# --fio-src DIR: fio's source tree, built here (./configure && make); without it fio on
#   PATH is used, else the fio comparison is reported as not measured.
# --nvbandwidth-src DIR: nvbandwidth's source tree (Boost .debs in DIR/../boost-debs), for
#   PARTS=concurrent: gdsb-p2p --measure --concurrent next to nvbandwidth's host_to_all /
#   all_to_host cases (bench/p2p-concurrent.sh).
# Environment: SECONDS_PER_RUN (3), THREADS ("1 4 8"), RAM_SIZE (8G), DISK_SIZE (2G), OUT,
#   PARTS (default "p2p ram fio disk concurrent": which sections run). fio runs eight times:
#   on the disk with each tool's default ring, with gdsb-io's waits as I/O wait, with its
#   ring in COOP_TASKRUN mode, with its requests entered in batches, with both rings
#   polled (SQPOLL); on a tmpfs file with the default ring, COOP and batches.
#   Disk runs drop the page cache first (root), so cuFile's buffered compat I/O starts cold.
#   FIO_ROUNDS (3): alternating rounds per fio case; FIO_CASES (default "disk iowait coop
#   batch sqpoll ram ram-coop ram-batch"): which of the eight run (batch: gdsb-io entering
#   its requests in batches, GDSB_IO_URING_SUBMIT=batch), e.g. FIO_CASES=disk FIO_ROUNDS=9 for a
#   tighter median of the default ring on the disk.
# Needs root (mount, the udev record). Without a GPU it says so and exits 1.
set -uo pipefail
cd "$(dirname "$0")/.."
debs="" fio_src="" nvb_src=""
while [ $# -gt 0 ]; do
  case "$1" in
    --debs) debs="$2"; shift 2 ;;
    --fio-src) fio_src="$2"; shift 2 ;;
    --nvbandwidth-src) nvb_src="$2"; shift 2 ;;
    *) echo "gpu-issue11: unknown option $1 (expected --debs DIR, --fio-src DIR, --nvbandwidth-src DIR)" >&2
       exit 2 ;;
  esac
done
secs="${SECONDS_PER_RUN:-3}"
threads="${THREADS:-1 4 8}"
ram_size="${RAM_SIZE:-8G}"
disk_size="${DISK_SIZE:-2G}"
parts=" ${PARTS:-p2p ram fio disk concurrent} "
part() { [[ "$parts" == *" $1 "* ]]; }
fio_rounds="${FIO_ROUNDS:-3}"
fio_cases=" ${FIO_CASES:-disk iowait coop batch sqpoll ram ram-coop ram-batch} "
fio_case() { [[ "$fio_cases" == *" $1 "* ]]; }
OUT="${OUT:-$PWD/gdsb-report/issue11}"
work="$OUT/work"
mkdir -p "$work/runs"
log="$work/log.txt"
say() { echo "gpu-issue11: $*" | tee -a "$log"; }
t_start=$(date +%s)
elapsed() { echo $(( $(date +%s) - t_start ))s; }

source ci/debs-env.sh "$debs"
gdsb_require_gpu gpu-issue11 "; nothing to measure" "$log"
say "machine: $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader | paste -sd';'), $(uname -r), $(nproc) CPUs, $(date -u +%FT%TZ)"

fio_bin=""
if [ -n "$fio_src" ] && [ -d "$fio_src" ]; then
  ( cd "$fio_src" && ./configure >/dev/null 2>&1 && make -j8 >/dev/null 2>&1 ) > "$work/fio-build.log" 2>&1 &
  fio_pid=$!
fi
cli=build/release/apps/gdsb-io/gdsb-io
p2p=build/release/apps/gdsb-p2p/gdsb-p2p
if [ ! -x "$cli" ] || [ ! -x "$p2p" ]; then
  { cmake --preset release -DGDSB_WARNINGS_AS_ERRORS=OFF && \
    cmake --build --preset release -j "$(nproc)" --target gdsb-io gdsb-p2p; } > "$work/build.log" 2>&1 \
    || { say "build failed"; tail -30 "$work/build.log"; exit 1; }
fi
say "built ($(elapsed))"
if [ -n "${fio_pid:-}" ]; then
  wait "$fio_pid"
  [ -x "$fio_src/fio" ] && fio_bin=$(cd "$fio_src" && pwd)/fio
fi
[ -z "$fio_bin" ] && command -v fio >/dev/null && fio_bin=$(command -v fio)
say "fio: ${fio_bin:-not available} $([ -n "$fio_bin" ] && "$fio_bin" --version) ($(elapsed))"

io() {  # name, gdsb-io args...: one run, JSON under runs/
  local name=$1; shift
  [ "${DROP_BEFORE:-0}" = 1 ] && [ -w /proc/sys/vm/drop_caches ] && { sync; echo 3 > /proc/sys/vm/drop_caches; }
  timeout 60 "$cli" "$@" -q --json "$work/runs/$name.json" >/dev/null 2>"$work/runs/$name.err"
  local rc=$?
  [ $rc -eq 0 ] || say "$name: rc=$rc $(head -c 300 "$work/runs/$name.err")"
}

# 1. Pinned host link, twice (the figure and its plain cudaMemcpy reference, each run).
part p2p && for k in 1 2; do
  timeout 120 "$p2p" --measure --json "$work/p2p-$k.json" --allow-overwrite > "$work/p2p-$k.txt" 2>&1
  say "gdsb-p2p --measure run $k: rc=$? ($(elapsed))"
done
# The same link in the bounce paths' copy size: 1 MiB copies back to back on one stream,
# and its reference, one synchronous 1 MiB cudaMemcpy at a time (what -x 2 does per I/O).
part p2p && { timeout 120 "$p2p" --measure --size 1M --loops 64 --repetitions 9 \
  --json "$work/p2p-1m.json" --allow-overwrite > "$work/p2p-1m.txt" 2>&1
  say "gdsb-p2p --measure --size 1M: rc=$? ($(elapsed))"; }

# 2. RAM-backed O_DIRECT file: -x 1/2/3, reads and writes.
if part ram; then
mkdir -p /mnt/ram
mountpoint -q /mnt/ram || mount -t tmpfs -o size=20g tmpfs /mnt/ram
ram=/mnt/ram/f
"$cli" -f "$ram" -x 1 -I 1 -s "$ram_size" -i 1M -w 8 -q --allow-overwrite >/dev/null 2>"$work/fill.err" \
  || say "filling $ram failed: $(head -c 300 "$work/fill.err")"
say "filled $ram ($ram_size) ($(elapsed))"
for rw in 0 1; do
  for t in $threads; do
    for x in 1 2 3; do io "ram-x$x-I$rw-w$t" -f "$ram" -x "$x" -I "$rw" -s "$ram_size" -i 1M -w "$t" -T "$secs"; done
  done
done
say "tmpfs runs done ($(elapsed))"

# 3. What bounds -x 2/-x 3 at 8 threads: nsys (CUDA API and copy times) where it exists.
nsys_bin=$(command -v nsys || ls /usr/local/cuda*/bin/nsys /opt/nvidia/nsight-systems*/bin/nsys /usr/local/cuda*/nsight-systems*/bin/nsys 2>/dev/null | head -1 || true)
if [ -n "$nsys_bin" ]; then
  timeout 90 "$nsys_bin" profile -t cuda,osrt -s none --cpuctxsw=none -o "$work/x2-w8" -f true \
    "$cli" -f "$ram" -x 2 -I 0 -s "$ram_size" -i 1M -w 8 -T 2 -q > "$work/nsys-x2.log" 2>&1
  timeout 60 "$nsys_bin" stats -q --report cuda_api_sum,cuda_gpu_mem_time_sum,osrt_sum \
    "$work/x2-w8.nsys-rep" > "$work/nsys-x2-stats.txt" 2>&1
  say "nsys -x 2 w8: $(grep -c . "$work/nsys-x2-stats.txt") lines ($(elapsed))"
else
  say "nsys not found: no profile"
fi
# Host memory shared: -x 1 at 8 threads while the host link copies (gdsb-p2p) run.
( timeout 60 "$p2p" --measure --repetitions 40 -q > /dev/null 2>&1 ) &
p2p_bg=$!
sleep 2
io "ram-x1-I0-w8-under-h2d" -f "$ram" -x 1 -I 0 -s "$ram_size" -i 1M -w 8 -T 2
wait "$p2p_bg"
# And the reverse: the host link while 8 threads read the RAM file (-x 1).
( timeout 30 "$cli" -f "$ram" -x 1 -I 0 -s "$ram_size" -i 1M -w 8 -T 12 -q > /dev/null 2>&1 ) &
io_bg=$!
sleep 2
timeout 60 "$p2p" --measure --json "$work/p2p-under-x1.json" --allow-overwrite > "$work/p2p-under-x1.txt" 2>&1
wait "$io_bg"
# -x 2 at 8 threads with 2 slots per thread (copies still waited for per I/O).
io "ram-x2-I0-w8-q2" -f "$ram" -x 2 -I 0 -s "$ram_size" -i 1M -w 8 --iodepth 2 -T "$secs"
# -x 3 with 4 slots per thread instead of 2 (does the overlap run out of staging slots?
# the phases' wait says), and what the phase timing costs: -x 2/-x 3 at 8 threads with
# GDSB_COPY_TIMING=host (no timing events) beside the default runs above.
for t in 4 8; do
  io "ram-x3-I0-w$t-q4" -f "$ram" -x 3 -I 0 -s "$ram_size" -i 1M -w "$t" --iodepth 4 -T "$secs"
done
for x in 2 3; do
  GDSB_COPY_TIMING=host io "ram-x$x-I0-w8-hosttiming" -f "$ram" -x "$x" -I 0 -s "$ram_size" -i 1M -w 8 -T "$secs"
done
umount /mnt/ram 2>/dev/null
fi

# 4. fio against gdsb-io: io_uring 4 KiB random reads, QD 32, on the disk with each
# tool's default; then with gdsb-io's other ring and submission modes (the cases above),
# with both tools' rings polled by a kernel thread (SQPOLL); then the same job on a
# RAM-backed file, where no device is in the way and the figure is the tools' own work.
if part fio && [ -n "$fio_bin" ]; then
  vs_fio() {  # label dir [vs-fio.sh options...]
    local label=$1 dir=$2; shift 2
    FIO="$fio_bin" timeout $((30 + fio_rounds * 40)) bench/vs-fio.sh -b "$cli" -d "$dir" -s 2G -t 5 \
      -r "$fio_rounds" -c rand-4K-uring-qd32 \
      "$@" > "$work/vs-fio$label.md" 2>"$work/vs-fio$label.err"
    say "vs-fio$label: rc=$? ($(elapsed))"
  }
  fio_case disk && vs_fio "" /root
  fio_case iowait && GDSB_IO_URING_WAIT=iowait vs_fio "-iowait" /root
  fio_case coop && GDSB_IO_URING_TASKRUN=coop vs_fio "-coop" /root
  fio_case batch && GDSB_IO_URING_SUBMIT=batch vs_fio "-batch" /root
  fio_case sqpoll && GDSB_IO_URING_TASKRUN=sqpoll vs_fio "-sqpoll" /root -F --sqthread_poll=1
  if fio_case ram || fio_case ram-coop || fio_case ram-batch; then
    mkdir -p /mnt/uring && mount -t tmpfs -o size=4g tmpfs /mnt/uring && {
      fio_case ram && vs_fio "-ram" /mnt/uring
      fio_case ram-coop && GDSB_IO_URING_TASKRUN=coop vs_fio "-ram-coop" /mnt/uring
      fio_case ram-batch && GDSB_IO_URING_SUBMIT=batch vs_fio "-ram-batch" /mnt/uring
      umount /mnt/uring
    }
  fi
fi

# 4b. All GPUs at once against nvbandwidth (gdsb-p2p --concurrent).
if part concurrent; then
  bench/p2p-concurrent.sh --p2p "$p2p" --nvbandwidth-src "$nvb_src" --work "$work/concurrent" \
    > "$work/concurrent.log" 2>&1
  say "concurrent: rc=$? ($(elapsed))"
fi

# 5. cuFile types on the disk (compat mode; udev record created here, a test fixture).
if part disk; then
disk=/root/gdsb-issue11.dat
dev=$(stat -c '%d' /root)
rec="/run/udev/data/b$((dev >> 8)):$((dev & 255))"
if [ ! -e "$rec" ]; then
  mkdir -p /run/udev/data
  fstype=$(findmnt -no FSTYPE --target /root)
  printf 'E:ID_FS_USAGE=filesystem\nE:ID_FS_TYPE=%s\n' "$fstype" > "$rec"
  say "created udev record $rec ($fstype)"
fi
"$cli" -f "$disk" -x 1 -I 1 -s "$disk_size" -i 1M -w 4 -q --allow-overwrite >/dev/null 2>"$work/fill-disk.err" \
  || say "filling $disk failed: $(head -c 300 "$work/fill-disk.err")"
export DROP_BEFORE=1
for spec in "4K 2 8" "1M 0 4"; do
  read -r bs pat t <<<"$spec"
  io "disk-x1-$bs-w$t" -f "$disk" -x 1 -I "$pat" -s "$disk_size" -i "$bs" -w "$t" -T "$secs"
  io "disk-x0-$bs-w$t" -f "$disk" -x 0 -I "$pat" -s "$disk_size" -i "$bs" -w "$t" -T "$secs"
  for mode in device event; do
    export GDSB_CUFILE_COMPLETION=$mode
    io "disk-x5-$bs-w$t-$mode" -f "$disk" -x 5 -I "$pat" -s "$disk_size" -i "$bs" -w "$t" -T "$secs"
    # -x 5 with the same total depth in one thread (one stream per slot since issue 11).
    [ "$bs" = 4K ] && [ "$mode" = event ] && io "disk-x5-$bs-w1q$t-$mode" -f "$disk" -x 5 -I "$pat" -s "$disk_size" -i "$bs" -w 1 --iodepth "$t" -T "$secs"
    io "disk-x6-$bs-w1B$t-$mode" -f "$disk" -x 6 -I "$pat" -s "$disk_size" -i "$bs" -w 1 -B "$t" -T "$secs"
    io "disk-x7-$bs-w1B$t-$mode" -f "$disk" -x 7 -I "$pat" -s "$disk_size" -i "$bs" -w 1 -B "$t" -T "$secs"
  done
  unset GDSB_CUFILE_COMPLETION
done
# Page cache and cuFile batches: drop the cache, one pass of -x 6 1 MiB, page-cache size
# before and after (the product's own check is in the run's warnings).
if [ -w /proc/sys/vm/drop_caches ]; then
  sync; echo 3 > /proc/sys/vm/drop_caches
  c0=$(awk '/^Cached:/{print $2}' /proc/meminfo)
  io "disk-x6-1M-w1B4-onepass" -f "$disk" -x 6 -I 0 -s "$disk_size" -i 1M -w 1 -B 4
  c1=$(awk '/^Cached:/{print $2}' /proc/meminfo)
  sync; echo 3 > /proc/sys/vm/drop_caches
  io "disk-x1-1M-w4-onepass" -f "$disk" -x 1 -I 0 -s "$disk_size" -i 1M -w 4
  echo "x6_cached_kib_before=$c0 x6_cached_kib_after=$c1" > "$work/pagecache.txt"
  say "page cache around one -x 6 pass: $c0 -> $c1 KiB"
fi
unset DROP_BEFORE
rm -f "$disk"
say "disk runs done ($(elapsed))"
fi

python3 - "$work" > "$OUT/summary.md" <<'PY'
import glob, json, os, sys
work = sys.argv[1]
GIB = 2**30 / 1e9  # GB per GiB

why = {}  # run name -> why it has no figure; printed under the table that missed it

def run(name):
    """The run's record when it has a figure for these tables, else None (the reason kept).
    A read of the RAM-backed file (ram-*) ends with status "page cache": gdsb-io says, rightly,
    that the figure is the memory's, not a storage's. Here memory is the point: the tmpfs takes
    the disk out of the way to measure the bounce paths against the host link (issue 11), so
    those runs count, and the tables say so."""
    path = os.path.join(work, "runs", name + ".json")
    try:
        r = json.load(open(path))["runs"][0]
    except FileNotFoundError:
        err = os.path.join(work, "runs", name + ".err")
        tail = open(err).read().strip().splitlines()[-1:] if os.path.exists(err) else []
        why[name] = "no report" + (f" ({tail[0][:200]})" if tail else " (not run: its part was not asked for)")
        return None
    except Exception as e:
        why[name] = f"unreadable report ({e})"
        return None
    status = r.get("status")
    if status == "ok" or (status == "page cache" and name.startswith("ram-")):
        return r
    why[name] = f"{status}: {r.get('reason', 'no reason given')}"
    return None

def said_why(prefix):
    """Prints, once, why the runs named prefix* have no figure, then forgets them."""
    names = sorted(n for n in why if n.startswith(prefix))
    for n in names:
        print(f"- {n}: not measured: {why.pop(n)}")
    if names:
        print()

def gib(name):
    r = run(name)
    return r["result"]["throughput_gib_s"] if r else None

def f(v, d=2):
    return "-" if v is None else f"{v:.{d}f}"

host = {}
print("## gdsb-p2p --measure: pinned host link and its plain cudaMemcpy reference\n")
print("| run | dir | GPU | GB/s | reference GB/s | ratio |")
print("|---|---|---|---:|---:|---:|")
for k in (1, 2):
    try:
        m = json.load(open(os.path.join(work, f"p2p-{k}.json")))
    except Exception:
        print(f"| {k} | - | - | not measured (no JSON) | | |"); continue
    meas = m.get("measurements") or m.get("measure") or {}
    for d in ("h2d", "d2h"):
        items = meas.get(d)
        if not isinstance(items, list):
            print(f"| {k} | {d} | - | waived: {items} | | |"); continue
        for it in items:
            print(f"| {k} | {d} | {it['gpu']} | {f(it['gb_s'])} | {f(it.get('reference_gb_s'))} | {f(it.get('reference_ratio'), 3)} |")
            if it["gpu"] == 0:
                host.setdefault(d, []).append(it["gb_s"] / GIB)
h2d = min(host["h2d"]) if host.get("h2d") else None
d2h = min(host["d2h"]) if host.get("d2h") else None
print(f"\nhost link for the ratios (GiB/s, lower of the runs): H2D {f(h2d)}, D2H {f(d2h)}\n")
try:
    m1 = json.load(open(os.path.join(work, "p2p-1m.json")))["measurements"]
    print("the same link in 1 MiB copies (GiB/s): back to back on one stream / one synchronous "
          "cudaMemcpy at a time (gdsb-p2p --size 1M, its reference):")
    for d in ("h2d", "d2h"):
        for it in m1.get(d) if isinstance(m1.get(d), list) else []:
            ref = it.get("reference_gb_s")
            print(f"- {d} GPU {it['gpu']}: {f(it['gb_s'] / GIB)} / {f(ref / GIB if ref else None)}"
                  f" (one 1 MiB copy every {f(2**20 / (ref * 1e3) if ref else None, 1)} us)")
    print()
except Exception as e:
    print(f"1 MiB copies: not measured ({e})\n")

print("## RAM-backed O_DIRECT file (tmpfs), 1 MiB, GiB/s; target -x 2/-x 3 >= 0.9 x min(-x 1, host link), -x 3 at 1 thread >= 0.95\n")
print("| dir | threads | -x 1 | -x 2 | -x 3 | host link | x2 ratio | x3 ratio | CPU % (usr/sys) x1, x2, x3 | process CPU % x2, x3 |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---|---|")
for rw, name, link in ((0, "read", h2d), (1, "write", d2h)):
    for t in (1, 4, 8):
        x = {n: gib(f"ram-x{n}-I{rw}-w{t}") for n in (1, 2, 3)}
        ref = min(v for v in (x[1], link) if v) if (x[1] or link) else None
        r2 = x[2] / ref if x[2] and ref else None
        r3 = x[3] / ref if x[3] and ref else None
        cpu = []
        pcpu = []
        for n in (1, 2, 3):
            r = run(f"ram-x{n}-I{rw}-w{t}")
            c = r["result"]["cpu"] if r else {}
            cpu.append(f"{c.get('user_percent', 0):.1f}/{c.get('sys_percent', 0):.1f}" if r else "-")
            if n > 1:
                pcpu.append(f"{c.get('process_user_percent', 0):.1f}/{c.get('process_sys_percent', 0):.1f}" if r else "-")
        print(f"| {name} | {t} | {f(x[1])} | {f(x[2])} | {f(x[3])} | {f(link)} | {f(r2)} | {f(r3)} | {', '.join(cpu)} | {', '.join(pcpu)} |")
print("\nReads of the RAM-backed file are the memory's figures (gdsb-io's status \"page cache\"): that "
      "is what this table measures, the bounce paths with no storage in the way.\n")
said_why("ram-x")
print(f"\n-x 1 read, 8 threads, while gdsb-p2p copies to the GPU: {f(gib('ram-x1-I0-w8-under-h2d'))} GiB/s "
      f"(alone: {f(gib('ram-x1-I0-w8'))}): host memory shared by storage reads and DMA")
try:
    m = json.load(open(os.path.join(work, "p2p-under-x1.json")))["measurements"]
    print(f"host link while -x 1 reads with 8 threads: H2D {m['h2d'][0]['gb_s'] / GIB:.2f} GiB/s, "
          f"D2H {m['d2h'][0]['gb_s'] / GIB:.2f} GiB/s (alone: {f(h2d)}, {f(d2h)})")
except Exception as e:
    print(f"host link under -x 1 load: not measured ({e})")
print(f"-x 2 read, 8 threads, --iodepth 2: {f(gib('ram-x2-I0-w8-q2'))} GiB/s\n")

# Where the time of a bounce I/O went (gdsb-io's own phase timing, docs/gpu-paths.md
# "Phases"): per-I/O means in us. DMA GiB/s = bytes per I/O / DMA time, to hold against
# the host link; "DMA x" = DMA time / the same direction's DMA at 1 thread.
def phases(name):
    r = run(name)
    return (r["result"], r["result"].get("phases")) if r else (None, None)

print("## Phases of the bounce paths, RAM-backed file, 1 MiB (per-I/O means, us; gdsb-io's own timing)\n")
print("| run | dir | threads | GiB/s | storage | copy | DMA | DMA GiB/s | DMA x (vs 1 thread) | wait | lat | storage rate | sync ceiling | -x 1 | storage rate / -x 1 |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
rows = []
for rw, dname in ((0, "read"), (1, "write")):
    for t in (1, 4, 8):
        for x in (2, 3):
            rows.append((f"-x {x}", f"ram-x{x}-I{rw}-w{t}", rw, dname, t, x))
rows += [("-x 2 --iodepth 2", "ram-x2-I0-w8-q2", 0, "read", 8, 2)]
rows += [(f"-x 3 --iodepth 4", f"ram-x3-I0-w{t}-q4", 0, "read", t, 3) for t in (4, 8)]
rows += [(f"-x {x} GDSB_COPY_TIMING=host", f"ram-x{x}-I0-w8-hosttiming", 0, "read", 8, x) for x in (2, 3)]
for label, name, rw, dname, t, x in rows:
    m, p = phases(name)
    if m is None:
        print(f"| {label} | {dname} | {t} | not measured | | | | | | | | | | | |"); continue
    if p is None:
        print(f"| {label} | {dname} | {t} | {f(m['throughput_gib_s'])} | no phases in the result | | | | | | | | | | |"); continue
    _, p1 = phases(f"ram-x{x}-I{rw}-w1")
    mean = lambda k: p[k]["us"]["mean"] if p[k]["count"] else None
    dma = mean("dma")
    dma1 = p1["dma"]["us"]["mean"] if p1 and p1["dma"]["count"] else None
    per_io = m["bytes"] / m["ops"] if m["ops"] else 0
    dma_gib = per_io / (dma * 1e-6) / 2**30 if dma else None
    x1 = gib(f"ram-x1-I{rw}-w{t}")
    sr = p.get("storage_gib_s")
    print(f"| {label} | {dname} | {t} | {f(m['throughput_gib_s'])} | {f(mean('storage'), 1)} | {f(mean('copy'), 1)} | "
          f"{f(dma, 1)} | {f(dma_gib)} | {f(dma / dma1 if dma and dma1 else None)} | {f(mean('wait'), 1)} | "
          f"{f(m['latency_us']['mean'], 1)} | {f(sr)} | {f(p.get('sync_ceiling_gib_s'))} | {f(x1)} | {f(sr / x1 if sr and x1 else None)} |")
print()

print("## Disk (virtio, ext4, O_DIRECT), cuFile in compat mode; -x 1 is the storage figure of this run\n")
print("| io | -x | threads x depth | completion | GiB/s | IOPS | p99 us | usr/sys us per I/O | process CPU % | vs -x 1 | vs -x 0 |")
print("|---|---|---|---|---:|---:|---:|---|---|---:|---:|")
for bs, t in (("4K", 8), ("1M", 4)):
    base1 = run(f"disk-x1-{bs}-w{t}")
    base0 = run(f"disk-x0-{bs}-w{t}")
    rows = [("1", f"disk-x1-{bs}-w{t}", f"{t}x1", "-"), ("0", f"disk-x0-{bs}-w{t}", f"{t}x1", "sync")]
    for mode in ("device", "event"):
        rows += [("5", f"disk-x5-{bs}-w{t}-{mode}", f"{t}x1", mode),
                 ("6", f"disk-x6-{bs}-w1B{t}-{mode}", f"1x{t}", mode),
                 ("7", f"disk-x7-{bs}-w1B{t}-{mode}", f"1x{t}", mode)]
        if bs == "4K" and mode == "event": rows.append(("5", f"disk-x5-{bs}-w1q{t}-{mode}", f"1x{t}", mode))
    for x, name, shape, mode in rows:
        r = run(name)
        if not r:
            errf = os.path.join(work, "runs", name + ".err")
            if not os.path.exists(errf):  # PARTS without disk: the run was not made
                print(f"| {bs} | {x} | {shape} | {mode} | not run | | | | | | |"); continue
            lines = open(errf).read().strip().splitlines()
            print(f"| {bs} | {x} | {shape} | {mode} | failed: {lines[-1][:120] if lines else ''} | | | | | | |"); continue
        m = r["result"]; c = m["cpu"]
        v1 = m["throughput_gib_s"] / base1["result"]["throughput_gib_s"] if base1 else None
        v0 = m["iops"] / base0["result"]["iops"] if base0 else None
        flag = " **exceeds the storage figure: not storage**" if v1 and v1 > 1.15 and x != "1" else ""
        print(f"| {bs} | {x} | {shape} | {mode} | {m['throughput_gib_s']:.3f}{flag} | {m['iops']:.0f} | {m['latency_us']['p99']:.0f} | "
              f"{c.get('user_us_per_io', 0):.1f}/{c.get('sys_us_per_io', 0):.1f} | "
              f"{c.get('process_user_percent', 0):.1f}/{c.get('process_sys_percent', 0):.1f} | {f(v1)} | {f(v0)} |")
pc = os.path.join(work, "pagecache.txt")
if os.path.exists(pc):
    print("\npage cache around one cold pass of -x 6 1 MiB (KiB): " + open(pc).read().strip())
    for name in ("disk-x6-1M-w1B4-onepass", "disk-x1-1M-w4-onepass"):
        r = run(name)
        if r:
            print(f"- {name}: {r['result']['throughput_gib_s']:.3f} GiB/s; warnings: {r['path'].get('warnings', []) if isinstance(r.get('path'), dict) else r.get('warnings')}")
for bs, t in (("1M", 4),):
    for x in ("6", "7"):
        r = run(f"disk-x{x}-{bs}-w1B{t}-event")
        if r:
            w = r.get("path", {}).get("warnings") if isinstance(r.get("path"), dict) else r.get("warnings")
            print(f"- -x {x} {bs} event run warnings: {w}")
print("\n## io_uring 4 KiB random read, QD 32, against fio (bench/vs-fio.sh)\n")
for label, what in (("", "disk, each tool's default ring (gdsb-io: DEFER_TASKRUN, waits not I/O wait, one enter per request, as fio)"),
                    ("-iowait", "disk, gdsb-io's waits counted as I/O wait (GDSB_IO_URING_WAIT=iowait)"),
                    ("-coop", "disk, gdsb-io with COOP_TASKRUN only (GDSB_IO_URING_TASKRUN=coop)"),
                    ("-batch", "disk, gdsb-io entering its requests in batches (GDSB_IO_URING_SUBMIT=batch)"),
                    ("-sqpoll", "disk, both rings polled by a kernel thread (GDSB_IO_URING_TASKRUN=sqpoll, fio --sqthread_poll=1)"),
                    ("-ram", "RAM-backed file (tmpfs, O_DIRECT), each tool's default ring"),
                    ("-ram-coop", "RAM-backed file, gdsb-io with COOP_TASKRUN only"),
                    ("-ram-batch", "RAM-backed file, gdsb-io entering its requests in batches (GDSB_IO_URING_SUBMIT=batch)")):
    vs = os.path.join(work, f"vs-fio{label}.md")
    print(f"\n### {what}\n")
    print(open(vs).read() if os.path.exists(vs) else "not measured (no fio, or the part did not run)")
st = os.path.join(work, "nsys-x2-stats.txt")
if os.path.exists(st):
    print("\n## nsys, -x 2 read, 8 threads (top lines)\n\n```")
    print("\n".join(open(st).read().splitlines()[:60]))
    print("```")
if why:
    print("\n## Other runs without a figure, and why\n")
    said_why("")
PY
[ -f "$work/concurrent/concurrent.md" ] && { echo; cat "$work/concurrent/concurrent.md"; } >> "$OUT/summary.md"
cat "$OUT/summary.md"
rm -f "$work"/*.sqlite
tar -czf "$OUT/issue11.tar.gz" -C "$OUT" work && rm -rf "$work"
echo "gpu-issue11: done ($(elapsed)); $OUT/summary.md, $OUT/issue11.tar.gz"
