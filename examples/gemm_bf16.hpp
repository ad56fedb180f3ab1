// BF16 GEMM on Hopper tensor cores (sm_90a): C (M x N, bf16) = A (M x K, row-major) * B,
// with B stored N x K ("TN", as cuBLAS's fastest BF16 layout), f32 accumulation.
//
// One CTA per 128 x 128 tile of C, three warpgroups (384 threads), warp-specialised:
//  - warpgroup 0, one thread: the producer. For each 64-wide K slice it waits for a free stage
//    of a 4-stage ring, arms that stage's "full" mbarrier with the bytes to expect and issues
//    two TMA loads (128 x 64 of A, 128 x 64 of B, 128-byte swizzled) that complete on it;
//  - warpgroups 1 and 2: the consumers, rows 0-63 and 64-127 of the tile. Each waits for a full
//    stage, issues four m64n128k16 wgmmas on it, keeps one batch in flight and releases the
//    previous stage's "empty" mbarrier once that batch is done;
//  - epilogue: accumulators -> bf16 -> global, two neighbouring columns per store.
// Shapes must be multiples of the tile (128, 128, 64).
#pragma once

#include "example.hpp"

namespace examples {
using namespace cutejit;

namespace gemm {
inline constexpr int tile_m = 128, tile_n = 128, tile_k = 64, stages = 4;
inline constexpr int threads = 384;
inline constexpr int a_stage_bytes = tile_m * tile_k * 2, b_stage_bytes = tile_n * tile_k * 2;
inline constexpr int barriers_offset = stages * (a_stage_bytes + b_stage_bytes);
inline constexpr uint32_t shared_bytes = uint32_t(barriers_offset + 2 * stages * 8) + dynamic_shared_slack(1024);
}  // namespace gemm

inline Kernel gemm_bf16{"gemm_bf16", [](TmaDescriptor<bf16> a, TmaDescriptor<bf16> b, Tensor<bf16> c, Int k_tiles) {
  using namespace gemm;
  Pointer<int8_t> smem = dynamic_shared_aligned<int8_t>(1024);
  auto a_tile = [&](const Int& s) { return Pointer<bf16>((smem + s * a_stage_bytes).id()); };
  auto b_tile = [&](const Int& s) { return Pointer<bf16>((smem + stages * a_stage_bytes + s * b_stage_bytes).id()); };
  auto full = [&](const Int& s) { return Pointer<uint64_t>((smem + barriers_offset + s * 8).id()); };
  auto empty = [&](const Int& s) { return Pointer<uint64_t>((smem + barriers_offset + stages * 8 + s * 8).id()); };

  Int tid = thread_idx().x;
  Int warpgroup = tid / 128;
  Int m0 = block_idx().y * tile_m, n0 = block_idx().x * tile_n;

  if_(tid == 0, [&] {
    for (int s = 0; s < stages; ++s) {
      mbarrier_init(full(s), 1);   // the producer's arrive_expect_tx
      mbarrier_init(empty(s), 2);  // one arrive per consumer warpgroup
    }
    fence_mbarrier_init();
    a.prefetch();
    b.prefetch();
  });
  sync_threads();

  if_(warpgroup == 0, [&] {
    if_(tid == 0, [&] {
      for_(0, k_tiles, [&](Int kt) {
        Int s = kt % stages, parity = (kt / stages) & 1;
        mbarrier_wait(empty(s), parity ^ 1);
        mbarrier_arrive_expect_tx(full(s), a.box_bytes() + b.box_bytes());
        a.load(a_tile(s), full(s), {m0, kt * tile_k});
        b.load(b_tile(s), full(s), {n0, kt * tile_k});
      });
    });
  }).else_([&] {
    Int half = warpgroup - 1;  // which 64 rows of the tile this warpgroup computes
    Int t = tid % 128;
    Bool leader = t == 0;
    WgmmaAccumulator<tile_n> acc;
    acc.fill(0.0f);
    for_(0, k_tiles, [&](Int kt) {
      Int s = kt % stages, parity = (kt / stages) & 1;
      mbarrier_wait(full(s), parity);
      WgmmaOperand<bf16> A(a_tile(s) + half * (64 * tile_k), TmaSwizzle::bytes128);
      WgmmaOperand<bf16> B(b_tile(s), TmaSwizzle::bytes128);
      wgmma_fence();
      for (int k = 0; k < A.k_steps(); ++k) wgmma<bf16>(acc, A.slice(0, k), B.slice(0, k));
      wgmma_commit_group();
      // One batch stays in flight; the one before it is done, so its stage can be refilled.
      wgmma_wait_group(1);
      if_(leader && kt > 0, [&] { mbarrier_arrive(empty((kt + stages - 1) % stages)); });
    });
    wgmma_wait_group(0);
    wgmma_fence_operands(acc);

    Int row = m0 + half * 64 + (t / 32) * 16 + (t % 32) / 4;
    Int col = n0 + (t % 4) * 2;
    for (int j = 0; j < tile_n / 8; ++j)
      for (int h = 0; h < 2; ++h) {
        int i = 4 * j + 2 * h;  // values i, i+1: row + 8h, columns 8j + 2(t%4) + {0, 1}
        c.pointer_at({row + 8 * h, col + 8 * j}).store_vector<2>({cast<bf16>(F32(acc[i])), cast<bf16>(F32(acc[i + 1]))});
      }
  });
}};

/// Runs C = A * B^T on device buffers (A: m x k, B: n x k, C: m x n, all row-major).
inline void gemm_bf16_run(const Device& gpu, const Buffer<bf16>& a, const Buffer<bf16>& b, const Buffer<bf16>& c, int64_t m,
                          int64_t n, int64_t k) {
  using namespace gemm;
  if (m % tile_m || n % tile_n || k % tile_k)
    throw Error("error: gemm_bf16 needs M, N multiples of 128 and K a multiple of 64, not " + std::to_string(m) + " x " +
                std::to_string(n) + " x " + std::to_string(k));
  auto ta = make_tensor_map(a.view({m, k}), {tile_m, tile_k}, TmaSwizzle::bytes128);
  auto tb = make_tensor_map(b.view({n, k}), {tile_n, tile_k}, TmaSwizzle::bytes128);
  Launch cfg{.grid = {uint32_t(n / tile_n), uint32_t(m / tile_m)}, .block = threads, .shared_bytes = shared_bytes};
  gemm_bf16(gpu, cfg, ta, tb, c.view({m, n}), int32_t(k / tile_k));
}

inline std::vector<bf16> random_bf16(size_t n, unsigned seed) {
  std::vector<bf16> v;
  for (float x : random_floats(n, seed)) v.push_back(bf16(x));
  return v;
}

inline Example gemm_bf16_example(int64_t m = 256, int64_t n = 384, int64_t k = 512) {
  return {"gemm_bf16",
          [m, n, k](const Device& gpu) {
            auto ha = random_bf16(m * k, 11), hb = random_bf16(n * k, 12);
            auto a = gpu.upload(ha), b = gpu.upload(hb);
            bf16 poison;
            poison.bits = 0x7fc0;  // NaN
            auto c = gpu.upload(std::vector<bf16>(m * n, poison));
            gemm_bf16_run(gpu, a, b, c, m, n, k);
            gpu.synchronize();
            std::vector<double> ref(m * n, 0.0);
            for (int64_t i = 0; i < m; ++i)
              for (int64_t j = 0; j < n; ++j) {
                double s = 0;
                for (int64_t p = 0; p < k; ++p) s += double(float(ha[i * k + p])) * double(float(hb[j * k + p]));
                ref[i * n + j] = s;
              }
            std::vector<float> out;
            for (bf16 x : c.to_host()) out.push_back(float(x));
            return relative_error(out, ref);
          },
          [m, n, k](const Target& t) {
            using namespace gemm;
            auto ta = TensorMap<bf16>::for_compile(2, {tile_m, tile_k}, TmaSwizzle::bytes128);
            auto tb = TensorMap<bf16>::for_compile(2, {tile_n, tile_k}, TmaSwizzle::bytes128);
            auto c = DeviceTensor<bf16>::make(0, std::array<int64_t, 2>{m, n}, std::array<int64_t, 2>{n, 1});
            return gemm_bf16.compile(t, ta, tb, c, int32_t(k / tile_k));
          },
          // bf16 output: about 2^-9 relative rounding per element
          1e-2,
          {"sm_90a"}};
}

}  // namespace examples
