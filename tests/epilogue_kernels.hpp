// The kernels the epilogue tests trace (tests/unit/test_epilogue.cpp) and run
// (tests/gpu/test_epilogue_gpu.cpp): the stmatrix copy of a wgmma C fragment into a shared
// tile and out with a TMA store, stmatrix's transposed form, and a TMA reduce-add.
#pragma once

#include <cutejit/cutejit.hpp>

namespace test {
using namespace cutejit;

/// The 16-bit code every element of a 64 x 64 test tile carries: its row and column.
inline constexpr uint16_t element_code(int row, int col) { return uint16_t(row * 64 + col); }

/// One warpgroup builds the C fragment of the m64n64 wgmma atom for a 64 x 64 tile in which
/// each element holds element_code(row, column) as its bits, its row and column read from
/// partition_C of an identity tensor; stores it with the stmatrix copy (make_tiled_copy_C) into
/// shared memory (128-byte swizzled as a TMA box, or plain row-major) and TMA-stores it to `out`.
inline auto stmatrix_tile(bool swizzled) {
  return Kernel{swizzled ? "stmatrix_tile_swizzled" : "stmatrix_tile", [swizzled](TmaDescriptor<bf16> out) {
    Pointer<bf16> smem = dynamic_shared_aligned<bf16>(1024);
    Layout row_major = make_layout({64, 64}, LayoutRight{});
    Tensor<bf16> tile = swizzled ? make_tensor(smem, composition(Swizzle(3, 3, 3), row_major)) : make_tensor(smem, row_major);
    Int t = thread_idx().x;
    auto tiled = make_tiled_mma(SM90_64xNx16_F32BF16BF16_SS<64>{});
    auto thr = tiled.get_slice(t);
    Tensor<bf16> fragment = thr.partition_fragment_C<bf16>({64, 64});
    CoordTensor coords = thr.partition_C(make_identity_tensor({64, 64}));
    for (int i = 0; i < 32; ++i) {
      IntTuple at = coords(IntTuple(i), IntTuple(0), IntTuple(0));
      fragment(IntTuple(i)) = bitcast<bf16>(cast<int16_t>(coordinate<0>(at) * 64 + coordinate<1>(at)));
    }
    auto r2s = make_tiled_copy_C(StMatrix<4>{}, tiled);
    copy(r2s, fragment, r2s.get_slice(t).partition_D(tile));
    fence_proxy_async_shared();
    sync_threads();
    if_(t == 0, [&] {
      out.store(smem, {0, 0});
      tma_store_commit();
      tma_store_wait<0>();
    });
  }};
}

/// One warp stores four 8 x 8 matrices with the transposed stmatrix into a 16 x 16 row-major
/// shared tile (matrix j at rows 8 (j % 2), columns 8 (j / 2), as the wgmma C fragment's
/// registers 0-3 lie), which the warp then copies to `out`. Register j of lane l holds the codes of
/// (row l / 4, columns 2 (l % 4) and + 1) of matrix j: the transposed form puts them in column
/// l / 4, rows 2 (l % 4) and + 1.
inline Kernel stmatrix_transposed{"stmatrix_transposed", [](Tensor<bf16> out) {
  Pointer<bf16> smem = shared_array<bf16>(256, 16);
  Int lane = thread_idx().x;
  std::array<Value<uint32_t>, 4> regs;
  for (int j = 0; j < 4; ++j) {
    Int row = 8 * (j % 2) + lane / 4, col = 8 * (j / 2) + (lane % 4) * 2;
    auto code = [&](const Int& c) { return bitcast<bf16>(cast<int16_t>(row * 64 + c)); };
    regs[size_t(j)] = pack_pair(code(col), code(col + 1));
  }
  // Lane l: row l % 8 of matrix l / 8.
  Int m = lane / 8;
  stmatrix(smem + ((m % 2) * 8 + lane % 8) * 16 + (m / 2) * 8, regs, /*transposed=*/true);
  sync_threads();
  for (int k = 0; k < 8; ++k) out(lane * 8 + k) = Value<bf16>(smem[lane * 8 + k]);
}};

/// Block b fills a 32 x 32 f32 tile with (b + 1) * (index + 1) and adds it into `out`'s box at
/// (0, 0) with one TMA reduce-add: `out` ends as its old values plus every block's tile.
inline Kernel tma_reduce_add_tile{"tma_reduce_add_tile", [](TmaDescriptor<f32> out) {
  Pointer<f32> tile = dynamic_shared_aligned<f32>(128);
  Int t = thread_idx().x;
  for_(0, 8, [&](Int k) {
    Int i = k * 128 + t;
    tile[i] = cast<float>((block_idx().x + 1) * (i + 1));
  });
  fence_proxy_async_shared();
  sync_threads();
  if_(t == 0, [&] {
    out.reduce_add(tile, {0, 0});
    tma_store_commit();
    tma_store_wait<0>();
  });
}};

}  // namespace test
