#!/usr/bin/env bash
# Are two gdsb-cluster binaries' --from outputs the same, byte for byte? Each runs from one
# path (WORK/bin/gdsb-cluster, so argv matches) into one --out (WORK/out); the times of the
# run (started_at, created, the page's subtitle) and the page's script nonce (a hash of its
# data, which holds the time) are the only text replaced before the diff.
# Prints the diff of each output and exits 1 on any difference.
# Usage: bench/cluster-same-outputs.sh OLD_BIN NEW_BIN WORK NODE_REPORT...
set -uo pipefail
old=$1 new=$2 work=$3
shift 3
outputs=(cluster.txt cluster.json cluster.html cluster.junit.xml cluster.prom fingerprint-class1.json)
rm -rf "$work/bin" "$work/out" "$work/old" "$work/new"
mkdir -p "$work/bin"
for which in old new; do
  cp "${!which}" "$work/bin/gdsb-cluster"
  "$work/bin/gdsb-cluster" --from "$@" --out "$work/out" -q >/dev/null
  echo "$which: exit $?"
  mv "$work/out" "$work/$which"
  sed -i -E -e 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z/TIME/g' \
    -e 's/nonce(-|=")g[0-9a-f]+/nonce\1NONCE/g' "$work/$which"/*
done
rc=0
for f in "${outputs[@]}"; do
  if cmp -s "$work/old/$f" "$work/new/$f"; then
    echo "same: $f ($(stat -c %s "$work/new/$f") bytes)"
  else
    echo "DIFFERENT: $f"
    diff "$work/old/$f" "$work/new/$f" | head -20 | cut -c1-300
    rc=1
  fi
done
exit $rc
