#!/usr/bin/env bash
# Builds here (static LLVM inside libcutejit), packs what the GPU machine needs into
# bundle/cutejit-gpu.tar.xz (it has no LLVM, compilers or package registry), and prints the
# device call that runs the [gpu] tests, the examples and the benchmarks there.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
rm -rf bundle && mkdir -p bundle/stage/tests/perf bundle/stage/tests/differential bundle/stage/tests/python bundle/stage/examples bundle/stage/tools/cutejit-cache bundle/stage/python
cp -L build/libcutejit.so.0 build/python/libcutejit_python.so bundle/stage/
cp -r python/cutejit bundle/stage/python/
cp tests/python/*.py bundle/stage/tests/python/
cp build/tests/cutejit_tests bundle/stage/tests/
cp build/tools/cutejit-cache/cutejit-cache bundle/stage/tools/cutejit-cache/
# The export consumer: built against a cutejit-cache export, with cuda.h and libcuda only.
bash tests/export/run.sh "$PWD/build" build/tools/cutejit-cache/cutejit-cache build/tests/libcutejit_test_kernels.so \
  build/tests/cutejit_write_export_manifest "${CUDA_HOME:-/usr/local/cuda}" >/dev/null
cp build/tests/export_consumer build/tests/libcutejit_test_kernels.so bundle/stage/tests/
cp build/tests/perf/cutejit_bench build/tests/perf/cutejit_bench_* tests/perf/peers*.py tests/perf/gpu_timing.py bundle/stage/tests/perf/
cp build/tests/differential/cutejit_differential bundle/stage/tests/differential/
mkdir -p bundle/stage/apps bundle/stage/tests/apps
cp build/apps/cutejit_qwen3_reference build/apps/cutejit_qwen3_bench build/apps/cutejit_qwen3_run bundle/stage/apps/
cp tests/apps/*.py bundle/stage/tests/apps/
# TVM-FFI's wheels for the Python versions the GPU machine may have (it has no package
# registry): run_gpu.sh installs the one that fits, for the Python module's fast entry.
mkdir -p bundle/stage/wheels
for v in 310 311 312 313; do
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version "$v" --platform manylinux_2_28_x86_64 \
    -d bundle/stage/wheels "apache-tvm-ffi==${CUTEJIT_TVM_FFI_VERSION:-0.1.15.post2}"
done
find build/examples -maxdepth 1 -type f -executable -exec cp {} bundle/stage/examples/ \;
strip --strip-unneeded bundle/stage/libcutejit.so.0 bundle/stage/tests/cutejit_tests bundle/stage/tests/export_consumer \
  bundle/stage/tests/libcutejit_test_kernels.so bundle/stage/libcutejit_python.so \
  bundle/stage/tests/perf/cutejit_bench* bundle/stage/tests/differential/cutejit_differential bundle/stage/apps/cutejit_qwen3_reference bundle/stage/apps/cutejit_qwen3_bench bundle/stage/apps/cutejit_qwen3_run \
  bundle/stage/tools/cutejit-cache/cutejit-cache \
  bundle/stage/examples/*
git rev-parse --short HEAD > bundle/stage/COMMIT
tar -C bundle/stage -cJf bundle/cutejit-gpu.tar.xz .
rm -rf bundle/stage
echo "bundle: $(du -h bundle/cutejit-gpu.tar.xz | cut -f1) at bundle/cutejit-gpu.tar.xz"
echo
echo "device calls (run tool), one per part: command='bash scripts/run_gpu.sh tests', then 'bash scripts/run_gpu.sh again' and 'bash scripts/run_gpu.sh bench',"
echo "each with carry=['bundle'], timeout_s=600"
