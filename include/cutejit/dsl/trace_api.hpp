/** \file
 * The narrow, MLIR-free interface between the header-only DSL (traced values, tensors,
 * control flow) and the tracer in src/trace. Every function appends IR to the kernel being
 * traced on this thread and records the user's source location on what it emits.
 * Users never call these directly.
 */
#pragma once

#include <cstdint>
#include <source_location>
#include <span>
#include <string_view>

#include "cutejit/dsl/types.hpp"

namespace cutejit {

/// Where a value lives. Kernel pointer arguments are global; shared memory is per block;
/// local memory holds register arrays that the compiler could not keep in registers.
enum class Space : uint8_t { global, shared, local };

namespace detail {

using Where = std::source_location;

/// A handle to one traced value: the serial number of its trace and its index there.
/// Serial 0 never names a trace, so a default ValueId is "no value".
struct ValueId {
  uint32_t trace = 0;
  uint32_t index = 0;
};

enum class BinaryOp : uint8_t { add, sub, mul, div, rem, bit_and, bit_or, bit_xor, shl, shr, min, max };
enum class UnaryOp : uint8_t {
  neg, bit_not, abs, exp, exp2, log, log2, sqrt, rsqrt, sin, cos, tanh,
  fast_exp, fast_exp2, fast_log2, fast_sqrt, fast_rsqrt, fast_sin, fast_cos, fast_tanh, fast_reciprocal
};
enum class CompareOp : uint8_t { eq, ne, lt, le, gt, ge };
enum class Special : uint8_t {
  thread_x, thread_y, thread_z, block_x, block_y, block_z,
  block_dim_x, block_dim_y, block_dim_z, grid_dim_x, grid_dim_y, grid_dim_z,
  lane, warp, cluster_ctarank
};
enum class ShuffleKind : uint8_t { idx, up, down, bfly };
enum class VoteKind : uint8_t { any, all, ballot };
enum class AtomicOp : uint8_t { add, min, max, exchange };

// ---- values ----
ValueId constant_int(DType type, int64_t value, Where where);
ValueId constant_float(DType type, double value, Where where);
ValueId binary(BinaryOp op, ValueId a, ValueId b, Where where);
ValueId unary(UnaryOp op, ValueId a, Where where);
ValueId compare(CompareOp op, ValueId a, ValueId b, Where where);
ValueId select(ValueId cond, ValueId a, ValueId b, Where where);
ValueId fma(ValueId a, ValueId b, ValueId c, Where where);
ValueId cast(ValueId a, DType to, Where where);
ValueId bitcast(ValueId a, DType to, Where where);
/// Two f32 to an FP8 pair of type `to` in an i16, `lo` in the low byte (one cvt ...x2.f32).
ValueId cast_fp8_pair(ValueId lo, ValueId hi, DType to, Where where);
/// Two values of one 16-bit type in a u32, `lo` in the low half.
ValueId pack_pair(ValueId lo, ValueId hi, Where where);
ValueId special(Special which, Where where);
DType type_of(ValueId v);
/// The largest power of two known to divide an integer value (a trace-time fact), capped at 2^30.
int64_t known_divisor(ValueId v);
/// Records (and tells LLVM) that `v` is a multiple of `divisor`; the caller vouches for it.
ValueId assume_divisible(ValueId v, int64_t divisor, Where where);

// ---- memory ----
/// A pointer value: its address space and the byte alignment the tracer can prove.
struct PointerInfo {
  Space space;
  int64_t alignment;
};
PointerInfo pointer_info(ValueId ptr);
ValueId offset_pointer(ValueId ptr, ValueId element_offset, DType element, Where where);
ValueId load(ValueId ptr, DType element, Where where);
void store(ValueId ptr, ValueId value, Where where);
/// Vector access of `out.size()` elements in one instruction (at most 16 bytes); the caller
/// has checked that the pointer is aligned to the vector's size.
void load_vector(ValueId ptr, DType element, std::span<ValueId> out, Where where);
void store_vector(ValueId ptr, std::span<const ValueId> values, Where where);
ValueId static_shared(DType element, int64_t count, int64_t alignment, Where where);
ValueId dynamic_shared(Where where);
ValueId register_array(DType element, int64_t count, Where where);
ValueId atomic(AtomicOp op, ValueId ptr, ValueId value, Where where);
ValueId atomic_cas(ValueId ptr, ValueId expected, ValueId desired, Where where);

// ---- synchronisation and warp ----
void sync_threads(Where where);
void sync_warp(Where where);
void memory_fence(Where where);
ValueId shuffle(ShuffleKind kind, ValueId value, ValueId lane_or_delta, int width, Where where);
ValueId vote(VoteKind kind, ValueId predicate, Where where);

// ---- target-specific instructions (checked against the target's allow-list) ----
ValueId elect_one(Where where);
void set_max_registers(int count, bool increase, Where where);
void launch_bounds(int max_threads, int min_blocks_per_sm, Where where);
void cluster_arrive(Where where);
void cluster_wait(Where where);
/// griddepcontrol.wait (wait = true) or griddepcontrol.launch_dependents.
void grid_dependency_control(bool wait, Where where);
void wgmma_fence(Where where);
void wgmma_commit_group(Where where);
void wgmma_wait_group(int pending, Where where);
void tcgen05_fence_before_thread_sync(Where where);

// ---- diagnostics ----
void print(std::string_view format, std::span<const ValueId> args, Where where);
void trap(Where where);

// ---- control flow: each begin_* moves the insertion point into a region, end_* moves it back ----
uint32_t begin_if(ValueId cond, Where where);
void begin_else(uint32_t if_op, Where where);
void end_if_region();
ValueId begin_for(ValueId lo, ValueId hi, ValueId step, int unroll, Where where);
void end_for();
void begin_while(Where where);
void while_condition(ValueId cond, Where where);
void end_while();

// ---- errors raised from header code ----
[[noreturn]] void index_out_of_range(int64_t index, int64_t size, Where where);
[[noreturn]] void fail(std::string_view message, Where where);

// ---- kernel arguments ----
ValueId argument(int flat_index, Where where);
/// Records the alignment a launch guarantees for a pointer argument (part of the specialization).
ValueId assume_pointer_alignment(ValueId ptr, int64_t alignment);

}  // namespace detail

// ==== Hopper building blocks (sm_90 and newer; wgmma sm_90a only): emit_sm90.cpp ====
// Each is checked against the target's allow-list when traced.
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
