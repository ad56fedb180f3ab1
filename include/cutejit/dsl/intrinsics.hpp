/** \file
 * The GPU's own vocabulary: thread/block/grid indices, barriers, warp shuffles and votes,
 * atomics, device printf and traps, and the target-specific instructions that later layers
 * (pipelines, MMA atoms) build on. Target-specific ones are checked against the target when
 * traced: using one the target lacks is an error naming the line, never an LLVM abort.
 */
#pragma once

#include <array>
#include <string_view>

#include "cutejit/dsl/var.hpp"

namespace cutejit {

struct Dim3Value {
  Int x, y, z;
};

namespace detail {
inline Dim3Value special3(Special x, Where w) {
  auto s = [&](int k) { return Int(special(Special(int(x) + k), w)); };
  return {s(0), s(1), s(2)};
}
}  // namespace detail

inline Dim3Value thread_idx(detail::Where w = detail::Where::current()) { return detail::special3(detail::Special::thread_x, w); }
inline Dim3Value block_idx(detail::Where w = detail::Where::current()) { return detail::special3(detail::Special::block_x, w); }
inline Dim3Value block_dim(detail::Where w = detail::Where::current()) { return detail::special3(detail::Special::block_dim_x, w); }
inline Dim3Value grid_dim(detail::Where w = detail::Where::current()) { return detail::special3(detail::Special::grid_dim_x, w); }
inline Int lane_idx(detail::Where w = detail::Where::current()) { return Int(detail::special(detail::Special::lane, w)); }
/// The warp's index within its block (threadIdx.x / 32 for 1-D blocks; linearised otherwise).
inline Int warp_idx(detail::Where w = detail::Where::current()) { return Int(detail::special(detail::Special::warp, w)); }

inline void sync_threads(detail::Where w = detail::Where::current()) { detail::sync_threads(w); }
inline void sync_warp(detail::Where w = detail::Where::current()) { detail::sync_warp(w); }
/// A device-wide memory fence (membar.gl / fence.acq_rel.gpu).
inline void thread_fence(detail::Where w = detail::Where::current()) { detail::memory_fence(w); }
/// A system-wide memory fence (membar.sys): orders this thread's accesses as other GPUs and the
/// host see them, e.g. stores into a peer GPU's memory before the flag that announces them.
inline void thread_fence_system(detail::Where w = detail::Where::current()) { detail::memory_fence_system(w); }

// ---- warp shuffles, all 32 lanes taking part; `width` splits the warp into segments ----
template <Element T>
  requires(sizeof(T) == 4)
Value<T> shuffle_idx(const Value<T>& v, const Operand<int32_t>& lane, int width = 32) {
  return Value<T>(detail::shuffle(detail::ShuffleKind::idx, v.id(), lane.id, width, lane.where));
}
template <Element T>
  requires(sizeof(T) == 4)
Value<T> shuffle_up(const Value<T>& v, const Operand<int32_t>& delta, int width = 32) {
  return Value<T>(detail::shuffle(detail::ShuffleKind::up, v.id(), delta.id, width, delta.where));
}
template <Element T>
  requires(sizeof(T) == 4)
Value<T> shuffle_down(const Value<T>& v, const Operand<int32_t>& delta, int width = 32) {
  return Value<T>(detail::shuffle(detail::ShuffleKind::down, v.id(), delta.id, width, delta.where));
}
template <Element T>
  requires(sizeof(T) == 4)
Value<T> shuffle_xor(const Value<T>& v, const Operand<int32_t>& mask, int width = 32) {
  return Value<T>(detail::shuffle(detail::ShuffleKind::bfly, v.id(), mask.id, width, mask.where));
}

// The shuffles of a tensor element or a Var read it first.
#define CUTEJIT_SHUFFLE_REFERENCE(NAME)                                                         \
  template <detail::TracedReference R>                                                          \
    requires(sizeof(detail::traced_element_t<R>) == 4)                                          \
  Value<detail::traced_element_t<R>> NAME(const R& v, const Operand<int32_t>& arg, int width = 32) { \
    return NAME(v.read(arg.where), arg, width);                                                 \
  }
CUTEJIT_SHUFFLE_REFERENCE(shuffle_idx)
CUTEJIT_SHUFFLE_REFERENCE(shuffle_up)
CUTEJIT_SHUFFLE_REFERENCE(shuffle_down)
CUTEJIT_SHUFFLE_REFERENCE(shuffle_xor)
#undef CUTEJIT_SHUFFLE_REFERENCE

// ---- warp votes ----
inline Bool vote_any(const Operand<bool>& p) { return Bool(detail::vote(detail::VoteKind::any, p.id, p.where)); }
inline Bool vote_all(const Operand<bool>& p) { return Bool(detail::vote(detail::VoteKind::all, p.id, p.where)); }
inline UInt ballot(const Operand<bool>& p) { return UInt(detail::vote(detail::VoteKind::ballot, p.id, p.where)); }

// ---- atomics on global or shared memory; each returns the old value ----
template <Element T>
Value<T> atomic_add(const detail::Ref<T>& at, const std::type_identity_t<Operand<T>>& v) {
  return Value<T>(detail::atomic(detail::AtomicOp::add, at.pointer(), v.id, v.where));
}
template <Element T>
  requires is_integer_v<T>
Value<T> atomic_min(const detail::Ref<T>& at, const std::type_identity_t<Operand<T>>& v) {
  return Value<T>(detail::atomic(detail::AtomicOp::min, at.pointer(), v.id, v.where));
}
template <Element T>
  requires is_integer_v<T>
Value<T> atomic_max(const detail::Ref<T>& at, const std::type_identity_t<Operand<T>>& v) {
  return Value<T>(detail::atomic(detail::AtomicOp::max, at.pointer(), v.id, v.where));
}
template <Element T>
Value<T> atomic_exchange(const detail::Ref<T>& at, const std::type_identity_t<Operand<T>>& v) {
  return Value<T>(detail::atomic(detail::AtomicOp::exchange, at.pointer(), v.id, v.where));
}
template <Element T>
  requires is_integer_v<T>
Value<T> atomic_cas(const detail::Ref<T>& at, const std::type_identity_t<Operand<T>>& expected,
                      const std::type_identity_t<Operand<T>>& desired) {
  return Value<T>(detail::atomic_cas(at.pointer(), expected.id, desired.id, expected.where));
}

// ---- device printf and traps ----
/// printf on the device; the format uses C conversions (%d, %u, %f, %lld, ...). It is a call
/// (vprintf): in a kernel that issues wgmma, ptxas then serializes every wgmma (a warning says so).
template <class... Ts>
void device_printf(detail::Where w, std::string_view format, const Value<Ts>&... args) {
  std::array<detail::ValueId, sizeof...(Ts)> ids{args.id()...};
  detail::print(format, ids, w);
}
template <class... Ts>
void device_printf(std::string_view format, const Value<Ts>&... args) {
  device_printf(detail::Where::current(), format, args...);
}
/// Aborts the kernel (and the CUDA context: later calls report an illegal instruction).
inline void trap(detail::Where w = detail::Where::current()) { detail::trap(w); }
/// Traps with a message naming the user's file (its name, without the directory) and line when
/// `cond` is false on any thread. In a
/// kernel that issues wgmma it traps without the message: printing is a call (vprintf), and
/// ptxas serializes every wgmma of a function that makes one.
void device_assert(const Operand<bool>& cond, std::string_view message = "");

// ---- target-specific ----
/// True on exactly one lane of the warp (elect.sync; sm_90 and newer).
inline Bool elect_one(detail::Where w = detail::Where::current()) { return Bool(detail::elect_one(w)); }
/// setmaxnreg (sm_90a and the Blackwell a and f targets): moves registers between warpgroups of a warp-specialised kernel.
inline void increase_max_registers(int count, detail::Where w = detail::Where::current()) { detail::set_max_registers(count, true, w); }
inline void decrease_max_registers(int count, detail::Where w = detail::Where::current()) { detail::set_max_registers(count, false, w); }
/// Declares the most threads a launch of this kernel will have and the blocks that must fit on
/// one multiprocessor (`.maxntid`, `.minnctapersm`: CUDA's __launch_bounds__). ptxas then caps
/// registers per thread at entry, which setmaxnreg needs, and launches with more threads fail.
inline void launch_bounds(int max_threads, int min_blocks_per_sm = 1, detail::Where w = detail::Where::current()) {
  detail::launch_bounds(max_threads, min_blocks_per_sm, w);
}
/// Declares the block every launch of this kernel has: x * y * z threads. The kernel's code may
/// then rely on it: block_dim() is these constants, block_reduce checks its thread count against
/// it, and the cubin carries it (`.reqntid`); a launch with another block is an error naming the
/// launch's line. Once per kernel, before block_dim() is read.
inline void block_shape(int x, int y = 1, int z = 1, detail::Where w = detail::Where::current()) { detail::block_shape(x, y, z, w); }
/// Declares that the kernel runs in thread-block clusters of x * y * z CTAs (sm_90 and newer;
/// 8 at most, the portable limit): the cubin carries the shape (`.reqnctapercluster`), every
/// launch gets it without naming it, and a launch naming another is an error. Instructions that
/// need a cluster (tcgen05's CTA-pair forms) check the shape when they are traced. Once per kernel.
inline void cluster_shape(int x, int y = 1, int z = 1, detail::Where w = detail::Where::current()) { detail::cluster_shape(x, y, z, w); }
inline void cluster_arrive(detail::Where w = detail::Where::current()) { detail::cluster_arrive(w); }
inline void cluster_wait(detail::Where w = detail::Where::current()) { detail::cluster_wait(w); }
/// Programmatic dependent launch (sm_90 and newer), for kernels launched with
/// `Launch::programmatic_dependent_launch`: such a kernel may start while the kernel before it
/// in the stream is still running, and must call `griddepcontrol_wait()` before it touches
/// anything that kernel writes (the wait returns once it has finished and its writes are
/// visible). `griddepcontrol_launch_dependents()` lets the next kernel start early, once every
/// block of this one has called it or exited; without it, the next one starts as this one ends.
inline void griddepcontrol_wait(detail::Where w = detail::Where::current()) { detail::grid_dependency_control(true, w); }
inline void griddepcontrol_launch_dependents(detail::Where w = detail::Where::current()) {
  detail::grid_dependency_control(false, w);
}
inline Int cluster_cta_rank(detail::Where w = detail::Where::current()) { return Int(detail::special(detail::Special::cluster_ctarank, w)); }
/// wgmma ordering (sm_90a only).
inline void wgmma_fence(detail::Where w = detail::Where::current()) { detail::wgmma_fence(w); }
inline void wgmma_commit_group(detail::Where w = detail::Where::current()) { detail::wgmma_commit_group(w); }
inline void wgmma_wait_group(int pending, detail::Where w = detail::Where::current()) { detail::wgmma_wait_group(pending, w); }
/// tcgen05 ordering (the sm_100 and sm_110 families: sm_100a/f, sm_103a/f, sm_110a/f).
/// Before a thread barrier: orders this thread's earlier tcgen05 operations before it; after
/// one (or an mbarrier wait): orders later tcgen05 operations after it.
inline void tcgen05_fence_before_thread_sync(detail::Where w = detail::Where::current()) { detail::tcgen05_fence_before_thread_sync(w); }
inline void tcgen05_fence_after_thread_sync(detail::Where w = detail::Where::current()) { detail::tcgen05_fence_after_thread_sync(w); }

}  // namespace cutejit
