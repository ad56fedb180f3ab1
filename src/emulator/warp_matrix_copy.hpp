/** \file
 * ldmatrix and stmatrix, the warp's collective copies of small matrices between shared memory and
 * mma fragments, as the PTX ISA defines them ("Warp-level matrix load instruction: ldmatrix",
 * "Warp-level matrix store instruction: stmatrix", and for the packed 4- and 6-bit sources
 * "Padding and Alignment of the Sub-byte Types").
 *
 * It exists so that the emulator checks which lane gives which row address and which bytes land
 * in which lane's register, the part of a tensor-core kernel that is easiest to get wrong. Every
 * matrix row is 16 bytes of shared memory at a 16-byte aligned address (a misaligned one is a
 * Fault), given by one lane: row i of matrix m by lane R m + i, R = 8 rows per matrix (16 for
 * m16n16), only the lanes the .num needs. With groupID g = lane / 4, threadID_in_group q = lane % 4,
 * M[r][c] element c of row r of matrix m, lane's register m (two per matrix for m16n16) holds:
 *   m8n8 .b16           M[g][2q], M[g][2q+1] (16-bit elements, the first in the low half)
 *   m8n8 .trans .b16    M[2q][g], M[2q+1][g]
 *   m8n16 (unpacking)   bytes M[g][4q .. 4q+3], the first in the low byte
 *   m16n16 .trans       register 2m + h: bytes M[4q .. 4q+3][g + 8h]
 *   stmatrix m16n8 .trans .b8 (8 rows of 16 bytes): bytes M[2q][g], M[2q+1][g], M[2q][g+8], M[2q+1][g+8]
 * stmatrix m8n8 is ldmatrix m8n8 backwards.
 *
 * The unpacking sources: .b4x16_p64 is 16 4-bit elements packed in the row's first 8 bytes (element
 * e in bits 4e .. 4e+3, little-endian), then 8 bytes of padding; .b6x16_p32 is 16 6-bit elements in
 * the first 12 bytes (bits 6e .. 6e+5), then 4 bytes of padding. Each element lands in the low bits
 * of its own byte; the bits above it (which the ISA calls padding) are written as zero.
 */
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "emulator/fault.hpp"

namespace cutejit::emulator {

enum class MatrixCopyShape : uint8_t { m8n8, m8n16, m16n16, m16n8 };
/// How a row sits in shared memory: 16-bit or 8-bit elements, or packed 6- and 4-bit ones.
enum class MatrixCopyElement : uint8_t { b16, b8, b6x16_p32, b4x16_p64 };

/// One ldmatrix or stmatrix form, decoded from its opcode.
struct MatrixCopy {
  MatrixCopyShape shape = MatrixCopyShape::m8n8;
  uint8_t matrices = 1;  ///< .x1, .x2, .x4
  bool transpose = false;
  MatrixCopyElement element = MatrixCopyElement::b16;
  uint8_t registers = 1;  ///< 32-bit registers per lane
  /// The ISA's target requirement: sm_`minimum_sm` or newer; when `family_specific`, only the
  /// arch- or family-specific targets of the sm_100, sm_110 and sm_120 families (sm_100a, sm_120f...).
  uint16_t minimum_sm = 0;
  bool family_specific = false;
};

/// The form a full dotted opcode names, e.g. "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16" or
/// "ldmatrix.sync.aligned.m16n16.x2.trans.shared::cta.b8x16.b4x16_p64" (.shared, .shared::cta or
/// no state space). Nothing when the opcode is not an ldmatrix; throws Fault for forms the ISA does
/// not define (m16n16 without .trans or with .x4, m8n16 without an unpacking source, ...).
std::optional<MatrixCopy> parse_ldmatrix(std::string_view opcode);
/// Likewise "stmatrix.sync.aligned.m8n8.x2.trans.shared.b16", "stmatrix.sync.aligned.m16n8.x1.trans.shared.b8".
std::optional<MatrixCopy> parse_stmatrix(std::string_view opcode);

/// Executes an ldmatrix for the warp: `lane_addresses` [32] are the lanes' [p] operands as
/// addresses of `shared` (the machine has turned generic ones into shared ones; the lanes no row
/// needs are not read), `out` [32 lanes][op.registers]. Throws Fault for a misaligned row address;
/// `shared` throws for one out of range.
void ldmatrix(const MatrixCopy& op, std::span<const uint64_t> lane_addresses, Memory& shared, std::span<uint32_t> out);

/// Executes an stmatrix: `in` [32 lanes][op.registers]. Every address is checked before anything
/// is written; rows at the same address are written in lane order.
void stmatrix(const MatrixCopy& op, std::span<const uint64_t> lane_addresses, std::span<const uint32_t> in, Memory& shared);

}  // namespace cutejit::emulator
