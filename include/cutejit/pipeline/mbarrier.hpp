/** \file
 * Barriers for asynchronous pipelines. An mbarrier is a 64-bit object in shared memory that
 * counts arrivals (and, from sm_90, bytes of asynchronous copies: the transaction count); when
 * both reach zero its phase completes and flips parity. A waiter names the parity of the phase
 * it waits for, so a ring of stages tracks one bit per pass:
 *
 *   stage = k % stages, parity = (k / stages) % 2
 *
 * Consumers wait on "full[stage]" with `parity`; producers wait on "empty[stage]" with
 * `parity ^ 1`, which a freshly initialised barrier satisfies at once (its "previous" phase
 * counts as complete), so the first pass through the ring does not block.
 *
 * Named barriers (`bar.sync id, count`) synchronise a subset of the block, e.g. one warpgroup.
 */
#pragma once

#include "cutejit/arch/sm90.hpp"
#include "cutejit/tensor/pointer.hpp"

namespace cutejit {

/// Initialises the mbarrier at `bar` to expect `arrivals` arrivals per phase. One thread does
/// this; then `fence_mbarrier_init()` and a block-wide barrier before anyone else uses it.
inline void mbarrier_init(const Pointer<uint64_t>& bar, const Operand<int32_t>& arrivals) {
  detail::mbarrier_init(bar.id(), arrivals.id, arrivals.where);
}
inline void mbarrier_arrive(const Pointer<uint64_t>& bar, detail::Where w = detail::Where::current()) {
  detail::mbarrier_arrive(bar.id(), w);
}
/// Arrives on the mbarrier at `bar`'s offset in the shared memory of the cluster's CTA of rank
/// `cta` (sm_90): how a consumer frees a stage that another CTA's multicast load also fills.
/// The arrival has the default release semantics at CTA scope, as CUTLASS's cluster barrier
/// does: it says "done", it does not publish this thread's earlier writes to the other CTA.
/// A release at cluster scope made each arrival wait for a cluster-wide fence and cost the
/// 2 x 1 cluster GEMM a fifth of its speed (docs/hopper.md).
inline void mbarrier_arrive_cluster(const Pointer<uint64_t>& bar, const Operand<int32_t>& cta) {
  detail::mbarrier_arrive_cluster(bar.id(), cta.id, cta.where);
}
/// Adds `bytes` to the phase's expected transaction count, then arrives (sm_90). The phase
/// completes once the remaining arrivals and all those bytes (e.g. of TMA loads) are in.
inline void mbarrier_arrive_expect_tx(const Pointer<uint64_t>& bar, const Operand<int32_t>& bytes) {
  detail::mbarrier_arrive_expect_tx(bar.id(), bytes.id, bytes.where);
}
/// One probe: true once the phase of this parity has completed (sm_90).
inline Bool mbarrier_try_wait(const Pointer<uint64_t>& bar, const Operand<int32_t>& parity) {
  return Bool(detail::mbarrier_try_wait(bar.id(), parity.id, parity.where));
}
/// Blocks until the phase of this parity has completed (sm_90).
inline void mbarrier_wait(const Pointer<uint64_t>& bar, const Operand<int32_t>& parity) {
  detail::mbarrier_wait(bar.id(), parity.id, parity.where);
}

/// Makes prior mbarrier_init visible to other threads and to the copy engine (sm_90).
inline void fence_mbarrier_init(detail::Where w = detail::Where::current()) { detail::fence_mbarrier_init(w); }
/// Orders this thread's ordinary shared-memory writes before later reads by the async proxy
/// (TMA stores, wgmma operands); put it before the barrier that publishes the data (sm_90).
inline void fence_proxy_async_shared(detail::Where w = detail::Where::current()) { detail::fence_proxy_async_shared(w); }

/// bar.sync on named barrier `id` (0..15; 0 is sync_threads') for `threads` threads (whole warps).
inline void named_barrier_sync(const Operand<int32_t>& id, const Operand<int32_t>& threads) {
  detail::named_barrier_sync(id.id, threads.id, id.where);
}
/// bar.arrive: counts this warp in without waiting (a producer signalling consumers).
inline void named_barrier_arrive(const Operand<int32_t>& id, const Operand<int32_t>& threads) {
  detail::named_barrier_arrive(id.id, threads.id, id.where);
}

/// A shared-memory pointer as its 32-bit address in the block's shared window.
template <Element T>
UInt shared_address(const Pointer<T>& p, detail::Where w = detail::Where::current()) {
  return UInt(detail::shared_address(p.id(), w));
}

}  // namespace cutejit
