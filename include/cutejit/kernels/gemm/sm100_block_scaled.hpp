// The block-scaled GEMMs on sm_100 tensor cores (tcgen05.mma kind::mxf4nvf4 and mxf8f6f4 with
// scale factors in TMEM), compile-verified only: no Blackwell GPU has run them. They are
// sm100.hpp's kernel over the main loop `BlockScaled`, which adds each stage's scales to the
// ring and copies them to TMEM before the stage's MMAs:
//   gemm_nvfp4_sm100, gemm_nvfp4_sm100_clc  NVFP4: e2m1 pairs, UE4M3 scales per 16 elements
//   gemm_mxfp8_sm100, gemm_mxfp8_sm100_clc  MXFP8: e4m3, UE8M0 scales per 32 elements
// C (M x N, bf16) = (A SFA)(B SFB)^T, A (M x K) and B (N x K) K-major, the scales in the 128x4
// blocked layout (layout/blocked_scales.hpp).
#pragma once

#include <algorithm>
#include <array>

#include "cutejit/atom/sm100/umma_block_scaled.hpp"

#include "cutejit/kernels/gemm/sm100.hpp"

namespace cutejit::kernels {

namespace gemm_sm100 {
/// The block-scaled main loop of `Atom` (a Tcgen05MmaBlockScaledSS of N = 128): A and B of
/// bytes (FP8, or FP4 pairs), their scales in the 128x4 blocked layout; 128 x 128 tiles and a
/// ring of as many stages as shared memory holds (5 for NVFP4, 6 for MXFP8), each stage 128
/// bytes of K of A and B (128 FP8 or 256 FP4 elements) and the scales of those K blocks: 16
/// of NVFP4's 16-element blocks, 4 of MXFP8's 32-element ones, per row.
///
/// The scales of stage s go to TMEM columns of their own, after the accumulators': the copies
/// of ring iteration i overwrite those of i - stages, whose MMAs are done by then (the producer
/// refilled the stage only after their commit freed it, and the MMA thread copies only after
/// the refill's barrier).
template <class Atom>
struct BlockScaled {
  using T = typename Atom::element_type;
  static constexpr int ctas = 1, cluster_ctas = 1, block_m = 1, block_n = 1, tile_n = Atom::n;
  static constexpr bool multicast = false;
  static_assert(tile_n == 128, "two accumulators of 128 columns leave TMEM room for the scales");
  /// Elements of K per stage, and their scale blocks per row.
  static constexpr int tile_k = k_bytes * (Atom::fp4 ? 2 : 1), blocks = tile_k / Atom::vector;
  /// K is a multiple of this: whole scale blocks, in rows of A and B of whole 16 bytes.
  static constexpr int k_granule = std::max(16 * tile_k / k_bytes, Atom::vector);
  static constexpr int a_stage_bytes = tile_m * k_bytes, b_stage_bytes = tile_n * k_bytes;
  /// A stage's scales: blocks bytes per row, in 512-byte chunks of 128 rows x 4 blocks.
  static constexpr int sfa_stage_bytes = tile_m * blocks, sfb_stage_bytes = tile_n * blocks;
  static constexpr int stage_bytes = a_stage_bytes + b_stage_bytes + sfa_stage_bytes + sfb_stage_bytes;
  /// The stages that fit beside the epilogue's buffers (and 2 KB of barriers and slack).
  static constexpr int stages = std::min(6, (227 * 1024 - epilogue_bytes - 2048) / stage_bytes);
  static constexpr int ring_bytes = stages * stage_bytes;
  /// TMEM columns of a stage's scales: mn / 32 per group of 4 blocks, for SFA and for SFB.
  static constexpr int sfa_columns = blocks / 4 * (tile_m / 32), scale_columns = sfa_columns + blocks / 4 * (tile_n / 32);
  /// A TMA box of scales: (128-row blocks, half-chunks of 256 bytes along K, 256 bytes). A
  /// row block's chunks are contiguous, so the box is chunk after chunk.
  static constexpr int half_chunks = 2 * blocks / 4;

  TmaDescriptor<T> a, b;
  TmaDescriptor<uint8_t> sfa, sfb;

  void prefetch() const {
    a.prefetch();
    b.prefetch();
    sfa.prefetch();
    sfb.prefetch();
  }
  /// The ring's tiles in shared memory: A's of every stage, B's (on the 128-byte swizzle's 1 KB
  /// pattern), SFA's, SFB's (each stage one TMA box, on 128 bytes).
  struct Shared {
    SharedRegion<T> a, b;
    SharedRegion<uint8_t> sfa, sfb;
  };
  static constexpr Shared take(SharedStorage& storage) {
    return {storage.take<T>(a_stage_bytes / int(sizeof(T)), stages, 1024), storage.take<T>(b_stage_bytes / int(sizeof(T)), stages, 1024),
            storage.take<uint8_t>(sfa_stage_bytes, stages, 128), storage.take<uint8_t>(sfb_stage_bytes, stages, 128)};
  }
  /// The producer's TMA loads of K tile `kt` into stage `s`, partitioned into the maps' boxes:
  /// A's and B's tiles (their K in storage units, bytes), and their scales, a box of whole
  /// 512-byte chunks each (scale maps are (128-row blocks, half chunks, 256 bytes)).
  void load(auto& ring, const SharedMemory& smem, const Shared& tiles, const PipelineState& s, const Int& m0, const Int& n0,
            const Int& kt) const {
    constexpr int units = k_bytes / int(sizeof(T));  // K per stage in units of T
    ring.load(a, tma_partition(a, stage_tile(smem.stage(tiles.a, s.index), tile_m),
                               domain_offset({m0, kt * units}, make_identity_tensor({tile_m, units}))),
              s);
    ring.load(b, tma_partition(b, stage_tile(smem.stage(tiles.b, s.index), tile_n),
                               domain_offset({n0, kt * units}, make_identity_tensor({tile_n, units}))),
              s);
    auto scales = [&](const TmaDescriptor<uint8_t>& map, const SharedRegion<uint8_t>& region, int rows, const Int& row0) {
      const IntTuple shape{rows / 128, half_chunks, 256};
      return tma_partition(map, make_tensor(smem.stage(region, s.index), make_layout(shape, LayoutRight{})),
                           domain_offset({row0 / 128, kt * half_chunks, 0}, make_identity_tensor(shape)));
    };
    ring.load(sfa, scales(sfa, tiles.sfa, tile_m, m0), s);
    ring.load(sfb, scales(sfb, tiles.sfb, tile_n, n0), s);
  }
  /// Copies the stage's scales to its TMEM columns (at `scales` + s * scale_columns), then
  /// issues the block-scaled MMAs that read them.
  void mma(const Value<uint32_t>& d, const SharedMemory& smem, const Shared& tiles, const PipelineState& s, const Value<uint32_t>& scales,
           const Bool& accumulate) const {
    Atom atom;
    UmmaOperand<T> A(stage_tile(smem.stage(tiles.a, s.index), tile_m), tile_m, "A"),
        B(stage_tile(smem.stage(tiles.b, s.index), tile_n), tile_n, "B");
    auto [SFA, SFB] = make_umma_scale_factors(atom, make_tensor(smem.stage(tiles.sfa, s.index), blocked_scale_layout(tile_m, blocks)),
                                              make_tensor(smem.stage(tiles.sfb, s.index), blocked_scale_layout(tile_n, blocks)));
    Value<uint32_t> sfa_tmem = scales + cast<uint32_t>(s.index) * uint32_t(scale_columns), sfb_tmem = sfa_tmem + uint32_t(sfa_columns);
    SFA.copy_to_tmem(sfa_tmem);
    SFB.copy_to_tmem(sfb_tmem);
    cutejit::gemm(atom, d, A, B, SFA, sfa_tmem, SFB, sfb_tmem, accumulate);
  }
};

/// The tensor map of a scale tensor of `rows` rows and `blocks` K blocks in the 128x4 blocked
/// layout (rows padded to 128 and blocks to 4, as blocked_scales writes them), as (128-row
/// blocks, 256-byte half chunks, 256 bytes), and boxes of `tile_rows` rows and `half_chunks`
/// half chunks: whole chunks, which land in shared memory unchanged. A partial tile's box reaches
/// past the padding: TMA fills it with zero scales, which meet A's and B's zero fill.
inline TensorMap<uint8_t> scale_tensor_map(const DeviceTensor<uint8_t>& sf, int64_t rows, int64_t blocks, int tile_rows, int half_chunks) {
  const int64_t row_blocks = ceil_div(rows, int64_t(128)), padded_blocks = ceil_div(blocks, int64_t(4)) * 4;
  return make_tensor_map(DeviceTensor<uint8_t>::make(sf.ptr, std::array<int64_t, 3>{row_blocks, padded_blocks / 2, 256},
                                                     std::array<int64_t, 3>{padded_blocks * 128, 256, 1}),
                         {uint32_t(tile_rows / 128), uint32_t(half_chunks), 256u});
}
inline TensorMap<uint8_t> scale_tensor_map(const Buffer<uint8_t>& sf, int64_t rows, int64_t blocks, int tile_rows, int half_chunks) {
  return scale_tensor_map(sf.view({blocked_scale_bytes(rows, blocks)}), rows, blocks, tile_rows, half_chunks);
}
inline TensorMap<uint8_t> scale_tensor_map_for_compile(int tile_rows, int half_chunks) {
  return TensorMap<uint8_t>::for_compile(3, {uint32_t(tile_rows / 128), uint32_t(half_chunks), 256u}, TmaSwizzle::none);
}

/// NVFP4: e2m1 pairs, a UE4M3 scale per 16 elements (kind::mxf4nvf4, .block16).
using Nvfp4 = BlockScaled<SM100_MMA_MXF4NVF4_SS<tile_m, 128>>;
/// MXFP8: e4m3, a UE8M0 scale per 32 elements (kind::mxf8f6f4, .block32).
using Mxfp8 = BlockScaled<SM100_MMA_MXF8F6F4_SS<f8e4m3, tile_m, 128>>;
}  // namespace gemm_sm100

}  // namespace cutejit::kernels
