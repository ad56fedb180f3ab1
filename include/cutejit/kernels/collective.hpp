/** \file
 * Collectives over the GPUs of an NVSHMEM job, compiled into libcutejit, each one kernel with no
 * host step between its parts:
 *
 *     nvshmem::Session shmem(gpu, rank, ranks, id);
 *     Buffer<bf16> x = shmem.alloc<bf16>(n), y = shmem.alloc<bf16>(n);  // symmetric
 *     kernels::AllReduce reduce(shmem);
 *     reduce(kernels::AllReduce::Shape::two_shot, x.view({n}), y.view({n}));  // y = sum over PEs of x
 *
 *     kernels::AllGatherGemm tp(shmem, m, k);   // tensor parallelism: A's rows sharded over the PEs
 *     tp.upload_shard(my_rows);                  // this PE's M/P rows of A
 *     shmem.barrier_all();
 *     tp(w.view({n, k}), c.view({m, n}));        // C = gather(A) W^T, the GEMM starting on the rows already in
 *
 * The all-reduce comes in two shapes (collective/all_reduce.hpp): one-shot, every PE reading
 * every PE's input (the fewest steps, for small messages), and two-shot, a reduce-scatter and an
 * all-gather in one kernel (each byte over a link once, for large ones). Which to take is the
 * caller's choice: where they cross depends on the GPUs and their links, and no measurement on
 * more than one GPU has chosen a threshold yet. The all-gather GEMM (collective/all_gather_gemm.hpp)
 * is the sm_90a wgmma GEMM fed by flags that each PE raises as it pushes its rows of A. Both are
 * bf16, summed and accumulated in f32. A mistake (tensors that are not symmetric, sizes the
 * kernels cannot take) is an Error at the caller's line, and nothing is written.
 */
#pragma once

#include <cstdint>
#include <source_location>
#include <span>
#include <vector>

#include "cutejit/core/compiled.hpp"
#include "cutejit/core/target.hpp"
#include "cutejit/runtime/buffer.hpp"
#include "cutejit/runtime/device.hpp"
#include "cutejit/runtime/nvshmem.hpp"

namespace cutejit::kernels {

/// An all-reduce (sum) over the PEs of a session: the flags its blocks meet on, and the epoch
/// they count. Every PE makes one and calls it in step with the others.
class AllReduce {
 public:
  enum class Shape { one_shot, two_shot };
  /// `blocks` CTAs on each PE, one per multiprocessor unless given. Collective: allocates the
  /// flags in the symmetric heap.
  explicit AllReduce(const nvshmem::Session& session, int blocks = 0, std::source_location where = std::source_location::current());
  /// y = the sum over PEs of x, on every PE; x and y symmetric (from Session::alloc, or views of
  /// such memory), contiguous, of one size, a multiple of 8 elements.
  void operator()(Shape shape, const DeviceTensor<bf16>& x, const DeviceTensor<bf16>& y, StreamHandle stream = nullptr,
                  std::source_location where = std::source_location::current());

 private:
  const nvshmem::Session* session_;
  int blocks_;
  Buffer<uint64_t> flags_;
  uint64_t epoch_ = 0;
};

/// Both shapes' kernels for a job of `pes` PEs, inputs like `x` (DeviceTensor::for_compile) and
/// `blocks` CTAs a PE (AllReduce's: the GPU's multiprocessors unless given), compiled with no
/// GPU: for warming the cache with the kernels those launches find.
std::vector<CompiledKernel> all_reduce_compile(const Target& target, int pes, const DeviceTensor<bf16>& x, int blocks,
                                               std::source_location where = std::source_location::current());

/// C = gather(A) B^T on every PE of a session, sm_90a: A (M x K) sharded by rows over the PEs,
/// each PE's B its own. Holds A's symmetric copy and one flag per 128 x 64 tile of it.
class AllGatherGemm {
 public:
  /// M a multiple of 128 x the PEs, K of 64. Collective: allocates A and the flags.
  AllGatherGemm(const nvshmem::Session& session, int64_t m, int64_t k, std::source_location where = std::source_location::current());
  /// Copies this PE's rows of A (M/P x K, row-major) into place. Rewrite them only once every
  /// PE's previous call has finished (a barrier_all), as other PEs read them.
  void upload_shard(std::span<const bf16> rows, std::source_location where = std::source_location::current());
  /// C (M x N, row-major) = A B^T, B (N x K) K-major; N a multiple of 8.
  void operator()(const DeviceTensor<bf16>& b, const DeviceTensor<bf16>& c, StreamHandle stream = nullptr,
                  std::source_location where = std::source_location::current());

 private:
  const nvshmem::Session* session_;
  int64_t m_, k_;
  Buffer<bf16> a_;
  Buffer<uint64_t> flags_;
  uint64_t epoch_ = 0;
};

/// Every kernel an AllGatherGemm of M x K may launch on `target` (one per tile width) for a job
/// of `pes` PEs, compiled with no GPU.
std::vector<CompiledKernel> all_gather_gemm_compile(const Target& target, int pes, int64_t m, int64_t k,
                                                    std::source_location where = std::source_location::current());

}  // namespace cutejit::kernels
