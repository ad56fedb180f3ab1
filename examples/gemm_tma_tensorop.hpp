// The mma.sync GEMM fed by TMA (sm_90 and newer: the GEMM of the sm_120 family, whose tensor
// cores are mma.sync, and of any Hopper or Blackwell part without wgmma or tcgen05 in reach):
// C (M x N) = epilogue(A (M x K) * B^T), B stored N x K (both K-major), one template for the
// BF16, FP16 and FP8 mma.sync atoms; the epilogue hook is epilogue_hook.hpp's.
//   - Warp-specialised: warps 0-3 multiply (a 2 x 2 TiledMma of 64 x 64 per warp, the
//     multistage GEMM's), warp 4 loads: for each 128-byte k tile it acquires a stage of a
//     PipelineTmaAsync ring and issues one TMA box of A (128 rows) and one of B (128 rows).
//   - The boxes land 128-byte swizzled, which is the multistage GEMM's conflict-free ring
//     layout (gemm80::ring_layout: chunk c of line l at c ^ (l % 8)), so the consumers'
//     ldmatrix partitions are the multistage GEMM's unchanged; each consumer thread frees a
//     stage after its last ldmatrix from it.
//   - The copy engine zero-fills a box past the tensor's edges, so any M, N and K (K a multiple
//     of 16 bytes' elements, for the tensor map's row stride) need no predicates in the main
//     loop; the epilogue applies the hook to each accumulator and stores the pairs inside C (the
//     hook sees a value past M or N at the last row or column, so what it reads stays in bounds).
// Three stages of 32 KB fit the 99 KB of shared memory an sm_120 CTA may have. It runs on the
// H200 built for sm_90a; for sm_120a and sm_121a it is compile-verified.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "epilogue_hook.hpp"
#include "gemm_sm80.hpp"

namespace examples {
using namespace cutejit;

namespace gemm_tma {
inline constexpr gemm80::Config config{.tile_m = 128, .tile_n = 128, .warps_m = 2, .warps_n = 2, .stages = 3};
/// The consumers' threads, and one producer warp after them.
inline constexpr int consumers = config.threads(), threads = consumers + 32;

/// Shared memory: the A tiles of every stage, the B tiles, the ring's barriers.
template <Element T>
struct Resources {
  static constexpr int stage_bytes = (config.tile_m + config.tile_n) * 128;
  static constexpr int barriers_offset = config.stages * stage_bytes;
  static constexpr uint32_t shared_bytes = uint32_t(barriers_offset + PipelineTmaAsync::barrier_bytes(config.stages)) + dynamic_shared_slack(1024);
  static_assert(shared_bytes <= 101376, "the ring fits the 99 KB of shared memory an sm_120 CTA may have");
};

template <class Op, Element Out, Epilogue E = Identity>
void kernel(const TmaDescriptor<typename Op::ElementA>& a, const TmaDescriptor<typename Op::ElementB>& b, const Tensor<Out>& c,
            const Int& m, const Int& n, const Int& k, const E& epilogue = {}) {
  using T = typename Op::ElementA;
  static_assert(std::is_same_v<T, typename Op::ElementB>, "one element type for A and B (one box shape)");
  static_assert(std::is_same_v<typename Op::ElementC, float>, "f32 accumulators, which the epilogue hook takes");
  using R = Resources<T>;
  constexpr int tile_k = gemm80::Config::tile_k<T>(), stages = config.stages;
  launch_bounds(threads);
  Int t = thread_idx().x;
  Int m0 = block_idx().x * config.tile_m, n0 = block_idx().y * config.tile_n;
  Int k_tiles = (k + (tile_k - 1)) / tile_k;
  // The ring as the consumers read it, (row, k, stage); each stage's tile is where its box lands.
  Tensor<T> sA = gemm80::shared_ring<T>(config.tile_m, stages, gemm80::Major::k, 0);
  Tensor<T> sB = gemm80::shared_ring<T>(config.tile_n, stages, gemm80::Major::k, int64_t(stages) * config.tile_m * 128);
  Pointer<int8_t> smem = dynamic_shared_aligned<int8_t>(1024);
  PipelineTmaAsync ring(Pointer<uint64_t>((smem + R::barriers_offset).id()), stages, consumers, R::stage_bytes);
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
      ring.load(a, Pointer<T>((smem + s.index * (config.tile_m * 128)).id()), s, {m0, kt * tile_k});
      ring.load(b, Pointer<T>((smem + stages * config.tile_m * 128 + s.index * (config.tile_n * 128)).id()), s, {n0, kt * tile_k});
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
        cutejit::gemm(tiled, acc, fa, fb);  // (the examples' gemm namespace hides the function)
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

/// M, N and K from 1 below 2^31, K a multiple of 16 bytes' elements (the tensor maps' row
/// stride), N a multiple of 2 (C is stored in pairs).
inline void check_shape(const std::string& name, int64_t m, int64_t n, int64_t k, int element_bytes, detail::Where w = detail::Where::current()) {
  const int64_t limit = int64_t(1) << 31, vector = 16 / element_bytes;
  if (m < 1 || n < 1 || k < 1 || m >= limit || n >= limit || k >= limit || k % vector != 0 || n % 2 != 0)
    detail::fail(name + " needs M, N and K from 1 below 2^31, K a multiple of " + std::to_string(vector) + " and N of 2, not " +
                     std::to_string(m) + " x " + std::to_string(n) + " x " + std::to_string(k),
                 w);
}

/// The tensor map of an operand (rows x k, row-major): boxes of 128 rows x 128 bytes, 128-byte swizzled.
template <Element T>
TensorMap<T> operand_map(const Buffer<T>& x, int64_t rows, int64_t k) {
  return make_tensor_map(x.view({rows, k}), {128u, uint32_t(gemm80::Config::tile_k<T>())}, TmaSwizzle::bytes128);
}
template <Element T>
TensorMap<T> operand_map_for_compile() {
  return TensorMap<T>::for_compile(2, {128u, uint32_t(gemm80::Config::tile_k<T>())}, TmaSwizzle::bytes128);
}

inline Launch launch(int64_t m, int64_t n, uint32_t shared_bytes) {
  return Launch{.grid = {ceil_div(m, config.tile_m), ceil_div(n, config.tile_n)}, .block = uint32_t(threads), .shared_bytes = shared_bytes};
}
}  // namespace gemm_tma

/// The TMA-fed mma.sync GEMM for one atom and output type: gemm_tma_tensorop_{inputs}_{output}.
template <class Op, Element Out>
inline auto gemm_tma_tensorop =
    Kernel{"gemm_tma_tensorop_" + std::string(name(dtype_v<typename Op::ElementA>)) + "_" + std::string(name(dtype_v<Out>)),
           [](TmaDescriptor<typename Op::ElementA> a, TmaDescriptor<typename Op::ElementB> b, Tensor<Out> c, Int m, Int n, Int k) {
             gemm_tma::kernel<Op, Out>(a, b, c, m, n, k);
           }};

/// The launch of C (m x n, row-major) = A (m x k) * B^T (B: n x k) on device buffers, the shape checked.
template <class Op, Element Out>
PreparedLaunch gemm_tma_tensorop_prepare(const Device& gpu, const Buffer<typename Op::ElementA>& a, const Buffer<typename Op::ElementB>& b,
                                         const Buffer<Out>& c, int64_t m, int64_t n, int64_t k, detail::Where w = detail::Where::current()) {
  using T = typename Op::ElementA;
  gemm_tma::check_shape(gemm_tma_tensorop<Op, Out>.name(), m, n, k, int(sizeof(T)), w);
  return gemm_tma_tensorop<Op, Out>.prepare(gpu, gemm_tma::launch(m, n, gemm_tma::Resources<T>::shared_bytes), gemm_tma::operand_map(a, m, k),
                                            gemm_tma::operand_map(b, n, k), c.view({m, n}), int32_t(m), int32_t(n), int32_t(k));
}

/// C = A * B^T on the atom `Op` against a float64 product of random operands; cross-compiles
/// for sm_90a and the sm_120 family.
template <class Op, Element Out>
Example gemm_tma_tensorop_example(int64_t m, int64_t n, int64_t k, unsigned seed = 31) {
  using T = typename Op::ElementA;
  return {gemm_tma_tensorop<Op, Out>.name().c_str(),
          [=](const Device& gpu) {
            auto ha = gemm80::random_operand<T>(size_t(m * k), seed), hb = gemm80::random_operand<T>(size_t(n * k), seed + 1);
            auto a = gpu.upload(ha), b = gpu.upload(hb);
            auto c = gpu.upload(gemm80::poisoned<Out>(m, n));
            gemm_tma_tensorop_prepare<Op, Out>(gpu, a, b, c, m, n, k)();
            gpu.synchronize();
            return gemm::error(gemm::to_floats(c), gemm80::reference(ha, hb, m, n, k, gemm80::Major::k, gemm80::Major::k));
          },
          [=](const Target& t) {
            return gemm_tma_tensorop<Op, Out>.compile(t, gemm_tma::operand_map_for_compile<T>(), gemm_tma::operand_map_for_compile<T>(),
                                                      DeviceTensor<Out>::make(256, std::array<int64_t, 2>{m, n}, std::array<int64_t, 2>{n, 1}),
                                                      int32_t(m), int32_t(n), int32_t(k));
          },
          1e-2,
          {"sm_90a", "sm_120a", "sm_121a"}};
}

/// The epilogue hook on the BF16 instance: C = relu(A * B^T + bias), a bias per column (f32).
inline Kernel gemm_tma_tensorop_bias_relu{
    "gemm_tma_tensorop_bias_relu", [](TmaDescriptor<bf16> a, TmaDescriptor<bf16> b, Tensor<bf16> c, Tensor<f32> bias, Int m, Int n, Int k) {
      gemm_tma::kernel<SM80_16x8x16_F32BF16BF16F32_TN, bf16>(a, b, c, m, n, k,
                                                             [&](F32 x, Int, Int col) { return max(x + F32(bias(col)), F32(0.0f)); });
    }};

/// gemm_tma_tensorop_bias_relu against relu(float64 product + bias) of random operands.
inline Example gemm_tma_tensorop_bias_relu_example(int64_t m, int64_t n, int64_t k, unsigned seed = 41) {
  return {"gemm_tma_tensorop_bias_relu",
          [=](const Device& gpu) {
            auto ha = gemm80::random_operand<bf16>(size_t(m * k), seed), hb = gemm80::random_operand<bf16>(size_t(n * k), seed + 1);
            std::vector<float> hbias = gemm80::random_operand<float>(size_t(n), seed + 2);
            auto a = gpu.upload(ha), b = gpu.upload(hb);
            auto bias = gpu.upload(hbias);
            auto c = gpu.upload(gemm80::poisoned<bf16>(m, n));
            gemm_tma::check_shape(gemm_tma_tensorop_bias_relu.name(), m, n, k, 2);
            gemm_tma_tensorop_bias_relu.prepare(gpu, gemm_tma::launch(m, n, gemm_tma::Resources<bf16>::shared_bytes), gemm_tma::operand_map(a, m, k),
                                                gemm_tma::operand_map(b, n, k), c.view({m, n}), bias.view({n}), int32_t(m), int32_t(n),
                                                int32_t(k))();
            gpu.synchronize();
            std::vector<double> ref = gemm80::reference(ha, hb, m, n, k, gemm80::Major::k, gemm80::Major::k);
            for (int64_t i = 0; i < m; ++i)
              for (int64_t j = 0; j < n; ++j) ref[size_t(i * n + j)] = std::max(ref[size_t(i * n + j)] + double(hbias[size_t(j)]), 0.0);
            return gemm::error(gemm::to_floats(c), ref);
          },
          [=](const Target& t) {
            return gemm_tma_tensorop_bias_relu.compile(t, gemm_tma::operand_map_for_compile<bf16>(), gemm_tma::operand_map_for_compile<bf16>(),
                                                       DeviceTensor<bf16>::make(256, std::array<int64_t, 2>{m, n}, std::array<int64_t, 2>{n, 1}),
                                                       DeviceTensor<float>::make(0, std::array<int64_t, 1>{n}, std::array<int64_t, 1>{1}),
                                                       int32_t(m), int32_t(n), int32_t(k));
          },
          1e-2,
          {"sm_90a", "sm_120a", "sm_121a"}};
}

}  // namespace examples
