// What a cuda_function call costs (NVRTC-compiled, linked, not inlined: a CALL in SASS) next to
// the same arithmetic traced, and inline_ptx next to both: 128 dependent steps per element
// (v = v * 1.0001 + 0.5), so that the work, not memory, sets the time.
#include <cstdio>

#include <cutejit/cutejit.hpp>

#include "gpu_timing.hpp"

using namespace cutejit;

namespace {
constexpr int steps = 128;
const auto step = cuda_function<float(float)>("step", "__device__ float step(float v) { return v * 1.0001f + 0.5f; }");

Kernel traced{"steps_traced", [](Tensor<f32> y, Tensor<f32> x) {
  Int i = block_idx().x * block_dim().x + thread_idx().x;
  F32 v = x(i);
  for (int k = 0; k < steps; ++k) v = fma(v, 1.0001f, 0.5f);
  y(i) = v;
}};
Kernel called{"steps_cuda_function", [](Tensor<f32> y, Tensor<f32> x) {
  Int i = block_idx().x * block_dim().x + thread_idx().x;
  F32 v = x(i);
  for (int k = 0; k < steps; ++k) v = step(v);
  y(i) = v;
}};
Kernel inline_asm{"steps_inline_ptx", [](Tensor<f32> y, Tensor<f32> x) {
  Int i = block_idx().x * block_dim().x + thread_idx().x;
  F32 v = x(i);
  for (int k = 0; k < steps; ++k) v = inline_ptx<float>("fma.rn.f32 $0, $1, 0f3F800347, 0f3F000000;", "=f,f", v);
  y(i) = v;
}};
}  // namespace

int main() {
  Device gpu;
  const int n = 1 << 24;
  std::vector<float> host(n);
  for (int i = 0; i < n; ++i) host[size_t(i)] = float(i % 1000) * 1e-3f - 0.5f;
  auto x = gpu.upload(host);
  auto y = gpu.alloc<float>(n);
  Launch launch{.grid = n / 256, .block = 256};
  auto time = [&](auto& k) { return bench::median_gpu_ms([&] { k(gpu, launch, y, x); }, 20); };
  double t_traced = time(traced), t_called = time(called), t_inline = time(inline_asm);
  // The extra time spread over the warps' calls, as time of one SM: what a call costs a warp.
  const double warp_calls = double(n) / 32 * steps;
  std::printf("interop %d x %d steps: traced fma %.3f ms, cuda_function %.3f ms (%.2fx; +%.2f SM-ns per warp-call on %d SMs), "
              "inline_ptx %.3f ms (%.2fx)\n",
              n, steps, t_traced, t_called, t_called / t_traced, (t_called - t_traced) * 1e6 * gpu.multiprocessors() / warp_calls,
              gpu.multiprocessors(), t_inline, t_inline / t_traced);
}
