#!/usr/bin/env bash
# The test command: builds everything and runs the whole suite. [gpu] tests run where there is
# a GPU and are reported as skipped where there is none. Two at a time: the CPU suite runs as two
# single-threaded shards, and the emulated device's tests take both cores each (tests/CMakeLists.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
cd build
ctest --output-on-failure -j 2
