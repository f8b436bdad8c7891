#!/usr/bin/env bash
# gdsb-cluster without mpirun (an MPI singleton: a one-node cluster) and its bad inputs:
# each names the input, exits 2 (1 for runtime errors) and leaves the user's files alone.
# Usage: cli_test.sh GDSB_CLUSTER MAKE_CLUSTER_FIXTURE WORKDIR [GDSB_TOPO]
set -uo pipefail
bin=$1 make_fixture=$2 work=$3 topo_bin=${4:-}
rm -rf "$work" && mkdir -p "$work" || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
"$make_fixture" "$work/fx" >/dev/null || { echo "FAIL: make_cluster_fixture"; exit 1; }
failures=0
# expect RC PATTERN -- ARGS: runs gdsb-cluster, checks exit code and a stderr/stdout pattern.
expect() {
  local want=$1 pattern=$2
  shift 3
  local out rc
  out=$(timeout 60 "$bin" "$@" 2>&1)
  rc=$?
  if [ "$rc" -ne "$want" ] || ! grep -qE -- "$pattern" <<<"$out"; then
    echo "FAIL: gdsb-cluster $*: exit $rc (want $want), output: $(head -c 400 <<<"$out")"
    failures=$((failures + 1))
  else
    echo "ok:   exit $rc, '$pattern' ($*)"
  fi
}
topo=(--topo-input "sysfs-root=$work/fx/node0/root" --fake-gpu "$work/fx/node0/fake-gpu.json"
      --p2p-size 64K --p2p-repetitions 1 --p2p-loops 1 -q)

# A one-node cluster (singleton): healthy, nothing to compare, exit 0.
expect 0 "PASS: no odd node" -- --out "$work/one" "${topo[@]}"
[ -s "$work/one/cluster.html" ] && [ -s "$work/one/nodes/$(hostname).json" ] \
  || { echo "FAIL: singleton reports missing"; ls -R "$work/one"; failures=$((failures + 1)); }
# cluster.json's context says when the run began and when it ended, by MPI and by --from
# (issue 34: ended_at was empty).
"$bin" --from "$work/one/nodes/"*.json --out "$work/one-from" -q >/dev/null
for d in one one-from; do
  python3 - "$work/$d/cluster.json" <<'PY' || { echo "FAIL: $d/cluster.json: context times"; failures=$((failures + 1)); }
import json, re, sys
c = json.load(open(sys.argv[1]))["context"]
iso = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"
ok = re.fullmatch(iso, c.get("started_at", "")) and re.fullmatch(iso, c.get("ended_at", "")) \
    and c["started_at"] <= c["ended_at"]
print(("ok:   " if ok else "FAIL: ") + sys.argv[1] + ": started_at " + repr(c.get("started_at")) + ", ended_at " + repr(c.get("ended_at")))
sys.exit(0 if ok else 1)
PY
done
# Again into the same directory: its own earlier reports may be replaced.
expect 0 "PASS" -- --out "$work/one" "${topo[@]}"
# The class's known-good fingerprint, and the health check of the same node against it.
grep -q '"schema": "gdsbench.fingerprint/2"' "$work/one/fingerprint-class1.json" \
  || { echo "FAIL: no reference fingerprint"; ls "$work/one"; failures=$((failures + 1)); }
if [ -n "$topo_bin" ]; then
  out=$("$topo_bin" --sysfs-root "$work/fx/node0/root" --health --expect "$work/one/fingerprint-class1.json" 2>&1)
  rc=$?
  if [ "$rc" -ne 0 ] || ! grep -q "^gdsb: ok, 2 GPUs, 4 drives, 2 data NICs as expected" <<<"$out"; then
    echo "FAIL: gdsb-topo --health against the class reference: exit $rc: $out"; failures=$((failures + 1))
  else
    echo "ok:   gdsb-topo --health against fingerprint-class1.json: $out"
  fi
fi

# A phase that does not finish in time is reported as the node's error, not waited for.
echo '{"devices": 2, "copy_delay_us": 3000000}' >"$work/stuck.json"
expect 3 "node-error.*p2p: did not finish within --phase-timeout 2 s" -- --out "$work/stuck" \
  --topo-input "sysfs-root=$work/fx/node0/root" --fake-gpu "$work/stuck.json" --phase-timeout 2 \
  --p2p-size 64K --p2p-repetitions 1 --p2p-loops 1

# Bad inputs.
expect 2 "--out is required" -- "${topo[@]}"
expect 2 "KIND must be sysfs-root" -- --out "$work/bad1" --topo-input "sysfs=$work/fx/node0/root" -q
expect 2 "expected KIND=PATH of an existing" -- --out "$work/bad2" --topo-input "sysfs-root=$work/nope{rank}" -q
expect 2 "fake-gpu .*cannot open" -- --out "$work/bad3" --fake-gpu "$work/none.json" -q
echo '{"devices": "two"}' >"$work/bad.json"
expect 2 "expected a JSON object such as" -- --out "$work/bad4" --fake-gpu "$work/bad.json" -q
expect 2 "--io-modes '1,9'" -- --out "$work/bad5" "${topo[@]}" --io-modes 1,9
# A demand in "gb/s" could be bytes or bits (the project writes Gb/s for bits): refused.
expect 2 "100gb/s.*could be bytes or bits; write GB/s for bytes or Gb/s for bits" -- \
  --from "$work/one/nodes/"*.json --out "$work/bad-demand" --demand-per-gpu 100gb/s -q
expect 2 "--p2p-size" -- --out "$work/bad6" "${topo[@]}" --p2p-size 12Q
expect 2 "phase-timeout" -- --out "$work/bad7" "${topo[@]}" --phase-timeout 0
expect 2 "--from .*cannot open" -- --from "$work/missing.json" --out "$work/bad8"
echo 'not json' >"$work/garbage.json"
expect 2 "--from .*not JSON" -- --from "$work/garbage.json" --out "$work/bad9"
echo '{"schema": "gdsbench.topo/1"}' >"$work/topo.json"
expect 2 "not a gdsb-cluster node report" -- --from "$work/topo.json" --out "$work/bad10"
# A real node report whose summary block has a malformed field: the file and the field
# are named, and no report is written.
sed 's/"gpus": [0-9]*/"gpus": "two"/' "$work/one/nodes/$(hostname).json" >"$work/malformed.json"
expect 2 "--from $work/malformed.json: invalid gdsb-cluster node report: summary.hardware.gpus: expected a number, found a string" \
  -- --from "$work/malformed.json" --out "$work/bad11"
[ ! -e "$work/bad11/cluster.json" ] || { echo "FAIL: wrote reports from a malformed summary"; failures=$((failures + 1)); }
# A rank no int holds: a malformed field, never cast (undefined behaviour).
sed 's/"rank": [0-9-]*/"rank": 1e300/' "$work/one/nodes/$(hostname).json" >"$work/huge-rank.json"
expect 2 "--from $work/huge-rank.json: invalid gdsb-cluster node report: summary.rank: expected a whole number from -2147483648 to 2147483647, found 1e\\+300" \
  -- --from "$work/huge-rank.json" --out "$work/bad12"
# A user's file where a report goes is never overwritten.
mkdir -p "$work/user" && echo "my notes" >"$work/user/cluster.txt"
expect 2 "cluster.txt.*allow-overwrite" -- --from "$work/one/nodes/"*.json --out "$work/user"
[ "$(cat "$work/user/cluster.txt")" = "my notes" ] || { echo "FAIL: user file changed"; failures=$((failures + 1)); }
[ ! -e "$work/user/cluster.json" ] || { echo "FAIL: wrote reports after refusing"; failures=$((failures + 1)); }
expect 0 "PASS" -- --from "$work/one/nodes/"*.json --out "$work/user" --allow-overwrite -q

[ "$failures" -eq 0 ] && echo "PASS" || { echo "$failures failure(s)"; exit 1; }
