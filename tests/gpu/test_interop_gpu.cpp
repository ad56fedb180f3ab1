// CUDA C++ functions (NVRTC) and inline PTX in kernels that run: results against the host.
#include <catch2/catch.hpp>

#include <cutejit/cutejit.hpp>
#include <cutejit/dsl/cuda_function.hpp>
#include <cutejit/dsl/inline_ptx.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "support.hpp"

using namespace cutejit;

namespace {
const auto softplus = cuda_function<float(float)>("softplus", R"(
  __device__ float softplus(float x) { return x > 20.f ? x : log1pf(expf(x)); }
)");
// Narrow types cross the call both ways: the bf16 argument and result, an f16 and an int8.
const auto mix = cuda_function<bf16(bf16, f16, int8_t)>("mix", R"(
  #include <cuda_fp16.h>
  #include <cuda_bf16.h>
  __device__ __nv_bfloat16 mix(__nv_bfloat16 a, __half b, signed char c) {
    return __float2bfloat16(__bfloat162float(a) * 2.f + __half2float(b) - float(c));
  }
)");

Kernel interop{"interop_gpu", [](Tensor<f32> y, Tensor<f32> x, Tensor<bf16> z, Tensor<u32> lanes) {
  Int i = block_idx().x * block_dim().x + thread_idx().x;
  y(i) = softplus(x(i));
  z(i) = mix(z(i), cast<f16>(x(i)), int8_t(-3));
  lanes(i) = inline_ptx<uint32_t>("mov.u32 $0, %laneid;", "=r") + inline_ptx<uint32_t>("add.u32 $0, $1, $2;", "=r,r,r", 1000u, 1u);
}};
}  // namespace

TEST_CASE("a kernel calling CUDA C++ through NVRTC and inline PTX computes what the host does", "[gpu]") {
  Device gpu;
  const int n = 4096;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-30.f, 30.f);
  std::vector<float> hx(n);
  std::vector<bf16> hz(n);
  for (int i = 0; i < n; ++i) hx[size_t(i)] = dist(rng), hz[size_t(i)] = bf16(dist(rng));
  auto x = gpu.upload(hx), y = gpu.upload(std::vector<float>(n, NAN));
  auto z = gpu.upload(hz);
  auto lanes = gpu.upload(std::vector<uint32_t>(n, 0));
  interop(gpu, Launch{.grid = n / 256, .block = 256}, y.view({n}), x.view({n}), z.view({n}), lanes.view({n}));
  gpu.synchronize();
  std::vector<float> hy = y.to_host();
  std::vector<bf16> out = z.to_host();
  std::vector<uint32_t> hl = lanes.to_host();
  int wrong = 0;
  for (int i = 0; i < n; ++i) {
    double want = hx[size_t(i)] > 20 ? hx[size_t(i)] : std::log1p(std::exp(double(hx[size_t(i)])));
    wrong += std::abs(hy[size_t(i)] - want) > 1e-5 * std::max(1.0, std::abs(want));
    float m = float(hz[size_t(i)]) * 2.f + float(f16(hx[size_t(i)])) + 3.f;
    wrong += float(out[size_t(i)]) != float(bf16(m));
    wrong += hl[size_t(i)] != uint32_t(i % 32) + 1001;
  }
  CHECK(wrong == 0);
}
