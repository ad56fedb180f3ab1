/** \file
 * Hopper's raw instructions (sm_90 and newer; wgmma sm_90a only), as the tracer emits them
 * (src/trace/emit_sm90.cpp): mbarriers and fences, named barriers, TMA, stmatrix and wgmma.
 * Each is checked against the target's allow-list when traced. The atoms in atom/sm90 and the
 * pipelines give them their meaning; kernels use those, not these.
 */
#pragma once

#include "cutejit/dsl/trace_api.hpp"

namespace cutejit {
namespace detail {

// ---- mbarriers (a 64-bit object in shared memory) and fences ----
void mbarrier_init(ValueId bar, ValueId count, Where where);
void mbarrier_arrive(ValueId bar, Where where);
/// expect-tx of `bytes` then arrive: the phase completes when the arrivals and the bytes are in.
void mbarrier_arrive_expect_tx(ValueId bar, ValueId bytes, Where where);
/// Arrives (release, CTA scope: pipeline/mbarrier.hpp says why) on the mbarrier at `bar`'s offset
/// in CTA `cta` of the cluster.
void mbarrier_arrive_cluster(ValueId bar, ValueId cta, Where where);
/// True when the phase with this parity (0 or 1) has completed (one potentially blocking probe).
ValueId mbarrier_try_wait(ValueId bar, ValueId parity, Where where);
/// Loops on try_wait until the phase with this parity has completed.
void mbarrier_wait(ValueId bar, ValueId parity, Where where);
/// fence.mbarrier_init.release.cluster: makes mbarrier.init visible to the async proxy (TMA).
void fence_mbarrier_init(Where where);
/// fence.proxy.async.shared::cta: orders generic-proxy shared-memory writes before async-proxy reads.
void fence_proxy_async_shared(Where where);
/// bar.sync / bar.arrive on named barrier `id` (0..15) for `count` threads (a multiple of 32).
void named_barrier_sync(ValueId id, ValueId count, Where where);
void named_barrier_arrive(ValueId id, ValueId count, Where where);
/// The 32-bit shared-window address of a shared-memory pointer.
ValueId shared_address(ValueId ptr, Where where);

// ---- TMA (cp.async.bulk.tensor); `descriptor` is a grid-constant tensor-map parameter ----
ValueId tensor_map_argument(int flat_index, Where where);
void tma_load(ValueId descriptor, ValueId shared_dst, ValueId bar, std::span<const ValueId> coords, Where where);
/// The same box into the shared memory of every CTA of the cluster whose bit is set in
/// `cta_mask` (an i32 holding 16 bits), at the same offset, completing on each one's mbarrier.
void tma_load_multicast(ValueId descriptor, ValueId shared_dst, ValueId bar, std::span<const ValueId> coords, ValueId cta_mask,
                        Where where);
void tma_store(ValueId descriptor, ValueId shared_src, std::span<const ValueId> coords, Where where);
/// The same, adding the tile into global memory element by element (cp.reduce.async.bulk.tensor .add).
void tma_reduce_add(ValueId descriptor, ValueId shared_src, std::span<const ValueId> coords, Where where);
void tma_store_commit(Where where);
/// Waits until at most `pending` bulk groups are in flight (`read_only`: until their sources were read).
void tma_store_wait(int pending, bool read_only, Where where);
void tma_prefetch_descriptor(ValueId descriptor, Where where);

// ---- stmatrix ----
/// stmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16: the warp stores `registers.size()`
/// 8 x 8 matrices of 16-bit values; `row` is this lane's row address (a shared pointer).
void stmatrix(ValueId row, std::span<const ValueId> registers, bool transpose, Where where);

// ---- wgmma ----
/// A shared-memory matrix descriptor (64 bits) for the tile at `ptr`; `swizzle_bytes` is 0, 32, 64 or 128.
ValueId wgmma_descriptor(ValueId ptr, int swizzle_bytes, int64_t leading_bytes, int64_t stride_bytes, Where where);
/// D (f32 registers at `accumulators`, n/2 of them) += A * B, A and B in shared memory:
/// wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{ab}.{ab}. `a_mn_major` / `b_mn_major` set the
/// instruction's transpose bits (an operand whose M or N is contiguous); bf16 and f16 only.
void wgmma_mma(DType ab, int n, ValueId desc_a, ValueId desc_b, ValueId accumulators, bool a_mn_major, bool b_mn_major,
               Where where);
/// The same with A in registers: four 32-bit registers per thread holding the warpgroup's
/// 64 x 16 slice of A (bf16 or f16 pairs; atom/sm90/wgmma.hpp has the layout), B a descriptor.
void wgmma_mma_register_a(DType ab, int n, std::span<const ValueId> a_registers, ValueId desc_b, ValueId accumulators,
                          bool b_mn_major, Where where);
/// Redefines the `count` f32 registers at `accumulators` in place (an empty asm): code after it
/// cannot be moved above a preceding wgmma.wait_group by the compiler.
void wgmma_fence_operands(ValueId accumulators, int count, Where where);

}  // namespace detail
}  // namespace cutejit
