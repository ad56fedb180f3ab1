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

#include "cutejit/core/types.hpp"

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
/// Whether a pointer is not null (an i1).
ValueId not_null(ValueId ptr, Where where);
ValueId atomic(AtomicOp op, ValueId ptr, ValueId value, Where where);
ValueId atomic_cas(ValueId ptr, ValueId expected, ValueId desired, Where where);

// ---- synchronisation and warp ----
void sync_threads(Where where);
void sync_warp(Where where);
void memory_fence(Where where);
void memory_fence_system(Where where);
ValueId shuffle(ShuffleKind kind, ValueId value, ValueId lane_or_delta, int width, Where where);
ValueId vote(VoteKind kind, ValueId predicate, Where where);

// ---- target-specific instructions (checked against the target's allow-list) ----
ValueId elect_one(Where where);
void set_max_registers(int count, bool increase, Where where);
void launch_bounds(int max_threads, int min_blocks_per_sm, Where where);
void block_shape(int x, int y, int z, Where where);
/// The thread count of the block shape the kernel declared (block_shape), or 0 for none.
int declared_block_threads(Where where);
void cluster_shape(int x, int y, int z, Where where);
void cluster_arrive(Where where);
void cluster_wait(Where where);
/// griddepcontrol.wait (wait = true) or griddepcontrol.launch_dependents.
void grid_dependency_control(bool wait, Where where);
void wgmma_fence(Where where);
void wgmma_commit_group(Where where);
void wgmma_wait_group(int pending, Where where);
void tcgen05_fence_before_thread_sync(Where where);
void tcgen05_fence_after_thread_sync(Where where);

// ---- NVSHMEM's device API, linked from its bitcode (dsl/nvshmem.hpp) ----
enum class LibraryResult : uint8_t { none, i32, u64, pointer };
/// Calls the NVSHMEM device function `function` (its C name): pointers pass as generic
/// addresses, 32-bit integers as i32 and 64-bit ones as i64. A pointer result is a global one.
ValueId nvshmem_call(std::string_view function, LibraryResult result, std::span<const ValueId> args, Where where);

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

}  // namespace cutejit
