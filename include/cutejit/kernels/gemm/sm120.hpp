// The mma.sync GEMM fed by TMA (sm_90 and newer: the GEMM of the sm_120 family, whose tensor
// cores are mma.sync, and of any Hopper or Blackwell part without wgmma or tcgen05 in reach):
// C (M x N) = epilogue(A (M x K) * B^T), B stored N x K (both K-major), one template for the
// BF16, FP16 and FP8 mma.sync atoms; the epilogue hook is epilogue.hpp's.
//   - Warp-specialised: warps 0-3 multiply (a 2 x 2 TiledMma of 64 x 64 per warp, the
//     multistage GEMM's), warp 4 loads: for each 128-byte k tile it acquires a stage of a
//     PipelineTmaAsync ring and issues one TMA box of A (128 rows) and one of B (128 rows).
//   - The boxes land 128-byte swizzled, which is the multistage GEMM's conflict-free ring
//     layout (gemm_sm80::ring_layout: chunk c of line l at c ^ (l % 8)), so the consumers'
//     ldmatrix partitions are the multistage GEMM's unchanged; each consumer thread frees a
//     stage after its last ldmatrix from it.
//   - The copy engine zero-fills a box past the tensor's edges, so any M, N and K (K a multiple
//     of 16 bytes' elements, for the tensor map's row stride) need no predicates in the main
//     loop; the epilogue applies the hook to each accumulator and stores the pairs inside C (the
//     hook sees a value past M or N at the last row or column, so what it reads stays in bounds).
// Three stages of 32 KB fit the 99 KB of shared memory an sm_120 CTA may have. It runs on the
// H200 built for sm_90a; for sm_120a and sm_121a it is compile-verified.
//
// The same ring serves the block-scaled atoms (gemm_tma_block_scaled: NVFP4, MXFP4, MXFP8): A
// and B are bytes, whose fragments and ldmatrix partitions are FP8's, and each MMA step's scale
// registers come from the scale tensors in the 128x4 blocked layout through the TiledMma's
// partition_SFA / partition_SFB, read from global memory beside the stage (a stage's scales by
// TMA would not fit the 99 KB beside three stages). Compile-verified only.
#pragma once

#include <algorithm>
#include <bit>
#include <string>
#include <vector>

#include "cutejit/core/visibility.hpp"
#include "cutejit/atom/sm120/mma_block_scaled.hpp"
#include "cutejit/layout/blocked_scales.hpp"
#include "cutejit/pipeline/pipeline.hpp"
#include "cutejit/pipeline/shared_storage.hpp"

#include "cutejit/kernels/gemm/epilogue.hpp"
#include "cutejit/kernels/gemm/sm80.hpp"

namespace cutejit::kernels {

namespace gemm_sm120 {
inline constexpr gemm_sm80::Config config{.tile_m = 128, .tile_n = 128, .warps_m = 2, .warps_n = 2, .stages = 3};
/// The consumers' threads, and one producer warp after them.
inline constexpr int consumers = config.threads(), threads = consumers + 32;

/// Shared memory: the A tiles of every stage, the B tiles (each a TMA box of 128-byte rows, on
/// the 128-byte swizzle's 1 KB pattern), the ring's barriers.
template <Element T>
struct Resources {
  static constexpr int stage_bytes = (config.tile_m + config.tile_n) * 128;
  struct Shared {
    SharedStorage storage;
    SharedRegion<T> a, b;
    SharedRegion<uint64_t> barriers;
  };
  static constexpr Shared shared = [] {
    constexpr int tile_k = gemm_sm80::Config::tile_k<T>();
    Shared r;
    r.a = r.storage.template take<T>(config.tile_m * tile_k, config.stages, 1024);
    r.b = r.storage.template take<T>(config.tile_n * tile_k, config.stages, 1024);
    r.barriers = r.storage.barriers(PipelineTmaAsync::barrier_bytes(config.stages));
    return r;
  }();
  static constexpr uint32_t shared_bytes = shared.storage.bytes();
  static_assert(shared_bytes <= 101376, "the ring fits the 99 KB of shared memory an sm_120 CTA may have");
};

/// A stage's tile of `rows` rows (one 128-byte k tile, K-major) as its TMA box leaves it: the
/// 128-byte swizzle, which is one stage of gemm_sm80::ring_layout (chunk c of row r at
/// c ^ (r % 8)).
template <Element T>
Tensor<T> stage_tile(const Pointer<T>& p, int rows) {
  constexpr int tile_k = gemm_sm80::Config::tile_k<T>(), chunk_bits = std::countr_zero(16u / unsigned(sizeof(T)));
  return make_tensor(p, composition(Swizzle(3, chunk_bits, 3), make_layout({rows, tile_k}, LayoutRight{})));
}

/// The products of one atom's K of a stage: acc += A B^T over the fragments.
struct Dense {
  template <class Op>
  void operator()(const TiledMma<Op>& tiled, const ThrMma<Op>&, const Tensor<float>& acc, const Tensor<typename Op::ElementA>& fa,
                  const Tensor<typename Op::ElementB>& fb, const Int&) const {
    cutejit::gemm(tiled, acc, fa, fb);  // (qualified: kernels::gemm, the operator, would hide it)
  }
};

/// The block-scaled products: acc += (A SFA)(B SFB)^T, the scale factors of the tile's rows and
/// columns for an atom's K read from global memory, where the 128x4 blocked layout keeps a
/// row's scales of one MMA step together (one word for NVFP4's four).
struct BlockScaled {
  Tensor<uint8_t> sfa, sfb;  ///< (rows padded to 128, K blocks) in the blocked layout
  Int bm, bn;                ///< the CTA's tile

  template <class Op>
  void operator()(const TiledMma<Op>& tiled, const ThrMma<Op>& thr, const Tensor<float>& acc, const Tensor<uint8_t>& fa,
                  const Tensor<uint8_t>& fb, const Int& step) const {
    auto fsfa = thr.partition_fragment_SFA({config.tile_m, Op::scales});
    auto fsfb = thr.partition_fragment_SFB({config.tile_n, Op::scales});
    copy(thr.partition_SFA(local_tile(sfa, IntTuple{config.tile_m, Op::scales}, IntTuple{bm, step})), fsfa);
    copy(thr.partition_SFB(local_tile(sfb, IntTuple{config.tile_n, Op::scales}, IntTuple{bn, step})), fsfb);
    cutejit::gemm(tiled, acc, fa, fb, fsfa, fsfb);
  }
};

/// Elements of K in one unit of an operand's storage: the packed FP4 atoms' k_elements over their
/// k bytes (2), and 1 for every other atom.
template <class Op>
constexpr int elements_per_unit() {
  if constexpr (requires { Op::k_elements; }) return Op::k_elements / Op::k;
  else return 1;
}

template <class Op, Element Out, Epilogue E = Identity, class Products = Dense>
CUTEJIT_LOCAL void kernel(const TmaDescriptor<typename Op::ElementA>& a, const TmaDescriptor<typename Op::ElementB>& b, const Tensor<Out>& c,
            const Int& m, const Int& n, const Int& k, const E& epilogue = {}, const Products& products = {}) {
  using T = typename Op::ElementA;
  static_assert(std::is_same_v<T, typename Op::ElementB>, "one element type for A and B (one box shape)");
  static_assert(std::is_same_v<typename Op::ElementC, float>, "f32 accumulators, which the epilogue hook takes");
  using R = Resources<T>;
  constexpr int tile_k = gemm_sm80::Config::tile_k<T>(), stages = config.stages;
  launch_bounds(threads);
  Int t = thread_idx().x;
  Int m0 = block_idx().x * config.tile_m, n0 = block_idx().y * config.tile_n;
  // k counts elements and a tile is tile_k units of T along K: a packed FP4 byte holds two.
  constexpr int per_unit = elements_per_unit<Op>();
  Int k_tiles = (k + (tile_k * per_unit - 1)) / (tile_k * per_unit);
  // The ring as the consumers read it, (row, k, stage); each stage's tile is where its box lands.
  SharedMemory smem(R::shared.storage);
  Tensor<T> sA = make_tensor(smem[R::shared.a], gemm_sm80::ring_layout<T>(config.tile_m, stages, gemm_sm80::Major::k));
  Tensor<T> sB = make_tensor(smem[R::shared.b], gemm_sm80::ring_layout<T>(config.tile_n, stages, gemm_sm80::Major::k));
  PipelineTmaAsync ring(smem[R::shared.barriers], stages, consumers, R::stage_bytes);
  if_(t == 0, [&] {
    ring.init();
    fence_mbarrier_init();
  });
  sync_threads();

  if_(t == consumers, [&] {
    a.prefetch();
    b.prefetch();
    for_(0, k_tiles, [&](Int kt) {
      PipelineState s = PipelineState::at(kt, stages);
      ring.producer_acquire(s);
      ring.load(a, tma_partition(a, stage_tile(smem.stage(R::shared.a, s.index), config.tile_m),
                                 domain_offset({m0, kt * tile_k}, make_identity_tensor({config.tile_m, tile_k}))),
                s);
      ring.load(b, tma_partition(b, stage_tile(smem.stage(R::shared.b, s.index), config.tile_n),
                                 domain_offset({n0, kt * tile_k}, make_identity_tensor({config.tile_n, tile_k}))),
                s);
      ring.producer_commit(s);
    });
  });
  if_(t < consumers, [&] {
    auto tiled = make_tiled_mma(Op{}, make_layout({config.warps_m, config.warps_n, 1}));
    auto thr_mma = tiled.get_slice(t);
    auto acc = thr_mma.partition_fragment_C({config.tile_m, config.tile_n});
    for (int64_t i = 0; i < size(acc.layout()).value(); ++i) acc(IntTuple(i)) = typename Op::ElementC(0);
    // ldmatrix.x4 gives a 16 x 16 block of A (16-bit units), .x2 an 8 x 16 block of B.
    auto ldsm_a = make_tiled_copy_A(LdMatrix<4>{}, tiled);
    auto ldsm_b = make_tiled_copy_B(LdMatrix<2>{}, tiled);
    auto s2r_a = ldsm_a.get_slice(t), s2r_b = ldsm_b.get_slice(t);
    for_(0, k_tiles, [&](Int kt) {
      PipelineState s = PipelineState::at(kt, stages);
      ring.consumer_wait(s);
      for (int kk = 0; kk < tile_k / Op::k; ++kk) {
        auto fa = thr_mma.partition_fragment_A({config.tile_m, Op::k});
        auto fb = thr_mma.partition_fragment_B({config.tile_n, Op::k});
        copy(ldsm_a, s2r_a.partition_S(local_tile(sA(_, _, s.index), IntTuple{config.tile_m, Op::k}, IntTuple{0, kk})), fa);
        copy(ldsm_b, s2r_b.partition_S(local_tile(sB(_, _, s.index), IntTuple{config.tile_n, Op::k}, IntTuple{0, kk})), fb);
        products(tiled, thr_mma, acc, fa, fb, kt * (tile_k / Op::k) + kk);
      }
      // This thread's ldmatrix reads of the stage are done (their registers are the MMAs' inputs).
      ring.consumer_release(s);
    });
    Int bm = block_idx().x, bn = block_idx().y;
    CoordTensor cC = thr_mma.partition_C(local_tile(make_identity_tensor(c.shape()), IntTuple{config.tile_m, config.tile_n}, IntTuple{bm, bn}));
    auto out = make_rmem_tensor<Out>(acc.layout());
    for (int64_t i = 0; i < size(acc.layout()).value(); ++i) {
      F32 x = F32(acc(IntTuple(i)));
      if constexpr (!std::is_same_v<E, Identity>) {
        IntTuple at = cC(IntTuple(i));
        x = F32(epilogue(x, min(coordinate<0>(at), m - 1), min(coordinate<1>(at), n - 1)));
      }
      out(IntTuple(i)) = cast<Out>(x);
    }
    copy_if(cC, c.shape(), out, thr_mma.partition_C(local_tile(c, IntTuple{config.tile_m, config.tile_n}, IntTuple{bm, bn})));
  });
}

/// M, N and K from 1 below 2^31, K a multiple of `k_multiple`, N of 2 (C is stored in pairs).
inline void check_extents(const std::string& name, int64_t m, int64_t n, int64_t k, int64_t k_multiple, detail::Where w) {
  const int64_t limit = int64_t(1) << 31;
  if (m < 1 || n < 1 || k < 1 || m >= limit || n >= limit || k >= limit || k % k_multiple != 0 || n % 2 != 0)
    detail::fail(name + " needs M, N and K from 1 below 2^31, K a multiple of " + std::to_string(k_multiple) + " and N of 2, not " +
                     std::to_string(m) + " x " + std::to_string(n) + " x " + std::to_string(k),
                 w);
}

/// The shapes the tensor maps describe: K a multiple of 16 bytes' elements (their row stride).
inline void check_shape(const std::string& name, int64_t m, int64_t n, int64_t k, int element_bytes, detail::Where w = detail::Where::current()) {
  check_extents(name, m, n, k, 16 / element_bytes, w);
}

/// The block-scaled GEMM's shapes: K a multiple of a stage's K (128 bytes of A: 256 FP4 or 128
/// FP8 elements), so that every MMA step has its scales; the scale tensors in the 128x4
/// blocked layout, rows padded to 128.
template <class Op>
void check_block_scaled_shape(const std::string& name, int64_t m, int64_t n, int64_t k, detail::Where w = detail::Where::current()) {
  check_extents(name, m, n, k, int64_t(128) * (Op::k_elements / Op::k), w);
}

/// The scale factors of `rows` rows of an operand, in bytes: K / scale_block blocks a row.
template <class Op>
int64_t scale_bytes(int64_t rows, int64_t k) {
  return blocked_scale_bytes(rows, k / Op::scale_block);
}

/// The block-scaled products over scale tensors `sfa` and `sfb` (bytes, in the blocked layout
/// of an M x K (N x K) operand's scales), for this CTA's tile.
template <class Op>
BlockScaled block_scaled(const Tensor<uint8_t>& sfa, const Tensor<uint8_t>& sfb, const Int& m, const Int& n, const Int& k) {
  // K is a multiple of a stage's, whose blocks come in fours.
  Int blocks = assume_divisible(k / Op::scale_block, 4);
  auto padded = [](const Int& rows) { return (rows + 127) / 128 * 128; };
  return {make_tensor(sfa.data(), blocked_scale_layout(padded(m), blocks)), make_tensor(sfb.data(), blocked_scale_layout(padded(n), blocks)),
          block_idx().x, block_idx().y};
}

/// The tensor map of an operand (rows x k, row-major): boxes of 128 rows x 128 bytes, 128-byte swizzled.
template <Element T>
TensorMap<T> operand_map(const DeviceTensor<T>& x) {
  return make_tensor_map(x, {128u, uint32_t(gemm_sm80::Config::tile_k<T>())}, TmaSwizzle::bytes128);
}
template <Element T>
TensorMap<T> operand_map(const Buffer<T>& x, int64_t rows, int64_t k) {
  return operand_map(x.view({rows, k}));
}
template <Element T>
TensorMap<T> operand_map_for_compile() {
  return TensorMap<T>::for_compile(2, {128u, uint32_t(gemm_sm80::Config::tile_k<T>())}, TmaSwizzle::bytes128);
}

inline Launch launch(int64_t m, int64_t n, uint32_t shared_bytes) {
  return Launch{.grid = {ceil_div(m, config.tile_m), ceil_div(n, config.tile_n)}, .block = uint32_t(threads), .shared_bytes = shared_bytes};
}
}  // namespace gemm_sm120

}  // namespace cutejit::kernels
