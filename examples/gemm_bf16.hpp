// BF16 GEMM on Hopper tensor cores (sm_90a): C (M x N, bf16) = A (M x K, row-major) * B,
// with B stored N x K ("TN", as cuBLAS's fastest BF16 layout), f32 accumulation.
//
// The kernel is the shared skeleton of gemm_sm90.hpp (persistent, warp-specialised, a 4-stage
// TMA ring of 128 x 64 A and 256 x 64 B tiles, four m64n256k16 wgmmas per stage) with the
// identity epilogue. Any M, N, K with N and K multiples of 8 (rows 16-byte multiples apart for
// TMA); the tiles on the edges overhang and TMA fills and clips them. When the 256-wide tiles
// would not fill the GPU (a decode-like M = 128), the launch picks the same kernel with 128- or
// 64-wide tiles (gemm_sm90::choose_tile_n).
#pragma once

#include <cutejit/jit/autotune.hpp>

#include "gemm_sm90.hpp"

namespace examples {
using namespace cutejit;

/// The kernel with tiles `TileN` columns wide: gemm_bf16 (256), gemm_bf16_n128, gemm_bf16_n64.
template <int TileN>
inline Kernel gemm_bf16_tile{gemm_sm90::tile_name("gemm_bf16", TileN),
                             [](TmaDescriptor<bf16> a, TmaDescriptor<bf16> b, TmaDescriptor<bf16> c, Int m, Int n, Int k) {
                               gemm_sm90::kernel<bf16, gemm_sm90::Config{.tile_n = TileN}>(a, b, c, m, n, k);
                             }};
inline auto& gemm_bf16 = gemm_bf16_tile<256>;

/// The launch of C = A * B^T on device buffers (A: m x k, B: n x k, C: m x n, all row-major),
/// its shape checked: one CTA per multiprocessor, or one per tile when there are fewer tiles,
/// with tiles `tile_n` columns wide (256, 128 or 64).
inline PreparedLaunch gemm_bf16_prepare_tile(const Device& gpu, int tile_n, const Buffer<bf16>& a, const Buffer<bf16>& b,
                                             const Buffer<bf16>& c, int64_t m, int64_t n, int64_t k) {
  using namespace gemm_sm90;
  check_shape<bf16>("gemm_bf16", m, n, k);
  return with_tile_n(tile_n, [&](auto width) {
    constexpr Config config{.tile_n = decltype(width)::value};
    auto [ta, tb] = tensor_maps<bf16, config>(a, b, m, n, k);
    return gemm_bf16_tile<config.tile_n>.prepare(gpu, launch_config(gpu, m, n, config), ta, tb, output_map(c, m, n), int32_t(m),
                                                 int32_t(n), int32_t(k));
  });
}

/// The same launch with the tile width gemm_sm90::choose_tile_n picks for the shape.
inline PreparedLaunch gemm_bf16_prepare(const Device& gpu, const Buffer<bf16>& a, const Buffer<bf16>& b, const Buffer<bf16>& c,
                                        int64_t m, int64_t n, int64_t k) {
  return gemm_bf16_prepare_tile(gpu, gemm_sm90::choose_tile_n(gpu.multiprocessors(), m, n), a, b, c, m, n, k);
}

/// The same launch with the tile width measured instead of chosen by rule: autotune times the
/// three widths on these buffers the first time a shape is seen on a GPU, driver and cutejit,
/// and remembers the fastest in the cache directory (jit/autotune.hpp).
inline Tuned<int> gemm_bf16_tune(const Device& gpu, const Buffer<bf16>& a, const Buffer<bf16>& b, const Buffer<bf16>& c, int64_t m,
                                 int64_t n, int64_t k, const TuneOptions& options = {}) {
  return autotune(gpu, {"gemm_bf16", {m, n, k}}, std::span<const int>(gemm_sm90::tile_widths),
                  [&](int tile_n) { return gemm_bf16_prepare_tile(gpu, tile_n, a, b, c, m, n, k); }, options);
}
inline PreparedLaunch gemm_bf16_tuned_prepare(const Device& gpu, const Buffer<bf16>& a, const Buffer<bf16>& b, const Buffer<bf16>& c,
                                              int64_t m, int64_t n, int64_t k) {
  return gemm_bf16_prepare_tile(gpu, gemm_bf16_tune(gpu, a, b, c, m, n, k).config, a, b, c, m, n, k);
}

inline void gemm_bf16_run(const Device& gpu, const Buffer<bf16>& a, const Buffer<bf16>& b, const Buffer<bf16>& c, int64_t m,
                          int64_t n, int64_t k) {
  gemm_bf16_prepare(gpu, a, b, c, m, n, k)();
}

/// The same GEMM in clusters of two CTAs on vertically adjacent tiles, which share their B tile
/// through TMA multicast (gemm_sm90.hpp, Config::cluster_m = 2). When M has an odd number of tile rows,
/// the last pair's second CTA works on rows past M: it loads zeros and stores nothing.
inline Kernel gemm_bf16_cluster{"gemm_bf16_cluster", [](TmaDescriptor<bf16> a, TmaDescriptor<bf16> b, TmaDescriptor<bf16> c, Int m,
                                                        Int n, Int k) {
  gemm_sm90::kernel<bf16, gemm_sm90::Config{.cluster_m = 2}>(a, b, c, m, n, k);
}};

inline PreparedLaunch gemm_bf16_cluster_prepare(const Device& gpu, const Buffer<bf16>& a, const Buffer<bf16>& b,
                                                const Buffer<bf16>& c, int64_t m, int64_t n, int64_t k) {
  using namespace gemm_sm90;
  check_shape<bf16>("gemm_bf16_cluster", m, n, k);
  auto [ta, tb] = tensor_maps(a, b, m, n, k);
  return gemm_bf16_cluster.prepare(gpu, launch_config(gpu, m, n, Config{.cluster_m = 2}), ta, tb, output_map(c, m, n), int32_t(m), int32_t(n),
                                   int32_t(k));
}

inline std::vector<bf16> random_bf16(size_t n, unsigned seed) { return random_values<bf16>(n, seed); }

using GemmBf16Prepare = PreparedLaunch (*)(const Device&, const Buffer<bf16>&, const Buffer<bf16>&, const Buffer<bf16>&, int64_t,
                                            int64_t, int64_t);

/// The Example of a TN BF16 GEMM kernel launched by `prepare`: random A and B from `seed`, a
/// poisoned C, a float64 reference.
template <class K>
Example tn_bf16_example(const char* name, K& kernel, GemmBf16Prepare prepare, int64_t m, int64_t n, int64_t k, unsigned seed) {
  return {name,
          [prepare, m, n, k, seed](const Device& gpu) {
            auto ha = random_bf16(m * k, seed), hb = random_bf16(n * k, seed + 1);
            auto a = gpu.upload(ha), b = gpu.upload(hb);
            auto c = gpu.upload(gemm::poisoned_output(m, n));
            prepare(gpu, a, b, c, m, n, k)();
            gpu.synchronize();
            return gemm::error(gemm::to_floats(c), gemm::reference(ha, hb, m, n, k));
          },
          [&kernel, m, n, k](const Target& t) {
            using namespace gemm_sm90;
            auto [ta, tb] = tensor_maps_for_compile<bf16>();
            return kernel.compile(t, ta, tb, output_map_for_compile(), int32_t(m), int32_t(n), int32_t(k));
          },
          // bf16 output: about 2^-9 relative rounding per element
          1e-2,
          {"sm_90a"}};
}

inline Example gemm_bf16_example(int64_t m = 256, int64_t n = 384, int64_t k = 512) {
  return tn_bf16_example("gemm_bf16", gemm_bf16, gemm_bf16_prepare, m, n, k, 11);
}

inline Example gemm_bf16_cluster_example(int64_t m = 512, int64_t n = 384, int64_t k = 512) {
  return tn_bf16_example("gemm_bf16_cluster", gemm_bf16_cluster, gemm_bf16_cluster_prepare, m, n, k, 13);
}

}  // namespace examples
