// BF16 GEMM on Hopper tensor cores (sm_90a) for row-major A and B:
//     C (M x N, bf16) = A (M x K, row-major) * B (K x N, row-major)
// the layout most users hold ("NN": both used as stored), with f32 accumulation.
//
// The kernel is gemm_bf16's skeleton (gemm_sm90.hpp) with B MN-major: B's rows are N, so a
// stage's B tile is four TMA boxes of 64 K rows by 64 N columns (one 128-byte swizzle span),
// side by side, and the wgmma reads it through an MN-major descriptor with the transpose bit
// of B set. The stage keeps gemm_bf16's 48 KB, so the ring, scheduler and epilogue are the same.
//
// The same header gives the two layouts with A stored K x M (MN-major A, two 64-wide boxes per
// stage, the transpose bit of A): "tn" (C = A^T * B) and "tt" (C = A^T * B^T, B stored N x K).
// gemm_bf16 is "nt". In every name the letters say whether A and B are used as stored (n) or
// transposed (t), all matrices row-major. Shapes as for gemm_bf16; with A stored K x M, M must
// be a multiple of 8 too (its rows are M long).
#pragma once

#include <string_view>

#include "gemm_sm90.hpp"

namespace examples {
using namespace cutejit;

namespace gemm {
/// The kernel's name for a layout: A K-major is "n" (stored M x K), MN-major "t"; B MN-major is
/// "n" (stored K x N), K-major "t". ("nt" is gemm_bf16's layout, under a name of its own here.)
constexpr const char* bf16_layout_name(WgmmaMajor a, WgmmaMajor b) {
  if (a == WgmmaMajor::k) return b == WgmmaMajor::mn ? "gemm_bf16_nn" : "gemm_bf16_nt";
  return b == WgmmaMajor::mn ? "gemm_bf16_tn" : "gemm_bf16_tt";
}
}  // namespace gemm

template <WgmmaMajor AMajor, WgmmaMajor BMajor>
inline Kernel gemm_bf16_layout{gemm::bf16_layout_name(AMajor, BMajor),
                               [](TmaDescriptor<bf16> a, TmaDescriptor<bf16> b, TmaDescriptor<bf16> c, Int m, Int n, Int k) {
                                 gemm_sm90::kernel<bf16, gemm_sm90::Config{.a_major = AMajor, .b_major = BMajor}>(a, b, c, m, n, k);
                               }};

/// C = A * B for A (m x k) and B (k x n), all row-major.
inline auto& gemm_bf16_nn = gemm_bf16_layout<WgmmaMajor::k, WgmmaMajor::mn>;

/// The launch on device buffers (A: m x k, or k x m when MN-major; B: k x n when MN-major, or
/// n x k; C: m x n; all row-major), its shape checked.
template <WgmmaMajor AMajor, WgmmaMajor BMajor>
PreparedLaunch gemm_bf16_layout_prepare(const Device& gpu, const Buffer<bf16>& a, const Buffer<bf16>& b, const Buffer<bf16>& c,
                                        int64_t m, int64_t n, int64_t k) {
  using namespace gemm_sm90;
  check_shape<bf16, AMajor, BMajor>(gemm::bf16_layout_name(AMajor, BMajor), m, n, k);
  auto [ta, tb] = tensor_maps<bf16, Config{.a_major = AMajor, .b_major = BMajor}>(a, b, m, n, k);
  return gemm_bf16_layout<AMajor, BMajor>.prepare(gpu, launch_config(gpu, m, n), ta, tb, output_map(c, m, n), int32_t(m), int32_t(n),
                                                  int32_t(k));
}

/// C (m x n) = A (m x k) * B (k x n), all row-major.
inline void gemm_bf16_nn_run(const Device& gpu, const Buffer<bf16>& a, const Buffer<bf16>& b, const Buffer<bf16>& c, int64_t m,
                             int64_t n, int64_t k) {
  gemm_bf16_layout_prepare<WgmmaMajor::k, WgmmaMajor::mn>(gpu, a, b, c, m, n, k)();
}

template <WgmmaMajor AMajor, WgmmaMajor BMajor>
Example gemm_bf16_layout_example(int64_t m, int64_t n, int64_t k) {
  return {gemm::bf16_layout_name(AMajor, BMajor),
          [m, n, k](const Device& gpu) {
            auto ha = random_values<bf16>(size_t(m * k), 31), hb = random_values<bf16>(size_t(n * k), 32);
            auto a = gpu.upload(ha), b = gpu.upload(hb);
            auto c = gpu.upload(gemm::poisoned_output(m, n));
            gemm_bf16_layout_prepare<AMajor, BMajor>(gpu, a, b, c, m, n, k)();
            gpu.synchronize();
            return gemm::error(gemm::to_floats(c), gemm::reference(ha, hb, m, n, k, AMajor, BMajor));
          },
          [m, n, k](const Target& t) {
            using namespace gemm_sm90;
            auto [ta, tb] = tensor_maps_for_compile<bf16, Config{.a_major = AMajor, .b_major = BMajor}>();
            return gemm_bf16_layout<AMajor, BMajor>.compile(t, ta, tb, output_map_for_compile(), int32_t(m), int32_t(n),
                                                            int32_t(k));
          },
          // bf16 output: about 2^-9 relative rounding per element
          1e-2,
          {"sm_90a"}};
}

inline Example gemm_bf16_nn_example(int64_t m = 256, int64_t n = 384, int64_t k = 512) {
  return gemm_bf16_layout_example<WgmmaMajor::k, WgmmaMajor::mn>(m, n, k);
}

}  // namespace examples
