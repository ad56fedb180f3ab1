#!/usr/bin/env bash
# Configures and builds cutejit (library, examples, tests, benchmarks) into ./build.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCUTEJIT_CUDA_HOME="$CUDA_HOME" >/dev/null
cmake --build build -j "$(nproc)"
