// The few-row GEMM on the tensor cores: C (M x N) = A (M x K) * B (B given as N x K), both
// K-major, M up to 8 a block of A's rows times `m_blocks` (up to 64), A and B bf16 or f16, C
// bf16 or f16, products and sums in f32. It does what small_m.hpp does (read B once, at the
// memory's pace) for the batches where that kernel's f32 FMAs, M of them for every weight, set
// the pace instead (M of 4 to 8). Past 8 rows it serves the batches where a 128-row tile of the
// wide GEMM leaves most multiprocessors idle (N / tile_n CTAs): on an H100 at Qwen3-8B's decode
// projections, 1.5-2.3x faster than the wgmma GEMM at 16 rows and up to 1.8x at 32 (a tie on the
// gated gate/up), but 1.5-2.3x slower at 64, where its mma.sync work, not B's bytes, sets the
// pace (docs/kernels.md). kernels::gemm hands it up to gemm_few_rows_max_m rows.
//
// One mma.sync m16n8k16 per 16 x 16 block of B and 8 rows of A, transposed: B's rows are the
// atom's A (M = 16 rows of B) and A's rows its B (N = 8 of the batch, `m_blocks` atoms side by
// side; rows of A past M read as zeros and are not stored), so C^T = B A^T comes out of the
// accumulators.
//   - A CTA owns 16 rows of B (16 columns of C); its `warps` warps share K, chunk by chunk (32
//     values of K a chunk), and add their accumulators through shared memory at the end.
//   - K is read in a permuted order, the same for both operands (a dot product does not care
//     in which order it sums): lane (g, t) of the atom owns K values 2t, 2t+1, 2t+8 and 2t+9 of
//     each k16 block, so the tiled MMA's K (two blocks, 32 values) is permuted by
//     (2,4,2,2):(1,8,2,4), which sends lane t's eight values of a row to K 8t to 8t+7 of the
//     chunk: one 16-byte load a row, for B's rows g and g + 8 and for A's rows g, g + 8, ...
//   - `unroll` chunks of B a warp are loaded before any is multiplied.
//   - `gated` (Fusion::gated of small_m.hpp): B = [W; V] and C has N/2 columns,
//     C = gate(A W^T) * (A V^T). A CTA's 16 rows are 8 of W and the same 8 of V (rows g and
//     g + 8 of the atom), so each lane holds both factors of its columns of C.
// Traced `dependent`, it waits (griddepcontrol_wait) after issuing its first round of B's loads,
// as small_m.hpp's kernel does. N must be a multiple of 16 (8 for C's columns with `gated`) and
// K of 32; the norm fusion is small_m.hpp's alone.
#pragma once

#include <string>
#include <type_traits>
#include <vector>

#include "cutejit/core/visibility.hpp"
#include "cutejit/cutejit.hpp"
#include "cutejit/kernels/gemm/epilogue.hpp"
#include "cutejit/kernels/gemm/small_m.hpp"

namespace cutejit::kernels::gemm_small_m_mma {

/// The defaults keep as many of B's bytes in flight on a multiprocessor as the FMA kernel does
/// (4 KB a warp, about 16 warps at N = 4096): within 2% of the best of five (warps, unroll)
/// counts at each of Qwen3-8B's decode projections from M = 3 (H100, 2026-12-07).
struct Config {
  int warps = 8;     ///< warps of a CTA, each a share of K
  int unroll = 4;    ///< chunks of B a warp loads before it multiplies any
  int m_blocks = 1;  ///< blocks of 8 rows of A: M up to 8 m_blocks
  static constexpr int rows = 16, chunk = 32, block_m = 8, max_m_blocks = 8;
  constexpr int threads() const { return 32 * warps; }
  constexpr int max_m() const { return block_m * m_blocks; }
  /// The fewest blocks of A's rows that hold m rows.
  static constexpr int m_blocks_for(int64_t m) { return int((m + block_m - 1) / block_m); }
  /// What kernels::gemm runs for m rows: the defaults up to 8, then 2 chunks in flight a warp.
  /// At 16 and 32 rows 8 warps and 2 chunks were the fastest of five (warps, unroll) counts on
  /// each of Qwen3-8B's decode projections: 1-4% ahead of the defaults at 16, 18-31% at 32
  /// (H100, 2026-12-07).
  static constexpr Config for_m(int64_t m) { return for_blocks(m_blocks_for(m)); }
  /// The same, for `m_blocks` blocks of A's rows (what the traced kernel is specialized on).
  static constexpr Config for_blocks(int m_blocks) { return {.warps = 8, .unroll = m_blocks == 1 ? 4 : 2, .m_blocks = m_blocks}; }
  /// Columns of C a CTA makes: its 16 rows of B, or with `gated` 8 (8 rows of W, 8 of V).
  static constexpr int columns_per_cta(bool gated) { return gated ? rows / 2 : rows; }
};

/// The atom for the element type: D (f32) = A * B + C, 16 x 8 x 16.
template <class T>
using Atom = std::conditional_t<std::is_same_v<T, bf16>, SM80_16x8x16_F32BF16BF16F32_TN, SM80_16x8x16_F32F16F16F32_TN>;

/// One atom, K permuted so that each lane's values of a row lie side by side (see above).
template <class T>
TiledMma<Atom<T>> tiled_mma() {
  return make_tiled_mma(Atom<T>{}, make_layout({1, 1, 1}),
                        Tile{TileMode(Config::rows), TileMode(8), TileMode(Layout(IntTuple{2, 4, 2, 2}, IntTuple{1, 8, 2, 4}))});
}

/// C = epilogue(fusion(A B^T)): T bf16 or f16; fusion.norm is refused (small_m.hpp has it).
template <class T, class TC, class E = Identity>
CUTEJIT_LOCAL void kernel(const Config& config, const Tensor<T>& a, const Tensor<T>& b, const Tensor<TC>& c, const E& epilogue = {},
                          const gemm_small_m::Fusion& fusion = {}, bool dependent = false) {
  static_assert(std::is_same_v<T, bf16> || std::is_same_v<T, f16>, "the tensor-core few-row GEMM takes bf16 or f16 operands");
  if (fusion.norm) throw Error("error: the tensor-core few-row GEMM does not fuse the norm (small_m.hpp's kernel does)");
  if (config.m_blocks < 1 || config.m_blocks > Config::max_m_blocks)
    throw Error("error: the tensor-core few-row GEMM takes 1 to " + std::to_string(Config::max_m_blocks) + " blocks of " +
                std::to_string(Config::block_m) + " rows of A, not " + std::to_string(config.m_blocks));
  // The warps' sums meet in static shared memory: 4 m_blocks values a lane, f32.
  if (int64_t(16) * config.m_blocks * 32 * config.warps > 48 * 1024)
    throw Error("error: the tensor-core few-row GEMM adds its warps' sums in 48 KB of shared memory: " + std::to_string(config.warps) +
                " warps of " + std::to_string(config.m_blocks) + " blocks of A's rows need " +
                std::to_string(16 * config.m_blocks * 32 * config.warps) + " bytes; use fewer warps (warps x blocks at most 96)");
  const int W = config.warps, U = config.unroll, MA = config.max_m();
  const bool gated = fusion.gated;
  block_shape(config.threads());
  Int lane = thread_idx().x % 32, warp = thread_idx().x / 32;
  Int tile = block_idx().x;
  auto tiled = tiled_mma<T>();
  auto thr = tiled.get_slice(lane);

  // The CTA's 16 rows of B as (row, K in the chunk, chunk): rows 16 tile on, or with `gated`
  // rows 8 tile on of W and the same rows of V, N/2 rows further.
  const Integer n = size(mode(b.layout(), 0)), k = size(mode(b.layout(), 1)), ld = b.layout().stride()[0].leaf();
  const Integer n_out = gated ? n / 2 : n, chunks = k / Config::chunk;
  const Integer second_half = gated ? n_out * ld : Integer(8) * ld;
  Int first_row = tile * Config::columns_per_cta(gated);
  Tensor<T> gB = make_tensor(b.pointer_at({first_row, Int(0)}), Layout(IntTuple{IntTuple{8, 2}, Config::chunk, chunks},
                                                                         IntTuple{IntTuple{ld, second_half}, 1, Config::chunk}));
  // A's first 8 m_blocks rows (those past M predicated off) as (row, K in the chunk, chunk).
  Tensor<T> gA = local_tile(a, IntTuple{MA, Config::chunk}, IntTuple{0, _});
  CoordTensor cA = local_tile(make_identity_tensor(a.shape()), IntTuple{MA, Config::chunk}, IntTuple{0, _});

  // Chunk `i` of B into the atom's A fragments: per row (g, then g + 8), eight values of K side
  // by side, one 16-byte load.
  auto load_b = [&](const Int& i) {
    Tensor<T> f = thr.partition_fragment_A({Config::rows, Config::chunk});
    Tensor<T> src = thr.partition_A(gB(_, _, i));
    for (int half = 0; half < 2; ++half) {
      const IntTuple row{IntTuple{_, half, _}, _, _};
      copy(src.slice(row), f.slice(row));
    }
    return f;
  };
  // Chunk `i` of A into the atoms' B fragments: rows g, g + 8, ...: eight values of K each,
  // zeros past M.
  auto load_a = [&](const Int& i) {
    Tensor<T> f = thr.partition_fragment_B({MA, Config::chunk});
    for (int64_t v = 0; v < size(f.layout()).value(); ++v) f(IntTuple(v)) = Value<T>(0.0f);
    copy_if(thr.partition_B(cA(_, _, i)), a.shape(), thr.partition_B(gA(_, _, i)), f);
    return f;
  };
  Tensor<f32> acc = thr.partition_fragment_C({Config::rows, MA});
  for (int64_t v = 0; v < size(acc.layout()).value(); ++v) acc(IntTuple(v)) = 0.0f;

  // Rounds of U chunks a warp, the warps' chunks interleaved: chunk (r + u) W + warp.
  const Int round = Int(U * W), whole = Int(chunks) / round * round;
  auto chunk_of = [&](const Int& r, int u) { return r + u * W + warp; };
  auto multiply_round = [&](const Int& r, const std::vector<Tensor<T>>& fb) {
    std::vector<Tensor<T>> fa;
    for (int u = 0; u < U; ++u) fa.push_back(load_a(chunk_of(r, u)));
    for (int u = 0; u < U; ++u) cutejit::gemm(tiled, acc, fb[size_t(u)], fa[size_t(u)]);
  };
  Int first_round = 0;
  if (dependent) {
    // The first round before the wait (with fewer chunks than a round, B's last chunk again: in
    // bounds, and unused).
    std::vector<Tensor<T>> fb;
    for (int u = 0; u < U; ++u) fb.push_back(load_b(min(chunk_of(Int(0), u), Int(chunks) - 1)));
    griddepcontrol_wait();
    if_(whole > 0, [&] { multiply_round(Int(0), fb); });
    first_round = round;
  }
  for_(first_round, whole, round, [&](Int r) {
    std::vector<Tensor<T>> fb;
    for (int u = 0; u < U; ++u) fb.push_back(load_b(chunk_of(r, u)));
    multiply_round(r, fb);
  });
  for_(whole + warp, Int(chunks), Int(W), [&](Int i) { cutejit::gemm(tiled, acc, load_b(i), load_a(i)); });

  // The warps' sums, added by warp 0, which applies the fusion and the epilogue and stores.
  Tensor<f32> partial = make_smem_tensor<f32>(make_layout({int64_t(size(acc.layout()).value()), 32, W}));
  copy(acc, partial(_, lane, warp));
  sync_threads();
  if_(warp == 0, [&] {
    for (int w = 1; w < W; ++w)
      for (int64_t v = 0; v < size(acc.layout()).value(); ++v) acc(IntTuple(v)) = F32(acc(IntTuple(v))) + F32(partial(IntTuple(v), lane, w));
    // (row of the CTA's 16, row of A) of each accumulator, as (rows g and g + 8) x (two rows of
    // A in each block of 8).
    Tensor<f32> sums = accumulator_rowcol(tiled, acc);
    CoordTensor at = accumulator_rowcol(tiled, thr.partition_C(make_identity_tensor(IntTuple{Config::rows, MA})));
    auto store = [&](const F32& value, const IntTuple& where, const Int& column0) {
      Int m = coordinate<1>(where), col = column0 + coordinate<0>(where);
      if_(m < a.shape(0), [&] {
        if constexpr (std::is_same_v<E, Identity>) c(m, col) = cast<TC>(value);
        else c(m, col) = cast<TC>(epilogue(value, m, col));
      });
    };
    const int64_t rows = size(mode(sums.layout(), 0)).value(), cols = size(mode(sums.layout(), 1)).value();
    for (int64_t j = 0; j < cols; ++j) {
      if (gated) {
        // Row g holds W's product for column g of the CTA's 8, row g + 8 V's for the same.
        F32 w = sums(IntTuple(0), IntTuple(j)), v = sums(IntTuple(1), IntTuple(j));
        store((fusion.gate ? fusion.gate(w) : w) * v, at(IntTuple(0), IntTuple(j)), first_row);
      } else {
        for (int64_t r = 0; r < rows; ++r) store(F32(sums(IntTuple(r), IntTuple(j))), at(IntTuple(r), IntTuple(j)), first_row);
      }
    }
  });
}

/// One CTA a `columns_per_cta(gated)` of C's `columns`.
inline Launch launch(int64_t columns, const Config& config, bool gated = false, bool dependent = false) {
  return Launch{.grid = uint32_t(columns / Config::columns_per_cta(gated)), .block = uint32_t(config.threads()),
                .programmatic_dependent_launch = dependent};
}

}  // namespace cutejit::kernels::gemm_small_m_mma
