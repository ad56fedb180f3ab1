// Cold JIT in process, trace -> cubin, with no GPU: the first kernel of the process (which
// also pays for MLIR/LLVM set-up and loading nvJitLink) and then fresh specializations.
#include <algorithm>
#include <cstdlib>
#include <chrono>
#include <cstdio>
#include <vector>

#include "vector_add.hpp"

using namespace cutejit;

namespace {
Kernel scaled_add{"scaled_add", [](Tensor<f32> a, Tensor<f32> b, Tensor<f32> c, Constexpr<int> scale) {
  Int i = (block_idx().x * block_dim().x + thread_idx().x) * 4;
  if_(i + 4 <= size(a), [&] {
    auto x = a.pointer_at({i}).load_vector<4>();
    auto y = b.pointer_at({i}).load_vector<4>();
    std::array<F32, 4> z;
    for (int k = 0; k < 4; ++k) z[k] = x[k] * float(scale) + y[k];
    c.pointer_at({i}).store_vector<4>(z);
  });
}};
}  // namespace

int main(int argc, char** argv) {
  setenv("CUTEJIT_CACHE", "off", 1);  // cold means cold: no disk cache
  Target target = Target::parse(argc > 1 ? argv[1] : "sm_90a");
  auto v = DeviceTensor<f32>::make(0, std::array<int64_t, 1>{1 << 20}, std::array<int64_t, 1>{1});
  auto t0 = std::chrono::steady_clock::now();
  CompiledKernel first = fixtures::vector_add.compile(target, v, v, v);
  double first_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("cold JIT, first kernel of the process (%s): %.1f ms wall (pipeline %.1f ms: trace %.2f, verify %.2f, "
              "lower %.2f, O3+PTX %.2f, assemble %.2f)\n",
              target.name().c_str(), first_ms, first.times.total_ms(), first.times.trace_ms, first.times.verify_ms,
              first.times.lower_ms, first.times.codegen_ms, first.times.assemble_ms);

  std::vector<double> totals;
  StageTimes sum;
  const int runs = 20;
  for (int s = 1; s <= runs; ++s) {  // each scale is a new specialization: traced and compiled afresh
    auto start = std::chrono::steady_clock::now();
    CompiledKernel k = scaled_add.compile(target, v, v, v, s);
    totals.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    sum.trace_ms += k.times.trace_ms, sum.verify_ms += k.times.verify_ms, sum.lower_ms += k.times.lower_ms;
    sum.codegen_ms += k.times.codegen_ms, sum.assemble_ms += k.times.assemble_ms;
  }
  std::sort(totals.begin(), totals.end());
  std::printf("cold JIT, later kernels (%d fresh specializations): median %.1f ms, min %.1f, max %.1f; mean per stage: "
              "trace %.2f, verify %.2f, lower %.2f, O3+PTX %.2f, assemble %.2f ms (%s)\n",
              runs, totals[runs / 2], totals.front(), totals.back(), sum.trace_ms / runs, sum.verify_ms / runs,
              sum.lower_ms / runs, sum.codegen_ms / runs, sum.assemble_ms / runs, first.assembler.c_str());
  return 0;
}
