#!/usr/bin/env bash
# Renders every example document with gdsb-report and loads the page in headless Chromium:
# fails on any console message (the pages log nothing when healthy), on a missing self-check
# marker, or when charts (svg) or tables are missing. Keeps a desktop and a phone-width
# screenshot of each page, and Chromium's log, under ARTIFACT_DIR.
# Usage: browser_test.sh GDSB_REPORT FIXTURES_DIR ARTIFACT_DIR [PAGE.html...]
# Extra pages (e.g. gdsb-cluster's cluster.html) are checked the same way; a cluster page
# must also show its heat map, and one with shared_storage its Shared storage section's chart.
# Exit 0 pass, 1 fail, 77 skipped (no real browser; never on Debian, where one must run).
set -uo pipefail
bin=$1 fx=$2 out=$3
shift 3
extra=("$@")
rm -rf "$out" && mkdir -p "$out" || exit 1

is_debian() { grep -qx 'ID=debian' /etc/os-release 2>/dev/null; }
skip_or_fail() {
  if is_debian; then
    echo "FAIL: $1 (on Debian the chromium package must be installed: ci/install-deps.sh)"
    exit 1
  fi
  echo "SKIPPED: $1"
  exit 77
}

browser=""
for candidate in /usr/bin/chromium /usr/bin/chromium-browser; do
  [ -x "$candidate" ] || continue
  # Ubuntu's chromium packages are transitional wrappers around a snap, which cannot run
  # here (no snapd in containers); only a browser that answers --version counts.
  version=$(timeout 30 "$candidate" --headless --no-sandbox --version 2>/dev/null) || continue
  case "$version" in *Chromium*|*Chrome*) browser=$candidate; break ;; esac
done
[ -n "$browser" ] || skip_or_fail "no runnable Chromium at /usr/bin/chromium or /usr/bin/chromium-browser"
echo "browser: $browser ($version)"

profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
chrome() {
  timeout 90 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --hide-scrollbars \
    --user-data-dir="$profile" "$@"
}

# The pages: each example, plus a comparison rendered from two io examples.
pages=()
for f in io_dgx topo_switch_acs p2p_4gpu cluster_storage; do
  "$bin" html "$fx/$f.json" -o "$out/$f.html" >/dev/null || { echo "FAIL: gdsb-report html $f.json"; exit 1; }
  pages+=("$f")
done
"$bin" compare "$fx/io_dgx.json" "$fx/io_dgx_regressed.json" --html "$out/compare.html" >/dev/null \
  || { echo "FAIL: gdsb-report compare"; exit 1; }
pages+=(compare)
"$bin" compare "$fx/cluster_storage.json" "$fx/cluster_storage_regressed.json" --html "$out/compare-cluster.html" \
  >/dev/null || { echo "FAIL: gdsb-report compare of two cluster documents"; exit 1; }
pages+=(compare-cluster)
# The history page (issue 37): 24 nights of the io_dgx example's runs in 3% noise; from
# night 13 nvidia-fs is not loaded and GDS reads fall by a third.
python3 - "$fx/io_dgx.json" "$out/history-docs" <<'PY' || { echo "FAIL: writing the history's documents"; exit 1; }
import json, os, random, sys
base = json.load(open(sys.argv[1]))
os.makedirs(sys.argv[2], exist_ok=True)
rng = random.Random(37)
for night in range(24):
    d = json.loads(json.dumps(base))
    d["context"]["started_at"] = "2026-11-%02dT02:00:00Z" % (night + 1)
    if night >= 12:
        d["context"]["versions"]["nvidia_fs"] = "not loaded"
    for r in d["runs"]:
        if "result" not in r:
            continue
        r["result"]["timeseries"] = []
        r["result"]["histogram"] = []
        r.pop("repetitions", None)
        drop = 0.66 if night >= 12 and r["path_used"] == "gds-nvfs" else 1.0
        r["result"]["throughput_gib_s"] *= drop * (1 + 0.03 * rng.gauss(0, 1))
    json.dump(d, open(os.path.join(sys.argv[2], "night-%02d.json" % night), "w"))
PY
{ "$bin" history add "$out/history.db" "$out"/history-docs/*.json &&
  "$bin" history show "$out/history.db" --html "$out/history.html"; } >/dev/null ||
  { echo "FAIL: gdsb-report history add/show"; exit 1; }
pages+=(history)
for page in "${extra[@]}"; do
  name=extra-$(basename "$page" .html)
  cp "$page" "$out/$name.html" || { echo "FAIL: cannot read $page"; exit 1; }
  pages+=("$name")
done

failures=0
for p in "${pages[@]}"; do
  url="file://$out/$p.html"
  chrome --enable-logging=stderr --v=0 --dump-dom "$url" >"$out/$p.dom.html" 2>"$out/$p.chromium.log"
  marker=$(grep -o '<div id="gdsb-selfcheck"[^>]*>' "$out/$p.dom.html")
  status=$(sed -n 's/.*data-status="\([^"]*\)".*/\1/p' <<<"$marker")
  svgs=$(sed -n 's/.*data-svg="\([0-9]*\)".*/\1/p' <<<"$marker")
  tables=$(sed -n 's/.*data-tables="\([0-9]*\)".*/\1/p' <<<"$marker")
  console=$(grep -c ':CONSOLE' "$out/$p.chromium.log")
  problems=()
  [ "$status" = "ok" ] || problems+=("self-check status '${status:-missing}'")
  [ "${svgs:-0}" -ge 1 ] || problems+=("no svg charts")
  [ "${tables:-0}" -ge 1 ] || problems+=("no tables")
  if grep -q 'data-schema="gdsbench.cluster/1"' "$out/$p.dom.html"; then
    grep -q 'class="chart heatmap"' "$out/$p.dom.html" || problems+=("no nodes x GPUs heat map")
  fi
  # A cluster page with shared_storage (issue 26) shows its section with the scaling chart.
  if grep -q '"shared_storage"' "$out/$p.html" && grep -q 'data-schema="gdsbench.cluster/1"' "$out/$p.dom.html"; then
    python3 - "$out/$p.dom.html" <<'PY' || problems+=("no Shared storage section with a chart")
import re, sys
page = open(sys.argv[1]).read()
m = re.search(r'<section id="storage">(.*?)</section>', page, re.S)
sys.exit(0 if m and "<svg" in m.group(1) and "<table" in m.group(1) else 1)
PY
  fi
  # An io page of gdsb-io --gpus (issue 43) opens with the node: its first section is the
  # node's, with the GPU x type table (a row per GPU of the embedded node object) and a chart.
  if grep -q '"node":{' "$out/$p.html" && grep -q 'data-schema="gdsbench.io/1"' "$out/$p.dom.html"; then
    python3 - "$out/$p.dom.html" "$out/$p.html" <<'PY' || problems+=("the node section is not first, or lacks its table or chart")
import json, re, sys
page = open(sys.argv[1]).read()
raw = open(sys.argv[2]).read()
doc = json.loads(re.search(r'<script type="application/json"[^>]*>(.*?)</script>', raw, re.S).group(1))
first = re.search(r'<section id="([^"]*)">(.*?)</section>', page, re.S)
ok = first and first.group(1) == "node" and "<svg" in first.group(2)
rows = re.findall(r'<tr><td class="n">GPU(\d+)</td>', first.group(2)) if ok else []
sys.exit(0 if ok and rows == [str(g["gpu"]) for g in doc["node"]["gpus"]] else 1)
PY
  fi
  # A history page marks its change points on the charts (issue 37).
  if grep -q 'data-schema="gdsbench.history/1"' "$out/$p.dom.html"; then
    grep -q 'class="xmark"' "$out/$p.dom.html" || problems+=("no change point marked on a chart")
  fi
  [ "$console" -eq 0 ] || problems+=("$console console message(s): $(grep ':CONSOLE' "$out/$p.chromium.log" | head -3)")
  chrome --screenshot="$out/$p.png" --window-size=1280,2000 "$url" >/dev/null 2>&1
  chrome --screenshot="$out/$p.phone.png" --window-size=390,1600 "$url" >/dev/null 2>&1
  [ -s "$out/$p.png" ] && [ -s "$out/$p.phone.png" ] || problems+=("no screenshot")
  if [ ${#problems[@]} -eq 0 ]; then
    echo "ok:   $p ($svgs svg, $tables tables, no console messages; screenshots $out/$p.png, $p.phone.png)"
  else
    echo "FAIL: $p: ${problems[*]}"
    failures=$((failures + 1))
  fi
done
[ "$failures" -eq 0 ]
