/** \file
 * The tcgen05 instructions that move data into and out of Tensor Memory: tcgen05.ld / st
 * (registers of a warp <-> TMEM) and tcgen05.cp (shared memory -> TMEM), per the PTX ISA's
 * tcgen05 chapter ("Data Movement Shape", "Matrix fragments", "Access restrictions",
 * tcgen05.ld, tcgen05.st, tcgen05.cp).
 *
 * The ISA gives the register-to-cell maps of tcgen05.ld / st as figures only; the closed forms
 * here are those figures as NVIDIA CUTLASS's CuTe encodes them (copy_traits_sm100.hpp). With
 * t the thread of the warp and r its register, relative to the address's lane and column:
 *   32x32b     lane t,                        column r
 *   16x64b     lane t/4 + 8 (t%2),            column (t/2)%2 + 2r
 *   16x128b    lane t/4 + 8 (r%2),            column t%4 + 4 (r/2)
 *   16x256b    lane t/4 + 8 ((r/2)%2),        column 2 (t%4) + r%2 + 8 (r/4)
 *   16x32bx2   lane t%16,                     column r + half_offset (t/16)
 * tcgen05.cp reads its source as a K-major matrix of bytes through the shared-memory
 * descriptor (the canonical layouts of tcgen05_mma.hpp) and writes row r to lanes
 *   128x256b, 128x128b: r;   4x256b: 32 r;   32x128b.warpx4: r + 32 q (q = 0..3);
 *   64x128b.warpx2::02_13: r and r + 64;     64x128b.warpx2::01_23: r % 32 + 64 (r / 32) + 32 q (q = 0, 1)
 * (the CuTe UTCCP traits), its 32 or 16 bytes little-endian into consecutive columns from the
 * address's column. With .cta_group::2 each CTA of the pair receives the matrix at the same
 * descriptor in its own shared memory.
 *
 * Not modelled (Faults that say so): .pack::16b / .unpack::16b, tcgen05.ld.red, tcgen05.cp's
 * decompression (.b8x16.b6x16_p32, .b8x16.b4x16_p64), tcgen05.cp to a lane other than 0,
 * tcgen05.shift. tcgen05.wait::ld / st and the fences are ordering, the interpreter's.
 */
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "emulator/fault.hpp"
#include "emulator/tensor_memory.hpp"

namespace cutejit::emulator {

enum class TmemShape : uint8_t { s32x32b, s16x64b, s16x128b, s16x256b, s16x32bx2 };

/// tcgen05.ld.sync.aligned.<shape>.x<num>.b32 or tcgen05.st.sync.aligned.<shape>.x<num>.b32.
struct Tcgen05LdSt {
  bool store = false;
  TmemShape shape = TmemShape::s32x32b;
  uint32_t num = 1;  ///< .x1 ... .x128
};

/// The opcode's fields, e.g. "tcgen05.ld.sync.aligned.16x256b.x4.b32". Throws Fault for .pack::16b,
/// .unpack::16b, .red and repetitions the shape does not take.
Tcgen05LdSt parse_tcgen05_ld_st(std::string_view opcode);

/// The 32-bit registers each thread holds: num (32x32b, 16x64b, 16x32bx2), 2 num (16x128b),
/// 4 num (16x256b).
uint32_t tmem_registers(TmemShape shape, uint32_t num);

/// The cell of thread `thread`'s register `reg`, relative to the address (the table above).
TmemAddress tmem_fragment_cell(TmemShape shape, uint32_t thread, uint32_t reg, uint32_t half_offset);

/// The warp's tcgen05.ld: `out` holds 32 threads x tmem_registers(...) values, thread-major
/// (out[t * regs + r]). `half_offset` is 16x32bx2's immHalfSplitoff (columns). Throws Fault when
/// warp `warp_id` reaches lanes outside its quarter (warp_id % 4), and for cells outside an
/// allocation or never written.
void tcgen05_ld(const Tcgen05LdSt& op, uint32_t taddr, uint32_t warp_id, const TensorMemory& tmem, std::span<uint32_t> out,
                uint32_t half_offset = 0);
/// The warp's tcgen05.st of `in` (laid out as tcgen05_ld's `out`).
void tcgen05_st(const Tcgen05LdSt& op, uint32_t taddr, uint32_t warp_id, TensorMemory& tmem, std::span<const uint32_t> in,
                uint32_t half_offset = 0);

enum class CpShape : uint8_t { s128x256b, s4x256b, s128x128b, s64x128b_warpx2_02_13, s64x128b_warpx2_01_23, s32x128b_warpx4 };

struct Tcgen05Cp {
  uint32_t cta_group = 1;
  CpShape shape = CpShape::s128x256b;
};

/// The opcode's fields, e.g. "tcgen05.cp.cta_group::1.32x128b.warpx4".
Tcgen05Cp parse_tcgen05_cp(std::string_view opcode);

/// tcgen05.cp [taddr], s_desc for one CTA or a pair (even CTA first).
void tcgen05_cp(const Tcgen05Cp& op, uint32_t taddr, uint64_t s_desc, std::span<Memory* const> shared, std::span<TensorMemory* const> tmem);

}  // namespace cutejit::emulator
