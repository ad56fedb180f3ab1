#!/usr/bin/env bash
# The test command: builds everything and runs the whole suite. [gpu] tests run where there is
# a GPU and are reported as skipped where there is none.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
cd build
ctest --output-on-failure
