#!/usr/bin/env bash
# gdsb-topo --health --timeout T when the collecting child sleeps uninterruptibly in the kernel
# (issue 34), the hung-driver case the deadline exists for. The fake NVML would hang the child
# in nvmlDeviceGetVbiosVersion (GDSB_FAKE_NVML_FAULT=hang), so it never finishes on its own;
# the test moves the child into a cgroup-v1 freezer group as soon as it is forked and freezes
# it: a frozen task is in D state and SIGKILL does not end
# it until the group thaws, as a task stuck in a driver's ioctl. The check must still end
# within T + 1 s, with the node drained (scontrol called with the reason) and the metrics
# file saying the check failed (collected 0), replacing the last green one.
# cgroup v2's cgroup.freeze lets SIGKILL through (a frozen v2 task dies of it), so it cannot
# stand for a hung driver: where no v1 freezer is writable the test says so and skips (77).
# Usage: health_hang_test.sh GDSB_TOPO FAKE_NVML WORKDIR [--real-slurm NODE]
#   without --real-slurm, scontrol is a stand-in that records its arguments; with it (ci/
#   slurm-test.sh), the real scontrol drains NODE and the test reads its state back and
#   resumes it.
set -uo pipefail
bin=$1 nvml=$2 work=$3
real_node=""
[ "${4:-}" = --real-slurm ] && real_node=$5
timeout_s=3
rm -rf "$work" && mkdir -p "$work" || exit 1
freezer=/sys/fs/cgroup/freezer
group=$freezer/gdsb-health-hang.$$
if ! [ -w "$freezer" ] || ! mkdir "$group" 2>/dev/null; then
  echo "SKIP: no writable cgroup-v1 freezer at $freezer (cgroup v2's freeze lets SIGKILL through," \
       "so it cannot hold a process as a hung driver does)"
  exit 77
fi
parent="" child=""
cleanup() {
  echo THAWED >"$group/freezer.state" 2>/dev/null
  [ -n "$parent" ] && wait "$parent" 2>/dev/null
  for _ in $(seq 50); do [ -s "$group/cgroup.procs" ] || break; sleep 0.1; done
  rmdir "$group" 2>/dev/null
}
trap cleanup EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

if [ -n "$real_node" ]; then
  export SLURMD_NODENAME=$real_node
else
  mkdir -p "$work/bin"
  printf '#!/bin/sh\nfor a in "$@"; do printf "%%s\\n" "$a"; done >"%s"\n' "$work/scontrol.argv" >"$work/bin/scontrol"
  chmod 755 "$work/bin/scontrol"
  export PATH=$work/bin:$PATH SLURMD_NODENAME=gpu-node-07
fi
common=(--nvml-lib "$nvml" --no-hwloc)
"$bin" --save-fingerprint "$work/good.json" "${common[@]}" >/dev/null || { echo "FAIL: --save-fingerprint"; exit 1; }
"$bin" --health --expect "$work/good.json" "${common[@]}" --openmetrics "$work/gdsb.prom" >/dev/null ||
  { echo "FAIL: the healthy check did not pass"; exit 1; }
grep -q '^gdsb_health_collected 1$' "$work/gdsb.prom" || { echo "FAIL: no green metrics to replace"; exit 1; }

# The hung check: the child is frozen while it waits in NVML.
us() { local t=${EPOCHREALTIME/./}; echo $((10#$t)); }  # microseconds, bash 5
start=$(us)
GDSB_FAKE_NVML_FAULT=hang "$bin" --health --expect "$work/good.json" "${common[@]}" --openmetrics "$work/gdsb.prom" \
  --slurm-drain --timeout "$timeout_s" >"$work/health.out" 2>&1 &
parent=$!
for _ in $(seq 100); do
  child=$(pgrep -P "$parent" | head -1)
  [ -n "$child" ] && break
  sleep 0.02
done
[ -n "$child" ] || { fail "the check forked no collecting child"; exit 1; }
echo "$child" >"$group/cgroup.procs" && echo FROZEN >"$group/freezer.state" || { fail "cannot freeze $child"; exit 1; }
for _ in $(seq 50); do [ "$(cat "$group/freezer.state")" = FROZEN ] && break; sleep 0.02; done
echo "child $child: $(grep '^State' /proc/"$child"/status 2>/dev/null)"
grep -q '^State:.*D' /proc/"$child"/status || fail "the child is not in uninterruptible sleep"

# The check must end by T + 1 s whatever the child does.
limit=$(( (timeout_s + 1) * 1000000 ))
rc=""
while [ $(( $(us) - start )) -lt "$limit" ]; do
  if ! kill -0 "$parent" 2>/dev/null; then wait "$parent"; rc=$?; parent=""; break; fi
  sleep 0.05
done
secs() { printf '%d.%02d' $(( ($(us) - start) / 1000000 )) $(( ($(us) - start) % 1000000 / 10000 )); }
if [ -z "$rc" ]; then
  fail "the check did not end within $timeout_s + 1 s of its start: it waits for the frozen child"
  echo THAWED >"$group/freezer.state"
  wait "$parent"
  rc=$?
  parent=""
  echo "(it ended $(secs) s after its start, once the child was thawed)"
else
  echo "the check ended in $(secs) s (deadline $timeout_s s): exit $rc"
fi
[ "$rc" = 3 ] || fail "exit $rc, want 3 ($(cat "$work/health.out"))"
# The step is wherever the freezer caught the child (reading sysfs, or waiting in NVML).
grep -q "^gdsb: .*: no answer within .* s (--timeout; a hung driver?); .* left behind$" "$work/health.out" ||
  fail "the report does not name the step and the child left behind: $(cat "$work/health.out")"
grep -q '^gdsb_health_collected 0$' "$work/gdsb.prom" || fail "the metrics still say collected: $(grep collected "$work/gdsb.prom")"
grep -q '^gdsb_health_problems 1$' "$work/gdsb.prom" || fail "the metrics do not count the problem"
if [ -n "$real_node" ]; then
  state=$(scontrol show node "$real_node")
  grep -q 'State=[A-Z+]*DRAIN' <<<"$state" || fail "node not drained: $(grep -o 'State=[^ ]*' <<<"$state")"
  grep -q 'Reason=gdsb: .*: no answer within' <<<"$state" ||
    fail "no gdsb reason: $(grep -o 'Reason=.*' <<<"$state")"
  echo "drain: $(grep -o 'State=[^ ]*' <<<"$state"), $(grep -o 'Reason=.*' <<<"$state" | cut -c1-90)"
  scontrol update NodeName="$real_node" State=RESUME || fail "scontrol resume"
else
  grep -q '^State=DRAIN$' "$work/scontrol.argv" 2>/dev/null || fail "scontrol was not asked to drain"
  grep -q '^Reason=gdsb: .*: no answer within .* left behind$' "$work/scontrol.argv" ||
    fail "the drain reason: $(cat "$work/scontrol.argv" 2>/dev/null)"
fi

[ "$failures" -eq 0 ] && echo "PASS: a frozen collecting child does not hold the health check" || echo "FAILED: $failures"
exit $((failures > 0))
