// An all-gather fused with the Hopper BF16 GEMM, as tensor parallelism uses it: PE p of P holds
// rows p * M/P ... of A (its shard) and its own B_p (N/P x K, stored N x K), and computes
//     C_p (M x N/P) = A (all M rows, gathered) * B_p^T
// without waiting for the gather to finish. The GEMM is gemm_sm90.hpp's, with a feed hook:
// - the producer warpgroup's three idle warps push this PE's rows of A into every other PE's
//   copy of A, one 128 x 64 tile (one TMA box) at a time, each followed by its flag at that PE;
//   the tiles are dealt out over the CTAs, so every multiprocessor pushes;
// - the producer thread, before each TMA load of A, waits for that tile's flag, unless the tile
//   is this PE's own. So each tile of C starts as soon as its rows of A are in.
// Flags are raised to an epoch that grows with each call, so they are never reset.
#pragma once

#include <span>
#include <vector>

#include "allreduce.hpp"
#include "gemm_sm90.hpp"

namespace examples {
using namespace cutejit;

namespace allgather_gemm {

inline constexpr int tile_m = gemm_sm90::tile_m, tile_k = gemm_sm90::tile_k_of<bf16>;  // 128 x 64: one TMA box of A
inline constexpr int vector = 8;                                               // bf16 values per 16 bytes

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

template <int TileN>
inline Kernel kernel{gemm_sm90::tile_name("allgather_gemm_bf16", TileN),
                     [](TmaDescriptor<bf16> a_map, TmaDescriptor<bf16> b_map, TmaDescriptor<bf16> c_map, Tensor<bf16> a,
                        Tensor<uint64_t> flags, Value<uint64_t> epoch, Int m, Int n, Int k, Int rows, Constexpr<int> pes) {
                       Int k64 = assume_divisible(k, tile_k);
                       gemm_sm90::kernel<bf16, gemm_sm90::Config{.tile_n = TileN}>(a_map, b_map, c_map, m, n, k64, Identity{},
                                                                         Feed{a, flags, epoch, rows, k64, pes});
                     }};

}  // namespace allgather_gemm

/// C = gather(A) * B^T on every PE of `session`: A's symmetric buffer and flags for M x K, and
/// the epoch they count. Put this PE's rows in with `upload_shard`, then call.
class AllGatherGemm {
 public:
  AllGatherGemm(const nvshmem::Session& session, int64_t m, int64_t k)
      : session_(&session), m_(m), k_(k), a_(session.alloc<bf16>(size_t(m * k))),
        flags_(session.alloc<uint64_t>(size_t(m / allgather_gemm::tile_m * (k / allgather_gemm::tile_k)))) {
    const int pes = session.n_pes();
    if (m % (int64_t(allgather_gemm::tile_m) * pes) != 0 || k % allgather_gemm::tile_k != 0)
      throw Error("AllGatherGemm: M must be a multiple of 128 x the PEs (" + std::to_string(128 * pes) + ") and K of 64, not M = " +
                  std::to_string(m) + ", K = " + std::to_string(k));
    flags_.zero();
  }
  /// Copies this PE's rows of A (M/P x K, row-major) into place. Rewrite them only once every
  /// PE's previous call has finished (a barrier_all), as other PEs read them.
  void upload_shard(std::span<const bf16> rows) {
    const int64_t count = m_ / session_->n_pes() * k_;
    if (int64_t(rows.size()) != count)
      throw Error("AllGatherGemm::upload_shard: " + std::to_string(rows.size()) + " values given, for " + std::to_string(count));
    const uint64_t at = a_.data() + uint64_t(session_->my_pe() * count) * sizeof(bf16);
    detail::copy_to_device(at, rows.data(), rows.size() * sizeof(bf16), session_->device().context());
  }
  /// C (M x N) = A * B^T, B stored N x K; N a multiple of 8.
  void operator()(const Buffer<bf16>& b, const Buffer<bf16>& c, int64_t n, StreamHandle stream = nullptr) {
    using namespace gemm_sm90;
    check_shape<bf16>("allgather_gemm_bf16", m_, n, k_);
    const Device& gpu = session_->device();
    with_tile_n(gpu, m_, n, [&](auto width) {
      constexpr Config config{.tile_n = decltype(width)::value};
      auto [ta, tb] = tensor_maps<bf16, config>(a_, b, m_, n, k_);
      Launch launch = launch_config(gpu, m_, n, config);
      launch.stream = stream;
      allgather_gemm::kernel<config.tile_n>(gpu, launch, ta, tb, output_map(c, m_, n), a_, flags_, uint64_t(++epoch_), int32_t(m_),
                                            int32_t(n), int32_t(k_), int32_t(m_ / session_->n_pes()), Constexpr<int>{session_->n_pes()});
      return 0;
    });
  }

 private:
  const nvshmem::Session* session_;
  int64_t m_, k_;
  Buffer<bf16> a_;
  Buffer<uint64_t> flags_;
  uint64_t epoch_ = 0;
};

/// The A and B each PE contributes in the examples and tests: random, from seeds of their own.
inline std::vector<bf16> allgather_gemm_shard(int64_t rows, int64_t k, int pe) { return random_values<bf16>(size_t(rows * k), 2000u + unsigned(pe)); }
inline std::vector<bf16> allgather_gemm_b(int64_t n, int64_t k, int pe) { return random_values<bf16>(size_t(n * k), 3000u + unsigned(pe)); }

/// Runs the fused kernel on this process's session and returns its error against a float64
/// product of the gathered A and this PE's B (gemm::error: norm-wise and element-wise).
inline double allgather_gemm_error(const nvshmem::Session& session, int64_t m, int64_t n, int64_t k, int calls = 2) {
  AllGatherGemm gemm_ag(session, m, k);
  const int pes = session.n_pes(), me = session.my_pe();
  const int64_t rows = m / pes;
  std::vector<bf16> a;
  for (int pe = 0; pe < pes; ++pe) {
    std::vector<bf16> shard = allgather_gemm_shard(rows, k, pe);
    a.insert(a.end(), shard.begin(), shard.end());
  }
  std::vector<bf16> shard = allgather_gemm_shard(rows, k, me), hb = allgather_gemm_b(n, k, me);
  gemm_ag.upload_shard(shard);
  Buffer<bf16> b = session.device().upload(hb), c = session.device().alloc<bf16>(size_t(m * n));
  const std::vector<double> ref = gemm::reference(a, hb, m, n, k);
  double worst = 0;
  for (int call = 0; call < calls; ++call) {
    c.upload(gemm::poisoned_output(m, n));
    session.barrier_all();  // every PE's shard is in place before any PE reads it
    gemm_ag(b, c, n);
    session.device().synchronize();
    worst = std::max(worst, gemm::error(gemm::to_floats(c), ref));
  }
  return worst;
}

}  // namespace examples
