/** \file
 * The emulated streaming multiprocessor: clusters of CTAs, their warps and threads, each thread
 * with its own program counter (independent thread scheduling), shared memory with a record of
 * which bytes were written, named and cluster barriers, mbarriers and the asynchronous
 * operations still in flight. Instruction families (exec_*.cpp) act on it through ExecContext.
 *
 * Address windows: a shared::cta address is an offset into the CTA's shared memory (from
 * shared_base); a shared::cluster address of another CTA carries its rank + 1 in bits 24..31;
 * a generic address is shared when it lies in the shared window, local in the local window,
 * and global otherwise.
 */
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "emulator/device_memory.hpp"
#include "emulator/fault.hpp"
#include "emulator/ptx_program.hpp"

namespace cutejit::emulator {


struct LaunchConfig {
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint32_t cluster[3] = {1, 1, 1};
  uint32_t dynamic_shared = 0;
  std::vector<uint8_t> params;  ///< the kernel's parameter space, laid out as the Function says
};

struct RunOptions {
  uint64_t seed = 0;               ///< 0: a fixed schedule; otherwise thread interleaving and
                                   ///< async completion order are drawn from this seed
  uint64_t instruction_budget = 0; ///< warp instructions per launch before it is stopped; 0: no limit
  unsigned threads = 1;            ///< host threads running clusters in parallel
  int multiprocessors = 132;       ///< what %nsmid reports
};

enum class LaneState : uint8_t { inactive, ready, exited, at_barrier, at_collective, waiting };

struct Cta;
struct Cluster;

/// What a waiting thread waits for; rechecked whenever its warp is considered.
struct Wait {
  enum class Kind : uint8_t { none, mbarrier_phase, cluster_barrier, tmem_alloc, warpgroup } kind = Kind::none;
  Cta* cta = nullptr;
  uint32_t address = 0;
  uint32_t parity = 0;
};

struct Warp {
  Cta* cta = nullptr;
  uint32_t id = 0;
  std::array<uint32_t, 32> pc{};
  std::array<LaneState, 32> state{};
  std::array<Wait, 32> wait{};
  std::array<uint32_t, 32> tid_x{}, tid_y{}, tid_z{};
  std::vector<uint64_t> regs;   ///< slot * 32 + lane
  std::vector<uint8_t> local;   ///< lane * local_stride
  uint32_t local_stride = 0;
  int setmaxnreg_balance = 0;
  uint32_t turn_pc = 0;  ///< the pc the warp's last turn started at (fixed schedule)
  std::array<uint64_t, 32> cp_async_committed{};  ///< per lane: commit groups so far
  std::array<uint8_t, 32> carry{};                 ///< per lane: the condition code's carry (add.cc, addc…)
  std::array<std::vector<uint32_t>, 32> calls{};   ///< per lane: the pcs of the calls it is in, innermost last

  uint64_t& reg(uint32_t slot, int lane) { return regs[size_t(slot) * 32 + size_t(lane)]; }
  uint32_t mask(LaneState s) const {
    uint32_t m = 0;
    for (int l = 0; l < 32; ++l) m |= uint32_t(state[l] == s) << l;
    return m;
  }
};

struct NamedBarrier {
  uint32_t arrived = 0;
  uint32_t expected = 0;  ///< 0 until the first arrival names it
};

struct MBarrier {
  uint32_t expected = 0;
  int64_t pending = 0;
  int64_t tx = 0;
  uint64_t completed_phases = 0;
};

/// An operation issued asynchronously (cp.async, a bulk copy, a tensor copy, an MMA commit) that
/// completes later: at the latest when something waits for it, or earlier in a seeded schedule.
struct AsyncOp {
  Warp* warp = nullptr;
  int lane = 0;
  uint64_t group = 0;               ///< cp.async: the thread's commit group, 0 while uncommitted
  std::function<void()> complete;   ///< performs the operation's effects
  uint32_t mbarrier = 0;            ///< shared::cluster address of the barrier it signals, or 0
  Cta* mbarrier_cta = nullptr;
};

/// Who last wrote a byte of shared memory, and in which synchronisation epoch of the cluster:
/// a thread reading or writing a byte another thread wrote in the same epoch (no barrier,
/// mbarrier phase or warp synchronisation between them) is a data race.
struct SharedByte {
  static constexpr uint32_t nobody = 0;                  ///< never written: a read is reported
  static constexpr uint32_t async_proxy = UINT32_MAX;    ///< written by a copy or an MMA: ordered by its wait
  uint32_t writer = nobody;  ///< the writing thread's number in the cluster + 1
  uint32_t epoch = 0;
  bool strong = false;       ///< by a strong (relaxed, acquire, release, volatile) store
};

struct Cta {
  Cluster* cluster = nullptr;
  uint32_t ctaid[3] = {0, 0, 0};
  uint32_t rank = 0;            ///< in its cluster
  uint32_t cluster_ctaid[3] = {0, 0, 0};
  uint32_t threads = 0;
  std::vector<uint8_t> shared;  ///< [0, shared_base) is never valid
  std::vector<SharedByte> written;  ///< per byte of shared memory: its last writer
  /// Records a write of [offset, offset + bytes) by `writer` (a thread, or the async proxy).
  void record_write(uint32_t offset, size_t bytes, uint32_t writer);
  std::vector<std::unique_ptr<Warp>> warps;
  std::array<NamedBarrier, 16> barriers{};
  std::unordered_map<uint32_t, MBarrier> mbarriers;  ///< by shared::cta address
  std::deque<AsyncOp> async;    ///< issued, not yet complete
  std::shared_ptr<void> tensor_memory;  ///< tcgen05's TMEM, made on first use
  /// wgmma's meeting points: (warpgroup, instruction) -> the warps of the group already there.
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> warpgroup_arrivals;
  uint32_t exited = 0;
  uint32_t live_threads() const { return threads - exited; }
};

struct Cluster {
  std::vector<std::unique_ptr<Cta>> ctas;
  uint32_t clusterid[3] = {0, 0, 0};
  uint32_t barrier_arrived = 0;
  uint64_t barrier_phase = 0;
  uint32_t epoch = 1;  ///< advanced by every synchronisation in the cluster (race detection)
  std::vector<uint64_t> barrier_phase_of;  ///< per thread of the cluster: the phase it waits to end
  /// A pair's meeting points (cta_group::2 allocation): (even rank, instruction) -> the warp of
  /// the pair that is there first.
  std::map<std::pair<uint32_t, uint32_t>, Warp*> pair_arrivals;
};

class Grid;

/// A CTA's shared memory as the semantics modules see it (shared::cta addresses): bounds
/// checked, reads of bytes nothing wrote refused, writes recorded.
class SharedMemory final : public Memory {
 public:
  SharedMemory(const Grid& grid, Cta& cta) : grid_(grid), cta_(cta) {}
  void read(uint64_t address, void* out, size_t bytes) override;
  void write(uint64_t address, const void* in, size_t bytes) override;

 private:
  const Grid& grid_;
  Cta& cta_;
};

/// What an executor sees: the warp, the lanes at this instruction (group), those whose guard
/// holds (active), and the machine's services.
struct ExecContext {
  Grid& grid;
  const Function& fn;
  Warp& warp;
  uint32_t pc = 0;
  uint32_t group = 0;
  uint32_t active = 0;
  int lane = -1;  ///< the lane being executed, for reports
  uint32_t held = 0;  ///< lanes put back to execute this instruction again (hold)
  /// The access is a strong one (ld/st .relaxed, .acquire, .release, .volatile): two strong
  /// accesses are no data race, and a strong read of another thread's strong write synchronises.
  bool strong = false;

  uint64_t get(const Operand& o, int lane);
  void set(const Operand& o, int lane, uint64_t v, int bits);
  const Operand& element(const Operand& vector, uint32_t i) const { return fn.vector_elements[vector.first + i]; }
  uint64_t address(const Operand& o, int lane) { return get_address(o, lane); }
  uint64_t get_address(const Operand& o, int lane);

  void read(Space s, uint64_t address, void* out, size_t bytes, int lane);
  void write(Space s, uint64_t address, const void* in, size_t bytes, int lane);
  /// This lane's thread number in the cluster + 1 (SharedByte::writer).
  uint32_t thread_number(int lane) const;
  /// Reports a read of unwritten bytes and a data race; records a write.
  void check_shared_access(Cta& c, uint32_t offset, size_t bytes, int lane, bool is_write);
  /// The host bytes of a global address range (for atomics).
  uint8_t* global_bytes(uint64_t address, size_t bytes);
  /// The CTA and offset a shared address of space `s` (shared_cta, shared_cluster or generic)
  /// names; throws Fault when out of range.
  std::pair<Cta*, uint32_t> shared_location(Space s, uint64_t address, size_t bytes, int lane);

  Cta& cta() { return *warp.cta; }
  /// Marks lanes of `mask` as held at this instruction (they execute it again when woken).
  void hold(uint32_t mask, LaneState why);
  template <class F>
  void each(uint32_t mask, F&& f) {
    while (mask) {
      lane = std::countr_zero(mask);
      mask &= mask - 1;
      f(lane);
    }
  }
};

/// One launch of one kernel.
class Grid {
 public:
  Grid(const Module& module, const Function& fn, const LaunchConfig& cfg, DeviceMemory& memory, const RunOptions& options);
  /// Runs every CTA to its end; throws Fault with the kernel, CTA, thread, instruction and
  /// source line of the first fault, deadlock or exhausted budget.
  void run();

  const Module& module;
  const Function& fn;
  const LaunchConfig& cfg;
  DeviceMemory& memory;
  const RunOptions& options;
  uint32_t cluster_dim[3] = {1, 1, 1};
  uint32_t cluster_count[3] = {1, 1, 1};
  bool explicit_cluster = false;

  /// Throws Fault unless [offset, offset + bytes) lies in a CTA's shared memory.
  void check_shared(uint64_t offset, size_t bytes) const;
  /// The end of a CTA's shared memory: its static variables, then the dynamic array.
  uint32_t shared_bytes() const {
    return std::max(shared_base + fn.static_shared_bytes, fn.dynamic_shared_offset + cfg.dynamic_shared);
  }
  /// Completes asynchronous operations of `cta` matching `pred` (all when pred is empty).
  void complete_async(Cta& cta, const std::function<bool(const AsyncOp&)>& pred = {});
  /// Re-examines named barrier `id` of `cta` and releases its waiters when it is full.
  void check_barrier(Cta& cta, uint32_t id);
  void check_cluster_barrier(Cluster& c);
  /// "thread (x, y, z)" (and its CTA in the cluster) of a SharedByte writer number.
  std::string thread_name(uint32_t number) const;
  void mbarrier_arrive(Cta& cta, uint32_t address, uint32_t count, const char* what);
  void mbarrier_complete_tx(Cta& cta, uint32_t address, int64_t bytes);
  std::mt19937_64& rng() { return rng_; }
  std::atomic<uint64_t> next_cluster{0};  ///< clusters are started (or cancelled) in this order
  uint64_t clusters() const { return uint64_t(cluster_count[0]) * cluster_count[1] * cluster_count[2]; }
  std::atomic<uint64_t> instructions{0};         ///< warp instructions executed
  std::atomic<uint64_t> thread_instructions{0};  ///< the same, counted once for each lane that ran it
  std::atomic<bool> stop{false};

 private:
  void run_cluster(uint64_t index);
  bool step_warp(Warp& w, int budget);
  bool wake(Warp& w);
  std::string locate(const Warp& w, int lane, uint32_t pc) const;
  std::string deadlock_report(Cluster& c) const;

  std::mt19937_64 rng_;
};

}  // namespace cutejit::emulator
