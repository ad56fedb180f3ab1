/** \file
 * tcgen05.mma, Blackwell's single-thread tensor-core MMA, as the PTX ISA defines it (tcgen05
 * chapter: "Matrix Descriptors", "Instruction descriptor", "Data Path Layout Organization",
 * "Shared Memory Layout and Swizzling", "Block Scaling"): D (TMEM) = A (shared memory through a
 * 64-bit descriptor, or TMEM) x B (shared memory) [+ D], for one CTA or a CTA pair.
 *
 * It exists because no Blackwell kernel of this project has ever executed: the emulator has to
 * check every bit cutejit puts in a descriptor against the ISA's tables, and compute what the
 * hardware would. Where the ISA gives a figure only (the TMEM data paths, the scale-factor
 * columns), the layouts follow NVIDIA CUTLASS's CuTe traits (mma_traits_sm100_frag.hpp), which
 * encode those figures.
 *
 * Numerics: products are exact, sums are accumulated in double and rounded once to the
 * accumulator's format (round to nearest even; a NaN becomes the canonical NaN). Hardware
 * accumulates in its own order and precision, so results can differ in the last bits from a
 * real B200 for inputs whose sum is not exact in f32. kind::i8 is exact in int32 (wrapping, or
 * clamping when the saturate bit is set). TF32 operands are read from 32-bit words with their low
 * 13 mantissa bits ignored.
 *
 * Not modelled (each a Fault that says so): sparse A (.sp, and the descriptor's sparsity bit),
 * .ws, .ashift, a descriptor base offset other than 0, the absolute leading-byte-address mode,
 * K = 96 for the FP4 kinds, block scaling with .cta_group::2, FP4/FP6 A read from TMEM, and
 * disable-output-lane masks with .cta_group::2. The number-format decoders used here are private
 * to tcgen05_mma.cpp.
 */
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "emulator/fault.hpp"
#include "emulator/tensor_memory.hpp"

namespace cutejit::emulator {

// ---- the shared-memory matrix descriptor (64 bits) ----

/// Bits 61-63. 3, 5 and 7 are invalid.
enum class SmemSwizzle : uint8_t { none = 0, b128_atom32 = 1, b128 = 2, b64 = 4, b32 = 6 };

/// Which dimension of an operand is contiguous: K ("no transpose"), or M of A / N of B.
enum class Major : uint8_t { k, mn };

struct SmemDescriptor {
  uint32_t start_address = 0;        ///< bits 0-13, in bytes (the field << 4)
  uint32_t leading_byte_offset = 0;  ///< bits 16-29, in bytes (LBO)
  uint32_t stride_byte_offset = 0;   ///< bits 32-45, in bytes (SBO)
  uint32_t base_offset = 0;          ///< bits 49-51
  bool lbo_absolute = false;         ///< bit 52: LBO is an absolute address (sm_103a)
  SmemSwizzle swizzle = SmemSwizzle::none;
};

/// The fields of `bits`. Throws Fault when the fixed bits 46-48 are not 0b001, bits 53-60 or the
/// reserved bits 14-15 / 30-31 are not 0, or the swizzle mode is 3, 5 or 7.
SmemDescriptor decode_smem_descriptor(uint64_t bits);

/// The shared-memory byte address of the 16-byte chunk that holds element (mn, k) of an operand
/// of `per_chunk` elements per 16 bytes, by the ISA's canonical layouts (T = per_chunk):
///   K-major,  no swizzle: ((8,m),(T,2k)):((1T,SBO),(1,LBO))
///   K-major,  swizzle W:  ((8,m),(T,2k)):((W/16 T,SBO),(1,T))
///   MN-major, no swizzle: ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))
///   MN-major, swizzle W:  ((T,W/16,m),(8,k)):((1,T,LBO),(W/16 T,SBO))
///   MN-major, 128B with 32B atoms: ((T,8,m),(4,k)):((1,T,LBO),(8T,SBO))
/// with the swizzle applied to the absolute address (bits [4,4+b) ^= bits [7,7+b), b = log2(W/16);
/// for 32-byte atoms bits [5,7) ^= bits [7,9)). Throws Fault for what is not modelled or not
/// allowed (K-major with 32-byte atoms, a non-zero base offset, absolute LBO).
uint32_t operand_chunk_address(const SmemDescriptor& d, Major major, uint32_t mn, uint32_t k, uint32_t per_chunk);

// ---- the instruction descriptor (32 bits) ----

enum class MmaKind : uint8_t { f16, tf32, f8f6f4, i8, mxf8f6f4, mxf4, mxf4nvf4 };
enum class ElementType : uint8_t { f16, bf16, tf32, e4m3, e5m2, e2m3, e3m2, e2m1, u8, s8 };
enum class AccumulatorType : uint8_t { f16, f32, s32 };
enum class ScaleType : uint8_t { ue4m3, ue8m0 };

inline bool is_block_scaled(MmaKind k) { return k == MmaKind::mxf8f6f4 || k == MmaKind::mxf4 || k == MmaKind::mxf4nvf4; }

struct InstrDescriptor {
  bool saturate = false;  ///< bit 3 (kind::i8)
  AccumulatorType d = AccumulatorType::f32;  ///< bits 4-5 (block-scaled kinds: always f32)
  ElementType a = ElementType::f16, b = ElementType::f16;  ///< bits 7-9, 10-12 (10-11 for the FP4 kinds)
  bool negate_a = false, negate_b = false;  ///< bits 13, 14
  Major a_major = Major::k, b_major = Major::k;  ///< bits 15, 16 ("transpose")
  uint32_t n = 0;  ///< bits 17-22: N >> 3
  uint32_t m = 0;  ///< bits 24-28: M >> 4 (block-scaled kinds: bits 27-28, M >> 7)
  uint32_t max_shift = 0;  ///< bits 30-31 (dense kinds; used by .ws only)
  ScaleType scale = ScaleType::ue8m0;  ///< bit 23 (block-scaled kinds)
  uint32_t scale_a_id = 0, scale_b_id = 0;  ///< bits 29-30, 4-5 (block-scaled kinds)
};

/// The fields of `bits` read by `kind`'s table. Throws Fault for the sparsity bit (sparse MMAs
/// are not modelled), reserved bits set, type codes the kind does not have, saturation outside
/// kind::i8, negation in kind::i8, and (FP4 kinds) K = 96.
InstrDescriptor decode_instr_descriptor(uint32_t bits, MmaKind kind);

// ---- the instruction ----

struct Tcgen05Mma {
  uint32_t cta_group = 1;  ///< 1, or 2 for a CTA pair
  MmaKind kind = MmaKind::f16;
  /// Block-scaled kinds: scale factors per row of A / column of B per MMA (.scale_vec::NX; .block32
  /// is 1 for mxf8f6f4 and 2 for the FP4 kinds, .block16 is 4). 0 for the other kinds.
  uint32_t scale_vec = 0;
};

/// The qualifiers of a full dotted opcode, e.g. "tcgen05.mma.cta_group::1.kind::f16" or
/// "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16". .collector::a::* qualifiers are
/// accepted (they are hints). Throws Fault for .sp, .ws, .ashift, unknown qualifiers and block
/// sizes the kind does not take.
Tcgen05Mma parse_tcgen05_mma(std::string_view opcode);

/// The operands of one tcgen05.mma.
struct MmaOperands {
  uint32_t d_tmem = 0;       ///< [d-tmem]
  bool a_in_tmem = false;    ///< the [a-tmem] form
  uint64_t a = 0;            ///< a-desc, or the a-tmem address in the low 32 bits
  uint64_t b_desc = 0;
  uint32_t idesc = 0;
  bool enable_input_d = false;  ///< false: D = A x B; true: D = A x B + D
  uint32_t scale_input_d = 0;   ///< kind::f16 / tf32: D is scaled by 2^-scale_input_d (0-15)
  uint32_t scale_a_tmem = 0, scale_b_tmem = 0;  ///< [scale-A-tmem], [scale-B-tmem] (block-scaled kinds)
  std::span<const uint32_t> disable_output_lane = {};  ///< empty, or 4 words (bit i: lane i keeps D)
};

/// Executes the MMA. `shared` and `tmem` hold one CTA, or for .cta_group::2 the pair (even CTA
/// first). A pair's MMA of M rows and N columns takes rows [v M/2, (v+1) M/2) of A and columns
/// [v N/2, (v+1) N/2) of B from CTA v's shared memory (or A from its TMEM), both CTAs reading
/// their own shared memory at the same descriptors, and writes those rows of D, all N columns, to
/// CTA v's TMEM. D's TMEM layout is the ISA's data path layout for M and the group:
///   M = 128, ::1 (Layout D) and M = 256, ::2 (Layout A): row r in lane r, column n in column n
///   M = 64,  ::1 (Layout F): row r in lane L + r % 16 + 32 (r / 16), L = the address's lane, 0 or 16
///   M = 128, ::2 (Layout B): row r in lane r for n < N/2, in lane 64 + r for the other half at
///                            column n - N/2
/// (relative to d-tmem; r is the row within the CTA). A in TMEM uses the same lanes, its K
/// elements packed low to high in 8 columns (256 bits); Layout B keeps the rows in both halves.
/// Scale factors: row/column i's j-th factor is byte (id + j) of column (scale column + i / 32)
/// in lane i % 32 of every 32-lane quarter (the ISA: duplicated to all four; a copy that differs
/// is a Fault). The scale addresses' lane fields are ignored.
void tcgen05_mma(const Tcgen05Mma& op, const MmaOperands& x, std::span<Memory* const> shared, std::span<TensorMemory* const> tmem);

}  // namespace cutejit::emulator
