/** \file
 * The sm_120 family's block-scaled mma.sync (RTX 50, RTX PRO 6000, DGX Spark), as the tracer
 * emits it (src/trace/emit_sm120.cpp): D = (A * scale_a) (B * scale_b) + C, m16n8, f32
 * accumulators, each 32 (or 16) elements of K of a row of A and a column of B sharing one scale.
 * atom/sm120 gives the fragments their thread-value layouts.
 */
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "cutejit/dsl/trace_api.hpp"

namespace cutejit::detail {

/// The operand formats of block-scaled mma.sync. In kind::mxf8f6f4 every element takes a byte
/// (FP6 in bits 0-5, FP4 in bits 2-5); kind::mxf4 and mxf4nvf4 pack two FP4 values per byte.
enum class MxType : uint8_t { e4m3, e5m2, e3m2, e2m3, e2m1 };
const char* ptx_name(MxType t);

/// The three block-scaled kinds: m16n8k32 kind::mxf8f6f4 with UE8M0 scales per 32 K
/// (scale_vec::1X); m16n8k64 kind::mxf4 with UE8M0 per 32 (2X); m16n8k64 kind::mxf4nvf4 with
/// UE4M3 per 16 (4X: NVFP4).
enum class ScaledMmaKind : uint8_t { mxf8f6f4, mxf4, mxf4nvf4 };

/// One warp's block-scaled MMA: `a` (16 bytes), `b` (8 bytes) and `c` (4 f32) in the fragment
/// order of mma.sync m16n8k32 with 8-bit operands (atom/sm120 names it), `scale_a` and `scale_b`
/// this thread's 32-bit scale registers (their bytes: one scale per K block, the first lowest);
/// thread 0 of each quad supplies A's scales for row g and thread 1 for row g + 8, thread 0 B's
/// for column g (byte and thread selectors 0). Returns D in C's order.
std::vector<ValueId> mma_sync_block_scaled(ScaledMmaKind kind, MxType a_type, MxType b_type, std::span<const ValueId> a,
                                           std::span<const ValueId> b, std::span<const ValueId> c, ValueId scale_a, ValueId scale_b,
                                           Where where);

/// The same fragments without scale factors: mma.sync m16n8k32 kind::f8f6f4 (any mix of FP8,
/// FP6 and FP4 operands, one element per byte), f32 accumulators.
std::vector<ValueId> mma_sync_f8f6f4(MxType a_type, MxType b_type, std::span<const ValueId> a, std::span<const ValueId> b,
                                     std::span<const ValueId> c, Where where);

}  // namespace cutejit::detail
