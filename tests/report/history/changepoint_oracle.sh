#!/usr/bin/env bash
# Oracle test (label oracle): runs Apache Otava itself on the committed synthetic series and
# requires gdsbench's change points to equal the ones Otava finds now (not only the recorded
# ones). Needs GDSB_OTAVA_SRC = a checkout of github.com/apache/otava, and a Python 3 with numpy
# and scipy (Debian: python3-numpy python3-scipy); GDSB_OTAVA_PYTHON picks the interpreter.
# Exit 77 (skipped, with the reason) when either is missing.
#   changepoint_oracle.sh FIXTURE_TEST_BINARY FIXTURE_DIR WORK_DIR
set -u
test_bin=$1 fixtures=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)

if [[ -z "${GDSB_OTAVA_SRC:-}" ]]; then
  echo "SKIPPED: set GDSB_OTAVA_SRC to a checkout of github.com/apache/otava to run Otava as the oracle"
  exit 77
fi
if [[ ! -f "$GDSB_OTAVA_SRC/otava/analysis.py" ]]; then
  echo "SKIPPED: GDSB_OTAVA_SRC=$GDSB_OTAVA_SRC has no otava/analysis.py (not an Otava checkout)"
  exit 77
fi
python=""
for candidate in "${GDSB_OTAVA_PYTHON:-}" /usr/bin/python3 python3; do
  [[ -n "$candidate" ]] || continue
  if "$candidate" -c 'import numpy, scipy' >/dev/null 2>&1; then python=$candidate; break; fi
done
if [[ -z "$python" ]]; then
  echo "SKIPPED: no Python 3 with numpy and scipy (Debian: apt-get install python3-numpy python3-scipy)"
  exit 77
fi

mkdir -p "$work"
fresh="$work/otava-now.json"
echo "running Otava from $GDSB_OTAVA_SRC with $python"
"$python" "$here/changepoint_otava.py" "$GDSB_OTAVA_SRC" "$fixtures" "$fresh" || {
  echo "FAILED: Otava did not run (see above)"; exit 1; }
GDSB_CHANGEPOINT_EXPECTED="$fresh" "$test_bin"
