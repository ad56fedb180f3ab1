// A multistage tensor-op GEMM on the warp-level path (sm_80 and newer): C (M x N) = A (M x K)
// * B (B given as N x K), one template for every mma.sync atom (BF16, FP16, TF32, INT8, FP8),
// written as CuTe's sm80 GEMM is:
//   - CTA tiles of tile_m x tile_n x (128 bytes of K) (Config; 128 x 128 by default), warps_m x
//     warps_n warps of mma.sync atoms (TiledMma), each warp 64 x 64;
//   - A and B each K-major (a row-major A, a B stored N x K) or MN-major (a column-major A, a
//     row-major K x N B), read from the tensors' unit strides;
//   - a ring of `stages` shared tiles, stored as the operand is and swizzled by line, filled by
//     16-byte cp.async (TiledCopy) with zero-fill so that any M, N and K work, the next tiles in
//     flight while the current one is multiplied;
//   - ldmatrix (MN-major: ldmatrix.trans) into the TiledMma's fragments, conflict-free;
//   - the epilogue hook (epilogue.hpp) applied to each f32 accumulator with its row and column,
//     and the results converted and stored with the bound checked per element pair.
// Built for sm_90a it runs on Hopper, where mma.sync is the older, slower path; built for
// sm_80, sm_86, sm_89 and sm_120a it is compile-verified.
#pragma once

#include <bit>
#include <limits>
#include <random>

#include "cutejit/core/visibility.hpp"
#include "cutejit/cutejit.hpp"
#include "cutejit/pipeline/shared_storage.hpp"
#include "cutejit/kernels/gemm/epilogue.hpp"

namespace cutejit::kernels {

namespace gemm_sm80 {

/// The kernel's static choices: the CTA tile, its warps (as 2-D atom layout), the ring depth.
/// The k tile is 128 bytes of the element type (64 BF16, 32 TF32, 128 INT8 or FP8 values).
struct Config {
  int tile_m = 128, tile_n = 128, warps_m = 2, warps_n = 2, stages = 3;
  constexpr int threads() const { return 32 * warps_m * warps_n; }
  template <Element T>
  static constexpr int tile_k() { return 128 / int(sizeof(T)); }
  /// Shared memory: `stages` A tiles, then `stages` B tiles.
  template <Element TA, Element TB = TA>
  struct Shared {
    SharedStorage storage;
    SharedRegion<TA> a;
    SharedRegion<TB> b;
  };
  template <Element TA, Element TB = TA>
  constexpr Shared<TA, TB> shared() const {
    Shared<TA, TB> r;
    r.a = r.storage.template take<TA>(tile_m * tile_k<TA>(), stages);
    r.b = r.storage.template take<TB>(tile_n * tile_k<TB>(), stages);
    return r;
  }
  template <Element T>
  constexpr uint32_t shared_bytes() const {
    return shared<T>().storage.bytes();
  }
};

/// Which index of an operand is contiguous in memory: K (K-major: a row-major A, a B stored
/// N x K) or its M / N index (MN-major: a column-major A, a row-major K x N B).
enum class Major { k, mn };

/// The operand's major-ness, read from its layout: a unit stride is static in the specialization.
template <Element T>
Major major_of(const Tensor<T>& t, const char* operand, detail::Where w = detail::Where::current()) {
  auto unit = [&](int i) { const Integer& s = t.layout().stride()[i].leaf(); return s.is_static() && s.value() == 1; };
  if (unit(1)) return Major::k;
  if (unit(0)) return Major::mn;
  detail::fail(std::string("the tensor-op GEMM reads ") + operand + " with a unit stride along K or along its other index; its layout is " +
                   to_string(t.layout()),
               w);
}

/// A ring of `stages` (rows x tile_k) tiles in shared memory, stored as the operand is in global
/// memory (K-major: lines of tile_k; MN-major: lines of `rows`), each line's 16-byte chunks
/// swizzled by the line (chunk c of line l at c ^ (l % 8)): conflict-free for the 16-byte
/// cp.async writes and for ldmatrix (plain or .trans), which read eight lines at one chunk
/// (tests/unit/layout/test_bank_conflicts.cpp counts them).
template <Element T>
ComposedLayout ring_layout(int64_t rows, int stages, Major major) {
  constexpr int64_t tile_k = Config::tile_k<T>();
  const int chunk_bits = std::countr_zero(16u / unsigned(sizeof(T)));
  const int64_t line = major == Major::k ? tile_k : rows;
  // (row, k, stage), stage after stage.
  Layout ring = major == Major::k ? Layout(IntTuple{rows, tile_k, stages}, IntTuple{tile_k, 1, rows * tile_k})
                                  : Layout(IntTuple{rows, tile_k, stages}, IntTuple{1, rows, rows * tile_k});
  return composition(Swizzle(3, chunk_bits, std::countr_zero(uint64_t(line)) - chunk_bits), ring);
}

/// Global -> shared with 16-byte cp.async along the contiguous index: K-major, a line's eight
/// threads side by side; MN-major, rows / (16 bytes) threads along M or N.
template <Element T>
TiledCopy<CpAsync<16>> global_to_shared(int threads, int64_t rows, Major major) {
  constexpr int vector = 16 / int(sizeof(T)), chunks = Config::tile_k<T>() / vector;
  if (major == Major::k) return make_tiled_copy(CpAsync<16>{}, make_ordered_layout({threads / chunks, chunks}, {1, 0}), make_layout({1, vector}));
  const int along = int(rows / vector);
  return make_tiled_copy(CpAsync<16>{}, make_ordered_layout({along, threads / along}, {0, 1}), make_layout({vector, 1}));
}

template <class Op, Element Out, Config C, Epilogue E = Identity>
CUTEJIT_LOCAL void kernel(const Tensor<typename Op::ElementA>& a, const Tensor<typename Op::ElementB>& b, const Tensor<Out>& c, const E& epilogue = {}) {
  using TA = typename Op::ElementA;
  using TB = typename Op::ElementB;
  static_assert(sizeof(TA) == sizeof(TB), "one k tile for both operands");
  constexpr int tile_k = Config::tile_k<TA>(), stages = C.stages;
  launch_bounds(C.threads());
  Int t = thread_idx().x;
  Int bm = block_idx().x, bn = block_idx().y;
  const Major a_major = major_of(a, "A"), b_major = major_of(b, "B");
  if ((a_major == Major::mn || b_major == Major::mn) && sizeof(TA) != 2)
    detail::fail("ldmatrix.trans moves 16-bit values, so " + Op::name() + " needs A and B K-major (a row-major A, a B stored N x K)",
                 detail::Where::current());

  // This CTA's tiles, k tiles in the last mode, and their coordinates for predication.
  Tensor<TA> gA = local_tile(a, IntTuple{C.tile_m, tile_k}, IntTuple{bm, _});
  Tensor<TB> gB = local_tile(b, IntTuple{C.tile_n, tile_k}, IntTuple{bn, _});
  CoordTensor cA = local_tile(make_identity_tensor(a.shape()), IntTuple{C.tile_m, tile_k}, IntTuple{bm, _});
  CoordTensor cB = local_tile(make_identity_tensor(b.shape()), IntTuple{C.tile_n, tile_k}, IntTuple{bn, _});
  constexpr auto shared = C.template shared<TA, TB>();
  SharedMemory smem(shared.storage);
  Tensor<TA> sA = make_tensor(smem[shared.a], ring_layout<TA>(C.tile_m, stages, a_major));
  Tensor<TB> sB = make_tensor(smem[shared.b], ring_layout<TB>(C.tile_n, stages, b_major));

  auto g2s_a = global_to_shared<TA>(C.threads(), C.tile_m, a_major), g2s_b = global_to_shared<TB>(C.threads(), C.tile_n, b_major);
  auto thr_a = g2s_a.get_slice(t), thr_b = g2s_b.get_slice(t);
  auto load = [&](const Int& k_tile, const Int& stage) {
    copy_if(g2s_a, thr_a.partition_S(cA(_, _, k_tile)), a.shape(), thr_a.partition_S(gA(_, _, k_tile)), thr_a.partition_D(sA(_, _, stage)));
    copy_if(g2s_b, thr_b.partition_S(cB(_, _, k_tile)), b.shape(), thr_b.partition_S(gB(_, _, k_tile)), thr_b.partition_D(sB(_, _, stage)));
  };

  auto tiled = make_tiled_mma(Op{}, make_layout({C.warps_m, C.warps_n, 1}));
  auto thr_mma = tiled.get_slice(t);
  auto acc = thr_mma.partition_fragment_C({C.tile_m, C.tile_n});
  for (int64_t i = 0; i < size(acc.layout()).value(); ++i) acc(IntTuple(i)) = typename Op::ElementC(0);

  // The k-tile loop, for one pair of shared -> register copies: ldmatrix.x4 gives a 16 x 16 block
  // of A (16-bit values), .x2 an 8 x 16 block of B; .trans for an MN-major operand.
  auto mainloop = [&](const auto& ldsm_a, const auto& ldsm_b) {
    auto s2r_a = ldsm_a.get_slice(t), s2r_b = ldsm_b.get_slice(t);
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
        cutejit::gemm(tiled, acc, fa, fb);  // (qualified: kernels::gemm, the operator, would hide it)
      }
    });
    cp_async_wait<0>();
  };
  auto plain_a = make_tiled_copy_A(LdMatrix<4>{}, tiled);
  auto plain_b = make_tiled_copy_B(LdMatrix<2>{}, tiled);
  if constexpr (sizeof(TA) == 2) {
    auto trans_a = make_tiled_copy_A(LdMatrix<4, true>{}, tiled);
    auto trans_b = make_tiled_copy_B(LdMatrix<2, true>{}, tiled);
    if (a_major == Major::mn && b_major == Major::mn) mainloop(trans_a, trans_b);
    else if (a_major == Major::mn) mainloop(trans_a, plain_b);
    else if (b_major == Major::mn) mainloop(plain_a, trans_b);
    else mainloop(plain_a, plain_b);
  } else {
    mainloop(plain_a, plain_b);
  }

  // Epilogue: the hook on each accumulator (past M or N with its row or column clamped, so its
  // reads stay in bounds; such values are not stored), in C's element type, each pair stored
  // where it lies inside C.
  CoordTensor cC = thr_mma.partition_C(local_tile(make_identity_tensor(c.shape()), IntTuple{C.tile_m, C.tile_n}, IntTuple{bm, bn}));
  auto out = make_rmem_tensor<Out>(acc.layout());
  for (int64_t i = 0; i < size(acc.layout()).value(); ++i) {
    if constexpr (std::is_same_v<E, Identity>) {
      out(IntTuple(i)) = cast<Out>(Value<typename Op::ElementC>(acc(IntTuple(i))));
    } else {
      static_assert(std::is_same_v<typename Op::ElementC, float>, "the epilogue hook takes f32 accumulators");
      IntTuple at = cC(IntTuple(i));
      F32 x = epilogue(F32(acc(IntTuple(i))), min(coordinate<0>(at), c.shape(0) - 1), min(coordinate<1>(at), c.shape(1) - 1));
      out(IntTuple(i)) = cast<Out>(x);
    }
  }
  copy_if(cC, c.shape(), out, thr_mma.partition_C(local_tile(c, IntTuple{C.tile_m, C.tile_n}, IntTuple{bm, bn})));
}

/// Any M, N and K from 1: the contiguous index of each operand a multiple of 16 bytes' values
/// (16-byte cp.async lines), N a multiple of 2 (C is stored in pairs).
inline void check_shape(const std::string& name, int64_t m, int64_t n, int64_t k, int element_bytes, Major a, Major b,
                        detail::Where w = detail::Where::current()) {
  const int64_t limit = (int64_t(1) << 31) - 256, vector = 16 / element_bytes;
  const int64_t a_line = a == Major::k ? k : m, b_line = b == Major::k ? k : n;
  if (m < 1 || n < 1 || k < 1 || m > limit || n > limit || k > limit || a_line % vector != 0 || b_line % vector != 0 || n % 2 != 0)
    detail::fail(name + " needs M, N and K from 1 to 2^31 - 256, N a multiple of 2, and A's " + (a == Major::k ? "K" : "M") + " and B's " +
                     (b == Major::k ? "K" : "N") + " (their contiguous indices) multiples of " + std::to_string(vector) + ", not " +
                     std::to_string(m) + " x " + std::to_string(n) + " x " + std::to_string(k),
                 w);
}

template <Element T>
Launch launch(int64_t m, int64_t n, const Config& c) {
  return Launch{.grid = {ceil_div(m, c.tile_m), ceil_div(n, c.tile_n)}, .block = uint32_t(c.threads()), .shared_bytes = c.shared_bytes<T>()};
}

/// The global views of A (m x k) and B (n x k) for their majors: K-major A is row-major m x k,
/// MN-major A column-major; K-major B is stored n x k, MN-major B is a row-major k x n.
template <Element T>
DeviceTensor<T> operand_view(const Buffer<T>& x, int64_t rows, int64_t k, Major major) {
  return major == Major::k ? x.view({rows, k}, {k, 1}) : x.view({rows, k}, {1, rows});
}

}  // namespace gemm_sm80

}  // namespace cutejit::kernels
