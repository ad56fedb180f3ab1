#!/usr/bin/env bash
# Exports the consumer's kernels with cutejit-cache and builds the consumer against the export
# with nothing but cuda.h and libcuda (run_consumer.sh runs it).
# Usage: run.sh BUILD_DIR CLI PLUGIN WRITE_MANIFEST CUDA_HOME
set -euo pipefail
build=$1 cli=$2 plugin=$3 write_manifest=$4 cuda=$5
source=$(cd "$(dirname "$0")" && pwd)
work=$build/test-export
rm -rf "$work" && mkdir -p "$work"
"$write_manifest" "$work/manifest.jsonl"
CUTEJIT_CACHE_DIR=$work/cache "$cli" export --plugin "$plugin" --manifest "$work/manifest.jsonl" \
  --targets sm_90a,sm_100a,sm_120a --namespace exported --out "$work/out"
stubs=$cuda/lib64/stubs
[ -e "$stubs/libcuda.so" ] || stubs=$cuda/lib64
${CXX:-c++} -std=c++17 -O2 -Wall -Wextra -Werror -I"$work/out" -I"$cuda/include" "$source/consumer.cpp" "$source/second_unit.cpp" \
  -L"$stubs" -lcuda -o "$build/tests/export_consumer"
echo "export consumer: built against $work/out/exported.hpp"
