// kernels::AllReduce: collective/all_reduce.hpp's two kernels, launched with the session's flags.
#include "cutejit/kernels/collective/all_reduce.hpp"

#include <string>

#include "cutejit/kernels/collective.hpp"
#include "kernels/checks.hpp"

namespace cutejit::kernels {

namespace {

auto& one_shot_kernel() {
  static Kernel k{"cutejit_all_reduce_one_shot_bf16", [](Tensor<bf16> x, Tensor<bf16> y, Tensor<uint64_t> flags, Value<uint64_t> epoch,
                                                          Constexpr<int> pes) { all_reduce::one_shot(x, y, flags, epoch, int(pes)); }};
  return k;
}

auto& two_shot_kernel() {
  static Kernel k{"cutejit_all_reduce_two_shot_bf16", [](Tensor<bf16> x, Tensor<bf16> y, Tensor<uint64_t> flags, Value<uint64_t> epoch,
                                                          Constexpr<int> pes) { all_reduce::two_shot(x, y, flags, epoch, int(pes)); }};
  return k;
}

/// x and y contiguous vectors of one size, a multiple of 8 elements.
void check_vectors(const DeviceTensor<bf16>& x, const DeviceTensor<bf16>& y, const char* op, const std::source_location& where) {
  detail::require(x.rank == 1 && y.rank == 1 && x.stride[0] == 1 && y.stride[0] == 1 && x.shape[0] == y.shape[0] &&
                      x.shape[0] % all_reduce::vector == 0 && x.shape[0] > 0,
                  op,
                  "x " + detail::shape_of(x) + " and y " + detail::shape_of(y) +
                      " must be contiguous vectors of one size, a positive multiple of 8 elements (16-byte loads and stores)",
                  where);
  detail::require(x.ptr % 16 == 0 && y.ptr % 16 == 0, op, "x and y must start on 16 bytes", where);
}

/// The CTAs of each PE: `blocks`, or one per multiprocessor for 0.
int blocks_for(const nvshmem::Session& session, int blocks, const std::source_location& where) {
  detail::require(blocks >= 0 && blocks <= 65535, "AllReduce", "blocks is " + std::to_string(blocks) + "; it takes 0 (one per multiprocessor) to 65535",
                  where);
  return blocks > 0 ? blocks : session.device().multiprocessors();
}

}  // namespace

AllReduce::AllReduce(const nvshmem::Session& session, int blocks, std::source_location where)
    : session_(&session), blocks_(blocks_for(session, blocks, where)), flags_(session.alloc<uint64_t>(size_t(2 * blocks_ * session.n_pes()))) {
  flags_.zero();
}

void AllReduce::operator()(Shape shape, const DeviceTensor<bf16>& x, const DeviceTensor<bf16>& y, StreamHandle stream,
                           std::source_location where) {
  check_vectors(x, y, "AllReduce", where);
  // Every PE's copy must be reachable: memory outside the symmetric heap has no peer address.
  for (auto [t, name] : {std::pair{&x, "x"}, {&y, "y"}})
    detail::require(session_->peer_address(t->ptr, session_->my_pe()) != 0, "AllReduce",
                    std::string(name) + " is not in NVSHMEM's symmetric heap: allocate it with Session::alloc", where);
  Launch launch{.grid = uint32_t(blocks_), .block = all_reduce::threads, .stream = stream, .where = where};
  const Constexpr<int> pes(session_->n_pes());
  if (shape == Shape::one_shot) one_shot_kernel()(session_->device(), launch, x, y, flags_, uint64_t(++epoch_), pes);
  else two_shot_kernel()(session_->device(), launch, x, y, flags_, uint64_t(++epoch_), pes);
}

std::vector<CompiledKernel> all_reduce_compile(const Target& target, int pes, const DeviceTensor<bf16>& x, int blocks,
                                               std::source_location where) {
  check_vectors(x, x, "all_reduce_compile", where);
  detail::require(pes >= 1, "all_reduce_compile", "a job has at least one PE, not " + std::to_string(pes), where);
  detail::require(blocks >= 1 && blocks <= 65535, "all_reduce_compile",
                  "blocks is " + std::to_string(blocks) + "; it takes the CTAs a PE launches, 1 to 65535", where);
  auto flags = DeviceTensor<uint64_t>::for_compile({2 * int64_t(blocks) * pes});  // as AllReduce allocates them
  return {one_shot_kernel().compile(target, x, x, flags, uint64_t(1), Constexpr<int>{pes}),
          two_shot_kernel().compile(target, x, x, flags, uint64_t(1), Constexpr<int>{pes})};
}

}  // namespace cutejit::kernels
