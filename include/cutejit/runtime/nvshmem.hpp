/** \file
 * NVSHMEM on the host: starting it on the GPUs of a job, symmetric memory, PE and team queries.
 * NVSHMEM's host library (libnvshmem_host.so.3, release 3) is found and loaded at run time, as
 * the driver is: a program that never makes a Session needs no NVSHMEM. Kernels call NVSHMEM
 * through atom/nvshmem.hpp; a kernel that does is set up for the Session when it is loaded.
 *
 *     // every process, one GPU each; rank 0 makes the id, the others receive it
 *     nvshmem::UniqueId id = rank == 0 ? nvshmem::UniqueId::create() : receive_from_rank_0();
 *     nvshmem::Session shmem(gpu, rank, ranks, id);
 *     Buffer<bf16> x = shmem.alloc<bf16>(n);           // the same n on every PE
 *     allreduce(gpu, launch, x, ...);                    // a kernel that calls nvshmem::put
 *
 * The bootstrap is NVSHMEM's unique-id one: no MPI, no launcher, any channel carries the 128
 * bytes of the id (`exchange_unique_id` uses a file, for processes of one host). NVSHMEM's NVLink
 * multicast (NVLS) follows NVSHMEM's own NVSHMEM_DISABLE_NVLS setting; cutejit leaves it as found.
 */
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <string>

#include "cutejit/runtime/buffer.hpp"
#include "cutejit/runtime/device.hpp"
#include "cutejit/runtime/stream.hpp"

namespace cutejit::nvshmem {

/// The NVSHMEM host library cutejit found: its release and file. Throws cutejit::Error saying
/// where it looked when there is none, or when it is not release 3.
struct Library {
  int major = 0, minor = 0, patch = 0;
  std::string path;
  std::string version() const { return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch); }
};
Library library();

/// The token that lets the processes of one job find each other (nvshmemx_uniqueid_t).
struct UniqueId {
  std::array<std::byte, 128> bytes{};
  /// Made by exactly one process of the job (by convention rank 0), before any Session.
  static UniqueId create();
};

/// Hands rank 0's id to every rank through `file` (shared by the processes of one host): rank 0
/// creates it and writes the file (atomically, by rename); the others wait for it, at most
/// `timeout`, and throw cutejit::Error if it does not come. Remove the file after the job.
UniqueId exchange_unique_id(const std::filesystem::path& file, int rank,
                            std::chrono::milliseconds timeout = std::chrono::seconds(60));

/// NVSHMEM running on one GPU of a job: one per process, for the life of the process's NVSHMEM
/// use. Making and destroying it are collective: every PE of the job does both, in step.
class Session {
 public:
  /// The job of this process alone: one PE.
  explicit Session(const Device& gpu);
  /// PE `rank` of `ranks`, all made with the same id; `gpu` is this process's GPU.
  Session(const Device& gpu, int rank, int ranks, const UniqueId& id);
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session();

  int my_pe() const { return my_pe_; }
  int n_pes() const { return n_pes_; }
  /// This PE's number among the PEs of its host, and how many there are (NVSHMEMX_TEAM_NODE).
  int node_pe() const { return node_pe_; }
  int node_pes() const { return node_pes_; }
  const Device& device() const { return *gpu_; }

  /// Symmetric memory: `count` elements at the same offset of every PE's heap, so a kernel on
  /// any PE can name it. Collective: every PE allocates, in the same order and with the same
  /// count, which is checked (a mismatch throws on every PE). Freed, collectively too, when the
  /// Buffer is destroyed.
  template <class T>
  Buffer<T> alloc(size_t count) const {
    return Buffer<T>(allocate_bytes(count * sizeof(T)), count, gpu_->context(), release_symmetric);
  }
  /// PE `pe`'s address of the symmetric `buffer`, for loads, stores and copies from this GPU;
  /// 0 when that PE cannot be reached by them (no NVLink or PCIe peer access).
  template <class T>
  uint64_t peer_address(const Buffer<T>& buffer, int pe) const {
    return peer_address_of(buffer.data(), pe);
  }
  /// The same for any address in the symmetric heap (a view into a symmetric buffer); 0 for
  /// memory outside it.
  uint64_t peer_address(uint64_t ptr, int pe) const { return peer_address_of(ptr, pe); }
  /// Every PE's barrier, ordered in `stream` (nvshmemx_barrier_all_on_stream).
  void barrier_all(StreamHandle stream = nullptr) const;

 private:
  uint64_t allocate_bytes(size_t bytes) const;
  uint64_t peer_address_of(uint64_t ptr, int pe) const;
  static void release_symmetric(uint64_t ptr, void* context) noexcept;
  void start(int rank, int ranks, const UniqueId& id);

  const Device* gpu_;
  int my_pe_ = 0, n_pes_ = 1, node_pe_ = 0, node_pes_ = 1;
  uint64_t scratch_ = 0;  ///< symmetric int64[4]: the allocation-size check
};

}  // namespace cutejit::nvshmem
