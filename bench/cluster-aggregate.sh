#!/usr/bin/env bash
# gdsb-cluster --from at fleet scale: N generated node reports (default 10000), each made
# from one real node report of the HGX H100 recording (a gdsb-cluster singleton run over
# tests/topo/fixtures/real/hgx-h100-lspci-vvv.txt with 8 fake GPUs), next to a peer that
# only parses the same files (Python's json module). Then the two cases that blew up:
#   - every node fails the same check (a VM fleet without nvidia-fs): one fleet-wide line;
#   - 1000 reports with one identity (one file passed 1000 times): named, counted once.
# Prints wall, CPU and peak RSS of each, against the target of 5 s and 1 GiB (issue 28: for
# 25,000; 10,000 within 2.5 s), and gdsb-cluster's own --timing line: wall and CPU of its
# stages (parse, fold, write).
# N may be a list, "2500,10000,25000": three runs for each, one set on disk at a time; the
# peer and the two hard cases run for the first N only (PEER=0 skips the peer, 116 s at
# 25,000). Usage: bench/cluster-aggregate.sh BUILD_DIR [N[,N...]] [WORKDIR]
# (N=10000 writes ~7.5 GB, 25000 ~19 GB: 0.75 MB a report since the node figure phase)
set -euo pipefail
build=$1 sizes=${2:-10000} work=${3:-$(mktemp -d)}
IFS=, read -r -a sizes <<<"$sizes"
n=${sizes[0]}
here=$(cd "$(dirname "$0")" && pwd)
hgx=$here/../tests/topo/fixtures/real/hgx-h100-lspci-vvv.txt
bin=$build/apps/gdsb-cluster/gdsb-cluster
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
rm -rf "$work/fx" "$work/tpl" "$work/nodes" "$work/agg"
"$build/tests/cluster/make_cluster_fixture" "$work/fx" >/dev/null  # its 8-GPU fake-gpu.json
"$bin" --out "$work/tpl" --topo-input "lspci-text=$hgx" --no-hwloc --no-nvml \
  --fake-gpu "$work/fx/large/fake-gpu.json" --io-dir "$work" --io-modes 1,3 --io-size 8M --io-time 0.5 \
  --p2p-size 64K --p2p-repetitions 1 --p2p-loops 1 -q >/dev/null || true  # exit 3 is fine here
template=("$work/tpl/nodes/"*.json)
echo "machine: $(nproc) CPUs, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -r); $(date -u '+%F %H:%M UTC')"
measure() {
  local label=$1
  shift
  /usr/bin/time -f "%e %U %S %M" -o "$work/time.txt" "$@" >/dev/null 2>"$work/stderr.txt" || true
  read -r wall user sys rss < <(tail -1 "$work/time.txt")  # after "Command exited with ..."
  printf '%-40s wall %6.2f s  cpu %6.2f s  peak RSS %7d KiB  %s\n' "$label" "$wall" \
    "$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')" "$rss" \
    "$(awk -v w="$wall" -v r="$rss" 'BEGIN { print (w <= 5 && r <= 1048576) ? "(<= 5 s, 1 GiB)" : "(OVER 5 s or 1 GiB)" }')"
  grep -h '^gdsb-cluster timing' "$work/stderr.txt" | sed 's/^/  /' || true
}
verdict() { tail -1 "$work/agg/cluster.txt"; grep -c . "$work/agg/cluster.txt" | sed 's/^/  cluster.txt lines: /'; }

for size in "${sizes[@]}"; do
  rm -rf "$work/nodes"
  python3 "$here/make_node_reports.py" "${template[0]}" "$size" "$work/nodes"
  echo "$size node reports, $(du -sh "$work/nodes" | cut -f1) in all, from $(basename "${template[0]}") ($(du -h "${template[0]}" | cut -f1))"
  cat "$work"/nodes/*.json >/dev/null  # both read from the page cache
  for i in 1 2 3; do
    measure "gdsb-cluster --from, $size (run $i)" "$bin" --from "$work/nodes/"*.json --out "$work/agg" \
      --allow-overwrite --timing
  done
  verdict
done
if [ "${PEER:-1}" != 0 ]; then
  if [ "${sizes[-1]}" != "$n" ]; then  # the set on disk is the last N's
    rm -rf "$work/nodes"
    python3 "$here/make_node_reports.py" "${template[0]}" "$n" "$work/nodes"
    cat "$work"/nodes/*.json >/dev/null
  fi
  measure "peer: python json.load, $n" python3 -c "
import glob, json
for f in glob.glob('$work/nodes/*.json'): json.load(open(f))"
fi

rm -rf "$work/nodes"
python3 "$here/make_node_reports.py" "${template[0]}" "$n" "$work/nodes" --every-node-fails nvidia-fs
cat "$work"/nodes/*.json >/dev/null
measure "--from, $n, all fail nvidia-fs" "$bin" --from "$work/nodes/"*.json --out "$work/agg" --allow-overwrite
verdict
grep -m1 'fleet-wide\]' "$work/agg/cluster.txt" | cut -c1-160

reports=("$work/nodes/"*.json)
one=${reports[0]}
dups=()
for _ in $(seq 1000); do dups+=("$one"); done
measure "--from, one report 1000 times" "$bin" --from "${dups[@]}" --out "$work/agg" --allow-overwrite
verdict
grep -m1 'duplicate-node\]' "$work/agg/cluster.txt" | cut -c1-160
echo "  cluster.junit.xml: $(stat -c %s "$work/agg/cluster.junit.xml") bytes, cluster.json: $(stat -c %s "$work/agg/cluster.json") bytes"
rm -rf "$work/nodes"
