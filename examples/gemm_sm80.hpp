// A multistage tensor-op GEMM on the warp-level path (sm_80 and newer): C (M x N) = A (M x K,
// row-major) * B with B stored N x K ("TN"), f32 accumulation, written as CuTe's sm80 GEMM is:
//   - CTA tiles of tile_m x tile_n x 64 (Config; 128 x 128 by default), warps_m x warps_n warps of
//     mma.sync atoms (TiledMma), each warp 64 x 64;
//   - a ring of `Stages` shared tiles filled by 16-byte cp.async (TiledCopy), predicated with
//     zero-fill so any M, N and K (a multiple of 8) work, the next tiles in flight while
//     the current one is multiplied;
//   - ldmatrix from 128-byte-swizzled shared rows (Sw<3,3,3>: conflict-free for ldmatrix and
//     for the 16-byte cp.async writes) into the TiledMma's fragments;
//   - the accumulators converted and stored with the bound checked per element pair.
// Built for sm_90a it runs on Hopper, where mma.sync is the older, slower path; built for
// sm_80, sm_86, sm_89 and sm_120a it is compile-verified.
#pragma once

#include "gemm_bf16.hpp"

namespace examples {
using namespace cutejit;

namespace gemm80 {

/// The kernel's static choices: the CTA tile, its warps (as 2-D atom layout), the ring depth.
struct Config {
  int tile_m = 128, tile_n = 128, warps_m = 2, warps_n = 2, stages = 3;
  static constexpr int tile_k = 64;
  constexpr int threads() const { return 32 * warps_m * warps_n; }
  /// `stages` A tiles, then `stages` B tiles, and the slack of a 1 KB-aligned start.
  template <Element T>
  constexpr uint32_t shared_bytes() const {
    return uint32_t(stages * (tile_m + tile_n) * tile_k * sizeof(T)) + dynamic_shared_slack(1024);
  }
};

/// A ring of `stages` (rows x tile_k) K-major tiles, 128-byte rows swizzled in 16-byte chunks.
template <Element T>
Tensor<T> shared_ring(int64_t rows, int stages, int64_t byte_offset) {
  static_assert(Config::tile_k * sizeof(T) == 128, "the swizzle assumes 128-byte rows");
  Pointer<T> base = dynamic_shared_aligned<T>(1024, byte_offset);
  // (row, k, stage): rows of tile_k, stage after stage.
  Layout ring(IntTuple{rows, Config::tile_k, stages}, IntTuple{Config::tile_k, 1, rows * Config::tile_k});
  return make_tensor(base, composition(Swizzle(3, 3, 3), ring));
}

template <class Op, Element Out, Config C>
void kernel(const Tensor<typename Op::ElementA>& a, const Tensor<typename Op::ElementB>& b, const Tensor<Out>& c) {
  using TA = typename Op::ElementA;
  using TB = typename Op::ElementB;
  constexpr int tile_k = Config::tile_k, stages = C.stages;
  launch_bounds(C.threads());
  Int t = thread_idx().x;
  Int bm = block_idx().x, bn = block_idx().y;

  // This CTA's tiles, k tiles in the last mode, and their coordinates for predication.
  Tensor<TA> gA = local_tile(a, IntTuple{C.tile_m, tile_k}, IntTuple{bm, _});
  Tensor<TB> gB = local_tile(b, IntTuple{C.tile_n, tile_k}, IntTuple{bn, _});
  CoordTensor cA = local_tile(make_identity_tensor(a.shape()), IntTuple{C.tile_m, tile_k}, IntTuple{bm, _});
  CoordTensor cB = local_tile(make_identity_tensor(b.shape()), IntTuple{C.tile_n, tile_k}, IntTuple{bn, _});
  Tensor<TA> sA = shared_ring<TA>(C.tile_m, stages, 0);
  Tensor<TB> sB = shared_ring<TB>(C.tile_n, stages, int64_t(stages) * C.tile_m * tile_k * sizeof(TA));

  // Global -> shared: rows of 8 threads, 16 bytes each.
  auto g2s = make_tiled_copy(CpAsync<16>{}, make_ordered_layout({C.threads() / 8, 8}, {1, 0}), make_layout({1, 16 / int(sizeof(TA))}));
  auto thr_g2s = g2s.get_slice(t);
  auto load = [&](const Int& k_tile, const Int& stage) {
    copy_if(g2s, thr_g2s.partition_S(cA(_, _, k_tile)), a.shape(), thr_g2s.partition_S(gA(_, _, k_tile)),
            thr_g2s.partition_D(sA(_, _, stage)));
    copy_if(g2s, thr_g2s.partition_S(cB(_, _, k_tile)), b.shape(), thr_g2s.partition_S(gB(_, _, k_tile)),
            thr_g2s.partition_D(sB(_, _, stage)));
  };

  auto tiled = make_tiled_mma(Op{}, make_layout({C.warps_m, C.warps_n, 1}));
  auto thr_mma = tiled.get_slice(t);
  // Shared -> registers: ldmatrix.x4 gives a 16 x 16 block of A, .x2 an 8 x 16 block of B.
  auto ldsm_a = make_tiled_copy_A(LdMatrix<4>{}, tiled);
  auto ldsm_b = make_tiled_copy_B(LdMatrix<2>{}, tiled);
  auto s2r_a = ldsm_a.get_slice(t), s2r_b = ldsm_b.get_slice(t);
  auto acc = thr_mma.partition_fragment_C({C.tile_m, C.tile_n});
  for (int64_t i = 0; i < size(acc.layout()).value(); ++i) acc(IntTuple(i)) = 0.0f;

  Int k_tiles = (a.shape(1) + (tile_k - 1)) / tile_k;
  for (int s = 0; s < stages - 1; ++s) {
    load(Int(s), Int(s));
    cp_async_fence();
  }
  for_(0, k_tiles, 1, [&](Int k_tile) {
    // Tile k_tile has landed (its group and the ones before it), and every thread is done with
    // the stage the next load overwrites (it was read in the iteration before).
    cp_async_wait<stages - 2>();
    sync_threads();
    Int next = k_tile + (stages - 1);
    load(next, next % stages);  // past K, zero-filled and never read
    cp_async_fence();
    Int stage = k_tile % stages;
    for (int kk = 0; kk < tile_k / Op::k; ++kk) {
      auto fa = thr_mma.partition_fragment_A({C.tile_m, Op::k});
      auto fb = thr_mma.partition_fragment_B({C.tile_n, Op::k});
      copy(ldsm_a, s2r_a.partition_S(local_tile(sA(_, _, stage), IntTuple{C.tile_m, Op::k}, IntTuple{0, kk})), fa);
      copy(ldsm_b, s2r_b.partition_S(local_tile(sB(_, _, stage), IntTuple{C.tile_n, Op::k}, IntTuple{0, kk})), fb);
      cutejit::gemm(tiled, acc, fa, fb);  // (the examples' gemm namespace hides the function)
    }
  });
  cp_async_wait<0>();

  // Epilogue: the accumulators in C's element type, each pair stored where it lies inside C.
  auto out = make_rmem_tensor<Out>(acc.layout());
  for (int64_t i = 0; i < size(acc.layout()).value(); ++i) out(IntTuple(i)) = cast<Out>(F32(acc(IntTuple(i))));
  copy_if(thr_mma.partition_C(local_tile(make_identity_tensor(c.shape()), IntTuple{C.tile_m, C.tile_n}, IntTuple{bm, bn})), c.shape(), out,
          thr_mma.partition_C(local_tile(c, IntTuple{C.tile_m, C.tile_n}, IntTuple{bm, bn})));
}

/// Any M, N and K from 1 with K a multiple of 8 (16-byte cp.async rows) and N of 2 (pairs of C).
inline void check_shape(const char* name, int64_t m, int64_t n, int64_t k) {
  const int64_t limit = (int64_t(1) << 31) - 256;
  if (m < 1 || n < 1 || k < 1 || m > limit || n > limit || k > limit || k % 8 != 0 || n % 2 != 0)
    throw Error(std::string("error: ") + name + " needs M, N and K from 1 to 2^31 - 256 with K a multiple of 8 and N of 2, not " +
                std::to_string(m) + " x " + std::to_string(n) + " x " + std::to_string(k));
}

template <Element T>
Launch launch(int64_t m, int64_t n, const Config& c) {
  return Launch{.grid = {ceil_div(m, c.tile_m), ceil_div(n, c.tile_n)}, .block = uint32_t(c.threads()), .shared_bytes = c.shared_bytes<T>()};
}

}  // namespace gemm80

/// BF16 in, f32 accumulation, BF16 out, on SM80_16x8x16_F32BF16BF16F32_TN, with the tiles of `C`.
template <gemm80::Config C>
inline auto gemm_tensorop_bf16_config = Kernel{
    "gemm_tensorop_bf16_" + std::to_string(C.tile_m) + "x" + std::to_string(C.tile_n) + "_s" + std::to_string(C.stages),
    [](Tensor<bf16> a, Tensor<bf16> b, Tensor<bf16> c) { gemm80::kernel<SM80_16x8x16_F32BF16BF16F32_TN, bf16, C>(a, b, c); }};
inline Kernel gemm_tensorop_bf16{"gemm_tensorop_bf16", [](Tensor<bf16> a, Tensor<bf16> b, Tensor<bf16> c) {
  gemm80::kernel<SM80_16x8x16_F32BF16BF16F32_TN, bf16, gemm80::Config{}>(a, b, c);
}};

/// The launch of C = A * B^T on device buffers (A: m x k, B: n x k, C: m x n, all row-major), its shape checked.
inline PreparedLaunch gemm_tensorop_bf16_prepare(const Device& gpu, const Buffer<bf16>& a, const Buffer<bf16>& b, const Buffer<bf16>& c,
                                                 int64_t m, int64_t n, int64_t k) {
  gemm80::check_shape("gemm_tensorop_bf16", m, n, k);
  return gemm_tensorop_bf16.prepare(gpu, gemm80::launch<bf16>(m, n, gemm80::Config{}), a.view({m, k}), b.view({n, k}), c.view({m, n}));
}

inline void gemm_tensorop_bf16_run(const Device& gpu, const Buffer<bf16>& a, const Buffer<bf16>& b, const Buffer<bf16>& c, int64_t m,
                                   int64_t n, int64_t k) {
  gemm_tensorop_bf16_prepare(gpu, a, b, c, m, n, k)();
}

inline Example gemm_tensorop_bf16_example(int64_t m = 300, int64_t n = 200, int64_t k = 520) {
  return {"gemm_tensorop_bf16",
          [m, n, k](const Device& gpu) {
            auto ha = random_bf16(m * k, 21), hb = random_bf16(n * k, 22);
            auto a = gpu.upload(ha), b = gpu.upload(hb);
            auto c = gpu.upload(gemm::poisoned_output(m, n));
            gemm_tensorop_bf16_run(gpu, a, b, c, m, n, k);
            gpu.synchronize();
            return gemm::error(gemm::to_floats(c), gemm::reference(ha, hb, m, n, k));
          },
          [m, n, k](const Target& t) {
            auto view = [](int64_t rows, int64_t cols) {
              return DeviceTensor<bf16>::make(256, std::array<int64_t, 2>{rows, cols}, std::array<int64_t, 2>{cols, 1});
            };
            return gemm_tensorop_bf16.compile(t, view(m, k), view(n, k), view(m, n));
          },
          1e-2,
          {"sm_80", "sm_86", "sm_89", "sm_90a", "sm_120a"}};
}

}  // namespace examples
