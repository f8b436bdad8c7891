#!/usr/bin/env bash
# gdsb-io --gpus all --html on 8 fake GPUs (issue 43): the page a person opens shows the node
# figure it was run for first. Writes the page, then checks it with the report pages' browser
# test (console clean, self-check ok, screenshots kept), which also requires an io page with
# a node object to open with the node section: a row per GPU and a chart.
# Usage: node_browser_test.sh GDSB_IO GDSB_REPORT REPORT_FIXTURES WORKDIR
set -uo pipefail
io=$1 report=$2 fixtures=$3 work=$4
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work/data" || exit 1
echo '{"devices": 8}' >"$work/fake8.json"
"$io" --gpus all --fake-gpu "$work/fake8.json" -D "$work/data" -x 2,1 -s 8M -i 1M -T 1 -q \
  --json "$work/node.json" --html "$work/node.html" >/dev/null || { echo "FAIL: gdsb-io --gpus all --html"; exit 1; }
grep -q '<section id="node">' "$work/node.html" || { echo "FAIL: no node section in node.html"; exit 1; }
exec bash "$here/../report/browser_test.sh" "$report" "$fixtures" "$work/screenshots" "$work/node.html"
