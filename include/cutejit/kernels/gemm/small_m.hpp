// A GEMM for a few rows of A: C (M x N) = A (M x K) * B (B given as N x K), both K-major, M up
// to 8 — a decode step's projections, M being the batch. A and B are bf16, f16 or FP8 (e4m3),
// C bf16 or f16; the products and sums are f32. There the tensor cores idle and the
// time is reading B once, so the kernel is built for bandwidth, on every target from sm_80:
//   - each warp owns `rows` consecutive rows of B (columns of C), a CTA `warps` such warps;
//   - its lanes stream those rows in 16-byte vectors, `unroll` vectors of each row in flight a
//     lane before any is used, with the matching vectors of A's M rows (A is a few KB, read
//     from L1 and L2 by every warp);
//   - each (row of A, row of B) pair's f32 partial dot products are summed across the warp, and
//     lane 0 applies the epilogue hook (epilogue.hpp) and stores.
// A column past N is read from B's last row and not stored.
//
// Two fusions take the small kernels that sit between a decode step's projections off the
// step (each costs a launch and its tail, several microseconds, for a few KB of work):
//   - the norm: A's rows are RMS-normalised as they are read. Row x is used as
//     x * weight * rsqrt(mean(x^2) + eps); every warp reads the whole row anyway, so it sums
//     the squares beside the products and scales its dot products once at the end, in f32
//     (no rounding of the normalised row to bf16, which a separate norm kernel stores);
//   - `gated`: B's rows are two halves [W; V] of N/2 rows, and C has N/2 columns,
//     C = gate(A W^T) * (A V^T), the gated linear unit (SwiGLU with gate = SiLU). A warp owns
//     rows / 2 columns, their rows of W and of V.
// They pay where the kernel waits on memory: measured in Qwen3-8B's decode on an H100, a step
// 5.2% faster at M = 1 and 1.7% at 2, but 17% slower at M = 8, where the kernel is bound by its
// arithmetic and the norm's squares and weights add to it.
//
// Traced `dependent`, it is launched with programmatic dependent launch (sm_90 and newer): its
// blocks may be scheduled once every block of the kernel before it has exited, before that
// grid's completion and memory flush. B (the weights) does not depend on that kernel, so a warp
// issues its first round of B's loads at once, then waits for it (griddepcontrol_wait) before
// reading A or C: the launch and the first round's memory latency overlap the end of the
// previous kernel instead of following it. It does not let the next kernel in any earlier (no
// griddepcontrol_launch_dependents): measured on an H100, letting it in as soon as every block
// had started made a Qwen3-8B batch-1 decode step 3.8% slower.
#pragma once

#include <array>
#include <functional>
#include <optional>
#include <vector>

#include "cutejit/core/visibility.hpp"
#include "cutejit/cutejit.hpp"
#include "cutejit/kernels/gemm/epilogue.hpp"

namespace cutejit::kernels::gemm_small_m {

struct Config {
  int m = 1;       ///< rows of A and C (1 to max_m)
  int rows = 2;    ///< rows of B a warp owns
  int unroll = 4;  ///< 16-byte vectors of each row a lane loads before using them
  static constexpr int warps = 4, max_m = 8;
  /// Elements of T in a 16-byte vector: 8 bf16 or f16, 16 FP8.
  template <class T>
  static constexpr int vec = 16 / int(sizeof(T));
  static constexpr int threads() { return 32 * warps; }
  /// Columns of C a warp owns: its rows of B, or with `gated` half as many (a row of W and
  /// one of V for each).
  constexpr int columns_per_warp(bool gated) const { return gated ? rows / 2 : rows; }
  constexpr int columns_per_cta(bool gated = false) const { return warps * columns_per_warp(gated); }
};

/// The fusions around the product, decided at trace time (like the Config, they are not template
/// parameters: one instantiation per element types serves every M, width and fusion).
struct Fusion {
  /// A's RMSNorm: K weights and the epsilon.
  struct RowNorm {
    Tensor<bf16> weight;
    F32 eps;
  };
  std::optional<RowNorm> norm;
  /// C = gate(A W^T) * (A V^T) for B = [W; V]; Config::rows is then even.
  bool gated = false;
  /// The gate; none is the identity (a bilinear unit).
  std::function<F32(const F32&)> gate;
};

/// C = epilogue(fusion(A B^T)); the norm's weights are bf16 whatever T is.
template <class T, class TC, class E = Identity>
CUTEJIT_LOCAL void kernel(const Config& config, const Tensor<T>& a, const Tensor<T>& b, const Tensor<TC>& c, const E& epilogue = {},
                          const Fusion& fusion = {}, bool dependent = false) {
  constexpr int vec = Config::vec<T>, lanes = 32;
  const int M = config.m, R = config.rows, U = config.unroll;
  if (M < 1 || M > Config::max_m || R < 1 || U < 1)
    throw Error("error: the small-M GEMM takes 1 to " + std::to_string(Config::max_m) +
                " rows of A and at least one row of B and one vector a lane, not " + std::to_string(M) + ", " + std::to_string(R) + " and " +
                std::to_string(U));
  if (fusion.gated && R % 2 != 0) throw Error("error: the gated small-M GEMM takes an even number of rows of B a warp, not " + std::to_string(R));
  const int columns = config.columns_per_warp(fusion.gated);
  const std::optional<Fusion::RowNorm>& norm = fusion.norm;
  if (norm && vec != 8) throw Error("error: the small-M GEMM's norm reads its bf16 weights as A's vectors, 8 a time: A of 16-bit elements");
  block_shape(Config::threads());
  Int lane = thread_idx().x % lanes, warp = thread_idx().x / lanes;
  Int n = b.shape(0), vectors = b.shape(1) / vec;
  // The warp's first column of C, and the rows of B its columns read: `columns` consecutive
  // rows, and with `gated` the same again in V, half of B's rows further on.
  Int n_out = fusion.gated ? n / 2 : n;
  Int first = (block_idx().x * Config::warps + warp) * columns;
  std::vector<Int> row;
  for (int r = 0; r < R; ++r) {
    Int col = min(first + r % columns, n_out - 1);
    row.push_back(r < columns ? col : col + n_out);
  }
  // The lane's sums, (row of B, row of A), and its share of each row's sum of squares (for the norm).
  Tensor<f32> acc = make_rmem_tensor<f32>(make_layout({R, M}));
  Tensor<f32> squares = make_rmem_tensor<f32>(make_layout({M}));
  for (int i = 0; i < M * R; ++i) acc(IntTuple(i)) = 0.0f;
  for (int i = 0; i < M; ++i) squares(IntTuple(i)) = 0.0f;

  // A row of B's vector: `vec` values.
  using Vector = std::array<Value<T>, vec>;
  // acc(r, m) += A(m, vector v) . B(row r, vector v), for the vectors of B already loaded.
  auto multiply = [&](const Int& v, const std::vector<Vector>& bv) {
    std::array<Value<bf16>, vec> weight;
    if constexpr (vec == 8)  // the norm is refused above for other vectors
      if (norm) weight = norm->weight.pointer_at({v * vec}).template load_vector<vec>();
    for (int m = 0; m < M; ++m) {
      std::array<Value<T>, vec> av = a.pointer_at({Int(m), v * vec}).template load_vector<vec>();
      std::vector<F32> x;
      for (int i = 0; i < vec; ++i) x.push_back(cast<f32>(av[size_t(i)]));
      if (norm) {
        F32 sum = F32(squares(IntTuple(m)));
        for (int i = 0; i < vec; ++i) sum = fma(x[size_t(i)], x[size_t(i)], sum);
        squares(IntTuple(m)) = sum;
        for (int i = 0; i < vec; ++i) x[size_t(i)] = x[size_t(i)] * cast<f32>(weight[size_t(i)]);
      }
      for (int r = 0; r < R; ++r) {
        F32 sum = F32(acc(r, m));
        for (int i = 0; i < vec; ++i) sum = fma(x[size_t(i)], cast<f32>(bv[size_t(r)][size_t(i)]), sum);
        acc(r, m) = sum;
      }
    }
  };
  auto load_b = [&](const Int& v) {
    std::vector<Vector> bv;
    for (int r = 0; r < R; ++r) bv.push_back(b.pointer_at({row[size_t(r)], v * vec}).template load_vector<vec>());
    return bv;
  };
  // Whole rounds of lanes x U vectors: every load of the round issued before the first FMA.
  Int round = lanes * U, whole = vectors / round * round;
  using Round = std::vector<std::vector<Vector>>;
  auto multiply_round = [&](const Int& v0, const Round& loaded) {
    for (int u = 0; u < U; ++u) multiply(v0 + u * lanes + lane, loaded[size_t(u)]);
  };
  Int first_round = 0;
  if (dependent) {
    // The first round before the wait (with a K shorter than a round, B's last vector again:
    // in bounds, and unused).
    Round first;
    for (int u = 0; u < U; ++u) first.push_back(load_b(min(Int(u * lanes) + lane, vectors - 1)));
    griddepcontrol_wait();
    if_(whole > 0, [&] { multiply_round(Int(0), first); });
    first_round = round;
  }
  for_(first_round, whole, round, [&](Int v0) {
    Round loaded;
    for (int u = 0; u < U; ++u) loaded.push_back(load_b(v0 + u * lanes + lane));
    multiply_round(v0, loaded);
  });
  for_(whole + lane, vectors, Int(lanes), [&](Int v) { multiply(v, load_b(v)); });

  for (int m = 0; m < M; ++m) {
    // 1 / RMS(row m), the factor each of the row's dot products takes.
    std::optional<F32> scale;
    if (norm) scale = rsqrt(warp_reduce(F32(squares(IntTuple(m)))) / cast<float>(b.shape(1)) + norm->eps);
    auto total = [&](int r) {
      F32 t = warp_reduce(F32(acc(r, m)));
      return scale ? t * *scale : t;
    };
    for (int r = 0; r < columns; ++r) {
      F32 value = total(r);
      if (fusion.gated) value = (fusion.gate ? fusion.gate(value) : value) * total(r + columns);
      Int col = first + r;
      if_(lane == 0 && col < n_out, [&] {
        if constexpr (std::is_same_v<E, Identity>) c(Int(m), col) = cast<TC>(value);
        else c(Int(m), col) = cast<TC>(epilogue(value, Int(m), col));
      });
    }
  }
}

/// The launch for C's `columns`: one CTA a `columns_per_cta(gated)` of them.
inline Launch launch(int64_t columns, const Config& config, bool gated = false, bool dependent = false) {
  const int64_t per_cta = config.columns_per_cta(gated);
  return Launch{.grid = uint32_t((columns + per_cta - 1) / per_cta), .block = uint32_t(Config::threads()),
                .programmatic_dependent_launch = dependent};
}

}  // namespace cutejit::kernels::gemm_small_m
