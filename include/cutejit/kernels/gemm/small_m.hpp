// A GEMM for a few rows of A: C (M x N) = A (M x K) * B (B given as N x K), both K-major, M up
// to 8 — a decode step's projections, M being the batch. There the tensor cores idle and the
// time is reading B once, so the kernel is built for bandwidth, on every target from sm_80:
//   - each warp owns `rows` consecutive rows of B (columns of C), a CTA `warps` such warps;
//   - its lanes stream those rows in 16-byte vectors, `unroll` vectors of each row in flight a
//     lane before any is used, with the matching vectors of A's M rows (A is a few KB, read
//     from L1 and L2 by every warp);
//   - each (row of A, row of B) pair's f32 partial dot products are summed across the warp, and
//     lane 0 applies the epilogue hook (epilogue.hpp) and stores.
// A column past N is read from B's last row and not stored.
#pragma once

#include <array>

#include "cutejit/cutejit.hpp"
#include "cutejit/kernels/gemm/epilogue.hpp"

namespace cutejit::kernels::gemm_small_m {

struct Config {
  int m = 1;       ///< rows of A and C (1 to max_m)
  int rows = 2;    ///< rows of B a warp owns
  int unroll = 4;  ///< 16-byte vectors of each row a lane loads before using them
  static constexpr int warps = 4, vec = 8, max_m = 8;
  static constexpr int threads() { return 32 * warps; }
  constexpr int columns_per_cta() const { return warps * rows; }
};

template <Config C, class E = Identity>
void kernel(const Tensor<bf16>& a, const Tensor<bf16>& b, const Tensor<bf16>& c, const E& epilogue = {}) {
  constexpr int M = C.m, R = C.rows, U = C.unroll, vec = Config::vec, lanes = 32;
  static_assert(M >= 1 && M <= Config::max_m && R >= 1 && U >= 1);
  block_shape(Config::threads());
  Int lane = thread_idx().x % lanes, warp = thread_idx().x / lanes;
  Int n = b.shape(0), vectors = b.shape(1) / vec;
  Int first = (block_idx().x * Config::warps + warp) * R;
  std::array<Int, R> row;
  for (int r = 0; r < R; ++r) row[size_t(r)] = min(first + r, n - 1);
  RegisterArray<f32, M * R> acc(F32(0.0f));

  // acc[m][r] += A(m, vector v) . B(row r, vector v), for the vectors of B already loaded.
  auto multiply = [&](const Int& v, const std::array<std::array<Value<bf16>, vec>, R>& bv) {
    for (int m = 0; m < M; ++m) {
      std::array<Value<bf16>, vec> av = a.pointer_at({Int(m), v * vec}).template load_vector<vec>();
      for (int r = 0; r < R; ++r) {
        F32 sum = acc[m * R + r].get();
        for (int i = 0; i < vec; ++i) sum = fma(cast<f32>(av[size_t(i)]), cast<f32>(bv[size_t(r)][size_t(i)]), sum);
        acc[m * R + r] = sum;
      }
    }
  };
  auto load_b = [&](const Int& v) {
    std::array<std::array<Value<bf16>, vec>, R> bv;
    for (int r = 0; r < R; ++r) bv[size_t(r)] = b.pointer_at({row[size_t(r)], v * vec}).template load_vector<vec>();
    return bv;
  };
  // Whole rounds of lanes x U vectors: every load of the round issued before the first FMA.
  Int round = lanes * U, whole = vectors / round * round;
  for_(Int(0), whole, round, [&](Int v0) {
    std::array<std::array<std::array<Value<bf16>, vec>, R>, U> loaded;
    for (int u = 0; u < U; ++u) loaded[size_t(u)] = load_b(v0 + u * lanes + lane);
    for (int u = 0; u < U; ++u) multiply(v0 + u * lanes + lane, loaded[size_t(u)]);
  });
  for_(whole + lane, vectors, Int(lanes), [&](Int v) { multiply(v, load_b(v)); });

  for (int m = 0; m < M; ++m)
    for (int r = 0; r < R; ++r) {
      F32 total = warp_reduce(acc[m * R + r].get());
      Int col = first + r;
      if_(lane == 0 && col < n, [&] {
        if constexpr (std::is_same_v<E, Identity>) c(Int(m), col) = cast<bf16>(total);
        else c(Int(m), col) = cast<bf16>(epilogue(total, Int(m), col));
      });
    }
}

/// The launch: one CTA a `columns_per_cta()` columns of C.
inline Launch launch(int64_t n, const Config& config) {
  return Launch{.grid = uint32_t((n + config.columns_per_cta() - 1) / config.columns_per_cta()), .block = uint32_t(Config::threads())};
}

}  // namespace cutejit::kernels::gemm_small_m
