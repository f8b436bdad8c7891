#!/usr/bin/env bash
# Builds gdsbench and runs every test: the release build's full suite (GCC), then the unit
# tests under ASan+UBSan (the asan preset, built by clang: the libraries and the unit-test
# executables, target unit_tests, go through both compilers). Installs what is missing first.
# Exit code is ctest's.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/install-deps.sh

jobs=$(nproc)
cmake --preset release
cmake --build --preset release -j "$jobs"
ctest --preset release -j "$jobs"

cmake --preset asan
cmake --build --preset asan -j "$jobs" --target unit_tests
ctest --preset asan -j "$jobs"
