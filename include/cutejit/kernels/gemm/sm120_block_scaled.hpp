// Block-scaled GEMMs on sm_120 tensor cores (mma.sync with scale factors), compile-verified
// only: no sm_120 GPU has run them. C (M x N, f32) = (A * SFA)(B * SFB)^T, A stored M x K and B
// N x K ("TN"), each `scale_block` elements of K of a row of A (column of B) sharing a scale:
//   gemm_nvfp4_sm120   NVFP4: e2m1 pairs (e2m1x2 bytes), UE4M3 scales per 16 (kind::mxf4nvf4)
//   gemm_mxfp4_sm120   MXFP4: e2m1 pairs, UE8M0 scales per 32 (kind::mxf4)
//   gemm_mxfp8_sm120   MXFP8: e4m3 bytes, UE8M0 scales per 32 (kind::mxf8f6f4)
// A and B are bytes (uint8_t tensors): K / 2 of them per row for FP4, K for FP8; the scales are
// one byte each, SFA M x K / scale_block and SFB N x K / scale_block, row-major.
//
// A deliberately plain kernel, to show the atom's partitions: four warps per 64 x 64 tile of C,
// each warp 16 rows by 8 atoms along N. For each 32-byte K step (one atom's K) every thread
// loads its fragments of A and B straight from global memory (partition_A / partition_B of the
// tile: 4-byte loads), assembles its scale registers where the atom's scale-factor layouts say
// (one byte per K block of its row of A, of its column of B), and issues 8 MMAs; the f32
// accumulators go out through partition_C. No shared memory, no pipeline: the shape of a
// decode GEMV more than of a peak GEMM. M and N any (the tiles at the edges are partial: their
// loads and stores are predicated on identity tensors, CuTe's residue idiom, and their rows'
// scales read the last real row's), K a multiple of 64.
#pragma once

#include <cstdint>
#include <string>

#include "cutejit/core/visibility.hpp"
#include "cutejit/cutejit.hpp"
#include "cutejit/atom/sm120/mma_block_scaled.hpp"
#include "cutejit/atom/tiled_mma.hpp"
#include "cutejit/tensor/copy.hpp"
#include "cutejit/tensor/fragment.hpp"
#include "cutejit/tensor/identity.hpp"
#include "cutejit/tensor/partition.hpp"

namespace cutejit::kernels {

namespace gemm_sm120_block_scaled {
inline constexpr int tile_m = 64, tile_n = 64, warps = 4, threads = 32 * warps;

/// Bytes as a rows x cols row-major tensor.
inline Tensor<uint8_t> row_major(const Tensor<uint8_t>& t, const Int& rows, const Int& cols) {
  return make_tensor(t.data(), Layout(IntTuple{rows, cols}, IntTuple{cols, 1}));
}

/// A thread's scale register for one atom's K step: one byte per K block of its row of A
/// (column of B), where the atom's scale-factor layout `tv` puts them; `row(r)` is the row of
/// `scales` that holds row r of the atom's `tile_rows`.
template <class Op, class Row>
Value<uint32_t> scale_register(const Tensor<uint8_t>& scales, const Layout& tv, const Int& lane, int tile_rows, const Row& row,
                               const Int& step) {
  Value<uint32_t> r(0u);
  for (int j = 0; j < Op::scales; ++j) {
    Integer at = tv(lane, j);  // row + tile_rows * block
    Int block = Int(at) / tile_rows;
    r = r | (cast<uint32_t>(Value<uint8_t>(scales(row(Int(at) % tile_rows), step * Op::scales + block))) << uint32_t(8 * j));
  }
  return r;
}

template <class Op>
CUTEJIT_LOCAL void kernel(const Tensor<uint8_t>& a, const Tensor<uint8_t>& b, const Tensor<uint8_t>& sfa, const Tensor<uint8_t>& sfb,
            const Tensor<float>& c, const Int& m, const Int& n, const Int& k) {
  constexpr int k_bytes = Op::k;  // an atom's K in bytes: 32
  constexpr int elements_per_byte = Op::k_elements / k_bytes;
  launch_bounds(threads);
  Int tid = thread_idx().x, lane = tid % 32, warp = tid / 32;
  Int bm = block_idx().x, bn = block_idx().y;
  // The operands as (rows, K bytes) and the scales as (rows, K blocks), row-major; the shape
  // check makes every operand row a multiple of 32 bytes, which the 4-byte loads rely on (the
  // scales are read byte by byte).
  Int row_bytes = assume_divisible(k / elements_per_byte, 32), row_scales = k / Op::scale_block;
  Tensor<uint8_t> A = row_major(a, m, row_bytes), B = row_major(b, n, row_bytes);
  Tensor<uint8_t> SFA = row_major(sfa, m, row_scales), SFB = row_major(sfb, n, row_scales);
  Tensor<float> C = make_tensor(c.data(), Layout(IntTuple{m, n}, IntTuple{n, 1}));

  auto tiled = make_tiled_mma(Op{}, make_layout({warps, 1, 1}));
  auto thr = tiled.get_slice(tid);
  Tensor<float> acc = thr.partition_fragment_C({tile_m, tile_n});  // (4, 1, 8)
  fill(acc, 0.0f);
  Tensor<uint8_t> gA = local_tile(A, IntTuple{tile_m, k_bytes}, IntTuple{bm, _});  // (64, 32, k steps)
  Tensor<uint8_t> gB = local_tile(B, IntTuple{tile_n, k_bytes}, IntTuple{bn, _});
  // Every element's (row, byte) coordinates, tiled alike: the predicates of the residue tiles.
  auto cA = local_tile(make_identity_tensor(A.shape()), IntTuple{tile_m, k_bytes}, IntTuple{bm, _});
  auto cB = local_tile(make_identity_tensor(B.shape()), IntTuple{tile_n, k_bytes}, IntTuple{bn, _});
  // This thread's scale factors: (row, K block) of its warp's 16 rows, (column, K block) of
  // each atom's 8 columns, from the atom's layouts.
  const Layout sfa_tv = Op::layout_sfa(), sfb_tv = Op::layout_sfb();

  for_(0, k / Op::k_elements, [&](Int step) {
    Tensor<uint8_t> fa = thr.partition_fragment_A({tile_m, k_bytes});  // (16, 1, 1)
    Tensor<uint8_t> fb = thr.partition_fragment_B({tile_n, k_bytes});  // (8, 8, 1)
    // Rows past M or N load nothing (K is whole steps, so each 4-byte load is all in or all out);
    // they only feed rows and columns of C that are not stored.
    fill(fa, uint8_t(0));
    fill(fb, uint8_t(0));
    copy_if(thr.partition_A(cA(_, _, step)), A.shape(), thr.partition_A(gA(_, _, step)), fa);
    copy_if(thr.partition_B(cB(_, _, step)), B.shape(), thr.partition_B(gB(_, _, step)), fb);
    Int a_row0 = bm * tile_m + warp * 16;
    Value<uint32_t> scale_a = scale_register<Op>(SFA, sfa_tv, lane, 16, [&](const Int& r) { return min(a_row0 + r, m - 1); }, step);
    for (int j = 0; j < tile_n / Op::n; ++j) {
      Int b_row0 = bn * tile_n + j * Op::n;
      Value<uint32_t> scale_b = scale_register<Op>(SFB, sfb_tv, lane, 8, [&](const Int& r) { return min(b_row0 + r, n - 1); }, step);
      mma(Op{}, acc(_, 0, j), fa(_, 0, 0), fb(_, j, 0), acc(_, 0, j), scale_a, scale_b);
    }
  });
  auto cC = local_tile(make_identity_tensor(C.shape()), IntTuple{tile_m, tile_n}, IntTuple{bm, bn});
  copy_if(thr.partition_C(cC), C.shape(), acc, thr.partition_C(local_tile(C, IntTuple{tile_m, tile_n}, IntTuple{bm, bn})));
}

inline void check_shape(const char* name, int64_t m, int64_t n, int64_t k) {
  if (m <= 0 || n <= 0 || k <= 0 || k % 64 || m * n >= (int64_t(1) << 31))
    throw Error(std::string(name) + " needs M and N of at least 1, K a multiple of 64, M x N below 2^31, not " + std::to_string(m) +
                " x " + std::to_string(n) + " x " + std::to_string(k));
}

inline Launch launch_config(int64_t m, int64_t n) { return Launch{.grid = {ceil_div(m, tile_m), ceil_div(n, tile_n)}, .block = threads}; }
}  // namespace gemm_sm120_block_scaled

}  // namespace cutejit::kernels
