#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, with bundle/ carried: the [gpu] tests,
# every example, the benchmarks with their peers, and SASS checks. Logs go to $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/cutejit-out}
mkdir -p "$OUT" /tmp/cj
tar -C /tmp/cj -xJf bundle/cutejit-gpu.tar.xz
cd /tmp/cj
export CUTEJIT_CACHE_DIR=/tmp/cj/cache
log="$OUT/gpu.log"
{
  echo "== $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(cat /tmp/cj/COMMIT 2>/dev/null)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
  echo "== [gpu] tests"
  ./tests/cutejit_tests "[gpu]" --durations yes
  echo "== all CPU suites on this machine too"
  ./tests/cutejit_tests "~[gpu]"
  echo "== examples"
  for e in examples/*; do "$e"; done
  echo "== benchmarks"
  ./tests/perf/cutejit_bench_compile sm_90a
  ./tests/perf/cutejit_bench
  PYTHONUNBUFFERED=1 python3 tests/perf/peers.py
  ./tests/perf/cutejit_bench_gemm
  PYTHONUNBUFFERED=1 python3 tests/perf/peers_gemm.py
  echo "== SASS (sm_90a runs here; sm_100a / sm_120a compile-verified by disassembly)"
  CUTEJIT_CACHE=off CUTEJIT_DUMP=/tmp/cj/dump ./examples/vector_add >/dev/null
  CUTEJIT_CACHE=off CUTEJIT_DUMP=/tmp/cj/dump ./examples/gemm_bf16 >/dev/null
  CUTEJIT_CACHE=off CUTEJIT_DUMP=/tmp/cj/dump ./tests/cutejit_tests "target-specific*" >/dev/null
  for f in /tmp/cj/dump/*.cubin; do
    echo "-- $(basename "$f"): $(cuobjdump -sass "$f" 2>&1 | grep -cE '^\s+/\*[0-9a-f]{4}\*/') SASS instructions"
    cuobjdump -sass "$f" 2>&1 | grep -oE '(LDG|STG)\.E\.128|ELECT|SETMAXNREG|WARPGROUP\.(ARRIVE|DEPBAR)[^ ;]*|UCGABAR_[A-Z]+|FENCE\.[A-Z.]*|TCGEN05[^ ;]*|HGMMA\.[^ ;]*|UTMALDG[^ ;]*|UTMASTG[^ ;]*|SYNCS\.[A-Z.]*|LDL[^ ;]*|STL[^ ;]*' | sort | uniq -c
  done
} 2>&1 | tee "$log"
