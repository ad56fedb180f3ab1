// A fused epilogue through the GEMM's hook (gemm_sm90.hpp):
//     C (M x N, bf16) = GELU(A * B^T + bias)
// with A (M x K) and B (N x K) bf16 as in gemm_bf16, and a bias of N bf16 values added per
// column. GELU is the tanh approximation,
//     gelu(x) = x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))),
// with the accurate tanh (libdevice's tanhf, not tanh.approx, whose 2^-11 relative error would
// swamp the small outputs of negative x). The epilogue runs on the f32 accumulators, before
// the bf16 conversion, with each value's global row and column: here only the column is used.
#pragma once

#include "gemm_bf16.hpp"

namespace examples {
using namespace cutejit;

/// GELU, tanh approximation, traced.
inline F32 gelu_tanh(const F32& x) {
  const float k = 0.7978845608028654f;  // sqrt(2/pi)
  F32 inner = k * (x + 0.044715f * x * x * x);
  return 0.5f * x * (1.0f + tanh(inner));
}

inline Kernel gemm_bf16_bias_gelu{"gemm_bf16_bias_gelu", [](TmaDescriptor<bf16> a, TmaDescriptor<bf16> b, TmaDescriptor<bf16> c,
                                                            Tensor<bf16> bias, Int m, Int n, Int k) {
  gemm_sm90::tn_kernel(a, b, c, m, n, k,
                  [&](const F32& acc, const Int&, const Int& col) { return gelu_tanh(acc + cast<float>(BF16(bias(col)))); });
}};

inline PreparedLaunch gemm_bf16_bias_gelu_prepare(const Device& gpu, const Buffer<bf16>& a, const Buffer<bf16>& b,
                                                  const Buffer<bf16>& bias, const Buffer<bf16>& c, int64_t m, int64_t n,
                                                  int64_t k) {
  using namespace gemm_sm90;
  check_shape<bf16>("gemm_bf16_bias_gelu", m, n, k);
  auto [ta, tb] = tensor_maps(a, b, m, n, k);
  return gemm_bf16_bias_gelu.prepare(gpu, launch_config(gpu, m, n), ta, tb, output_map(c, m, n), bias.view({n}), int32_t(m), int32_t(n),
                                     int32_t(k));
}

inline Example gemm_bf16_bias_gelu_example(int64_t m = 256, int64_t n = 384, int64_t k = 512) {
  return {"gemm_bf16_bias_gelu",
          [m, n, k](const Device& gpu) {
            auto ha = random_bf16(m * k, 31), hb = random_bf16(n * k, 32), hbias = random_bf16(n, 33);
            auto a = gpu.upload(ha), b = gpu.upload(hb), bias = gpu.upload(hbias);
            auto c = gpu.upload(gemm::poisoned_output(m, n));
            gemm_bf16_bias_gelu_prepare(gpu, a, b, bias, c, m, n, k)();
            gpu.synchronize();
            std::vector<double> ref = gemm::reference(ha, hb, m, n, k);
            const double pi = 3.14159265358979323846;
            for (int64_t i = 0; i < m; ++i)
              for (int64_t j = 0; j < n; ++j) {
                double x = ref[size_t(i * n + j)] + double(float(hbias[size_t(j)]));
                ref[size_t(i * n + j)] = 0.5 * x * (1 + std::tanh(std::sqrt(2 / pi) * (x + 0.044715 * x * x * x)));
              }
            return gemm::error(gemm::to_floats(c), ref);
          },
          [m, n, k](const Target& t) {
            using namespace gemm_sm90;
            auto [ta, tb] = tensor_maps_for_compile<bf16>();
            auto bias = DeviceTensor<bf16>::make(0, std::array<int64_t, 1>{n}, std::array<int64_t, 1>{1});
            return gemm_bf16_bias_gelu.compile(t, ta, tb, output_map_for_compile(), bias, int32_t(m), int32_t(n), int32_t(k));
          },
          // bf16 output (2^-9 relative per element) and f32 GELU arithmetic (libdevice tanhf is
          // within a few ulp): the same bound as gemm_bf16. A missing or misplaced bias (a row
          // instead of a column) or a missing GELU gives errors of order 0.1 to 1.
          1e-2,
          {"sm_90a"}};
}

}  // namespace examples
