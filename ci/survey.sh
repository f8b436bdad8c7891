#!/usr/bin/env bash
# The main job: builds gdsbench and runs the default survey of this machine.
# Reports go to ./gdsb-report/ (io.json and friends). Installs what is missing first.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/install-deps.sh
cmake --preset release
cmake --build --preset release -j "$(nproc)"
./build/release/apps/gdsb-io/gdsb-io "$@"
