#!/usr/bin/env bash
# What including cutejit costs a user's file (no GPU needed): the median wall time of five
# compiles at -O2 of an empty file that includes <cutejit/cutejit.hpp>, of a small kernel file
# (examples/vector_add.cpp), and of the same with cutejit.hpp precompiled (what CMake's
# target_precompile_headers gives); and of files that call the kernel library's operators
# (kernels/norm.hpp and kernels/elementwise.hpp; kernels/gemm.hpp and kernels/attention.hpp),
# whose kernels are compiled into libcutejit.
# Run from the repository root: tests/perf/bench_include.sh [compiler]
set -euo pipefail
cxx=${1:-c++}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
flags=(-std=c++20 -O2 -Iinclude -Iexamples)
printf '#include <cutejit/cutejit.hpp>\n' > "$work/empty.cpp"
cat > "$work/library.cpp" <<'CPP'
#include <cutejit/kernels/elementwise.hpp>
#include <cutejit/kernels/norm.hpp>
void block(const cutejit::Device& gpu, const cutejit::DeviceTensor<cutejit::bf16>& x, const cutejit::DeviceTensor<cutejit::bf16>& r,
           const cutejit::DeviceTensor<cutejit::bf16>& w, const cutejit::DeviceTensor<cutejit::bf16>& y) {
  cutejit::kernels::add_rmsnorm(gpu, x, r, w, y);
  cutejit::kernels::silu_mul(gpu, x, r, y);
}
CPP
cat > "$work/gemm_attention.cpp" <<'CPP'
#include <cutejit/kernels/attention.hpp>
#include <cutejit/kernels/gemm.hpp>
using namespace cutejit;
void layer(const Device& gpu, const DeviceTensor<bf16>& x, const DeviceTensor<bf16>& w, const DeviceTensor<bf16>& h,
           const DeviceTensor<bf16>& q, const DeviceTensor<bf16>& kv, const DeviceTensor<bf16>& o, const DeviceTensor<f32>& lse,
           const DeviceTensor<int32_t>& cu) {
  kernels::gemm(gpu, x, w, h, {.beta = 1});
  kernels::attention_forward(gpu, q, kv, kv, o, lse, {.cu_seqlens_q = cu, .cu_seqlens_k = cu, .causal = true});
}
CPP
mkdir -p "$work/pch" && cp "$work/empty.cpp" "$work/pch/cutejit_all.hpp"
"$cxx" "${flags[@]}" -x c++-header "$work/pch/cutejit_all.hpp" -o "$work/pch/cutejit_all.hpp.gch"

median_seconds() {  # the median wall time of five runs of "$@"
  for _ in 1 2 3 4 5; do
    start=$(date +%s%N)
    "$@"
    echo $(( $(date +%s%N) - start ))
  done | sort -n | sed -n 3p | awk '{ printf "%.2f s", $1 / 1e9 }'
}

echo "$("$cxx" --version | head -1), -O2, $(nproc) cores"
echo "an empty file including cutejit.hpp:          $(median_seconds "$cxx" "${flags[@]}" -c "$work/empty.cpp" -o "$work/e.o")"
echo "examples/vector_add.cpp (a kernel and main):  $(median_seconds "$cxx" "${flags[@]}" -c examples/vector_add.cpp -o "$work/v.o")"
echo "the same, cutejit.hpp precompiled:            $(median_seconds "$cxx" "${flags[@]}" -include "$work/pch/cutejit_all.hpp" -c examples/vector_add.cpp -o "$work/p.o")"
echo "a file calling kernels::add_rmsnorm and silu_mul: $(median_seconds "$cxx" "${flags[@]}" -c "$work/library.cpp" -o "$work/l.o")"
echo "a file calling kernels::gemm and attention_forward: $(median_seconds "$cxx" "${flags[@]}" -c "$work/gemm_attention.cpp" -o "$work/g.o")"
