// Decode-shaped block-scaled products on sm_120 tensor cores, compile-verified only: no sm_120
// GPU has run them. Y (T x N, f32) = (X * SFX)(W * SFW)^T for T <= 8 tokens against weights W
// stored N x K, in the formats of sm120_block_scaled.hpp (bytes, scales one byte per
// `scale_block` elements of K, row-major):
//   gemv_nvfp4_sm120   NVFP4: e2m1 pairs, UE4M3 scales per 16 (kind::mxf4nvf4)
//   gemv_mxfp4_sm120   MXFP4: e2m1 pairs, UE8M0 scales per 32 (kind::mxf4)
//   gemv_mxfp8_sm120   MXFP8: e4m3 bytes, UE8M0 scales per 32 (kind::mxf8f6f4)
//
// The operands swap places (CUTLASS's "swap AB"): the weights are the atom's A, 16 rows of N,
// and the tokens its B, whose 8 columns hold the T tokens. A GEMM tile's 64 rows would be 1 to 8
// tokens and the rest waste; here every MMA row is a weight row. A CTA of four warps owns 16
// weight rows. Each warp takes every fourth 32-byte K step, so the CTA reads its rows of W once,
// with four warps' loads in flight. The warps' partial sums meet in shared memory.
//
// The epilogue hook (epilogue.hpp) sees each value of Y with its (token, weight row), as
// the GEMMs' hooks see (row, column) of C: Y's row is a token.
//
// Columns past T are zero-filled. A column of D depends only on its own column of B and that
// column's scales, so the padding needs only in-bounds scale reads (the last token's), and it
// is never stored.
#pragma once

#include <cstdint>
#include <string>

#include "cutejit/core/visibility.hpp"
#include "cutejit/atom/sm120/mma_block_scaled.hpp"
#include "cutejit/atom/tiled_mma.hpp"
#include "cutejit/tensor/copy.hpp"
#include "cutejit/tensor/fragment.hpp"
#include "cutejit/tensor/identity.hpp"
#include "cutejit/tensor/partition.hpp"

#include "cutejit/kernels/gemm/epilogue.hpp"
#include "cutejit/kernels/gemm/sm120_block_scaled.hpp"

namespace cutejit::kernels {

namespace gemv_sm120 {
inline constexpr int rows = 16, warps = 4, threads = 32 * warps, max_tokens = 8;

template <class Op, Epilogue E = Identity>
CUTEJIT_LOCAL void kernel(const Tensor<uint8_t>& w, const Tensor<uint8_t>& x, const Tensor<uint8_t>& sfw, const Tensor<uint8_t>& sfx,
            const Tensor<float>& y, const Int& n, const Int& tokens, const Int& k, const E& epilogue = {}) {
  static_assert(Op::m == rows && Op::n == max_tokens, "one atom of 16 weight rows by 8 tokens");
  constexpr int k_bytes = Op::k;  // an atom's K in bytes: 32
  constexpr int elements_per_byte = Op::k_elements / k_bytes;
  launch_bounds(threads);
  Int tid = thread_idx().x, lane = tid % 32, warp = tid / 32;
  Int bn = block_idx().x;
  // The shape check makes every operand row a multiple of 32 bytes, which the 4-byte loads rely on.
  Int row_bytes = assume_divisible(k / elements_per_byte, 32), row_scales = k / Op::scale_block;
  using gemm_sm120_block_scaled::row_major;
  Tensor<uint8_t> W = row_major(w, n, row_bytes), X = row_major(x, tokens, row_bytes);
  Tensor<uint8_t> SFW = row_major(sfw, n, row_scales), SFX = row_major(sfx, tokens, row_scales);
  // Y transposed, (N, T): the atom's C is (weight row, token).
  Tensor<float> Yt = make_tensor(y.data(), Layout(IntTuple{n, tokens}, IntTuple{1, n}));

  auto tiled = make_tiled_mma(Op{}, make_layout({1, 1, 1}));
  auto thr = tiled.get_slice(lane);
  Tensor<float> acc = thr.partition_fragment_C({rows, max_tokens});
  fill(acc, 0.0f);
  Tensor<uint8_t> gW = local_tile(W, IntTuple{rows, k_bytes}, IntTuple{bn, _});  // (16, 32, k steps)
  Tensor<uint8_t> gX = local_tile(X, IntTuple{max_tokens, k_bytes}, IntTuple{0, _});  // (8, 32, k steps), rows past T predicated
  auto cX = local_tile(make_identity_tensor(X.shape()), IntTuple{max_tokens, k_bytes}, IntTuple{0, _});
  const Layout sfw_tv = Op::layout_sfa(), sfx_tv = Op::layout_sfb();
  Int w_row0 = bn * rows;

  for_(warp, k / Op::k_elements, warps, [&](Int step) {
    Tensor<uint8_t> fw = thr.partition_fragment_A({rows, k_bytes});
    Tensor<uint8_t> fx = thr.partition_fragment_B({max_tokens, k_bytes});
    copy(thr.partition_A(gW(_, _, step)), fw);
    fill(fx, uint8_t(0));
    copy_if(thr.partition_B(cX(_, _, step)), X.shape(), thr.partition_B(gX(_, _, step)), fx);
    Value<uint32_t> scale_w = gemm_sm120_block_scaled::scale_register<Op>(SFW, sfw_tv, lane, rows, [&](const Int& r) { return w_row0 + r; }, step);
    // The padding's columns read the last token's scales (a real row).
    Value<uint32_t> scale_x = gemm_sm120_block_scaled::scale_register<Op>(SFX, sfx_tv, lane, max_tokens, [&](const Int& r) { return min(r, tokens - 1); }, step);
    mma(Op{}, acc(_, 0, 0), fw(_, 0, 0), fx(_, 0, 0), acc(_, 0, 0), scale_w, scale_x);
  }, Unroll{4});  // four steps' loads in flight per warp: a GEMV is bound by how many bytes of W are in flight

  // The four warps' partial sums: each writes its own, warp 0 adds the other three and stores.
  Tensor<float> partial = make_smem_tensor<float>(make_layout({rows, max_tokens, warps}));
  copy(acc, thr.partition_C(partial(_, _, warp)));
  sync_threads();
  if_(warp == 0, [&] {
    for (int other = 1; other < warps; ++other) {
      Tensor<float> theirs = make_rmem_tensor<float>(acc.layout());
      copy(thr.partition_C(partial(_, _, other)), theirs);
      for (int64_t i = 0; i < size(acc.layout()).value(); ++i) acc(IntTuple(i)) = acc(IntTuple(i)) + theirs(IntTuple(i));
    }
    auto cY = local_tile(make_identity_tensor(Yt.shape()), IntTuple{rows, max_tokens}, IntTuple{bn, 0});
    if constexpr (!std::is_same_v<E, Identity>) {
      CoordTensor at = thr.partition_C(cY);
      for (int64_t i = 0; i < size(acc.layout()).value(); ++i) {
        IntTuple nt = at(IntTuple(i));  // (weight row, token); a padding column is seen at the last token
        acc(IntTuple(i)) = F32(epilogue(F32(acc(IntTuple(i))), min(coordinate<1>(nt), tokens - 1), coordinate<0>(nt)));
      }
    }
    copy_if(thr.partition_C(cY), Yt.shape(), acc, thr.partition_C(local_tile(Yt, IntTuple{rows, max_tokens}, IntTuple{bn, 0})));
  });
}

inline void check_shape(const char* name, int64_t n, int64_t tokens, int64_t k, detail::Where w = detail::Where::current()) {
  if (n <= 0 || k <= 0 || n % rows || k % 64 || tokens < 1 || tokens > max_tokens || n * k >= (int64_t(1) << 31))
    detail::fail(std::string(name) + " needs N a multiple of 16, K of 64, N x K below 2^31 and 1 to 8 tokens, not N = " +
                     std::to_string(n) + ", K = " + std::to_string(k) + " and " + std::to_string(tokens) + " tokens",
                 w);
}

inline Launch launch_config(int64_t n) { return Launch{.grid = {uint32_t(n / rows)}, .block = threads}; }
}  // namespace gemv_sm120

}  // namespace cutejit::kernels
