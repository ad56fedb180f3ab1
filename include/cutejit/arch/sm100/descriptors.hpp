/** \file
 * The descriptors tcgen05.mma reads (sm_100 family), as plain host values: each encodes to
 * the bits the PTX ISA documents ("Matrix Descriptors": the shared-memory descriptor, 64 bits,
 * and the instruction descriptor, 32 bits) and decodes back, so tests can check every field
 * against the ISA's tables.
 *
 * `operand_address` is the semantic model of a shared-memory descriptor: the byte address the
 * tensor core reads for element (mn, k) of one MMA's operand, by the ISA's canonical layouts
 * (in units of T = 16 bytes of elements, with W = the swizzle's row bytes):
 *
 *   K-major,  no swizzle: ((8,m),(T,2k)) : ((1T,SBO),(1,LBO))    8 x 16-byte core matrices
 *   K-major,  swizzle W:  ((8,m),(T,k))  : ((W/16 T,SBO),(1,T))   rows of W bytes of K
 *   MN-major, no swizzle: ((T,1,m),(8,k)) : ((1,T,SBO),(1T,LBO))
 *   MN-major, swizzle W:  ((T,W/16,m),(8,k)) : ((1,T,LBO),(W/16 T,SBO))
 *
 * and the swizzle is applied to the absolute shared-memory address (bits [4, 4+b) ^= bits
 * [7, 7+b), b = log2(W/16)): that is why an MMA can step along K inside a swizzled row by
 * adding to the start address, and why a swizzled tile starts on a multiple of 8 W bytes
 * (the base-offset field, for other starts, is not modelled and must be 0).
 */
#pragma once

#include <cstdint>
#include <string>

namespace cutejit::sm100 {

/// The swizzle modes of the descriptor's bits 61-63 (values 3, 5 and 7 are invalid).
enum class SmemSwizzle : uint8_t { none = 0, bytes128_atom32 = 1, bytes128 = 2, bytes64 = 4, bytes32 = 6 };
/// The swizzled row width in bytes: 128, 64, 32, or 0 for none.
int swizzle_bytes(SmemSwizzle s);
std::string to_string(SmemSwizzle s);

/// Which dimension of an operand is contiguous in shared memory: K, or M (of A) / N (of B).
enum class Major : uint8_t { k, mn };

/// The 64-bit shared-memory matrix descriptor. Byte fields are multiples of 16 below 2^18.
struct SmemDescriptor {
  uint32_t start_address = 0;        ///< bits 0-13, >> 4: the operand's first byte in the shared window
  uint32_t leading_byte_offset = 0;  ///< bits 16-29, >> 4 (LBO)
  uint32_t stride_byte_offset = 0;   ///< bits 32-45, >> 4 (SBO)
  int base_offset = 0;               ///< bits 49-51: 0 when the swizzle pattern starts on its own boundary
  bool leading_absolute = false;     ///< bit 52: LBO is an absolute address (sm_103a)
  SmemSwizzle swizzle = SmemSwizzle::none;  ///< bits 61-63

  /// The bits; bits 46-48 hold the fixed 0b001. Throws Error naming a field out of range.
  uint64_t encode() const;
  /// The fields of `bits`; throws Error for bits the ISA fixes or an invalid swizzle mode.
  static SmemDescriptor decode(uint64_t bits);
  bool operator==(const SmemDescriptor&) const = default;
};

/// The byte address the MMA reads for element (mn, k) of its operand under descriptor `d`
/// (`element_bits` wide: 4, 6, 8, 16 or 32; sub-byte elements must start on a byte). Throws
/// Error for a descriptor this model does not cover (a non-zero base offset, absolute LBO, the
/// 32-byte-atom 128-byte swizzle).
uint32_t operand_address(const SmemDescriptor& d, Major major, int element_bits, int mn, int k);

// ---- the instruction descriptor (.kind::f16, tf32, f8f6f4, i8: the ISA's first table) ----

enum class MmaKind : uint8_t { f16, tf32, f8f6f4, i8 };
/// Operand types, each with its kind's 3-bit code.
enum class OperandType : uint8_t { f16, bf16, tf32, e4m3, e5m2, e2m3, e3m2, e2m1, u8, s8 };
enum class AccumulatorType : uint8_t { f16, f32, s32 };

std::string to_string(MmaKind k);
std::string to_string(OperandType t);
/// The kind whose MMA takes operands of type `t`.
MmaKind kind_of(OperandType t);
/// The operand's width in bits.
int bits_of(OperandType t);

struct InstrDescriptor {
  MmaKind kind = MmaKind::f16;
  OperandType a = OperandType::bf16, b = OperandType::bf16;
  AccumulatorType d = AccumulatorType::f32;
  Major a_major = Major::k, b_major = Major::k;  ///< bits 15, 16: transpose (MN-major) A / B
  bool negate_a = false, negate_b = false;       ///< bits 13, 14
  bool saturate = false;                         ///< bit 3 (i8 only)
  int m = 128;                                   ///< bits 24-28: M >> 4
  int n = 256;                                   ///< bits 17-22: N >> 3

  /// The 32 bits (dense: bits 0-2 zero; no .ws shift). Throws Error for a type the kind does
  /// not take, a field that does not fit, or what the kind forbids (MN-major 4/6-bit operands,
  /// saturation outside i8, negation of integers).
  uint32_t encode() const;
  /// The fields of `bits` read as `kind` (the bits do not say their kind). Throws Error for
  /// sparse or .ws bits, reserved bits set, or a type code the kind does not have.
  static InstrDescriptor decode(uint32_t bits, MmaKind kind);
  bool operator==(const InstrDescriptor&) const = default;
};

// ---- Tensor Memory addresses ----

/// A TMEM address: the lane (row, 0-127) in bits 16-31, the column (0-511) in bits 0-15.
struct TmemAddress {
  int lane = 0;
  int column = 0;
  /// Throws Error for a lane or column outside TMEM.
  uint32_t encode() const;
  /// Throws Error for bits naming a lane or column outside TMEM.
  static TmemAddress decode(uint32_t bits);
  bool operator==(const TmemAddress&) const = default;
};

// ---- the block-scaled instruction descriptor (.kind::mxf8f6f4, mxf4, mxf4nvf4: the ISA's
// second and third tables) ----

enum class BlockScaledKind : uint8_t { mxf8f6f4, mxf4, mxf4nvf4 };
enum class ScaleType : uint8_t { ue4m3, ue8m0 };  ///< bit 23's codes
std::string to_string(BlockScaledKind k);

struct BlockScaledInstrDescriptor {
  BlockScaledKind kind = BlockScaledKind::mxf8f6f4;
  OperandType a = OperandType::e4m3, b = OperandType::e4m3;  ///< FP8/FP6/FP4; e2m1 only for the FP4 kinds
  ScaleType scale = ScaleType::ue8m0;                          ///< ue4m3 for mxf4nvf4 only
  int scale_a_id = 0, scale_b_id = 0;  ///< bits 29-30 and 4-5: which scale-factor column slice (0-3; 0 or 2 for FP4 kinds)
  Major a_major = Major::k, b_major = Major::k;  ///< MN-major only in kind::mxf8f6f4 with 8-bit operands
  bool negate_a = false, negate_b = false;
  int m = 128;  ///< bits 27-28: M >> 7
  int n = 256;  ///< bits 17-22: N >> 3
  bool k96 = false;  ///< bit 31, FP4 kinds: K = 96 (sm_103a) instead of 64

  uint32_t encode() const;
  static BlockScaledInstrDescriptor decode(uint32_t bits, BlockScaledKind kind);
  bool operator==(const BlockScaledInstrDescriptor&) const = default;
};

}  // namespace cutejit::sm100
