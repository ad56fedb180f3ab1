// CUDA C++ functions (NVRTC) and inline PTX in kernels that run: results against the host.
#include <catch2/catch.hpp>

#include <cutejit/cutejit.hpp>
#include <cutejit/dsl/cuda_function.hpp>
#include <cutejit/dsl/inline_ptx.hpp>
#include <cutejit/interop/dlpack.hpp>

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

// And the wide and the odd ones: u16, bool, f64, i64, u32 in, f64 out.
const auto wide = cuda_function<double(uint16_t, bool, double, int64_t, uint32_t)>("wide", R"(
  __device__ double wide(unsigned short a, bool b, double c, long long d, unsigned e) {
    return c * 2.0 + a + (b ? 1.0 : 0.0) + double(d) + e;
  }
)");

Kernel interop{"interop_gpu", [](Tensor<f32> y, Tensor<f32> x, Tensor<bf16> z, Tensor<u32> lanes, Tensor<f64> w) {
  Int i = block_idx().x * block_dim().x + thread_idx().x;
  y(i) = softplus(x(i));
  w(i) = wide(cast<uint16_t>(i + 65000), i % 2 == 1, cast<double>(F32(x(i))), cast<int64_t>(i) << 33, cast<uint32_t>(i) * 3u + 4000000000u);
  z(i) = mix(z(i), cast<f16>(x(i)), int8_t(-3));
  lanes(i) = inline_ptx<uint32_t>("mov.u32 $0, %laneid;", "=r") + inline_ptx<uint32_t>("add.u32 $0, $1, $2;", "=r,r,r", 1000u, 1u);
}};
}  // namespace

TEST_CASE("a kernel calling CUDA C++ through NVRTC and inline PTX computes what the host does", "[gpu][cuda_function]") {
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
  auto w = gpu.upload(std::vector<double>(n, NAN));
  interop(gpu, Launch{.grid = n / 256, .block = 256}, y.view({n}), x.view({n}), z.view({n}), lanes.view({n}), w.view({n}));
  gpu.synchronize();
  std::vector<float> hy = y.to_host();
  std::vector<bf16> out = z.to_host();
  std::vector<uint32_t> hl = lanes.to_host();
  std::vector<double> hw = w.to_host();
  int wrong = 0;
  for (int i = 0; i < n; ++i) {
    double want = hx[size_t(i)] > 20 ? hx[size_t(i)] : std::log1p(std::exp(double(hx[size_t(i)])));
    wrong += std::abs(hy[size_t(i)] - want) > 1e-5 * std::max(1.0, std::abs(want));
    float m = float(hz[size_t(i)]) * 2.f + float(f16(hx[size_t(i)])) + 3.f;
    wrong += float(out[size_t(i)]) != float(bf16(m));
    wrong += hl[size_t(i)] != uint32_t(i % 32) + 1001;
    const double want_wide = double(hx[size_t(i)]) * 2.0 + double(uint16_t(i + 65000)) + (i % 2 == 1 ? 1.0 : 0.0) +
                             double(int64_t(i) << 33) + double(uint32_t(i) * 3u + 4000000000u);
    wrong += hw[size_t(i)] != want_wide;
  }
  CHECK(wrong == 0);
}

TEST_CASE("to_dlpack hands an owned buffer over whole, and its deleter frees it", "[gpu]") {
  Device gpu;
  auto buffer = gpu.upload(std::vector<float>{1, 2, 3, 4, 5, 6});
  const uint64_t address = buffer.data();
  DLManagedTensor* m = to_dlpack(std::move(buffer), {2, 3}, gpu.ordinal());
  CHECK(buffer.data() == 0);  // moved into the DLPack tensor
  const DLTensor& t = m->dl_tensor;
  CHECK((reinterpret_cast<uint64_t>(t.data) == address && t.ndim == 2 && t.shape[0] == 2 && t.shape[1] == 3));
  CHECK((t.strides[0] == 3 && t.strides[1] == 1 && t.device.device_type == kDLCUDA && t.device.device_id == gpu.ordinal()));
  // The consumer's view reads what was uploaded.
  DeviceTensor<float> v = from_dlpack<float>(t, gpu.ordinal());
  std::vector<float> back(6);
  detail::copy_to_host(back.data(), v.ptr, 6 * sizeof(float), gpu.context());
  CHECK(back == std::vector<float>{1, 2, 3, 4, 5, 6});
  m->deleter(m);  // frees the memory: compute-sanitizer would see a leak or a double free
}
