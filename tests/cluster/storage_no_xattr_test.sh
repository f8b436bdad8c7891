#!/usr/bin/env bash
# The shared-storage phase on a file system that keeps no user xattrs (issue 34): NFSv3, VAST
# and BeeGFS by default refuse them, and gdsbench's mark (user.gdsbench.created) cannot be set
# there. no_user_xattr.c, preloaded into every rank, makes each xattr call on a user.* name
# fail with EOPNOTSUPP as those clients do. On a real launcher (mpirun -np 4 by default; ci/
# slurm-test.sh passes srun -n 4), the four ranks of this one host are one node (issue 34),
# so --scale 1 is all four writing and reading at once:
#  1. both layouts (file-per-process, shared-file): every write and read point is ok, nothing
#     is left in the directory: the files this job's fill created are its own;
#  2. a user's file where rank 2's fill goes: the fill refuses it, the phase stops on every
#     rank with an error naming the file and the rank (no point measured), and the file is
#     left as it was; with gdsb-cluster's --allow-overwrite the same run succeeds;
#  3. gdsb-io, preloaded alike, still refuses to overwrite a user's existing file (exit 2).
# Usage: storage_no_xattr_test.sh GDSB_CLUSTER NO_XATTR_SO GDSB_IO WORKDIR [LAUNCHER...]
set -uo pipefail
bin=$(realpath "$1") so=$(realpath "$2") io_bin=$(realpath "$3") work=$(realpath -m "$4")
shift 4
launcher=("$@")
[ ${#launcher[@]} -gt 0 ] || launcher=(mpirun --allow-run-as-root --oversubscribe -np 4)
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work/io" || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# --min-deviation 1000 --z-threshold 100: four ranks' read ladders on one busy 2-core machine
# are no fleet to find an outlier in; what is tested here is the storage phase.
quick=(--p2p-size 64K --p2p-repetitions 1 --p2p-loops 1 --no-hwloc --phase-timeout 60 --min-deviation 1000 --z-threshold 100
       --io-modes 1 --io-size 16M --io-block 1M --io-time 0.2 --storage-time 1 --storage-ops write,read -q)
# Each rank, not the launcher, runs with the preload (env: the same under mpirun and srun).
ranks() { timeout 150 "${launcher[@]}" env LD_PRELOAD="$so" "$bin" "$@"; }

# The preload does what NFSv3 does, and only that.
LD_PRELOAD=$so python3 - "$work/probe" <<'PY' || { echo "FAIL: the preload does not refuse user xattrs"; exit 1; }
import errno, os, sys
open(sys.argv[1], "w").close()
for call in (lambda: os.setxattr(sys.argv[1], "user.gdsbench.created", b"1"),
             lambda: os.getxattr(sys.argv[1], "user.gdsbench.created")):
    try:
        call()
        sys.exit("a user xattr call succeeded under the preload")
    except OSError as e:
        assert e.errno == errno.EOPNOTSUPP, e
os.remove(sys.argv[1])
PY

# Every sample of the given ops in the node reports is ok; prints why not.
samples_ok() {
  python3 - "$1" "$2" <<'PY'
import glob, json, sys
out, ops = sys.argv[1], sys.argv[2].split(",")
seen, bad = set(), []
for path in sorted(glob.glob(out + "/nodes/*.json")):
    doc = json.load(open(path))
    for p in doc["phases"]:
        if p["name"] == "storage" and p["status"] != "ok":
            bad.append(f"rank {doc['rank']}: storage phase {p['status']}: {p['error']}")
    for s in doc["storage"]["samples"]:
        seen.add(s["op"])
        if s["status"] != "ok":
            bad.append(f"rank {doc['rank']}: {s['op']} -x {s['mode']} at {s['nodes']}: {s['status']}: {s['reason']}")
bad += [f"no {op} sample" for op in ops if op not in seen]
print("\n".join(bad[:6]))
sys.exit(1 if bad else 0)
PY
}

# 1. Both layouts: every write and read point succeeds.
for layout in file-per-process shared-file; do
  start=$SECONDS
  ranks --out "$work/$layout" --io-dir "$work/io" --scale 1 --storage-layout "$layout" "${quick[@]}" \
    >"$work/$layout.log" 2>&1
  rc=$?
  echo "${launcher[*]} $layout without user xattrs: exit $rc in $((SECONDS - start)) s"
  [ "$rc" -eq 0 ] || fail "$layout: exit $rc, want 0 ($(tail -3 "$work/$layout.log"))"
  why=$(samples_ok "$work/$layout" write,read) || fail "$layout: $why"
  python3 "$here/check_storage.py" "$work/$layout" --scale 1 --ops write,read >/dev/null ||
    fail "$layout: the figures disagree with the node reports"
  ls "$work/io" | grep -q . && fail "$layout: files left in the directory: $(ls "$work/io")"
done

# 2. A user's file where rank 2's fill goes: refused, the phase stops everywhere, the file stays.
user_file=$work/io/gdsb-cluster.storage.2.dat
echo "a user's data" >"$user_file"
ranks --out "$work/foreign" --io-dir "$work/io" --scale 1 "${quick[@]}" >"$work/foreign.log" 2>&1
rc=$?
echo "${launcher[*]} with a user's file at rank 2's fill: exit $rc"
[ "$rc" -ne 0 ] || fail "a refused fill: exit 0, want a failure"
[ "$(cat "$user_file" 2>/dev/null)" = "a user's data" ] || fail "the user's file was changed or removed"
python3 - "$work/foreign" "$user_file" <<'PY' || fail "a refused fill did not stop the phase with a named error"
import glob, json, sys
out, user_file = sys.argv[1], sys.argv[2]
for path in sorted(glob.glob(out + "/nodes/*.json")):
    doc = json.load(open(path))
    err = next(p for p in doc["phases"] if p["name"] == "storage")["error"]
    if doc["rank"] == 2:
        want = ["the untimed fill could not write " + user_file, "refusing to overwrite", "--allow-overwrite"]
    else:
        want = ["the untimed fill failed on rank 2", "stopped before its points"]
    for w in want:
        assert w in err, f"rank {doc['rank']}: {w!r} not in {err!r}"
    ops = {s["op"] for s in doc["storage"]["samples"]}
    assert not ops & {"write", "read"}, f"rank {doc['rank']}: points measured after a failed fill: {ops}"
print("ok: rank 2 names the file and the refusal, the others name rank 2, no point was measured")
PY
ranks --out "$work/overwrite" --io-dir "$work/io" --scale 1 --allow-overwrite "${quick[@]}" \
  >"$work/overwrite.log" 2>&1
rc=$?
[ "$rc" -eq 0 ] || fail "--allow-overwrite: exit $rc, want 0 ($(tail -3 "$work/overwrite.log"))"
why=$(samples_ok "$work/overwrite" write,read) || fail "--allow-overwrite: $why"

# 3. gdsb-io's own protection holds without xattrs: a user's file is refused and kept.
echo "a user's data" >"$work/theirs.dat"
out=$(LD_PRELOAD=$so "$io_bin" -f "$work/theirs.dat" -x 1 -I 1 -s 1M -i 64K 2>&1)
rc=$?
[ "$rc" -eq 2 ] || fail "gdsb-io on a user's file: exit $rc, want 2 ($out)"
grep -q "refusing to overwrite $work/theirs.dat" <<<"$out" || fail "gdsb-io message: $out"
[ "$(cat "$work/theirs.dat")" = "a user's data" ] || fail "gdsb-io changed the user's file"

[ "$failures" -eq 0 ] && echo "PASS: shared storage without user xattrs (${launcher[*]})" || echo "FAILED: $failures"
exit $((failures > 0))
