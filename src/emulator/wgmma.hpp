/** \file
 * wgmma.mma_async, Hopper's warpgroup MMA, as the PTX ISA defines it ("Asynchronous Warpgroup
 * Level Matrix Multiply-Accumulate Instructions": Matrix Shape, Register Fragments, Shared Memory
 * Matrix Layout, Matrix Descriptor Format, Strides and Canonical Layouts): D (64 x N, registers of
 * the warpgroup's 128 threads) = A (64 x K, shared memory through a 64-bit matrix descriptor, or
 * registers) x B (K x N, shared memory) [+ D].
 *
 * It exists so that the Hopper GEMMs and attention kernels cutejit emits can run on the emulated
 * device, with every descriptor bit and fragment checked against the ISA rather than against
 * cutejit's own helpers. The interpreter gathers the warpgroup's registers and calls
 * wgmma_execute once, when the MMA is to take effect; fences and groups are its business.
 *
 * Fragments (warp w = thread / 32 of the warpgroup holds rows 16w .. 16w + 15; g = lane / 4,
 * t = lane % 4):
 *   D, element i of a thread (f32 / s32: register i; f16: half i % 2 of register i / 2, the even
 *     element in the low half):  row 16w + g + 8 ((i / 2) % 2),  column 8 (i / 4) + 2t + i % 2.
 *   A in registers, four 32-bit registers of p = 32 / bits elements each (element i in register
 *     i / p, bits [(i % p) bits, ...)):  row 16w + g + 8 ((i / p) % 2),
 *     column p t + i % p + 4p (i / 2p)   (p = 2: 16-bit, 1: tf32, 4: 8-bit types).
 *   These match CuTe's CLayout_64xN and ALayout_64x16 / 64x8 / 64x32 (mma_traits_sm90_gmma.hpp).
 *
 * Operands of each form (the interpreter reads them and fills WgmmaOperands):
 *   .f16 / .bf16:  d, a-desc, b-desc, scale-d, imm-scale-a, imm-scale-b, imm-trans-a, imm-trans-b
 *                  d, a,      b-desc, scale-d, imm-scale-a, imm-scale-b, imm-trans-b
 *   .tf32, .e4m3 / .e5m2:  d, a-desc | a, b-desc, scale-d, imm-scale-a, imm-scale-b
 *   .s8 / .u8:     d, a-desc | a, b-desc, scale-d
 *
 * Numerics: products are exact and summed in double, with D added, then rounded once to D's type
 * (round to nearest even; a NaN becomes the canonical NaN 0x7fffffff / 0x7fff). The ISA leaves the
 * hardware's accumulation order, rounding and subnormal handling unspecified (and notes that FP8
 * with an f32 D accumulates below single precision), so results can differ from an H100 in the
 * last bits when the sum is not exact. TF32 operands have their low 13 bits ignored, as the ISA
 * says. Integer MMAs are exact, wrapping or (.satfinite) clamping to int32.
 *
 * Not modelled (each a Fault that says so): sparse wgmma (.sp), the .b1 MMA, and a descriptor base
 * offset other than 0. The number-format decoders used here are private to wgmma.cpp.
 */
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "emulator/fault.hpp"

namespace cutejit::emulator {

// ---- the matrix descriptor (64 bits) ----

/// Bits 62-63 of the descriptor (CuTe's GMMA::LayoutType: INTERLEAVE, B128, B64, B32).
enum class WgmmaSwizzle : uint8_t { none = 0, b128 = 1, b64 = 2, b32 = 3 };

/// The ISA's "Matrix Descriptor Format": each address field is (x & 0x3FFFF) >> 4.
struct WgmmaMatrixDescriptor {
  uint32_t start_address = 0;        ///< bits 0-13, in bytes (the field << 4)
  uint32_t leading_byte_offset = 0;  ///< bits 16-29, in bytes (LBO)
  uint32_t stride_byte_offset = 0;   ///< bits 32-45, in bytes (SBO)
  uint32_t base_offset = 0;          ///< bits 49-51
  WgmmaSwizzle swizzle = WgmmaSwizzle::none;
};

/// The fields of `bits`. Throws Fault when a bit outside them (14-15, 30-31, 46-48, 52-61) is set:
/// the ISA defines no other field, and a carry out of an address field lands there.
WgmmaMatrixDescriptor decode_wgmma_descriptor(uint64_t bits);

/// The shared-memory byte address of the 16-byte chunk holding element (mn, k) of an operand of
/// `per_chunk` elements per 16 bytes (T), by the ISA's canonical layouts (in T-element units, W the
/// swizzle width in bytes, w = W / 16; m and k count repeats):
///   K-major,  no swizzle:   ((8,m),(T,2k)):((1T,SBO),(1,LBO))
///   K-major,  swizzle W:    ((8,m),(T,2k)):((wT,SBO),(1,T))
///   MN-major, no swizzle:   ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))
///   MN-major, swizzle W:    ((T,w,m),(8,k)):((1,T,LBO),(wT,SBO))
/// with the swizzle, CuTe's Swizzle<log2 w, 4, 3>, applied to the absolute address: bits [4, 4 + log2 w)
/// ^= bits [7, 7 + log2 w). Throws Fault for a non-zero base offset (not modelled by the emulator).
uint32_t wgmma_chunk_address(const WgmmaMatrixDescriptor& d, bool mn_major, uint32_t mn, uint32_t k, uint32_t per_chunk);

// ---- the instruction ----

enum class WgmmaType : uint8_t { f16, bf16, tf32, e4m3, e5m2, u8, s8 };
enum class WgmmaAccumulator : uint8_t { f16, f32, s32 };

struct Wgmma {
  uint32_t n = 0;  ///< 8 .. 256
  uint32_t k = 0;  ///< 16 (f16, bf16), 8 (tf32), 32 (FP8, integers)
  WgmmaAccumulator d = WgmmaAccumulator::f32;
  WgmmaType a = WgmmaType::f16, b = WgmmaType::f16;
  bool satfinite = false;  ///< integer MMAs: clamp to int32 instead of wrapping
};

/// The qualifiers of a full dotted opcode, e.g. "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"
/// or "wgmma.mma_async.sync.aligned.m64n64k32.s32.s8.u8.satfinite". Checks the ISA's type and shape
/// tables: N a multiple of 8 from 8 to 256 (integers: 8, 16, 24, then multiples of 16 to 256), K
/// the type's, A and B alike except FP8 and integer mixes, bf16 and tf32 into f32 only. Throws Fault
/// otherwise, and for .sp and .b1 (not modelled).
Wgmma parse_wgmma(std::string_view opcode);

/// 32-bit D registers per thread: N / 2 (f32, s32) or N / 4 (f16, two per register).
inline uint32_t wgmma_d_registers(const Wgmma& op) { return op.d == WgmmaAccumulator::f16 ? op.n / 4 : op.n / 2; }
/// 32-bit A registers per thread when A comes from registers.
inline constexpr uint32_t wgmma_a_registers = 4;

struct WgmmaOperands {
  bool a_in_registers = false;
  uint64_t a_desc = 0;
  std::span<const uint32_t> a_registers = {};  ///< [128 threads][4], thread-major, when a_in_registers
  uint64_t b_desc = 0;
  bool scale_d = true;     ///< false: D = A x B (D's old value unused); true: D = A x B + D
  int32_t scale_a = 1;     ///< imm-scale-a: 1, or -1 to negate A (floating-point forms only)
  int32_t scale_b = 1;
  bool transpose_a = false;  ///< imm-trans-a: A is M-major (f16 / bf16 with a descriptor only)
  bool transpose_b = false;  ///< imm-trans-b: B is N-major (f16 / bf16 only)
};

/// Executes the MMA on `shared` (the CTA's shared::cta addresses) and the warpgroup's D registers
/// `d` ([128 threads][wgmma_d_registers], thread-major), rewritten in place. Throws Fault for an
/// immediate the form does not allow (a scale other than +-1, a scale or transpose the form has
/// not), spans of the wrong size, a descriptor it refuses, and shared memory it cannot read.
void wgmma_execute(const Wgmma& op, const WgmmaOperands& x, Memory& shared, std::span<uint32_t> d);

}  // namespace cutejit::emulator
