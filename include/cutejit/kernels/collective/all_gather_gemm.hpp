// An all-gather fused with the Hopper BF16 GEMM, as tensor parallelism uses it
// (kernels/collective.hpp's AllGatherGemm launches it): PE p of P holds rows p * M/P ... of A (its
// shard) and its own B_p (N/P x K, stored N x K), and computes
//     C_p (M x N/P) = A (all M rows, gathered) * B_p^T
// without waiting for the gather to finish. The GEMM is gemm/sm90.hpp's, with a feed hook:
// - the producer warpgroup's three idle warps push this PE's rows of A into every other PE's
//   copy of A, one 128 x 64 tile (one TMA box) at a time, each followed by its flag at that PE;
//   the tiles are dealt out over the CTAs, so every multiprocessor pushes;
// - the producer thread, before each TMA load of A, waits for that tile's flag, unless the tile
//   is this PE's own. So each tile of C starts as soon as its rows of A are in.
// Flags are raised to an epoch that grows with each call, so they are never reset.
#pragma once

#include <array>
#include <vector>

#include "cutejit/core/visibility.hpp"
#include "cutejit/cutejit.hpp"
#include "cutejit/kernels/gemm/sm90.hpp"

namespace cutejit::kernels::all_gather_gemm {

inline constexpr int tile_m = gemm_sm90::tile_m, tile_k = gemm_sm90::tile_k_of<bf16>;  // 128 x 64: one TMA box of A
inline constexpr int vector = 8;  // bf16 values per 16 bytes

/// The feed of gemm_sm90::kernel: A (M x K, row-major, symmetric; this PE's rows filled by the
/// caller), one flag per 128 x 64 tile of it, `rows` rows per PE (a multiple of 128), K a
/// multiple of 64.
struct Feed {
  Tensor<bf16> a;
  Tensor<uint64_t> flags;
  Value<uint64_t> epoch;
  Int rows, k;
  int pes;

  Int k_tiles() const { return k / tile_k; }
  Pointer<uint64_t> flag(const Int& m0, const Int& kt) const { return flags.data() + (m0 / tile_m * k_tiles() + kt); }

  void wait(const Int& m0, const Int& kt) const {
    if_(m0 / rows != nvshmem::my_pe(), [&] {
      nvshmem::signal_wait_until(flag(m0, kt), nvshmem::Compare::ge, epoch);
      // Another GPU's stores wrote the tile; TMA reads it through the async proxy.
      inline_ptx("fence.proxy.async.global;", "");
    });
  }

  void side(const Int& thread, int threads) const {
    if (pes == 1) return;  // a job of one: every tile is this PE's own
    Int me = nvshmem::my_pe();
    std::vector<Pointer<bf16>> copies;
    for (int pe = 0; pe < pes; ++pe) copies.push_back(nvshmem::peer_of(a.data(), pe));
    Int tiles = rows / tile_m * k_tiles();
    for_(block_idx().x, tiles, grid_dim().x, [&](Int j) {
      Int m0 = me * rows + j / k_tiles() * tile_m, kt = j % k_tiles();
      // The tile's 128 rows of 64 values: 1024 vectors, 16 bytes each, to every other PE.
      for_(thread, tile_m * tile_k / vector, threads, [&](Int v) {
        Int at = (m0 + v / (tile_k / vector)) * k + kt * tile_k + v % (tile_k / vector) * vector;
        std::array<BF16, vector> x = (a.data() + at).load_vector<vector>();
        for (int pe = 0; pe < pes; ++pe) if_(me != pe, [&] { (copies[size_t(pe)] + at).store_vector<vector>(x); });
      });
      thread_fence_system();  // the tile's stores, before the flag that announces them
      named_barrier_sync(3, threads);
      if_(thread < pes && thread != me, [&] { nvshmem::signal_op(flag(m0, kt), epoch, nvshmem::SignalOp::set, thread); });
    });
  }
};

/// The kernel body: A's tensor map and the symmetric A itself (this PE's rows filled), B's and C's
/// maps, the flags and epoch, `rows` rows of A per PE.
template <int TileN>
CUTEJIT_LOCAL void kernel(const TmaDescriptor<bf16>& a_map, const TmaDescriptor<bf16>& b_map, const TmaDescriptor<bf16>& c_map, const Tensor<bf16>& a,
            const Tensor<uint64_t>& flags, const Value<uint64_t>& epoch, const Int& m, const Int& n, const Int& k, const Int& rows, int pes) {
  Int k64 = assume_divisible(k, tile_k);
  gemm_sm90::kernel<bf16, gemm_sm90::Config{.tile_n = TileN}>(a_map, b_map, c_map, m, n, k64, Identity{}, Feed{a, flags, epoch, rows, k64, pes});
}

}  // namespace cutejit::kernels::all_gather_gemm
