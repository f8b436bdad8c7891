#!/usr/bin/env bash
# gdsb-io against fio on the same file with the same settings, alternating, >= 3 rounds
# each. Prints a markdown table: median throughput of each tool, the ratio gdsb-io/fio
# (target >= 1.0), the ratio of each round's pair of runs (the machine's noise), median
# IOPS and median p99 latency of each (target: gdsb-io no worse). p99 is per-I/O latency,
# submission to completion (fio: lat_ns with lat_percentiles=1).
#
#   bench/vs-fio.sh [-b GDSB_IO] [-d DIR] [-s SIZE] [-t SECONDS] [-r ROUNDS] [-c CASES]
#                   [-G GDSB_ARGS] [-F FIO_ARGS] [-C CPUS]
#
# CPU per I/O: gdsb-io's cpu.user_us_per_io/sys_us_per_io (worker threads) against fio's
# usr_cpu/sys_cpu turned into microseconds per I/O (percent of one CPU x job runtime /
# I/Os), so "less work per I/O" is a figure, not a claim. -c: the cases to run, blank
# separated (default all three). FIO: the fio binary (default fio on PATH).
# -G / -F: extra arguments for every gdsb-io / fio run (e.g. -F --sqthread_poll=1 to set
# fio's ring up as GDSB_IO_URING_TASKRUN=sqpoll sets gdsb-io's; or, as a diagnosis, fio's
# submission batching changed to gdsb-io's). Context switches (voluntary/involuntary) per
# I/O of each tool's whole process and virtio request interrupts per I/O (the machine's
# /proc/interrupts lines named virtio*-req*, 0 where there are none) are measured around
# every run, to show how each tool waits and how many device notifications it causes,
# with each process's whole CPU time per I/O (all its threads, io_uring's io-wq workers
# included: where a file system cannot start an I/O without blocking, tmpfs for one, the
# kernel hands it to those workers) and how many io-wq workers it had.
# -C CPUS: both tools run under taskset -c CPUS (same placement for both).
#
# Defaults: build/release/apps/gdsb-io/gdsb-io, DIR=$GDSB_SCRATCH or ., SIZE=1G,
# SECONDS=10, ROUNDS=3. Rounds alternate which tool goes first. The data file DIR/gdsb-vs-fio.dat is written once by gdsb-io
# (real data, not fallocated) and removed at the end. Raw JSON of every run stays in
# a temporary directory printed at the end.
#
# Cases (all O_DIRECT, CPU_ONLY, reads):
#   seq-1M-psync-2t     1 MiB sequential, psync, 2 threads (fio: numjobs=2, each on its half)
#   rand-4K-psync-2t    4 KiB random, psync, 2 threads
#   rand-4K-uring-qd32  4 KiB random, io_uring, 1 thread, 32 in flight; registered buffers
#                       and files on both sides (gdsb-io always registers; fio: fixedbufs,
#                       registerfiles)
set -euo pipefail

gdsb_io=build/release/apps/gdsb-io/gdsb-io
dir=${GDSB_SCRATCH:-.}
size=1G
secs=10
rounds=3
cases="seq-1M-psync-2t rand-4K-psync-2t rand-4K-uring-qd32"
fio_bin=${FIO:-fio}
gdsb_extra="" fio_extra="" pin=()
while getopts "b:d:s:t:r:c:G:F:C:h" o; do
  case $o in
    b) gdsb_io=$OPTARG ;;
    d) dir=$OPTARG ;;
    s) size=$OPTARG ;;
    t) secs=$OPTARG ;;
    r) rounds=$OPTARG ;;
    c) cases=$OPTARG ;;
    G) gdsb_extra=$OPTARG ;;
    F) fio_extra=$OPTARG ;;
    C) pin=(taskset -c "$OPTARG") ;;
    *) sed -n '2,/^set -euo/p' "$0" | grep '^#'; exit 2 ;;
  esac
done
if [ "$rounds" -lt 3 ]; then echo "vs-fio: at least 3 rounds (-r)" >&2; exit 2; fi
command -v "$fio_bin" >/dev/null || { echo "vs-fio: $fio_bin is not installed (ci/install-deps.sh)" >&2; exit 1; }
[ -x "$gdsb_io" ] || { echo "vs-fio: $gdsb_io not found; build with cmake --preset release" >&2; exit 1; }

file=$dir/gdsb-vs-fio.dat
out=$(mktemp -d -t gdsb-vs-fio.XXXXXX)
trap 'rm -f "$file"' EXIT
bytes=$(python3 -c "import sys; s=sys.argv[1].upper(); m={'K':1<<10,'M':1<<20,'G':1<<30,'T':1<<40}; print(int(s[:-1])*m[s[-1]] if s[-1] in m else int(s))" "$size")
half=$((bytes / 2))

echo "vs-fio: writing $size to $file" >&2
"$gdsb_io" -f "$file" -x 1 -I 1 -s "$size" -i 1M -w 2 -q >/dev/null

# Runs a command and writes its process's context switches and the virtio request
# interrupts during it (JSON) to $1.
measured() {  # usage-file command...
  local usage=$1; shift
  python3 - "$usage" "$@" <<'PY'
import json, os, resource, subprocess, sys, time
def irqs():
    total = 0
    for line in open("/proc/interrupts"):
        f = line.split()
        if f and "virtio" in line and "req" in line:
            total += sum(int(x) for x in f[1:] if x.isdigit())
    return total
def tasks(pid):
    # Every thread of the process tree under pid: (pid, tid) -> (name, CPU ticks).
    seen, todo = {}, [pid]
    while todo:
        p = todo.pop()
        try:
            for tid in os.listdir(f"/proc/{p}/task"):
                stat = open(f"/proc/{p}/task/{tid}/stat").read()
                name = stat[stat.index("(") + 1:stat.rindex(")")]
                f = stat[stat.rindex(")") + 2:].split()
                seen[(p, tid)] = (name, int(f[11]) + int(f[12]))
                try:
                    todo += [int(c) for c in open(f"/proc/{p}/task/{tid}/children").read().split()]
                except OSError:
                    pass
        except OSError:
            pass
    return seen
i0 = irqs()
proc = subprocess.Popen(sys.argv[2:])
last = {}
while proc.poll() is None:
    last.update(tasks(proc.pid))
    time.sleep(0.2)
rc = proc.returncode
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
hz = os.sysconf("SC_CLK_TCK")
iowq = [t for t in last.values() if t[0].startswith("iou-")]
json.dump({"nvcsw": ru.ru_nvcsw, "nivcsw": ru.ru_nivcsw, "irqs": irqs() - i0,
           "cpu_s": ru.ru_utime + ru.ru_stime,
           "io_uring_threads": len(iowq), "io_uring_threads_cpu_s": sum(t[1] for t in iowq) / hz},
          open(sys.argv[1], "w"))
sys.exit(rc)
PY
}

run_gdsb() {  # case round args...
  local name=$1 round=$2; shift 2
  # shellcheck disable=SC2086  # -G is a list of arguments
  measured "$out/$name.gdsb.$round.usage" "${pin[@]}" "$gdsb_io" -f "$file" -x 1 -s "$size" -T "$secs" -q --json "$out/$name.gdsb.$round.json" "$@" $gdsb_extra >/dev/null
}
run_fio() {  # case round args...
  local name=$1 round=$2; shift 2
  # shellcheck disable=SC2086  # -F is a list of arguments
  measured "$out/$name.fio.$round.usage" "${pin[@]}" "$fio_bin" --name="$name" --filename="$file" --direct=1 --time_based --runtime="$secs" \
      --group_reporting --lat_percentiles=1 --output-format=json \
      --output="$out/$name.fio.$round.json" "$@" $fio_extra >/dev/null
}

gdsb_case() {  # case round
  case $1 in
    seq-1M-psync-2t)    run_gdsb "$1" "$2" -I 0 -i 1M -w 2 --engine psync ;;
    rand-4K-psync-2t)   run_gdsb "$1" "$2" -I 2 -i 4K -w 2 --engine psync ;;
    rand-4K-uring-qd32) run_gdsb "$1" "$2" -I 2 -i 4K -w 1 --engine io_uring --iodepth 32 ;;
  esac
}
fio_case() {  # case round
  case $1 in
    seq-1M-psync-2t)    run_fio "$1" "$2" --rw=read --bs=1M --ioengine=psync --numjobs=2 \
                                --size="$half" --offset_increment="$half" ;;
    rand-4K-psync-2t)   run_fio "$1" "$2" --rw=randread --bs=4k --ioengine=psync --numjobs=2 --size="$bytes" ;;
    rand-4K-uring-qd32) run_fio "$1" "$2" --rw=randread --bs=4k --ioengine=io_uring --iodepth=32 \
                                --fixedbufs=1 --registerfiles=1 --numjobs=1 --size="$bytes" ;;
  esac
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for round in $(seq 1 "$rounds"); do
  echo "vs-fio: round $round/$rounds" >&2
  for c in $cases; do
    # Each case's two runs are adjacent; odd rounds start with gdsb-io, even rounds with
    # fio, so drift on a shared machine favours neither.
    if [ $((round % 2)) -eq 1 ]; then gdsb_case $c "$round"; fio_case $c "$round"
    else fio_case $c "$round"; gdsb_case $c "$round"; fi
  done
done
echo "load average before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$out" "$rounds" "$cases" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
cases = sys.argv[3].split()
print("| case | gdsb-io GiB/s | fio GiB/s | ratio | per-round ratios | gdsb-io IOPS | fio IOPS | gdsb-io p99 us | fio p99 us | gdsb-io usr/sys us per I/O | fio usr/sys us per I/O | gdsb-io vol/invol ctx sw per I/O | fio | gdsb-io virtio IRQs per I/O | fio | gdsb-io process CPU us per I/O (io-wq threads, their us) | fio |")
print("|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
def usage(path, ios):
    try:
        u = json.load(open(path))
    except (OSError, ValueError):
        return None
    return (u["nvcsw"] / ios, u["nivcsw"] / ios, u["irqs"] / ios, u.get("cpu_s", 0) * 1e6 / ios,
            u.get("io_uring_threads", 0), u.get("io_uring_threads_cpu_s", 0) * 1e6 / ios)
def sw(use):
    use = [u for u in use if u]
    return f"{statistics.median(u[0] for u in use):.3f}/{statistics.median(u[1] for u in use):.3f}" if use else "not measured"
def proc_cpu(use):
    use = [u for u in use if u]
    if not use:
        return "not measured"
    m = statistics.median
    return f"{m(u[3] for u in use):.2f} ({m(u[4] for u in use):.0f}, {m(u[5] for u in use):.2f})"
def irq(use):
    use = [u for u in use if u]
    return f"{statistics.median(u[2] for u in use):.3f}" if use else "not measured"
for c in cases:
    g_bw, g_iops, g_p99, f_bw, f_iops, f_p99 = [], [], [], [], [], []
    g_cpu, f_cpu, g_use, f_use = [], [], [], []
    for r in range(1, rounds + 1):
        g = json.load(open(f"{out}/{c}.gdsb.{r}.json"))["runs"][0]["result"]
        g_bw.append(g["throughput_gib_s"]); g_iops.append(g["iops"]); g_p99.append(g["latency_us"]["p99"])
        g_cpu.append((g["cpu"].get("user_us_per_io", 0), g["cpu"].get("sys_us_per_io", 0)))
        g_use.append(usage(f"{out}/{c}.gdsb.{r}.usage", max(1, g.get("ops", 0) or g["iops"] * g.get("seconds", 1))))
        job = json.load(open(f"{out}/{c}.fio.{r}.json"))["jobs"][0]
        f = job["read"]
        ios = max(1, f.get("total_ios", 0))
        run_s = job.get("job_runtime", 0) / 1000.0
        f_cpu.append((job["usr_cpu"] / 100 * run_s * 1e6 / ios, job["sys_cpu"] / 100 * run_s * 1e6 / ios))
        f_use.append(usage(f"{out}/{c}.fio.{r}.usage", ios))
        f_bw.append(f["bw_bytes"] / 2**30); f_iops.append(f["iops"])
        f_p99.append(f["lat_ns"]["percentile"]["99.000000"] / 1000)
    m = statistics.median
    # Each gdsb-io run against the fio run right after it: shows how noisy the machine is.
    paired = " ".join(f"{g / f:.2f}" for g, f in zip(g_bw, f_bw))
    print(f"| {c} | {m(g_bw):.3f} | {m(f_bw):.3f} | {m(g_bw)/m(f_bw):.2f} | {paired} | {m(g_iops):.0f} | "
          f"{m(f_iops):.0f} | {m(g_p99):.1f} | {m(f_p99):.1f} | "
          f"{m([u for u, _ in g_cpu]):.2f}/{m([s for _, s in g_cpu]):.2f} | "
          f"{m([u for u, _ in f_cpu]):.2f}/{m([s for _, s in f_cpu]):.2f} | "
          f"{sw(g_use)} | {sw(f_use)} | {irq(g_use)} | {irq(f_use)} | {proc_cpu(g_use)} | {proc_cpu(f_use)} |")
print(f"\nmedians of {rounds} alternating rounds; raw JSON in {out}")
PY
