#!/usr/bin/env bash
# ci/check_layers.py on the tree as it is (must hold), then on a copy with each kind of breach
# planted (must fail with exit 3 and name the file): an include from a lower folder to a higher
# one, through a public and through a private header; a source file of 501 lines; a source left
# in topology/src itself. usage: check_layers_test.sh ROOT WORKDIR
set -u
root=$1 work=$2
check=$root/ci/check_layers.py
python=${PYTHON:-python3}
fails=0
expect() {  # expect RC PATTERN WHAT -- command...
  local rc=$1 pattern=$2 what=$3; shift 4
  local out; out=$("$@" 2>&1); local got=$?
  if [[ $got -ne $rc ]] || ! grep -qF -- "$pattern" <<<"$out"; then
    echo "FAIL: $what: exit $got (want $rc), output:"; echo "$out"; fails=$((fails + 1))
  else
    echo "ok: $what"
  fi
}
fresh() {
  rm -rf "$work" && mkdir -p "$work"
  cp -r "$root"/topology "$root"/reports "$root"/cluster "$root"/doctor "$work"/
}
expect 0 "every include runs downward" "the tree holds" -- "$python" "$check" "$root"
expect 2 "usage:" "no root given" -- "$python" "$check"

fresh
sed -i '1i #include "gdsb/topo/render.hpp"' "$work"/topology/src/model/model.cpp
expect 3 "topology/src/model/model.cpp:1: includes gdsb/topo/render.hpp of render/" \
  "model including a renderer's public header" -- "$python" "$check" "$work"

fresh
sed -i '1i #include "check_util.hpp"' "$work"/topology/src/sources/mounts.cpp
expect 3 "topology/src/sources/mounts.cpp:1: includes check_util.hpp of checks/" \
  "a source including the checks' private header" -- "$python" "$check" "$work"

fresh
sed -i '1i #include "gdsb/report/history.hpp"' "$work"/reports/src/html_page.cpp
expect 3 "reports/src/html_page.cpp:1: includes gdsb/report/history.hpp of history/" \
  "a page including the history" -- "$python" "$check" "$work"

fresh
seq 501 | sed 's|^|// |' > "$work"/doctor/src/long.cpp
expect 3 "doctor/src/long.cpp: 501 lines" "a file of 501 lines" -- "$python" "$check" "$work"

fresh
echo '// a file without a folder' > "$work"/topology/src/loose.cpp
expect 3 "topology/src/loose.cpp: topology/src/ is not a folder" "a source in topology/src itself" \
  -- "$python" "$check" "$work"

fresh
echo '#pragma once' > "$work"/topology/include/gdsb/topo/new_fact.hpp
expect 3 "new_fact.hpp: a public header without a folder" "a public header without a folder" \
  -- "$python" "$check" "$work"

rm -rf "$work"
[[ $fails -eq 0 ]] || { echo "$fails case(s) failed"; exit 1; }
echo "all cases passed"
