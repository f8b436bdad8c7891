#!/usr/bin/env bash
# gdsb-cluster's shared-storage phase against IOR (issue 26): the same directory, file per
# process, the same block and transfer size, the same ranks, O_DIRECT on both sides, both
# under the same mpirun. ROUNDS rounds, each of four runs in ABBA order (odd rounds IOR, ours,
# ours, IOR; even rounds ours, IOR, IOR, ours), each run a write phase then a read phase.
# Why ABBA: on the 2-core VM the tool that ran second in a pair read ~1.5x faster than the
# one that ran first (the virtual disk's host side caches what was just written; issue 34),
# so one run each per round measured the order, not the tool. In ABBA each tool runs once
# first and once second of a pair (slots 1-2 and 3-4), and a drift over the round falls on
# both alike. Prints per round each tool's two runs and their geometric mean (GB/s, 1e9 B/s),
# the ratio ours/IOR of the means, whether it is within TOLERANCE percent, and the order
# effect: the geometric mean of second/first over the round's two pairs (the tools' own
# difference cancels there: (B/A x order) x (A/B x order)), 1.00 when the order does not
# matter.
#
#   bench/ior-compare.sh [BUILD_DIR]        (default build/release)
#
# Environment (defaults in brackets):
#   DIR         directory both tools write their files into [BUILD_DIR/ior-compare-data];
#               a real file system: O_DIRECT fails on tmpfs
#   NP [4]  BLOCK [256M] (bytes per rank: IOR -b, our --io-size)  XFER [1M] (IOR -t,
#   our --io-block)  ROUNDS [3]  TOLERANCE [10] (percent)
#   MPIRUN_ARGS extra mpirun arguments for both tools (e.g. --hostfile FILE for several nodes)
#   IOR         an ior binary to use instead of building one
#   IOR_SRC     a git repository of hpc/ior (bare or not) to build IOR_REF from [unset: the
#               source in bench/peers/ (below) when IOR_REF is its commit, else
#               BUILD_DIR/peers/ior.git, cloned from https://github.com/hpc/ior.git when absent]
#   IOR_REF     the commit or tag to build [the commit measured in docs/PERFORMANCE.md]
#   ONLY        "ior" runs only IOR's half (no gdsb-cluster needed); "build" only builds IOR
#               and prints the path of its binary (CMake's target ior-peer)
#   IOR_FSYNC   0 leaves out IOR's -e (see below), to measure what the fsync costs [1]
#   IOR_OVERWRITE 0: IOR's timed write creates its files (IOR's usual run) [1: see -E below]
#   STONEWALL   S (whole seconds): both tools stonewalled by time: IOR -D S, ours
#               --storage-time S; BLOCK must then outlast S on every rank [unset: by bytes]
#
# IOR is built out of tree under BUILD_DIR/peers/ior-<commit>/ (src/, obj/, bin/ior), with
# the distribution's Open MPI (mpicc), autoconf and automake (IOR's configure.ac does not
# use libtool). Missing packages are installed through ci/install-deps.sh. The source of the
# measured commit travels with gdsbench (bench/peers/ior-5fcf0ba995fd.tar.gz, GPLv2, its
# COPYRIGHT inside; bench/peers/SOURCES.md), so CI and machines without GitHub build it.
#
# IOR: -a POSIX --posix.odirect -F -b BLOCK -t XFER -w -r -e -C -i 1, JSON summary.
#   -e   fsync at the end of the write phase, inside IOR's timed phase: the data is on the
#        device when the phase ends, as after our O_DIRECT writes.
#   -C   reads shift ranks by one node (rank r reads the file of the rank one node away),
#        so a node never reads back what its own cache holds. On one node the shift is
#        tasks-on-node mod NP = 0, so each rank reads its own file, as ours does.
#   -E   (IOR_OVERWRITE=1) the timed write goes into files an untimed IOR write (-w -k) made
#        just before: IOR's POSIX create opens with O_CREAT and no O_TRUNC, so the blocks
#        stay allocated. Ours writes over the file its untimed fill wrote, so neither timed
#        write allocates blocks (on ext4 an O_DIRECT write into new blocks also converts
#        unwritten extents when it completes).
#   -i 1 one repetition a round; the rounds are the repetitions, alternating with ours.
#   no -D: IOR's stonewalling is a deadline in seconds. Ours runs with --storage-time 0 (no
#        deadline): each rank's limit is BLOCK, as IOR's -b without -D. A deadline on IOR
#        would also cut its write phase short and leave its read phase files shorter than
#        -b (it then needs stoneWallingWearOut and a status file).
# Ours: gdsb-cluster --aggregate --io-modes 1 --storage-ops write,read --io-size BLOCK
#   --io-block XFER --storage-time 0; its figure is shared_storage.points[] of cluster.json
#   (ranks = NP, mode 1, op write / read): aggregate_gb_s. A point counts ranks and nodes
#   apart: NP ranks on one host are one node of NP ranks (nodes 1, ranks NP), on NP hosts NP
#   nodes; --aggregate runs one point, on every rank, so ranks = NP finds it either way.
# Output: a markdown table, a row per round and op (each tool's two runs, their geometric
# means, the ratio, the order effect), then the medians over the rounds.
# Exit: 0 the median of each op within TOLERANCE (with ROUNDS=1: the round's), 3 one is not
# or a point of ours did not measure, 1 a run failed, 2 usage error.
set -euo pipefail
shopt -s inherit_errexit  # a failure inside $(build_ior) stops the script
here=$(cd "$(dirname "$0")" && pwd)
build=$(realpath -m "${1:-$here/../build/release}")
np=${NP:-4} block=${BLOCK:-256M} xfer=${XFER:-1M} rounds=${ROUNDS:-3} tol=${TOLERANCE:-10}
dir=$(realpath -m "${DIR:-$build/ior-compare-data}")
only=${ONLY:-}
fsync=(-e)
overwrite=${IOR_OVERWRITE:-1}
[ "${IOR_FSYNC:-1}" = 0 ] && fsync=()
ior_ref=${IOR_REF:-5fcf0ba995fd92164d50e344597e2d8203298c08}
stonewall=${STONEWALL:-}
ior_deadline=() our_time=0
if [ -n "$stonewall" ]; then
  [ "$stonewall" -ge 1 ] 2>/dev/null || { echo "ior-compare: STONEWALL must be whole seconds >= 1" >&2; exit 2; }
  ior_deadline=(-D "$stonewall") our_time=$stonewall
fi
case $only in "" | ior | build) ;; *) echo "ior-compare: ONLY must be empty, ior or build, not '$only'" >&2; exit 2 ;; esac
[ "$rounds" -ge 1 ] 2>/dev/null || { echo "ior-compare: ROUNDS must be a positive number" >&2; exit 2; }
# shellcheck disable=SC2206  # a list of arguments
mpirun=(mpirun --allow-run-as-root --oversubscribe -np "$np" ${MPIRUN_ARGS:-})
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

gdsb=$build/apps/gdsb-cluster/gdsb-cluster
if [ -z "$only" ] && [ ! -x "$gdsb" ]; then
  echo "ior-compare: $gdsb not found; build it: cmake --preset release &&" \
       "cmake --build --preset release --target gdsb-cluster (or ONLY=ior)" >&2
  exit 1
fi

build_ior() {  # -> prints the path of bin/ior
  local src=${IOR_SRC:-} commit prefix
  local vendored=$here/peers/ior-${ior_ref:0:12}.tar.gz
  local need=()
  for tool in mpicc:libopenmpi-dev mpirun:openmpi-bin autoreconf:autoconf automake:automake \
              make:make git:git; do
    command -v "${tool%%:*}" >/dev/null || need+=("${tool#*:}")
  done
  if [ ${#need[@]} -gt 0 ]; then bash "$here/../ci/install-deps.sh" "${need[@]}" >&2; fi
  if [ -z "$src" ] && [ ${#ior_ref} -eq 40 ] && [ -f "$vendored" ]; then
    commit=$ior_ref  # the source that travels with gdsbench
  else
    src=${src:-$build/peers/ior.git}
    if [ ! -e "$src" ]; then
      echo "ior-compare: cloning https://github.com/hpc/ior.git into $src" >&2
      git clone -q --bare https://github.com/hpc/ior.git "$src" >&2
    fi
    commit=$(git -C "$src" rev-parse --verify "$ior_ref^{commit}")
  fi
  prefix=$build/peers/ior-${commit:0:12}
  if [ ! -x "$prefix/bin/ior" ]; then
    echo "ior-compare: building IOR $commit in $prefix" >&2
    rm -rf "$prefix"
    mkdir -p "$prefix/src" "$prefix/obj"
    if [ -n "$src" ]; then
      git -C "$src" archive "$commit" | tar -x -C "$prefix/src"
    else
      tar -xzf "$vendored" -C "$prefix/src" --strip-components=1
    fi
    echo "$commit" >"$prefix/COMMIT"
    { (cd "$prefix/src" && ./bootstrap) &&
      (cd "$prefix/obj" && ../src/configure --prefix="$prefix" CC=mpicc &&
       make -j"$(nproc)" && make install); } >"$prefix/build.log" 2>&1 ||
      { tail -20 "$prefix/build.log" >&2; echo "ior-compare: IOR build failed ($prefix/build.log)" >&2; return 1; }
  fi
  echo "$prefix/bin/ior"
}

if [ -n "${IOR:-}" ]; then
  ior=$IOR ior_commit="(given: $IOR)"
else
  ior=$(build_ior)
  ior_commit=$(cat "$(dirname "$(dirname "$ior")")/COMMIT")
fi
if [ "$only" = build ]; then echo "$ior"; exit 0; fi

mkdir -p "$dir"
work=$(mktemp -d -t gdsb-ior-compare.XXXXXX)
trap 'rm -f "$dir"/ior-compare.dat.*' EXIT

run_ior() {  # run: ROUND.SLOT
  local r=$1 existing=()
  rm -f "$work/ior-$r.json"
  if [ "$overwrite" = 1 ]; then  # the untimed fill: IOR's own write, files kept
    "${mpirun[@]}" "$ior" -a POSIX --posix.odirect -F -b "$block" -t "$xfer" -w -k -i 1 \
      -o "$dir/ior-compare.dat" >"$work/ior-$r-fill.txt" 2>&1 ||
      { tail -20 "$work/ior-$r-fill.txt" >&2; echo "ior-compare: IOR fill failed (run $r)" >&2; exit 1; }
    existing=(-E)
  fi
  "${mpirun[@]}" "$ior" -a POSIX --posix.odirect -F -b "$block" -t "$xfer" -w -r "${fsync[@]}" -C -i 1 \
    "${existing[@]}" "${ior_deadline[@]}" -o "$dir/ior-compare.dat" -O summaryFormat=JSON -O "summaryFile=$work/ior-$r.json" \
    -O "saveRankPerformanceDetailsCSV=$work/ior-$r-ranks.csv" \
    >"$work/ior-$r.txt" 2>&1 || { tail -20 "$work/ior-$r.txt" >&2; echo "ior-compare: IOR failed (run $r)" >&2; exit 1; }
}
run_ours() {  # run: ROUND.SLOT
  local r=$1 rc=0
  "${mpirun[@]}" "$gdsb" --out "$work/ours-$r" --io-dir "$dir" --aggregate --io-modes 1 \
    --storage-ops write,read --io-size "$block" --io-block "$xfer" --storage-time "$our_time" \
    >"$work/ours-$r.txt" 2>&1 || rc=$?
  # 3: a check failed on this node (a VM without a GPU fails some); the point's own status
  # says whether the shared-storage figure is good.
  if [ "$rc" != 0 ] && [ "$rc" != 3 ]; then
    tail -20 "$work/ours-$r.txt" >&2; echo "ior-compare: gdsb-cluster exit $rc (run $r)" >&2; exit 1
  fi
}

echo "machine: $(nproc) CPUs, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -r), $(df -T "$dir" | awk 'NR==2 {print $1 " " $2}'); $(date -u '+%F %H:%M UTC')"
echo "IOR $ior_commit; NP=$np BLOCK=$block XFER=$xfer ROUNDS=$rounds DIR=$dir"
[ "$overwrite" = 1 ] && echo "IOR fill: ${mpirun[*]} $ior -a POSIX --posix.odirect -F -b $block -t $xfer -w -k -i 1 -o $dir/ior-compare.dat"
echo "IOR:  ${mpirun[*]} $ior -a POSIX --posix.odirect -F -b $block -t $xfer -w -r ${fsync[*]} -C -i 1 $([ "$overwrite" = 1 ] && echo "-E ")${ior_deadline[*]} -o $dir/ior-compare.dat -O summaryFormat=JSON -O summaryFile=..."
[ -n "$only" ] || echo "ours: ${mpirun[*]} $gdsb --out OUT --io-dir $dir --aggregate --io-modes 1 --storage-ops write,read --io-size $block --io-block $xfer --storage-time $our_time"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for r in $(seq 1 "$rounds"); do
  echo "ior-compare: round $r/$rounds" >&2
  if [ -n "$only" ]; then order=(ior)
  elif [ $((r % 2)) -eq 1 ]; then order=(ior ours ours ior)
  else order=(ours ior ior ours); fi
  echo "${order[*]}" >"$work/order-$r"
  for slot in "${!order[@]}"; do "run_${order[$slot]}" "$r.$((slot + 1))"; done
done
echo "load average before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$work" "$rounds" "$np" "$tol" "$only" <<'PY'
import csv, json, math, statistics, sys
work, rounds, np, tol, only = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
MIB_TO_GB = 1048576 / 1e9          # IOR's MiB/s -> GB/s (1e9 B/s)
OPS = ("write", "read")

def ior(run):
    s = json.load(open(f"{work}/ior-{run}.json"))
    res = {x["access"]: x for x in s["tests"][0]["Results"]}  # -i 1: one result per access
    # Each rank's own time for the phase (open to close): the fastest against the slowest
    # shows how long the phase ran with fewer than all ranks busy, a tail that IOR's figure
    # includes and ours (which stops every rank when the first reaches its limit) does not.
    ranks = {}
    for row in csv.DictReader(open(f"{work}/ior-{run}-ranks.csv")):
        ranks.setdefault(row["access"], []).append(float(row["runtime-with-openclose"]))
    return {op: (res[op]["bwMiB"] * MIB_TO_GB, f"ranks {min(ranks[op]):.2f}-{max(ranks[op]):.2f} s")
            for op in OPS}

def ours(run):
    c = json.load(open(f"{work}/ours-{run}/cluster.json"))
    pts = c.get("shared_storage", {}).get("points", [])
    got = {}
    for op in OPS:
        p = [x for x in pts if x.get("op") == op and x.get("mode") == 1 and x.get("ranks") == np]
        if not p:
            have = ", ".join(f"{x.get('op')} -x {x.get('mode')} on {x.get('nodes')} node(s) of {x.get('ranks')} ranks"
                             for x in pts) or "none"
            got[op] = (None, f"no point of {np} ranks, mode 1, op {op} in cluster.json (points: {have})")
        elif p[0].get("status") != "ok":
            got[op] = (None, f"{p[0].get('status')}: {p[0].get('reason', '')}")
        else:
            got[op] = (p[0]["aggregate_gb_s"], f"{p[0].get('bytes', 0) / 2**20:.0f} MiB")
    return got

def gmean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))

# rows[r][op] = (ior figures, our figures, order effect, notes)
bad = False
per_round = []
for r in range(1, rounds + 1):
    order = open(f"{work}/order-{r}").read().split()
    runs = [ior(f"{r}.{i + 1}") if t == "ior" else ours(f"{r}.{i + 1}") for i, t in enumerate(order)]
    row = {}
    for op in OPS:
        fig = [run[op][0] for run in runs]
        notes = [f"{t} {run[op][1]}" for t, run in zip(order, runs) if run[op][0] is None or t == "ours"]
        i_f = [f for t, f in zip(order, fig) if t == "ior"]
        o_f = [f for t, f in zip(order, fig) if t == "ours"]
        effect = None
        if len(fig) == 4 and None not in fig:
            effect = math.sqrt(fig[1] / fig[0] * fig[3] / fig[2])
        row[op] = (i_f, o_f, effect, notes)
    per_round.append((order, row))

fmt = lambda xs: ", ".join("-" if x is None else f"{x:.3f}" for x in xs)
if only:
    print("| round | op | IOR GB/s |")
    print("|---:|---|---:|")
    for r, (order, row) in enumerate(per_round, 1):
        for op in OPS:
            print(f"| {r} | {op} | {fmt(row[op][0])} |")
    sys.exit(0)

print(f"| round (order) | op | IOR GB/s (runs) | gdsb-cluster GB/s (runs) | IOR mean | gdsb-cluster mean | "
      f"ratio | within {tol:g}% | order effect (2nd/1st) | gdsb-cluster note |")
print("|---|---|---|---|---:|---:|---:|---|---:|---|")
means = {op: [] for op in OPS}
for r, (order, row) in enumerate(per_round, 1):
    tag = ", ".join("IOR" if t == "ior" else "ours" for t in order)
    for op in OPS:
        i_f, o_f, effect, notes = row[op]
        eff = "-" if effect is None else f"{effect:.3f}"
        if None in o_f:
            bad = True  # a point that did not measure is a failure whatever the medians say
            print(f"| {r} ({tag}) | {op} | {fmt(i_f)} | {fmt(o_f)} | {gmean(i_f):.3f} | - | - | no "
                  f"| {eff} | {'; '.join(notes)} |")
            continue
        mi, mo = gmean(i_f), gmean(o_f)
        ratio = mo / mi
        ok = abs(ratio - 1) * 100 <= tol
        bad |= not ok and rounds == 1
        means[op].append((mi, mo, effect))
        print(f"| {r} ({tag}) | {op} | {fmt(i_f)} | {fmt(o_f)} | {mi:.3f} | {mo:.3f} | {ratio:.3f} | "
              f"{'yes' if ok else 'no'} | {eff} | {'; '.join(notes)} |")
if rounds > 1:
    # The rounds' medians: on a shared machine one round may fall on a burst of other work;
    # the median over the rounds is the steadier figure.
    med = statistics.median
    for op in OPS:
        m = means[op]
        if not m:
            continue
        mi, mo = med(x[0] for x in m), med(x[1] for x in m)
        effects = [x[2] for x in m if x[2] is not None]
        bad |= abs(mo / mi - 1) * 100 > tol
        print(f"| median | {op} | | | {mi:.3f} | {mo:.3f} | {mo / mi:.3f} | "
              f"{'yes' if abs(mo / mi - 1) * 100 <= tol else 'no'} | "
              f"{med(effects):.3f} | median of the per-round ratios {med(x[1] / x[0] for x in m):.3f} |")
print(f"\nratio = gdsb-cluster / IOR of each tool's geometric mean over its two runs of the round; "
      f"order effect = geometric mean of (second run / first run) over the round's two pairs "
      f"(slots 1-2 and 3-4), the tools' difference cancelling: 1.00 = the order does not matter; "
      f"raw outputs in {work}")
sys.exit(3 if bad else 0)
PY
