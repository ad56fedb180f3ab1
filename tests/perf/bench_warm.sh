#!/usr/bin/env bash
# Warm-up throughput: `cutejit-cache warm` on 50 specializations x 3 targets into an empty cache,
# then again with every kernel cached. Needs no GPU. Usage: tests/perf/bench_warm.sh [BUILD] [JOBS]
set -euo pipefail
build=${1:-build} jobs=${2:-$(nproc)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$build/tests/perf/cutejit_warm_manifest" "$work/manifest.jsonl"
warm() {
  "$build/tools/cutejit-cache/cutejit-cache" --dir "$work/cache" warm --plugin "$build/tests/libcutejit_test_kernels.so" \
    --manifest "$work/manifest.jsonl" --targets sm_90a,sm_100a,sm_120a -j "$jobs"
}
echo "empty cache ($(nproc) cores, -j $jobs):"; warm
echo "all cached:"; warm
