#!/usr/bin/env bash
# The main job: builds gdsbench and surveys this machine. Installs what is missing first.
#   1. gdsb-io survey: every transfer type at 1 MiB sequential and 4 KiB random reads
#      (types that cannot run here are listed as waived with the reason);
#   2. gdsb-topo: the PCIe/GDS platform checks;
#   3. gdsb-p2p: peer-to-peer capabilities (measured with --measure where GPUs exist);
#   4. gdsb-report: one self-contained HTML page per report.
# Everything goes to ./gdsb-report/ (io, topo, p2p as .json and .html). Arguments are
# passed to the gdsb-io survey. Exit 0 when every step ran: failed platform checks are
# findings shown in the reports, not a failure of this job; any tool error exits non-zero.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/ci/install-deps.sh"
(cd "$root" && cmake --preset release >/dev/null &&
 cmake --build --preset release -j "$(nproc)" --target gdsb-io gdsb-topo gdsb-p2p gdsb-report \
   >/dev/null)
bin=$root/build/release/apps
out=gdsb-report
mkdir -p "$out"

echo "== gdsb-io survey"
"$bin/gdsb-io/gdsb-io" "$@"

echo; echo "== gdsb-topo"
rc=0; "$bin/gdsb-topo/gdsb-topo" --json "$out/topo.json" || rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || exit "$rc"   # 3: a check failed, reported above

echo; echo "== gdsb-p2p"
measure=()
command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 && measure=(--measure)
"$bin/gdsb-p2p/gdsb-p2p" "${measure[@]}" --json "$out/p2p.json"

echo
for kind in io topo p2p; do
  "$bin/gdsb-report/gdsb-report" html "$out/$kind.json" -o "$out/$kind.html"
done
echo "survey: reports in $(cd "$out" && pwd)/{io,topo,p2p}.{json,html}"
