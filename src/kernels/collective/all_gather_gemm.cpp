// kernels::AllGatherGemm: collective/all_gather_gemm.hpp's kernel, one per tile width, launched with
// the session's copy of A and its flags.
#include "cutejit/kernels/collective/all_gather_gemm.hpp"

#include <string>

#include "cutejit/kernels/collective.hpp"
#include "kernels/checks.hpp"

namespace cutejit::kernels {

namespace {

template <int TileN>
auto& all_gather_gemm_kernel() {
  static Kernel k{gemm_sm90::tile_name("cutejit_all_gather_gemm_bf16", TileN),
                  [](TmaDescriptor<bf16> a_map, TmaDescriptor<bf16> b_map, TmaDescriptor<bf16> c_map, Tensor<bf16> a, Tensor<uint64_t> flags,
                     Value<uint64_t> epoch, Int m, Int n, Int k, Int rows, Constexpr<int> pes) {
                    all_gather_gemm::kernel<TileN>(a_map, b_map, c_map, a, flags, epoch, m, n, k, rows, int(pes));
                  }};
  return k;
}

constexpr const char* op = "AllGatherGemm";

/// A's rows and K: M a multiple of 128 per PE, K of 64 (whole TMA boxes of A, one flag each).
int64_t checked_m(const nvshmem::Session& session, int64_t m, int64_t k, const std::source_location& where) {
  const int64_t pes = session.n_pes();
  detail::require(m > 0 && k > 0 && m % (int64_t(all_gather_gemm::tile_m) * pes) == 0 && k % all_gather_gemm::tile_k == 0 &&
                      m < (int64_t(1) << 31) - 256 && k < (int64_t(1) << 31),
                  op,
                  "M must be a positive multiple of 128 x the PEs (" + std::to_string(128 * pes) + ") and K of 64, not M = " +
                      std::to_string(m) + ", K = " + std::to_string(k),
                  where);
  return m;
}

}  // namespace

AllGatherGemm::AllGatherGemm(const nvshmem::Session& session, int64_t m, int64_t k, std::source_location where)
    : session_(&session), m_(checked_m(session, m, k, where)), k_(k), a_(session.alloc<bf16>(size_t(m * k))),
      flags_(session.alloc<uint64_t>(size_t(m / all_gather_gemm::tile_m * (k / all_gather_gemm::tile_k)))) {
  flags_.zero();
}

void AllGatherGemm::upload_shard(std::span<const bf16> rows, std::source_location where) {
  const int64_t count = m_ / session_->n_pes() * k_;
  detail::require(int64_t(rows.size()) == count, "AllGatherGemm::upload_shard",
                  std::to_string(rows.size()) + " values given; this PE's rows of A are " + std::to_string(m_ / session_->n_pes()) + " x " +
                      std::to_string(k_) + " = " + std::to_string(count),
                  where);
  const uint64_t at = a_.data() + uint64_t(session_->my_pe() * count) * sizeof(bf16);
  cutejit::detail::copy_to_device(at, rows.data(), rows.size() * sizeof(bf16), session_->device().context());
}

void AllGatherGemm::operator()(const DeviceTensor<bf16>& b, const DeviceTensor<bf16>& c, StreamHandle stream, std::source_location where) {
  const Device& gpu = session_->device();
  detail::require(gpu.target().sm == 90 && gpu.target().arch_specific(), op,
                  "runs on sm_90a (its GEMM is the wgmma one), not " + gpu.target().name(), where);
  detail::require(b.rank == 2 && b.shape[1] == k_ && b.stride[1] == 1 && b.shape[0] % 8 == 0 && b.shape[0] > 0 &&
                      (b.shape[0] == 1 || b.stride[0] % 8 == 0) && b.ptr % 16 == 0,
                  op,
                  "b is " + detail::shape_of(b) + "; it takes (N, " + std::to_string(k_) +
                      ") with K contiguous, N a multiple of 8, rows 16-byte aligned",
                  where);
  const int64_t n = b.shape[0];
  detail::require(c.rank == 2 && c.shape[0] == m_ && c.shape[1] == n && c.stride[1] == 1 && c.stride[0] % 8 == 0 && c.ptr % 16 == 0, op,
                  "c is " + detail::shape_of(c) + "; it takes (" + std::to_string(m_) + ", " + std::to_string(n) +
                      ") row-major, rows 16-byte aligned",
                  where);
  gemm_sm90::with_tile_n(gpu, m_, n, [&](auto width) {
    constexpr int tile_n = decltype(width)::value;
    constexpr gemm_sm90::Config config{.tile_n = tile_n};
    auto ab = gemm_sm90::operand_box<bf16>(WgmmaMajor::k, gemm_sm90::tile_m), bb = gemm_sm90::operand_box<bf16>(WgmmaMajor::k, config.b_box_rows());
    auto ta = make_tensor_map(a_.view({m_, k_}), {ab[0], ab[1]}, TmaSwizzle::bytes128);
    auto tb = make_tensor_map(b, {bb[0], bb[1]}, TmaSwizzle::bytes128);
    auto tc = gemm_sm90::output_map(c);
    Launch launch = gemm_sm90::launch_config(gpu, m_, n, config);
    launch.stream = stream;
    launch.where = where;
    all_gather_gemm_kernel<tile_n>()(gpu, launch, ta, tb, tc, a_, flags_, uint64_t(++epoch_), int32_t(m_), int32_t(n), int32_t(k_),
                                     int32_t(m_ / session_->n_pes()), Constexpr<int>{session_->n_pes()});
    return 0;
  });
}

std::vector<CompiledKernel> all_gather_gemm_compile(const Target& target, int pes, int64_t m, int64_t k, std::source_location where) {
  detail::require(pes >= 1, "all_gather_gemm_compile", "a job has at least one PE, not " + std::to_string(pes), where);
  detail::require(target.sm == 90 && target.arch_specific(), "all_gather_gemm_compile",
                  "the all-gather GEMM is sm_90a's (wgmma), not " + target.name(), where);
  detail::require(m > 0 && k > 0 && m % (int64_t(all_gather_gemm::tile_m) * pes) == 0 && k % all_gather_gemm::tile_k == 0,
                  "all_gather_gemm_compile",
                  "M must be a positive multiple of 128 x the PEs (" + std::to_string(128 * int64_t(pes)) + ") and K of 64, not M = " +
                      std::to_string(m) + ", K = " + std::to_string(k),
                  where);
  // A and the flags as the constructor allocates them: their extents are part of the kernels'
  // specialization.
  auto a = DeviceTensor<bf16>::for_compile({m * k});
  auto flags = DeviceTensor<uint64_t>::for_compile({m / all_gather_gemm::tile_m * (k / all_gather_gemm::tile_k)});
  std::vector<CompiledKernel> out;
  for (int tile_n : gemm_sm90::tile_widths)
    out.push_back(gemm_sm90::with_tile_n(tile_n, [&](auto width) {
      constexpr gemm_sm90::Config config{.tile_n = decltype(width)::value};
      auto [ta, tb] = gemm_sm90::tensor_maps_for_compile<bf16, config>();
      return all_gather_gemm_kernel<config.tile_n>().compile(target, ta, tb, gemm_sm90::output_map_for_compile(), a, flags, uint64_t(1),
                                                             int32_t(m), int32_t(256), int32_t(k), int32_t(m / pes), Constexpr<int>{pes});
    }));
  return out;
}

}  // namespace cutejit::kernels
