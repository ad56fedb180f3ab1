// BF16 GEMM on Hopper tensor cores (sm_90a): C (M x N, bf16) = A (M x K, row-major) * B,
// with B stored N x K ("TN", as cuBLAS's fastest BF16 layout), f32 accumulation.
//
// Persistent and warp-specialised: one CTA per multiprocessor, three warpgroups (384 threads),
// each CTA walking the 128 x 256 tiles of C in a grouped order (below):
//  - warpgroup 0, one thread: the producer. It gives up registers (setmaxnreg 40) and, for each
//    64-wide K slice of each of its tiles, waits for a free stage of a 4-stage ring, arms that
//    stage's "full" mbarrier with the bytes to expect and issues three TMA loads (128 x 64 of
//    A, two 128 x 64 halves of B, 128-byte swizzled) that complete on it. It runs ahead into
//    the next tile while the consumers store the current one;
//  - warpgroups 1 and 2: the consumers, rows 0-63 and 64-127 of the tile. They take the
//    registers (setmaxnreg 232: 128 f32 accumulators each). Each waits for a full stage, issues
//    four m64n256k16 wgmmas on it, keeps one batch in flight and releases the previous stage's
//    "empty" mbarrier once that batch is done;
//  - epilogue: accumulators -> bf16 -> global, two neighbouring columns per store.
// `launch_bounds(384, 1)` caps registers at entry (168 = 64K / 384), which setmaxnreg needs.
// M and N must be multiples of 128 and K of 64. When N is an odd multiple of 128, the last
// column of tiles is half wide: its second B half is not loaded (the wgmmas read stale shared
// memory there) and its columns are not stored.
#pragma once

#include "example.hpp"

namespace examples {
using namespace cutejit;

namespace gemm {
inline constexpr int tile_m = 128, tile_n = 256, tile_k = 64, stages = 4;
inline constexpr int threads = 384;
// Consecutive tiles go down a column of `group_m` tile rows before moving right, so the CTAs
// running at once share A and B tiles in L2 instead of sweeping all of B per row of tiles.
inline constexpr int group_m = 8;
inline constexpr int producer_registers = 40, consumer_registers = 232;  // 40*128 + 232*256 <= 64K
inline constexpr int b_half = 128;  // B's TMA box: N rows per load, two loads per stage
inline constexpr int a_stage_bytes = tile_m * tile_k * 2, b_stage_bytes = tile_n * tile_k * 2;
inline constexpr int barriers_offset = stages * (a_stage_bytes + b_stage_bytes);
inline constexpr uint32_t shared_bytes = uint32_t(barriers_offset + 2 * stages * 8) + dynamic_shared_slack(1024);
}  // namespace gemm

inline Kernel gemm_bf16{"gemm_bf16", [](TmaDescriptor<bf16> a, TmaDescriptor<bf16> b, Tensor<bf16> c, Int k_tiles, Int tiles_m,
                                        Int n) {
  using namespace gemm;
  launch_bounds(threads, 1);
  Pointer<int8_t> smem = dynamic_shared_aligned<int8_t>(1024);
  auto a_tile = [&](const Int& s) { return Pointer<bf16>((smem + s * a_stage_bytes).id()); };
  auto b_tile = [&](const Int& s) { return Pointer<bf16>((smem + stages * a_stage_bytes + s * b_stage_bytes).id()); };
  auto full = [&](const Int& s) { return Pointer<uint64_t>((smem + barriers_offset + s * 8).id()); };
  auto empty = [&](const Int& s) { return Pointer<uint64_t>((smem + barriers_offset + stages * 8 + s * 8).id()); };

  Int tid = thread_idx().x;
  Int warpgroup = tid / 128;
  // This CTA's tiles: block_idx().x, then every grid_dim().x-th after it. Tile j of the CTA
  // uses ring iterations j * k_tiles ... j * k_tiles + k_tiles - 1 (stage = iteration % stages).
  Int tiles_n = (n + tile_n - 1) / tile_n;
  Int tiles = tiles_m * tiles_n;
  Int my_tiles = (tiles - block_idx().x + grid_dim().x - 1) / grid_dim().x;
  auto tile_origin = [&](const Int& j) {
    Int tile = block_idx().x + j * grid_dim().x;
    Int group = tile / (group_m * tiles_n), in_group = tile % (group_m * tiles_n);
    Int first_m = group * group_m;
    Int rows = min(tiles_m - first_m, Int(group_m));  // the last group may be shorter
    return std::pair{(first_m + in_group % rows) * tile_m, (in_group / rows) * tile_n};
  };

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
    decrease_max_registers(producer_registers);
    if_(tid == 0, [&] {
      for_(0, my_tiles, [&](Int j) {
        auto [m0, n0] = tile_origin(j);
        Int b_halves = min(Int(2), (n - n0) / b_half);  // 1 in a half-wide last column of tiles
        for_(0, k_tiles, [&](Int kt) {
          Int it = j * k_tiles + kt;
          Int s = it % stages, parity = (it / stages) & 1;
          mbarrier_wait(empty(s), parity ^ 1);
          mbarrier_arrive_expect_tx(full(s), a.box_bytes() + b_halves * b.box_bytes());
          a.load(a_tile(s), full(s), {m0, kt * tile_k});
          b.load(b_tile(s), full(s), {n0, kt * tile_k});
          if_(b_halves == 2, [&] { b.load(b_tile(s) + b_half * tile_k, full(s), {n0 + b_half, kt * tile_k}); });
        });
      });
    });
  }).else_([&] {
    increase_max_registers(consumer_registers);
    Int half = warpgroup - 1;  // which 64 rows of the tile this warpgroup computes
    Int t = tid % 128;
    Bool leader = t == 0;
    WgmmaAccumulator<tile_n> acc;
    for_(0, my_tiles, [&](Int j) {
      auto [m0, n0] = tile_origin(j);
      acc.fill(0.0f);
      for_(0, k_tiles, [&](Int kt) {
        Int it = j * k_tiles + kt;
        Int s = it % stages, parity = (it / stages) & 1;
        mbarrier_wait(full(s), parity);
        WgmmaOperand<bf16> A(a_tile(s) + half * (64 * tile_k), TmaSwizzle::bytes128);
        WgmmaOperand<bf16> B(b_tile(s), TmaSwizzle::bytes128);
        wgmma_fence();
        for (int k = 0; k < A.k_steps(); ++k) wgmma<bf16>(acc, A.slice(0, k), B.slice(0, k));
        wgmma_commit_group();
        // One batch stays in flight; the one before it is done, so its stage can be refilled.
        wgmma_wait_group(1);
        if_(leader && kt > 0, [&] { mbarrier_arrive(empty((it + stages - 1) % stages)); });
      });
      wgmma_wait_group(0);
      wgmma_fence_operands(acc);
      // The tile's last stage is free too: the producer can fill it during the stores below.
      if_(leader, [&] { mbarrier_arrive(empty((j * k_tiles + k_tiles - 1) % stages)); });

      Int row = m0 + half * 64 + (t / 32) * 16 + (t % 32) / 4;
      Int col = n0 + (t % 4) * 2;
      auto store_columns = [&](int first_q, int end_q) {
        for (int q = first_q; q < end_q; ++q)
          for (int h = 0; h < 2; ++h) {
            int i = 4 * q + 2 * h;  // values i, i+1: row + 8h, columns 8q + 2(t%4) + {0, 1}
            c.pointer_at({row + 8 * h, col + 8 * q}).store_vector<2>({cast<bf16>(F32(acc[i])), cast<bf16>(F32(acc[i + 1]))});
          }
      };
      constexpr int half_q = b_half / 8;
      store_columns(0, half_q);
      if_(n0 + b_half < n, [&] { store_columns(half_q, 2 * half_q); });
    });
  });
}};

/// The launch of C = A * B^T on device buffers (A: m x k, B: n x k, C: m x n, all row-major),
/// its shape checked: one CTA per multiprocessor, or one per tile when there are fewer tiles.
inline PreparedLaunch gemm_bf16_prepare(const Device& gpu, const Buffer<bf16>& a, const Buffer<bf16>& b, const Buffer<bf16>& c,
                                        int64_t m, int64_t n, int64_t k) {
  using namespace gemm;
  if (m % tile_m || n % b_half || k % tile_k)  // N: a half-wide last tile column is allowed
    throw Error("error: gemm_bf16 needs M, N multiples of 128 and K a multiple of 64, not " + std::to_string(m) + " x " +
                std::to_string(n) + " x " + std::to_string(k));
  auto ta = make_tensor_map(a.view({m, k}), {tile_m, tile_k}, TmaSwizzle::bytes128);
  auto tb = make_tensor_map(b.view({n, k}), {b_half, tile_k}, TmaSwizzle::bytes128);
  int64_t tiles_m = m / tile_m, tiles_n = (n + tile_n - 1) / tile_n;
  Launch cfg{.grid = {uint32_t(std::min<int64_t>(tiles_m * tiles_n, gpu.multiprocessors()))}, .block = threads,
             .shared_bytes = shared_bytes};
  return gemm_bf16.prepare(gpu, cfg, ta, tb, c.view({m, n}), int32_t(k / tile_k), int32_t(tiles_m), int32_t(n));
}

inline void gemm_bf16_run(const Device& gpu, const Buffer<bf16>& a, const Buffer<bf16>& b, const Buffer<bf16>& c, int64_t m,
                          int64_t n, int64_t k) {
  gemm_bf16_prepare(gpu, a, b, c, m, n, k)();
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
            auto tb = TensorMap<bf16>::for_compile(2, {b_half, tile_k}, TmaSwizzle::bytes128);
            auto c = DeviceTensor<bf16>::make(0, std::array<int64_t, 2>{m, n}, std::array<int64_t, 2>{n, 1});
            return gemm_bf16.compile(t, ta, tb, c, int32_t(k / tile_k), int32_t(m / tile_m), int32_t(n));
          },
          // bf16 output: about 2^-9 relative rounding per element
          1e-2,
          {"sm_90a"}};
}

}  // namespace examples
