#!/usr/bin/env bash
# The main job: builds and runs the vector-add example. On a GPU it runs and checks the result;
# with no GPU it cross-compiles for sm_90a, sm_100a and sm_120a and says that nothing ran.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
./build/examples/vector_add
