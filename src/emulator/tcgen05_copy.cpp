#include "emulator/tcgen05_copy.hpp"

#include <bit>
#include <string>

#include "emulator/tcgen05_mma.hpp"

namespace cutejit::emulator {

namespace {

struct ShapeInfo {
  const char* name;
  uint32_t lanes;     ///< lanes one access spans
  uint32_t max_num;   ///< the largest .num
  uint32_t per_num;   ///< registers per thread per repetition
};

ShapeInfo info(TmemShape s) {
  switch (s) {
    case TmemShape::s32x32b: return {"32x32b", 32, 128, 1};
    case TmemShape::s16x64b: return {"16x64b", 16, 128, 1};
    case TmemShape::s16x128b: return {"16x128b", 16, 64, 2};
    case TmemShape::s16x256b: return {"16x256b", 16, 32, 4};
    case TmemShape::s16x32bx2: return {"16x32bx2", 16, 128, 1};
  }
  return {"?", 0, 0, 0};
}

std::string_view next_field(std::string_view& rest) {
  const size_t dot = rest.find('.');
  const std::string_view f = rest.substr(0, dot);
  rest = dot == std::string_view::npos ? std::string_view() : rest.substr(dot + 1);
  return f;
}

void check_num(const Tcgen05LdSt& op) {
  const ShapeInfo s = info(op.shape);
  if (op.num < 1 || op.num > s.max_num || !std::has_single_bit(op.num))
    throw Fault(std::string("tcgen05.") + (op.store ? "st." : "ld.") + s.name + " repeats a power of two from 1 to " +
                std::to_string(s.max_num) + " times, not " + std::to_string(op.num));
}

/// The warp's access: its lanes must lie in its quarter.
TmemAddress check_access(const Tcgen05LdSt& op, uint32_t taddr, uint32_t warp_id, size_t values) {
  check_num(op);
  const uint32_t regs = tmem_registers(op.shape, op.num);
  if (values != size_t(32) * regs)
    throw Fault("tcgen05." + std::string(op.store ? "st." : "ld.") + info(op.shape).name + ".x" + std::to_string(op.num) + " moves " +
                std::to_string(regs) + " registers for each of 32 threads, not " + std::to_string(values) + " values");
  const TmemAddress a = split_tmem_address(taddr);
  check_lane_quarter(warp_id, a.lane, info(op.shape).lanes, op.store ? "tcgen05.st" : "tcgen05.ld");
  return a;
}

}  // namespace

Tcgen05LdSt parse_tcgen05_ld_st(std::string_view opcode) {
  std::string_view rest = opcode;
  Tcgen05LdSt op;
  const std::string whole(opcode);
  if (next_field(rest) != "tcgen05") throw Fault("not a tcgen05 opcode: " + whole);
  const std::string_view verb = next_field(rest);
  if (verb != "ld" && verb != "st") throw Fault("not tcgen05.ld / st: " + whole);
  op.store = verb == "st";
  if (next_field(rest) != "sync" || next_field(rest) != "aligned")
    throw Fault(whole + ": tcgen05.ld / st are .sync.aligned (tcgen05.ld.red is not modelled by the emulator)");
  const std::string_view shape = next_field(rest);
  bool found = false;
  for (TmemShape s : {TmemShape::s32x32b, TmemShape::s16x64b, TmemShape::s16x128b, TmemShape::s16x256b, TmemShape::s16x32bx2})
    if (shape == info(s).name) op.shape = s, found = true;
  if (!found) throw Fault(whole + ": unknown shape ." + std::string(shape));
  const std::string_view num = next_field(rest);
  if (num.size() < 2 || num[0] != 'x') throw Fault(whole + ": expected .x<num> after the shape");
  op.num = 0;
  for (char c : num.substr(1)) {
    if (c < '0' || c > '9' || op.num > 1000) throw Fault(whole + ": bad repetition ." + std::string(num));
    op.num = op.num * 10 + uint32_t(c - '0');
  }
  const std::string_view tail = next_field(rest);
  if (tail == "pack::16b" || tail == "unpack::16b") throw Fault(whole + ": ." + std::string(tail) + " is not modelled by the emulator");
  if (tail != "b32" || !rest.empty()) throw Fault(whole + ": expected .b32 to end the opcode");
  check_num(op);
  return op;
}

uint32_t tmem_registers(TmemShape shape, uint32_t num) { return info(shape).per_num * num; }

TmemAddress tmem_fragment_cell(TmemShape shape, uint32_t t, uint32_t r, uint32_t half_offset) {
  switch (shape) {
    case TmemShape::s32x32b: return {t, r};
    case TmemShape::s16x64b: return {t / 4 + 8 * (t % 2), (t / 2) % 2 + 2 * r};
    case TmemShape::s16x128b: return {t / 4 + 8 * (r % 2), t % 4 + 4 * (r / 2)};
    case TmemShape::s16x256b: return {t / 4 + 8 * ((r / 2) % 2), 2 * (t % 4) + r % 2 + 8 * (r / 4)};
    case TmemShape::s16x32bx2: return {t % 16, r + half_offset * (t / 16)};
  }
  return {};
}

void tcgen05_ld(const Tcgen05LdSt& op, uint32_t taddr, uint32_t warp_id, const TensorMemory& tmem, std::span<uint32_t> out,
                uint32_t half_offset) {
  const TmemAddress a = check_access(op, taddr, warp_id, out.size());
  const uint32_t regs = tmem_registers(op.shape, op.num);
  for (uint32_t t = 0; t < 32; ++t)
    for (uint32_t r = 0; r < regs; ++r) {
      const TmemAddress c = tmem_fragment_cell(op.shape, t, r, half_offset);
      out[t * regs + r] = tmem.read(a.lane + c.lane, a.column + c.column);
    }
}

void tcgen05_st(const Tcgen05LdSt& op, uint32_t taddr, uint32_t warp_id, TensorMemory& tmem, std::span<const uint32_t> in,
                uint32_t half_offset) {
  const TmemAddress a = check_access(op, taddr, warp_id, in.size());
  const uint32_t regs = tmem_registers(op.shape, op.num);
  for (uint32_t t = 0; t < 32; ++t)
    for (uint32_t r = 0; r < regs; ++r) {
      const TmemAddress c = tmem_fragment_cell(op.shape, t, r, half_offset);
      tmem.write(a.lane + c.lane, a.column + c.column, in[t * regs + r]);
    }
}

Tcgen05Cp parse_tcgen05_cp(std::string_view opcode) {
  std::string_view rest = opcode;
  const std::string whole(opcode);
  if (next_field(rest) != "tcgen05" || next_field(rest) != "cp") throw Fault("not a tcgen05.cp opcode: " + whole);
  Tcgen05Cp op;
  const std::string_view group = next_field(rest);
  if (group == "cta_group::1") op.cta_group = 1;
  else if (group == "cta_group::2") op.cta_group = 2;
  else throw Fault(whole + ": expected .cta_group::1 or ::2");
  const std::string_view shape = next_field(rest), multicast = next_field(rest);
  if (multicast == "b8x16") throw Fault(whole + ": tcgen05.cp's decompression is not modelled by the emulator");
  const bool more = !rest.empty();
  if (shape == "128x256b" && multicast.empty()) op.shape = CpShape::s128x256b;
  else if (shape == "4x256b" && multicast.empty()) op.shape = CpShape::s4x256b;
  else if (shape == "128x128b" && multicast.empty()) op.shape = CpShape::s128x128b;
  else if (shape == "64x128b" && multicast == "warpx2::02_13") op.shape = CpShape::s64x128b_warpx2_02_13;
  else if (shape == "64x128b" && multicast == "warpx2::01_23") op.shape = CpShape::s64x128b_warpx2_01_23;
  else if (shape == "32x128b" && multicast == "warpx4") op.shape = CpShape::s32x128b_warpx4;
  else throw Fault(whole + ": tcgen05.cp takes 128x256b, 4x256b, 128x128b, 64x128b.warpx2::02_13 / ::01_23 or 32x128b.warpx4");
  if (more) {
    if (rest.starts_with("b8x16")) throw Fault(whole + ": tcgen05.cp's decompression is not modelled by the emulator");
    throw Fault(whole + ": unexpected qualifiers after the shape");
  }
  return op;
}

void tcgen05_cp(const Tcgen05Cp& op, uint32_t taddr, uint64_t s_desc, std::span<Memory* const> shared, std::span<TensorMemory* const> tmem) {
  if ((op.cta_group != 1 && op.cta_group != 2) || shared.size() != op.cta_group || tmem.size() != op.cta_group)
    throw Fault("tcgen05.cp.cta_group::" + std::to_string(op.cta_group) + " needs that many CTAs' shared memory and TMEM");
  const TmemAddress a = split_tmem_address(taddr);
  if (a.lane != 0) throw Fault("tcgen05.cp to lane " + std::to_string(a.lane) + ": the emulator models copies to lane 0 only");
  const SmemDescriptor d = decode_smem_descriptor(s_desc);
  uint32_t rows = 128, bytes = 16;
  switch (op.shape) {
    case CpShape::s128x256b: bytes = 32; break;
    case CpShape::s4x256b: rows = 4, bytes = 32; break;
    case CpShape::s128x128b: break;
    case CpShape::s64x128b_warpx2_02_13:
    case CpShape::s64x128b_warpx2_01_23: rows = 64; break;
    case CpShape::s32x128b_warpx4: rows = 32; break;
  }
  for (uint32_t v = 0; v < op.cta_group; ++v)
    for (uint32_t r = 0; r < rows; ++r) {
      uint8_t row[32];
      for (uint32_t c = 0; c < bytes / 16; ++c) shared[v]->read(operand_chunk_address(d, Major::k, r, c * 16, 16), row + 16 * c, 16);
      uint32_t lanes[4], count = 0;
      switch (op.shape) {
        case CpShape::s128x256b:
        case CpShape::s128x128b: lanes[count++] = r; break;
        case CpShape::s4x256b: lanes[count++] = 32 * r; break;
        case CpShape::s32x128b_warpx4:
          for (uint32_t q = 0; q < 4; ++q) lanes[count++] = r + 32 * q;
          break;
        case CpShape::s64x128b_warpx2_02_13: lanes[count++] = r, lanes[count++] = r + 64; break;
        case CpShape::s64x128b_warpx2_01_23: lanes[count++] = r % 32 + 64 * (r / 32), lanes[count++] = r % 32 + 64 * (r / 32) + 32; break;
      }
      for (uint32_t i = 0; i < count; ++i)
        for (uint32_t w = 0; w < bytes / 4; ++w) {
          const uint32_t word = uint32_t(row[4 * w]) | uint32_t(row[4 * w + 1]) << 8 | uint32_t(row[4 * w + 2]) << 16 | uint32_t(row[4 * w + 3]) << 24;
          tmem[v]->write(lanes[i], a.column + w, word);
        }
    }
}

}  // namespace cutejit::emulator
