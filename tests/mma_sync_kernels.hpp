// Kernels shared by the CPU and GPU tests of the warp-level path: one mma.sync atom through
// TiledMma partitions, a 2 x 2-warp TiledMma over a K loop, ldmatrix, and a cp.async tiled copy.
#pragma once

#include <cutejit/cutejit.hpp>

#include <string>

namespace test {
using namespace cutejit;

/// A row-major rows x cols view of a kernel argument's memory (static shape).
template <Element T>
Tensor<T> row_major(const Tensor<T>& t, int64_t rows, int64_t cols) {
  return make_tensor(t.data(), make_layout({rows, cols}, LayoutRight{}));
}

template <class Op>
std::string atom_kernel_name() {
  std::string s = "atom_" + Op::name();
  for (char& c : s)
    if (c == '.') c = '_';
  return s;
}

/// D (M x N, row-major) = A (M x K, row-major) * B (N x K, row-major) + C, by one warp.
template <class Op>
inline auto mma_atom_kernel = Kernel{
    atom_kernel_name<Op>(), [](Tensor<typename Op::ElementA> a, Tensor<typename Op::ElementB> b, Tensor<typename Op::ElementC> c,
                               Tensor<typename Op::ElementD> d) {
      auto tiled = make_tiled_mma(Op{});
      auto thr = tiled.get_slice(thread_idx().x);
      auto fa = thr.partition_fragment_A({Op::m, Op::k});
      auto fb = thr.partition_fragment_B({Op::n, Op::k});
      auto fc = thr.partition_fragment_C({Op::m, Op::n});
      auto fd = make_rmem_tensor<typename Op::ElementD>(fc.layout());
      copy(thr.partition_A(row_major(a, Op::m, Op::k)), fa);
      copy(thr.partition_B(row_major(b, Op::n, Op::k)), fb);
      copy(thr.partition_C(row_major(c, Op::m, Op::n)), fc);
      gemm(tiled, fd, fa, fb, fc);
      copy(fd, thr.partition_C(row_major(d, Op::m, Op::n)));
    }};

/// Four warps, 2 x 2 atoms of 16 x 8 x 16: D (64 x 32) = A (64 x 64) * B (32 x 64)^T in four K steps.
constexpr int tiled_m = 64, tiled_n = 32, tiled_k = 64;
inline Kernel tiled_mma_bf16{"tiled_mma_bf16", [](Tensor<bf16> a, Tensor<bf16> b, Tensor<f32> d) {
  auto tiled = make_tiled_mma(SM80_16x8x16_F32BF16BF16F32_TN{}, make_layout({2, 2, 1}));
  auto thr = tiled.get_slice(thread_idx().x);
  Tensor<bf16> gA = row_major(a, tiled_m, tiled_k), gB = row_major(b, tiled_n, tiled_k);
  auto acc = thr.partition_fragment_C({tiled_m, tiled_n});
  for (int64_t i = 0; i < size(acc.layout()).value(); ++i) acc(IntTuple(i)) = 0.0f;
  for (int k = 0; k < tiled_k / 16; ++k) {
    auto fa = thr.partition_fragment_A({tiled_m, 16});
    auto fb = thr.partition_fragment_B({tiled_n, 16});
    copy(thr.partition_A(local_tile(gA, IntTuple{tiled_m, 16}, IntTuple{0, k})), fa);
    copy(thr.partition_B(local_tile(gB, IntTuple{tiled_n, 16}, IntTuple{0, k})), fb);
    gemm(tiled, acc, fa, fb);
  }
  copy(acc, thr.partition_C(row_major(d, tiled_m, tiled_n)));
}};

/// Each lane's four ldmatrix.x4 registers of a 16 x 16 bf16 tile, plain and transposed: lane l
/// gives row l % 8 of matrix l / 8, matrix i being rows 8 (i % 2) and columns 8 (i / 2) on.
inline Kernel ldmatrix_x4{"ldmatrix_x4", [](Tensor<bf16> in, Tensor<u32> out, Tensor<u32> out_transposed) {
  Tensor<bf16> tile = make_smem_tensor<bf16>(make_layout({16, 16}, LayoutRight{}));
  Int t = thread_idx().x;
  for (int i = 0; i < 8; ++i) tile(t * 8 + i) = row_major(in, 16, 16)(t * 8 + i);
  sync_threads();
  Pointer<bf16> row = tile.pointer_at({(t / 8) % 2 * 8 + t % 8, (t / 16) * 8});
  auto plain = ldmatrix<4>(row);
  auto transposed = ldmatrix<4, true>(row);
  for (int i = 0; i < 4; ++i) {
    out(t * 4 + i) = plain[size_t(i)];
    out_transposed(t * 4 + i) = transposed[size_t(i)];
  }
}};

/// 128 threads copy a 32 x 64 tile of an M x 64 row-major matrix into shared memory with 16-byte
/// cp.async, rows past M zero-filled, then write the tile out (32 x 64, row-major).
inline Kernel cp_async_tile{"cp_async_tile", [](Tensor<f32> in, Tensor<f32> out) {
  Tensor<f32> tile = make_smem_tensor<f32>(make_layout({32, 64}, LayoutRight{}));
  auto tiled = make_tiled_copy(CpAsync<16>{}, make_ordered_layout({8, 16}, {1, 0}), make_layout({1, 4}));
  auto thr = tiled.get_slice(thread_idx().x);
  CoordTensor coords = thr.partition_S(local_tile(make_identity_tensor(in.shape()), IntTuple{32, 64}, IntTuple{0, 0}));
  copy_if(tiled, coords, in.shape(), thr.partition_S(local_tile(in, IntTuple{32, 64}, IntTuple{0, 0})), thr.partition_D(tile));
  cp_async_fence();
  cp_async_wait<0>();
  sync_threads();
  copy(thr.partition_D(tile), thr.partition_S(row_major(out, 32, 64)));
}};

}  // namespace test
