#!/usr/bin/env bash
# gdsb-cluster --from on N generated node reports (default 1000), each made from one real
# node report of an 8-GPU recorded box (fake GPU service), next to a peer that only parses
# the same files (Python's json module). Prints wall, CPU and peak RSS.
# Usage: bench/cluster-aggregate.sh BUILD_DIR [N] [WORKDIR]
set -euo pipefail
build=$1 n=${2:-1000} work=${3:-$(mktemp -d)}
here=$(cd "$(dirname "$0")" && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
rm -rf "$work/fx" "$work/tpl" "$work/nodes" "$work/agg"
"$build/tests/cluster/make_cluster_fixture" "$work/fx" >/dev/null
"$build/apps/gdsb-cluster/gdsb-cluster" --out "$work/tpl" --topo-input "sysfs-root=$work/fx/large/root" \
  --fake-gpu "$work/fx/large/fake-gpu.json" --io-dir "$work" --io-modes 1,3 --io-size 8M --io-time 0.5 \
  --p2p-size 64K --p2p-repetitions 1 --p2p-loops 1 -q >/dev/null
python3 "$here/make_node_reports.py" "$work/tpl/nodes/"*.json "$n" "$work/nodes"
echo "$n node reports, $(du -sh "$work/nodes" | cut -f1) in all; machine: $(nproc) CPUs, $(date -u +%F)"
cat "$work"/nodes/*.json >/dev/null  # both runs read from the page cache
measure() {
  local label=$1
  shift
  /usr/bin/time -f "%e %U %S %M" -o "$work/time.txt" "$@" >/dev/null 2>&1 || true
  read -r wall user sys rss < <(tail -1 "$work/time.txt")  # after "Command exited with ..."
  printf '%-28s wall %6.2f s  cpu %6.2f s  peak RSS %6d KiB\n' "$label" "$wall" "$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')" "$rss"
}
for i in 1 2 3; do
  measure "gdsb-cluster --from (run $i)" "$build/apps/gdsb-cluster/gdsb-cluster" --from "$work/nodes/"*.json --out "$work/agg" --allow-overwrite
  measure "python json.load (run $i)" python3 -c "
import glob, json
for f in glob.glob('$work/nodes/*.json'): json.load(open(f))"
done
