#!/usr/bin/env bash
# The shared-storage phase (issue 26) under a real mpirun -np 4 on one directory of this
# machine's disk, which the 4 ranks share as they would share a cluster file system. Ranks of
# one host are one node (issue 34): to stand for 4 nodes, each rank reads a recording of its
# own (one healthy 2-GPU box under 4 paths, --topo-input sysfs-root=DIR/n{rank}):
#  1. --scale auto --demand-per-gpu --model-bytes: points at 1, 2 and 4 nodes for writes and
#     reads, the GPU count, the checkpoint; check_storage.py recomputes every aggregate from the
#     node reports (bytes over the earliest start to the latest end) and must agree to 1%;
#     the same with one shared file split by rank; gdsb-cluster --from on the node reports
#     gives the same points; cluster.json's shared_storage.storage is the mount findmnt names
#     for the directory (issue 41);
#  2. a throttled storage made by the kernel: two cgroup-v1 blkio groups, each limited to R
#     bytes/s of reads from the disk under the directory; ranks 0 and 2 in one, 1 and 3 in the
#     other (two servers of R each). The curve must read R, 2R, 2R: scaling stops at 4 nodes,
#     bound by the storage. Skipped, with the reason, where cgroup v1 blkio is not writable;
#  3. bad input: --scale above N and a demand of 0 are usage errors (exit 2); a node report
#     whose clock is 100 s behind makes a negative window: the node is named (exit 3).
# Usage: storage_mpi_test.sh GDSB_CLUSTER MAKE_CLUSTER_FIXTURE WORKDIR
set -uo pipefail
bin=$1 make_fixture=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work/io" "$work/rec" || exit 1
"$make_fixture" "$work/fx" >/dev/null || { echo "FAIL: make_cluster_fixture"; exit 1; }
for n in 0 1 2 3; do ln -s "$work/fx/node0/root" "$work/rec/n$n"; done
nodes=(--topo-input "sysfs-root=$work/rec/n{rank}")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# --min-deviation 50: the io ladder of 4 ranks on one busy 2-core machine is not a fleet to judge.
quick=("${nodes[@]}" --p2p-size 64K --p2p-repetitions 1 --p2p-loops 1 --no-hwloc --phase-timeout 60 --min-deviation 50 -q)

# 1. The aggregate, the curve, the GPU count and the checkpoint.
start=$SECONDS
timeout 150 mpirun --allow-run-as-root --oversubscribe -np 4 "$bin" --out "$work/out" --io-dir "$work/io" \
  --io-modes 1 --io-size 32M --io-block 1M --storage-time 1 --scale auto --demand-per-gpu 100MB/s \
  --model-bytes 64M "${quick[@]}" >"$work/run.log" 2>&1
rc=$?
echo "mpirun -np 4 --scale auto: exit $rc in $((SECONDS - start)) s"
[ "$rc" -eq 0 ] || fail "exit $rc, want 0 ($(tail -5 "$work/run.log"))"
python3 "$here/check_storage.py" "$work/out" --scale 1,2,4 --ops write,read --checkpoint ||
  fail "the recomputation from the node reports disagrees"
python3 - "$work/out/cluster.json" "$work/out/cluster.txt" <<'PY' || fail "cluster.json/txt"
import json, sys
d = json.load(open(sys.argv[1]))["shared_storage"]
g = d["gpus_fed"]
# 4 nodes of 2 GPUs (the recording's), each node's GPUs counted once
assert g["demand_per_gpu_gb_s"] == 0.1 and g["gpus"] >= 1 and g["gpus_measured"] == 8, g
assert "Measured on 4 node(s) with 8 GPU(s)" in g["text"], g["text"]
assert [c["op"] for c in d["curves"]] == ["write", "read"], d["curves"]
assert d["checkpoint"]["model_bytes"] == 64 << 20 and d["checkpoint"]["ranks"] == 4, d["checkpoint"]
txt = open(sys.argv[2]).read()
for want in ("Shared storage: ", "Scaling of read -x 1 (CPUONLY): 1 -> ", "GPUs fed: ", "Cluster-wide checkpoint"):
    assert want in txt, want
print("ok: cluster.json and cluster.txt carry the points, curves, GPU count and checkpoint")
PY
ls "$work/io" | grep -q . && fail "files left in the shared directory: $(ls "$work/io")"
# Issue 41: the storage rank 0 saw holding --io-dir, recorded for the history's series key,
# is what util-linux's findmnt (libmount, /proc/self/mountinfo) says holds the directory.
if ! findmnt -V >/dev/null 2>&1; then
  echo "skip: the recorded storage (util-linux findmnt is not installed: no oracle)"
else
  findmnt -J --nofsroot -o FSTYPE,SOURCE,TARGET -T "$work/io" >"$work/findmnt.json"
  python3 - "$work/out/cluster.json" "$work/findmnt.json" <<'PY' || fail "shared_storage.storage is not what findmnt says"
import json, sys
got = json.load(open(sys.argv[1]))["shared_storage"].get("storage")
m = json.load(open(sys.argv[2]))["filesystems"][0]
want = {"fs_type": m["fstype"], "source": m["source"], "mount_point": m["target"]}
assert got == want, (got, want)
print("ok: shared_storage.storage is the mount findmnt names for --io-dir: %s %s at %s" % (m["fstype"], m["source"], m["target"]))
PY
fi
for gauge in 'gdsb_cluster_storage_aggregate_gb_s{op="read",mode="1",nodes="4"} ' \
             'gdsb_cluster_storage_gpus_fed{demand_gb_s="0.1"} ' 'gdsb_cluster_storage_checkpoint_seconds{step="load"} '; do
  grep -qF "$gauge" "$work/out/cluster.prom" || fail "cluster.prom has no $gauge"
done

# One shared file split by rank (rank r at offset r x --io-size), at 2 and 4 nodes.
timeout 150 mpirun --allow-run-as-root --oversubscribe -np 4 "$bin" --out "$work/shared" --io-dir "$work/io" \
  --io-modes 1 --io-size 16M --io-block 1M --storage-time 1 --scale 2,4 --storage-layout shared-file \
  "${quick[@]}" >"$work/shared.log" 2>&1
rc=$?
[ "$rc" -eq 0 ] || fail "shared-file: exit $rc, want 0 ($(tail -5 "$work/shared.log"))"
python3 "$here/check_storage.py" "$work/shared" --scale 2,4 --ops write,read || fail "shared-file: figures disagree"
grep -q '"layout": "shared-file"' "$work/shared/cluster.json" || fail "shared-file: layout not reported"
ls "$work/io" | grep -q . && fail "shared-file: files left in the shared directory: $(ls "$work/io")"

# --from recomputes the same points from the node reports.
"$bin" --from "$work/out/nodes/"*.json --out "$work/from" --demand-per-gpu 100MB/s -q >/dev/null 2>&1
rc=$?
[ "$rc" -eq 0 ] || fail "--from exit $rc, want 0"
python3 - "$work/out/cluster.json" "$work/from/cluster.json" <<'PY' || fail "--from differs"
import json, sys
a, b = (json.load(open(p))["shared_storage"] for p in sys.argv[1:])
assert a["points"] == b["points"] and a["curves"] == b["curves"] and a["gpus_fed"] == b["gpus_fed"], "differ"
print("ok: --from gives the same points, curves and GPU count")
PY

# 3. Bad input.
out=$(mpirun --allow-run-as-root --oversubscribe -np 2 "$bin" --out "$work/bad1" --io-dir "$work/io" --scale 1,4 2>&1)
rc=$?
[ "$rc" -eq 2 ] || fail "--scale 1,4 on 2 ranks: exit $rc, want 2"
grep -q -- "--scale 1,4: 4 nodes, but this run has 2 ranks on 1 node(s)" <<<"$out" || fail "--scale message: $out"
out=$("$bin" --out "$work/bad2" --io-dir "$work/io" --demand-per-gpu 0 2>&1)
rc=$?
[ "$rc" -eq 2 ] || fail "--demand-per-gpu 0: exit $rc, want 2"
grep -q -- "--demand-per-gpu 0: expected a rate above 0" <<<"$out" || fail "demand message: $out"
[ -e "$work/bad2/cluster.json" ] && fail "a usage error wrote a report"
# A rank whose clock is 100 s behind: every time its report's samples carry moved back by 100 s.
mkdir -p "$work/skew"
python3 - "$work/out/nodes" "$work/skew" <<'PY'
import glob, json, os, sys
for path in sorted(glob.glob(sys.argv[1] + "/*.json")):
    doc = json.load(open(path))
    if doc["rank"] == 2:
        for where in (doc["storage"], doc["summary"]["storage"]):
            for s in where["samples"]:
                for t in ("start_unix_s", "end_unix_s", "ready_unix_s"):
                    s[t] -= 100
    json.dump(doc, open(os.path.join(sys.argv[2], os.path.basename(path)), "w"))
PY
out=$("$bin" --from "$work/skew/"*.json --out "$work/skew-out" 2>&1)
rc=$?
[ "$rc" -eq 3 ] || fail "a skewed clock: exit $rc, want 3"
node2=$(python3 -c "import json,glob;print([json.load(open(p))['node'] for p in glob.glob('$work/skew/*.json') if json.load(open(p))['rank']==2][0])")
grep -q "\[clock\] $node2: its clock disagrees" <<<"$out" || fail "the skewed node is not named: $out"
grep -Eq "started -(99\.9|100\.0)[0-9]* s from the nodes' median start" <<<"$out" || fail "the skew is not stated: $out"
grep -q "\[clock\]" <<<"$(grep -v "$node2" <<<"$out")" && fail "another node named for the clock: $out"

# 2. The throttled storage: two blkio groups of R bytes/s each.
cg=/sys/fs/cgroup/blkio
dev=$(findmnt -n -o MAJ:MIN -T "$work/io" 2>/dev/null | tr -d ' ')
disk=$(lsblk -n -o PKNAME "/dev/block/$dev" 2>/dev/null | head -1)
[ -n "$disk" ] && dev=$(lsblk -n -d -o MAJ:MIN "/dev/$disk" | tr -d ' ')
rate=$((40 * 1000 * 1000))
group="$cg/gdsb-storage-test.$$"
why=""
if [ ! -w "$cg" ]; then why="$cg is not writable (no cgroup v1 blkio here)"
elif [ -z "$dev" ]; then why="no block device under $work/io"
elif ! mkdir -p "$group/g0" "$group/g1" 2>/dev/null; then why="cannot create a blkio group under $cg"
elif ! { echo "$dev $rate" >"$group/g0/blkio.throttle.read_bps_device" &&
         echo "$dev $rate" >"$group/g1/blkio.throttle.read_bps_device"; } 2>/dev/null; then
  why="the kernel refused a read limit on device $dev"
fi
cleanup() {
  for g in g0 g1; do
    [ -f "$group/$g/cgroup.procs" ] && while read -r p; do echo "$p" >"$cg/cgroup.procs" 2>/dev/null; done <"$group/$g/cgroup.procs"
    rmdir "$group/$g" 2>/dev/null
  done
  rmdir "$group" 2>/dev/null
}
trap cleanup EXIT
if [ -n "$why" ]; then
  echo "SKIPPED the throttled run: $why"
else
  cat >"$work/in-group.sh" <<EOF
#!/usr/bin/env bash
echo \$\$ >"$group/g\$((OMPI_COMM_WORLD_RANK % 2))/cgroup.procs" && exec "\$@"
EOF
  start=$SECONDS
  timeout 150 mpirun --allow-run-as-root --oversubscribe -np 4 bash "$work/in-group.sh" "$bin" --out "$work/throttled" \
    --io-dir "$work/io" --io-modes 1 --io-size 32M --io-block 1M --storage-time 3 --storage-ops read --scale 1,2,4 \
    "${quick[@]}" >"$work/throttled.log" 2>&1
  rc=$?
  echo "throttled mpirun -np 4 (2 groups of $rate B/s on $dev): exit $rc in $((SECONDS - start)) s"
  [ "$rc" -eq 0 ] || fail "throttled run: exit $rc ($(tail -5 "$work/throttled.log"))"
  python3 "$here/check_storage.py" "$work/throttled" --scale 1,2,4 --ops read --expect-flat 0.04 ||
    fail "the throttled curve does not flatten where the limit says"
fi

[ "$failures" -eq 0 ] && echo "PASS: shared storage under mpirun" || echo "FAILED: $failures"
exit $((failures > 0))
