// FP8 GEMM with an FP8 result (sm_90a), the form an FP8 layer hands to the next one:
//     C (M x N, e4m3) = saturate(scale_a * scale_b / scale_c * (A (M x K, e4m3) * B^T))
// with B stored N x K (e4m3), f32 accumulation and per-tensor scales (scale_c is C's: the
// values stored are C / scale_c, rounded to nearest and saturated to +-448).
//
// gemm_fp8's kernel with `Config::out = f8e4m3`: the epilogue converts neighbouring values in
// pairs (one cvt.rn.satfinite.e4m3x2.f32) and writes them into 64 x 64 chunk buffers (64-byte
// rows, 64-byte swizzle) with 2-byte stores (there is no stmatrix for 8-bit values on sm_90),
// then TMA-stores each chunk as for bf16. N must be a multiple of 16 (C's rows are N bytes), K
// of 16.
#pragma once

#include "gemm_fp8.hpp"

namespace examples {
using namespace cutejit;

inline constexpr gemm_sm90::Config fp8_out_config{.out = DType::f8e4m3};

inline Kernel gemm_fp8_e4m3_out{"gemm_fp8_e4m3_out", [](TmaDescriptor<f8e4m3> a, TmaDescriptor<f8e4m3> b, TmaDescriptor<f8e4m3> c,
                                                        F32 scale_a, F32 scale_b, F32 scale_c, Int m, Int n, Int k) {
  F32 scale = scale_a * scale_b / scale_c;
  gemm_sm90::kernel<f8e4m3, fp8_out_config>(a, b, c, m, n, k, [&](const F32& acc, const Int&, const Int&) { return acc * scale; });
}};

/// The launch on device buffers (A: m x k, B: n x k, C: m x n e4m3, all row-major), its shape
/// checked.
inline PreparedLaunch gemm_fp8_e4m3_out_prepare(const Device& gpu, const Buffer<f8e4m3>& a, const Buffer<f8e4m3>& b,
                                                const Buffer<f8e4m3>& c, float scale_a, float scale_b, float scale_c, int64_t m,
                                                int64_t n, int64_t k) {
  using namespace gemm_sm90;
  check_shape<f8e4m3, WgmmaMajor::k, WgmmaMajor::k, f8e4m3>("gemm_fp8_e4m3_out", m, n, k);
  auto [ta, tb] = tensor_maps<f8e4m3, fp8_out_config>(a, b, m, n, k);
  return gemm_fp8_e4m3_out.prepare(gpu, launch_config(gpu, m, n, fp8_out_config), ta, tb, output_map(c, m, n), scale_a, scale_b,
                                   scale_c, int32_t(m), int32_t(n), int32_t(k));
}

inline Example gemm_fp8_e4m3_out_example(int64_t m = 256, int64_t n = 384, int64_t k = 512) {
  return {"gemm_fp8_e4m3_out",
          [m, n, k](const Device& gpu) {
            // C / scale_c reaches about 30 here, well inside e4m3's range (448) but with values
            // from its subnormals to its largest binades.
            const float scale_a = 0.75f, scale_b = 1.3f, scale_c = 0.5f;
            auto ha = random_e4m3(m * k, 41), hb = random_e4m3(n * k, 42);
            auto a = gpu.upload(ha), b = gpu.upload(hb);
            auto c = gpu.upload(gemm::poisoned_output<f8e4m3>(m, n));
            gemm_fp8_e4m3_out_prepare(gpu, a, b, c, scale_a, scale_b, scale_c, m, n, k)();
            gpu.synchronize();
            std::vector<double> ref = gemm::reference(ha, hb, m, n, k);
            for (double& x : ref) x *= double(scale_a) * double(scale_b) / double(scale_c);
            return gemm::error(gemm::to_floats(c), ref);
          },
          [m, n, k](const Target& t) {
            using namespace gemm_sm90;
            auto [ta, tb] = tensor_maps_for_compile<f8e4m3, fp8_out_config>();
            return gemm_fp8_e4m3_out.compile(t, ta, tb, output_map_for_compile<f8e4m3>(), 1.0f, 1.0f, 1.0f, int32_t(m), int32_t(n),
                                             int32_t(k));
          },
          // e4m3 keeps 3 mantissa bits: rounding C to it is off by up to 2^-4 of the value
          // (6.25%), so the element-wise error against the largest |C| is at most that plus
          // the accumulation's (under 4e-3, see gemm_fp8). A swizzle mix-up, a misplaced chunk
          // or a missing scale gives errors of order 1.
          0.07,
          {"sm_90a"}};
}

}  // namespace examples
