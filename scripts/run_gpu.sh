#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, with bundle/ carried: the [gpu] tests,
# every example, the benchmarks with their peers, and SASS checks. Logs go to $OUT.
# `run_gpu.sh tests` runs the [gpu] tests, each case in its own process, memcheck, Python,
# the examples and the export consumer; `run_gpu.sh again` the [gpu] tests all in one process;
# `run_gpu.sh bench` the CPU suites, benchmarks, peers and SASS; `run_gpu.sh emulated` times
# every [gpu] test on the emulated sm_90a, two host threads a test as on the CI machine, several
# tests at once; `run_gpu.sh differential` compares the GPU's outputs with the emulator's, kernel
# by kernel (docs/emulator.md's table); `run_gpu.sh python` the Python module alone (part of
# `tests`); `run_gpu.sh qwen3speed` Qwen3's start-up (cold and warm disk cache), its prefill and
# decode on random weights with a per-stage breakdown (apps/qwen3/bench_main.cpp), and
# transformers' at the same shapes (tests/apps/qwen3_peers_transformers.py); `run_gpu.sh qwen3`
# the GPU model against transformers' numerics, then all of qwen3speed; with no argument, all
# but `emulated`, `differential`, `qwen3` and `qwen3speed`.
# Each part fits one 600-second device call; the whole does not.
set -uo pipefail
part=${1:-all}
case $part in tests|again|bench|emulated|differential|python|qwen3|qwen3speed|all) ;; *) echo "usage: run_gpu.sh [tests|again|bench|emulated|differential|python|qwen3|qwen3speed]" >&2; exit 2 ;; esac
want() { [ "$part" = all ] && [ "$1" != emulated ] && [ "$1" != differential ] && [ "$1" != qwen3 ] && [ "$1" != qwen3speed ] ||
         [ "$part" = "$1" ] || { [ "$part" = qwen3 ] && [ "$1" = qwen3speed ]; }; }
OUT=${OUT:-/tmp/cutejit-out}
CJ=${CUTEJIT_GPU_DIR:-/tmp/cj}  # where the bundle is unpacked: two parts may run at once in two folders
mkdir -p "$OUT" "$CJ"
tar -C $CJ -xJf bundle/cutejit-gpu.tar.xz
cd $CJ
export CUTEJIT_CACHE_DIR=$CJ/cache
# NCCL for its interop test, from the machine's Python wheel (nvidia-nccl-cu13) unless given.
# NVSHMEM is left to cutejit's own search, which finds the nvidia-nvshmem-cu13 wheel.
wheel_lib() { python3 -c 'import importlib.util, os, sys; print(os.path.join(list(importlib.util.find_spec(sys.argv[1]).submodule_search_locations)[0], "lib"))' "$1" 2>/dev/null; }
export CUTEJIT_TEST_NCCL=${CUTEJIT_TEST_NCCL:-$(wheel_lib nvidia.nccl)/libnccl.so.2}
log="$OUT/gpu-$part.log"
{
  echo "== $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(cat $CJ/COMMIT 2>/dev/null)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
  if want tests; then
  # Every step has a time limit: a kernel that hangs must not take the other results with it.
  # Each [gpu] test case in its own process: a kernel fault poisons its CUDA context, and must
  # not fail the cases after it.
  echo "== [gpu] tests"
  # With a cold cache the cases outgrow one call: CUTEJIT_GPU_SHARD=i/n runs every n-th case
  # from the i-th (1/2 and 2/2 in two calls).
  shard=${CUTEJIT_GPU_SHARD:-1/1}
  ./tests/cutejit_tests --list-test-names-only "[gpu]" | grep -v '^$' | awk -v i="${shard%/*}" -v n="${shard#*/}" '(NR - 1) % n == i - 1' |
  while IFS= read -r name; do
    spec=$(printf '%s' "$name" | sed 's/[],[\\]/\\&/g')  # test specs treat , [ ] as syntax
    timeout 120 ./tests/cutejit_tests "$spec" --durations yes | grep -vE '^(=+|~+)$|^Filters:'
  done
  fi
  if want again; then
  # All of them in one process: what one kernel leaves behind (shared memory, L2) must not
  # change another's result.
  echo "== [gpu] tests again, all in one process"
  # Each finished case prints its duration, so a run cut short by the limit still says which
  # cases passed.
  timeout 560 ./tests/cutejit_tests "[gpu]" -r compact --durations yes | grep -E "Passed|Failed|failed:| s: "
  fi
  if want tests; then
  # Values in a tile's overhang past N reach the epilogue with their column clamped, so the
  # bias (exactly N values) is never read past its end; such a read would not change a result,
  # so only a memory checker sees it.
  echo "== the fused bias + GELU GEMM under compute-sanitizer memcheck"
  sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
  if [ -n "$sanitizer" ]; then
    timeout 300 "$sanitizer" --tool memcheck --error-exitcode 9 ./tests/cutejit_tests "the fused bias + GELU GEMM*" 2>&1 | tail -4
    echo "compute-sanitizer exit code: ${PIPESTATUS[0]}"
  else
    echo "compute-sanitizer: not on this machine, not checked"
  fi
  fi
  if want tests || want python; then
  echo "== the Python module with PyTorch tensors (and its hot launch against Triton's), with TVM-FFI's entry"
  # TVM-FFI from the carried wheel that fits this Python, into a folder of its own.
  py=$(python3 -c 'import sys; print("%d%d" % sys.version_info[:2])')
  python3 -m pip install -q --no-deps --no-index --target $CJ/pysite $CJ/wheels/apache_tvm_ffi-*-cp$py-*.whl 2>&1 | tail -2
  CUTEJIT_PYTHON_LIBRARY=$CJ/libcutejit_python.so CUTEJIT_TEST_PLUGIN=$CJ/tests/libcutejit_test_kernels.so \
    PYTHONPATH=$CJ/pysite CUTEJIT_TEST_EXPECT_TVM_FFI=1 timeout 120 python3 tests/python/test_python.py
  CUTEJIT_PYTHON_LIBRARY=$CJ/libcutejit_python.so CUTEJIT_TEST_PLUGIN=$CJ/tests/libcutejit_test_kernels.so \
    PYTHONPATH=$CJ/pysite PYTHONUNBUFFERED=1 timeout 240 python3 tests/python/test_python_gpu.py
  echo "== the same without TVM-FFI (the ctypes entry alone)"
  CUTEJIT_PYTHON_LIBRARY=$CJ/libcutejit_python.so CUTEJIT_TEST_PLUGIN=$CJ/tests/libcutejit_test_kernels.so \
    PYTHONUNBUFFERED=1 timeout 240 python3 tests/python/test_python_gpu.py
  fi
  if want tests || want python; then
  echo "== the Qwen3 host reference against transformers (FP32 and BF16)"
  PYTHONUNBUFFERED=1 timeout 240 python3 tests/apps/qwen3_reference_vs_transformers.py $CJ/apps/cutejit_qwen3_reference
  fi
  if want tests; then
  echo "== examples"
  for e in examples/*; do timeout 60 "$e" || echo "$e: exit code $?"; done
  echo "== a program built against a cutejit-cache export (cuda.h and libcuda only)"
  timeout 60 ./tests/export_consumer || echo "export_consumer: exit code $?"
  fi
  if want emulated; then
  echo "== [gpu] tests on emulator:sm_90a, 2 host threads each, ${CUTEJIT_EMULATED_JOBS:-6} at once"
  ./tests/cutejit_tests --list-test-names-only "[gpu]~[gpu_runtime]~[timing]" | grep -v '^$' |
    CUTEJIT_DEVICE=emulator:sm_90a CUTEJIT_EMULATOR_THREADS=2 xargs -d '\n' -P "${CUTEJIT_EMULATED_JOBS:-6}" -I{} \
      sh -c 'spec=$(printf "%s" "$1" | sed "s/[],[\\\\]/\\\\&/g"); s=$(date +%s%N);
             r=$(timeout "${CUTEJIT_EMULATED_LIMIT:-400}" ./tests/cutejit_tests "$spec" 2>&1 | tail -2 | tr "\n" " ");
             echo "$(( ($(date +%s%N) - s) / 1000000 )) ms | $1 | $r"' _ {}
  fi
  if want differential; then
  echo "== the GPU against its emulated device, kernel by kernel"
  timeout 300 ./tests/differential/cutejit_differential
  echo "cutejit_differential exit code: $?"
  fi
  if want qwen3; then
  echo "== the Qwen3 GPU model against transformers (FP32 and BF16), Qwen3-0.6B's configuration"
  PYTHONUNBUFFERED=1 timeout 240 python3 tests/apps/qwen3_gpu_vs_transformers.py $CJ/apps/cutejit_qwen3_run
  fi
  if want qwen3speed; then
  echo "== Qwen3 start-up: Qwen3-0.6B in a process with an empty disk cache, then in a second one"
  for run in cold warm; do
    CUTEJIT_CACHE_DIR=$CJ/cache-startup timeout 120 ./apps/cutejit_qwen3_bench --model 0.6b --steps 8 | grep -E "^(weights|start-up|prefill)"
  done
  echo "== Qwen3-8B on random weights: prefill and decode steps (apps/qwen3/bench_main.cpp), then transformers at the same shapes"
  timeout 150 ./apps/cutejit_qwen3_bench --model 8b --batch 1,8,32,64 --context 1024 --steps 32 --breakdown || echo "cutejit_qwen3_bench: exit code $?"
  timeout 90 ./apps/cutejit_qwen3_bench --model 8b --batch 1 --context 4096 --steps 32 || echo "cutejit_qwen3_bench: exit code $?"
  timeout 120 ./apps/cutejit_qwen3_bench --model 8b --batch 1,8 --context 1024 --steps 32 --temperature 0.7 | grep -E "^(--|decode)" || echo "cutejit_qwen3_bench: exit code $?"
  # Sections start only within the script's deadline (each compiled decode compiles for minutes
  # at worst); the most telling first.
  PYTHONUNBUFFERED=1 timeout 360 python3 tests/apps/qwen3_peers_transformers.py 8b 280 \
    decode:eager:1:1024 decode:compiled:1:1024 prefill:eager:1:4096 prefill:eager:8:1024 decode:compiled:8:1024 \
    decode:compiled:32:1024 decode:eager:8:1024 decode:eager:32:1024 decode:compiled:64:1024 prefill:compiled:1:4096 \
    prefill:compiled:8:1024 || echo "qwen3_peers_transformers.py: exit code $?"
  fi
  if want bench; then
  echo "== all CPU suites on this machine too"
  # The SASS tests compile hundreds of kernels: with a cold cache this takes more than 2 minutes.
  timeout 240 ./tests/cutejit_tests "~[gpu]~[.]"
  echo "== benchmarks"
  timeout 60 ./tests/perf/cutejit_bench_compile sm_90a
  timeout 120 ./tests/perf/cutejit_bench
  PYTHONUNBUFFERED=1 timeout 180 python3 tests/perf/peers.py
  for b in tests/perf/cutejit_bench_*; do
    case $b in *_compile|*/cutejit_bench) ;; *) timeout 180 "$b" || echo "$b: exit code $?" ;; esac
  done
  for p in tests/perf/peers_*.py; do [ -f "$p" ] && PYTHONUNBUFFERED=1 timeout 180 python3 "$p"; done
  echo "== SASS (sm_90a runs here; sm_100a / sm_120a compile-verified by disassembly)"
  export CUTEJIT_DUMP=$CJ/dump
  CUTEJIT_CACHE=off timeout 60 ./examples/vector_add >/dev/null
  CUTEJIT_CACHE=off timeout 60 ./tests/cutejit_tests "target-specific*" >/dev/null
  # The Hopper GEMM fixtures (gemm_bf16, gemm_fp8, gemm_bf16_bias_gelu, gemm_bf16_nn,
  # gemm_bf16_cluster, ...) at the shapes that pick their 256-wide tiles.
  CUTEJIT_CACHE=off timeout 120 ./tests/cutejit_tests "every test fixture cross-compiles*" >/dev/null
  for t in sm_100a sm_120a; do CUTEJIT_CACHE=off timeout 60 ./tests/perf/cutejit_bench_compile $t >/dev/null; done
  unset CUTEJIT_DUMP
  for f in $CJ/dump/{vector_add,hopper_ops,setmax,tcgen05,gemm}*.cubin; do
    [ -f "$f" ] || continue
    echo "-- $(basename "$f"): $(cuobjdump -sass "$f" 2>&1 | grep -cE '^\s+/\*[0-9a-f]{4}\*/') SASS instructions"
    cuobjdump -res-usage "$f" 2>&1 | grep -oE 'REG:[0-9]+ STACK:[0-9]+ SHARED:[0-9]+ LOCAL:[0-9]+' | sed 's/^/   /'
    # Spills show as a stack frame and local loads and stores; say so in words.
    spills=$(cuobjdump -sass "$f" 2>&1 | grep -cE '(LDL|STL)')
    if [ "$spills" -gt 0 ]; then echo "   LOCAL MEMORY: $spills LDL/STL instructions"; fi  # (an && would end the script with 1)

    # The FP8 GEMMs must run on the FP8 tensor-core instruction (QGMMA), the others on HGMMA,
    # with N the tile width (gemm_*_n64: 64, gemm_*_n128: 128, else 256).
    name=$(basename "$f")
    case $name in *_n64.*) w=64 ;; *_n128.*) w=128 ;; *) w=256 ;; esac
    case $name in
      gemm_fp8*.sm_90a.*) mma="QGMMA.64x${w}x32.F32.E4M3" ;;
      gemm_bf16*.sm_90a.*) mma="HGMMA.64x${w}x16.F32.BF16" ;;
      *) mma= ;;
    esac
    if [ -n "$mma" ]; then
      cuobjdump -sass "$f" 2>&1 | grep -qF "$mma" && echo "   $mma: yes" || echo "   $mma: MISSING"
    fi
    cuobjdump -sass "$f" 2>&1 | grep -oE '(LDG|STG)\.E\.128|ELECT|SETMAXNREG|WARPGROUP\.(ARRIVE|DEPBAR)[^ ;]*|UCGABAR_[A-Z]+|FENCE\.[A-Z.]*|TCGEN05[^ ;]*|HGMMA\.[^ ;]*|QGMMA\.[^ ;]*|UTMALDG[^ ;]*|UTMASTG[^ ;]*|UTMAREDG[^ ;]*|STSM[^ ;]*|SYNCS\.[A-Z.]*|LDL[^ ;]*|STL[^ ;]*' | sort | uniq -c
  done
  fi
} 2>&1 | tee "$log"
