/** \file
 * mma.sync, the warp-level tensor-core MMA (sm_70 … sm_12x), as the PTX ISA defines it
 * ("Warp-level matrix multiply-accumulate instructions": "Matrix shape", "Matrix Data-types",
 * "Block Scaling for mma.sync", "Matrix multiply-accumulate operation using mma instruction" and
 * "Multiply-and-Accumulate Instruction: mma"): D = A x B + C, or with block scaling
 * D = (A * scale_A) x (B * scale_B) + C, for one warp, every lane holding a fragment of each matrix.
 *
 * It exists so that the emulator can execute every mma.sync cutejit emits for any target and
 * check the fragments cutejit builds against the ISA's layouts: which lane and register holds
 * which element, how narrow elements sit in their containers, and which lane's byte is which
 * row's scale factor. The layouts are the ISA's formulas (groupID = lane / 4,
 * threadID_in_group = lane % 4); with p elements in a register and reg = i / p, j = i % p:
 *   m16n8 A: row groupID + 8 (reg % 2), column 4p (reg / 2) + p threadID_in_group + j
 *   m16n8 B: row 4p reg + p threadID_in_group + j, column groupID
 *   m16n8 C: row groupID + 8 (i / 2), column 2 threadID_in_group + i % 2
 *   m8n8  A: row groupID, column p threadID_in_group + j; B transposed; C row groupID, column
 *            2 threadID_in_group + i
 * (p: 1 for tf32 and f64, 2 for f16/bf16, 4 for bytes, 8 for s4/u4 and the packed e2m1 of
 * kind::mxf4*, 32 for b1). m8n8k4 with f16 operands runs four independent MMAs, one for the lanes
 * of each quad pair (4c .. 4c+3 and 16+4c .. 16+4c+3), with its own layouts for .row/.col A and B
 * and for f16 or f32 accumulators.
 *
 * Numerics: products of the inputs (scale factors included) are exact in double; they are summed
 * in double in K order after C and the sum is rounded once, to nearest even, to the accumulator
 * type (a NaN becomes 0x7fffffff, 0x7fff or 0x7fffffffffffffff). The ISA leaves the accumulation
 * order, the intermediate precision and subnormal handling unspecified, so an f32 or f16 result
 * can differ from a real GPU's in the last bits when the exact sum is not representable. f64 is a
 * chain of fused multiply-adds in K order starting from C (the ISA: "identical to .f64 fma"); only
 * its default rounding .rn is modelled. Integer kinds are exact: the s32 sum wraps, or with
 * .satfinite clamps to [INT32_MIN, INT32_MAX]; b1 counts the set bits of row AND/XOR column.
 * TF32 operands are f32 words whose low 13 mantissa bits are ignored. The padding bits of
 * kind::f8f6f4 / mxf8f6f4 byte containers (e2m1 in bits 2-5, e3m2/e2m3 in bits 0-5) are ignored,
 * as is bit 7 of a ue4m3 scale.
 *
 * The number-format decoders used here are private to warp_mma.cpp (to be merged with
 * number_formats.hpp).
 */
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "emulator/fault.hpp"

namespace cutejit::emulator {

enum class MmaSyncType : uint8_t { f16, bf16, tf32, f32, f64, e4m3, e5m2, e3m2, e2m3, e2m1, s8, u8, s4, u4, b1, s32, ue8m0, ue4m3 };

/// kind::f8f6f4 takes any mix of FP8/FP6/FP4 one element per byte; the block-scaled kinds add
/// scale factors (mxf4 and mxf4nvf4 pack eight e2m1 per register).
enum class MmaSyncKind : uint8_t { plain, f8f6f4, mxf8f6f4, mxf4, mxf4nvf4 };

enum class MmaBitOp : uint8_t { none, bit_xor, bit_and };

/// One mma.sync form, decoded from its opcode.
struct MmaSync {
  uint16_t m = 0, n = 0, k = 0;
  MmaSyncKind kind = MmaSyncKind::plain;
  MmaSyncType d = MmaSyncType::f32, a = MmaSyncType::f16, b = MmaSyncType::f16, c = MmaSyncType::f32;
  MmaSyncType scale = MmaSyncType::ue8m0;  ///< .stype (block-scaled kinds)
  uint8_t scale_vec = 0;                   ///< scale factors per row of A / column of B: 1, 2, 4; 0 unscaled
  bool a_row_major = true, b_col_major = true;  ///< .row/.col (only m8n8k4 f16 takes other layouts)
  bool satfinite = false;
  MmaBitOp bit_op = MmaBitOp::none;  ///< b1: .xor.popc or .and.popc
  /// Registers per lane of each operand. A register is one uint64_t of the operand spans: a .b32
  /// (or .f32/.f16x2) register's value in the low 32 bits, an .f64 register's in all 64.
  uint8_t d_regs = 0, a_regs = 0, b_regs = 0, c_regs = 0;
  /// The ISA's target requirement: sm_`minimum_sm` or newer; when `family_specific`, only the
  /// sm_120 family's arch- or family-specific targets (sm_120a, sm_120f, sm_121a, ...).
  uint16_t minimum_sm = 0;
  bool family_specific = false;
};

/// The form a full dotted opcode names, e.g. "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
/// or "mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3"
/// (the qualifiers other than the types may come in any order; the types are .dtype .atype .btype
/// .ctype [.stype]). Nothing when the opcode is not an mma; throws Fault when it is one the ISA
/// does not define (the shape/type tables, the scale_vec/stype combinations) or one not modelled
/// (mma.sp, f64 rounding other than .rn).
std::optional<MmaSync> parse_mma_sync(std::string_view opcode);

/// The scale operands of a block-scaled mma: per lane, scale-a-data, {byte-id-a, thread-id-a},
/// scale-b-data, {byte-id-b, thread-id-b} (32 entries each, values in the low bits). The
/// selectors must be the same in every lane and take the ISA's values (Table "Valid values for
/// various selector components"), else Fault. Row r of A takes its scale factors from lane
/// 4 (r % 8) + 2 thread-id-a + r / 8, column n of B from lane 4 n + thread-id-b; K block j's
/// factor is byte byte-id + j of that lane's register.
struct MmaScaleOperands {
  std::span<const uint64_t> scale_a, byte_id_a, thread_id_a;
  std::span<const uint64_t> scale_b, byte_id_b, thread_id_b;
};

/// Executes `op` for the whole warp. Each span is [32 lanes][that operand's registers], lane
/// major. `d` may alias `c`. Throws Fault for spans of the wrong size, missing or invalid scale
/// operands.
void mma_sync(const MmaSync& op, std::span<const uint64_t> a, std::span<const uint64_t> b, std::span<const uint64_t> c,
              std::span<uint64_t> d, const MmaScaleOperands& scales = {});

}  // namespace cutejit::emulator
