#!/usr/bin/env bash
# cluster.html in headless Chromium: 12 generated nodes (bench/make_node_reports.py, from a
# real singleton node report) aggregated with --from, then checked by the report pages'
# browser test (console clean, self-check ok, heat map present, screenshots kept); and 100
# nodes, whose heat maps summarise.
# Usage: browser_test.sh GDSB_CLUSTER MAKE_CLUSTER_FIXTURE GDSB_REPORT REPORT_FIXTURES WORKDIR
set -uo pipefail
bin=$1 make_fixture=$2 report=$3 fixtures=$4 work=$5
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work" || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
"$make_fixture" "$work/fx" >/dev/null || exit 1
"$bin" --out "$work/one" --topo-input "sysfs-root=$work/fx/large/root" --fake-gpu "$work/fx/large/fake-gpu.json" \
  --p2p-size 64K --p2p-repetitions 1 --p2p-loops 1 -q >/dev/null || { echo "FAIL: singleton run"; exit 1; }
python3 "$here/../../bench/make_node_reports.py" "$work/one/nodes/"*.json 12 "$work/nodes" || exit 1
"$bin" --from "$work/nodes/"*.json --out "$work/agg" -q >/dev/null
[ -s "$work/agg/cluster.html" ] || { echo "FAIL: no cluster.html"; exit 1; }
# Beyond 64 nodes the heat maps summarise (each class's median, then the odd nodes) instead
# of drawing a row per node; docs/PERFORMANCE.md has the page of 10,000 in the browser.
python3 "$here/../../bench/make_node_reports.py" "$work/one/nodes/"*.json 100 "$work/nodes100" --summary-only || exit 1
"$bin" --from "$work/nodes100/"*.json --out "$work/agg100" -q >/dev/null
grep -q "100 nodes: each class&#39;s median, then the 4 odd node(s)\|100 nodes: each class's median, then the 4 odd node(s)" \
  "$work/agg100/cluster.html" || { echo "FAIL: the heat maps of 100 nodes are not summarised"; exit 1; }
cp "$work/agg100/cluster.html" "$work/agg100/cluster100.html"  # its own page name in the browser test
exec bash "$here/../report/browser_test.sh" "$report" "$fixtures" "$work/screenshots" "$work/agg/cluster.html" \
  "$work/agg100/cluster100.html"
