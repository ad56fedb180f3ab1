#!/usr/bin/env bash
# Configures and builds cutejit (library, examples, tests, benchmarks) into ./build.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
# ccache keys on the checkout's relative paths, so that a clone in another folder (CI's) reuses
# what a build in this one compiled. The cache key reads source files by name alone, so the
# relative spellings this gives `__FILE__` change no kernel's entry (docs/cache.md).
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCUTEJIT_CUDA_HOME="$CUDA_HOME" >/dev/null
cmake --build build -j "$(nproc)"
