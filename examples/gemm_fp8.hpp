// FP8 GEMM on Hopper tensor cores (sm_90a):
//     C (M x N, bf16) = scale_a * scale_b * (A (M x K, e4m3, row-major) * B^T)
// with B stored N x K (e4m3), f32 accumulation and per-tensor scales as float kernel arguments
// (the usual way FP8 tensors carry their range: x = scale * e4m3 value).
//
// The kernel is the shared skeleton of gemm_sm90.hpp. With 1-byte elements a 128-byte
// swizzled row holds 128 K elements, so a stage is 128 x 128 of A and 256 x 128 of B: 48 KB,
// the same bytes as gemm_bf16's stage: a ring of four in 192 KB of shared memory (230 448
// bytes per CTA with the epilogue's buffers and the barriers). Each stage takes four
// m64n256k32 e4m3 wgmmas per consumer warpgroup, twice gemm_bf16's flops for the same
// instructions and bytes. The scales are one multiply in the epilogue hook. Any M, N, K with
// N a multiple of 8 and K of 16 (rows 16-byte multiples apart for TMA). As for gemm_bf16, the
// launch picks 128- or 64-wide tiles when the 256-wide ones would not fill the GPU.
#pragma once

#include "gemm_sm90.hpp"

namespace examples {
using namespace cutejit;

/// The kernel with tiles `TileN` columns wide: gemm_fp8 (256), gemm_fp8_n128, gemm_fp8_n64.
template <int TileN>
inline Kernel gemm_fp8_tile{gemm_sm90::tile_name("gemm_fp8", TileN), [](TmaDescriptor<f8e4m3> a, TmaDescriptor<f8e4m3> b,
                                                                     TmaDescriptor<bf16> c, F32 scale_a, F32 scale_b, Int m, Int n,
                                                                     Int k) {
  F32 scale = scale_a * scale_b;
  gemm_sm90::kernel<f8e4m3, gemm_sm90::Config{.tile_n = TileN}>(a, b, c, m, n, k,
                                                       [&](const F32& acc, const Int&, const Int&) { return acc * scale; });
}};
inline auto& gemm_fp8 = gemm_fp8_tile<256>;

/// The launch of C = scale_a * scale_b * A * B^T on device buffers (A: m x k, B: n x k, C: m x n,
/// all row-major), its shape checked, with the tile width gemm_sm90::choose_tile_n picks.
inline PreparedLaunch gemm_fp8_prepare(const Device& gpu, const Buffer<f8e4m3>& a, const Buffer<f8e4m3>& b,
                                       const Buffer<bf16>& c, float scale_a, float scale_b, int64_t m, int64_t n, int64_t k) {
  using namespace gemm_sm90;
  check_shape<f8e4m3>("gemm_fp8", m, n, k);
  return with_tile_n(gpu, m, n, [&](auto width) {
    constexpr Config config{.tile_n = decltype(width)::value};
    auto [ta, tb] = tensor_maps<f8e4m3, config>(a, b, m, n, k);
    return gemm_fp8_tile<config.tile_n>.prepare(gpu, launch_config(gpu, m, n, config), ta, tb, output_map(c, m, n), scale_a,
                                                scale_b, int32_t(m), int32_t(n), int32_t(k));
  });
}

inline void gemm_fp8_run(const Device& gpu, const Buffer<f8e4m3>& a, const Buffer<f8e4m3>& b, const Buffer<bf16>& c,
                         float scale_a, float scale_b, int64_t m, int64_t n, int64_t k) {
  gemm_fp8_prepare(gpu, a, b, c, scale_a, scale_b, m, n, k)();
}

/// Random e4m3 values: uniform floats in [-1, 1) rounded to e4m3.
inline std::vector<f8e4m3> random_e4m3(size_t n, unsigned seed) { return random_values<f8e4m3>(n, seed); }

inline Example gemm_fp8_example(int64_t m = 256, int64_t n = 384, int64_t k = 512) {
  return {"gemm_fp8",
          [m, n, k](const Device& gpu) {
            // Scales that are not powers of two, so a missing or doubled one shows.
            const float scale_a = 0.75f, scale_b = 1.3f;
            auto ha = random_e4m3(m * k, 21), hb = random_e4m3(n * k, 22);
            auto a = gpu.upload(ha), b = gpu.upload(hb);
            auto c = gpu.upload(gemm::poisoned_output(m, n));
            gemm_fp8_run(gpu, a, b, c, scale_a, scale_b, m, n, k);
            gpu.synchronize();
            std::vector<double> ref = gemm::reference(ha, hb, m, n, k);
            for (double& x : ref) x *= double(scale_a) * double(scale_b);
            return gemm::error(gemm::to_floats(c), ref);
          },
          [m, n, k](const Target& t) {
            using namespace gemm_sm90;
            auto [ta, tb] = tensor_maps_for_compile<f8e4m3>();
            return gemm_fp8.compile(t, ta, tb, output_map_for_compile(), 1.0f, 1.0f, int32_t(m), int32_t(n), int32_t(k));
          },
          // The reference uses the same e4m3 inputs, so the error is the output's and the
          // accumulation's: bf16 rounding (at most 2^-9 relative per element), and Hopper's FP8
          // tensor cores, which keep only about 14 mantissa bits when they add a k32 MMA's
          // products into the f32 accumulator: at most K/32 = 32 such roundings of about 2^-13
          // of the running sum for K <= 1024, under 4e-3 even if they all point the same way.
          // Both errors (norm-wise, and element-wise against the largest |C|) are then well
          // under 1e-2; a missing scale, a wrong K step or a swizzle mix-up gives errors of
          // order 1.
          1e-2,
          {"sm_90a"}};
}

}  // namespace examples
