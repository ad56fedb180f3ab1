/** \file
 * The warp-level tensor-core path of sm_80 and newer, as raw instructions: mma.sync (every
 * kind the PTX ISA has for these targets, FP8 from sm_89), ldmatrix and cp.async. The tracer
 * emits them (src/trace/emit_sm80.cpp) after checking the target; atom/sm80 gives them their
 * thread-value layouts, and kernels use those atoms, not these.
 */
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "cutejit/dsl/trace_api.hpp"

namespace cutejit::detail {

/// The element types of one mma.sync: D = A * B + C. TF32 operands are f32 values whose
/// low 13 mantissa bits the tensor core ignores (`tf32`).
struct MmaSyncTypes {
  DType d, a, b, c;
  bool tf32 = false;
};

/// mma.sync.aligned.m{m}n{n}k{k}.row.col.{d}.{a}.{b}.{c}: one warp's D = A * B + C. `a`, `b`
/// and `c` are this thread's fragment values in the order of the PTX ISA's fragment layouts
/// (neighbouring values share a 32-bit register); the result is D's values in the same order
/// as C's. Shapes and type combinations the ISA lacks, or the target lacks, are trace errors.
std::vector<ValueId> mma_sync(int m, int n, int k, MmaSyncTypes types, std::span<const ValueId> a, std::span<const ValueId> b,
                              std::span<const ValueId> c, Where where);

/// ldmatrix.sync.aligned.m8n8.x{count}[.trans].shared.b16: the warp loads `count` 8 x 8
/// matrices of 16-bit values; `row` is this lane's row address (lanes 8i .. 8i+7 give matrix
/// i's rows). Returns `count` 32-bit registers, two neighbouring values each.
std::vector<ValueId> ldmatrix(ValueId row, int count, bool transpose, Where where);
/// ldmatrix.sync.aligned.m8n16.x{count}.shared.b8x16.b{bits}x16_p{64,32}, the Blackwell a and f
/// targets' unpacking load: a row is 16 FP4 (`bits` 4) or FP6 (6) values packed into its first
/// 8 or 12 bytes, padded to 16, and each lands in a byte of its own (low bits, zero above); the
/// registers are those of m8n8.b16 over 16-byte rows of bytes: lane 4 g + t's register j holds
/// values 4 t ... 4 t + 3 of row g of matrix j.
std::vector<ValueId> ldmatrix_unpacked(ValueId row, int count, int bits, Where where);
/// ldmatrix.sync.aligned.m16n16.x{count}.trans.shared.b8 (`bits` 8), or .b8x16.b{bits}x16_p{64,32}
/// (4, 6: rows packed and padded as ldmatrix_unpacked's), the Blackwell a and f targets'
/// transposing load of bytes: `count` (1 or 2) 16 x 16 matrices, lanes 16i .. 16i+15 giving
/// matrix i's rows. Returns 2 `count` registers: lane 4 g + t's register 2i holds rows
/// 4t ... 4t + 3 of column g of matrix i, register 2i + 1 the same rows of column g + 8.
std::vector<ValueId> ldmatrix_transposed_bytes(ValueId row, int count, int bits, Where where);

/// The values packed in 32-bit registers (ldmatrix's), `4 / sizeof(element)` per register, the
/// first in the low bits: the inverse of the packing mma_sync does.
std::vector<ValueId> unpack_registers(std::span<const ValueId> registers, DType element, Where where);

/// cp.async.{ca,cg}.shared.global: `bytes` (4, 8 or 16) from global `src` to shared `dst`,
/// asynchronously; with `src_bytes` (an i32 below `bytes`, or a null ValueId for all of them)
/// only that many are read and the rest of `dst` is zero-filled. 16-byte copies bypass L1 (.cg).
void cp_async(ValueId dst, ValueId src, int bytes, ValueId src_bytes, Where where);
/// cp.async.commit_group: closes the group of this thread's copies issued since the last one.
void cp_async_commit_group(Where where);
/// cp.async.wait_group: waits until at most `pending` of this thread's groups are in flight.
void cp_async_wait_group(int pending, Where where);
/// cp.async.mbarrier.arrive.noinc.shared.b64: the mbarrier (in shared memory) receives this
/// thread's arrival once all of its cp.async issued so far have completed; .noinc: the arrival
/// is one of the count the barrier was initialised with.
void cp_async_mbarrier_arrive(ValueId barrier, Where where);

}  // namespace cutejit::detail
