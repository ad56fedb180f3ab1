// Hopper's warpgroup MMA on the machine, with the semantics of wgmma.cpp. wgmma.mma_async is
// issued by the four warps of a warpgroup; the emulator runs it when the fourth warp arrives,
// on all 128 threads' registers, and lets the other three go on (completing an asynchronous MMA
// at once is one order the ISA allows, so fence, commit and wait have nothing left to do).
#include "emulator/exec_support.hpp"
#include "emulator/instruction_set.hpp"
#include "emulator/wgmma.hpp"

namespace cutejit::emulator {

namespace {

// d, a-desc | {a regs}, b-desc, scale-d {, imm-scale-a, imm-scale-b {, imm-trans-a}, imm-trans-b}
void exec_wgmma(const Instruction& in, ExecContext& c) {
  if (!whole_warp(c)) return;
  Cta& cta = c.cta();
  uint32_t group = c.warp.id / 4;
  uint32_t& arrived = cta.warpgroup_arrivals[{group, c.pc}];
  arrived |= 1u << (c.warp.id % 4);
  if (arrived != 0xf) {
    c.each(c.active, [&](int l) { c.warp.wait[l] = Wait{Wait::Kind::warpgroup}; });
    c.hold(c.active, LaneState::waiting);
    return;
  }
  cta.warpgroup_arrivals.erase({group, c.pc});
  if (cta.warps.size() < 4 * group + 4) throw Fault("wgmma needs a warpgroup of four warps");
  const Wgmma& op = in.as<Wgmma>();
  const auto& o = in.operands;
  uint32_t dregs = wgmma_d_registers(op);
  bool a_registers = o[1].kind == Operand::Kind::vector;
  std::vector<uint32_t> d(128 * size_t(dregs)), a(a_registers ? 128 * size_t(wgmma_a_registers) : 0);
  WgmmaOperands x;
  x.a_in_registers = a_registers;
  int lane0 = 0;
  for (uint32_t w = 0; w < 4; ++w) {
    Warp& warp = *cta.warps[4 * group + w];
    ExecContext wc{c.grid, c.fn, warp, c.pc, c.group, c.active};
    for (int l = 0; l < 32; ++l) {
      size_t t = 32 * w + size_t(l);
      if (o[0].kind != Operand::Kind::vector || o[0].count != dregs) throw Fault("wgmma's D is " + std::to_string(dregs) + " registers a thread");
      for (uint32_t r = 0; r < dregs; ++r) d[t * dregs + r] = uint32_t(wc.get(wc.element(o[0], r), l));
      if (a_registers)
        for (uint32_t r = 0; r < wgmma_a_registers; ++r) a[t * wgmma_a_registers + r] = uint32_t(wc.get(wc.element(o[1], r), l));
    }
    if (w == 0) {
      if (!a_registers) x.a_desc = wc.get(o[1], lane0);
      x.b_desc = wc.get(o[2], lane0);
      x.scale_d = wc.get(o[3], lane0) != 0;
      std::vector<int64_t> imm;
      for (size_t i = 4; i < o.size(); ++i) imm.push_back(int64_t(int32_t(wc.get(o[i], lane0))));
      if (imm.size() >= 2) x.scale_a = int32_t(imm[0]), x.scale_b = int32_t(imm[1]);
      if (!a_registers && imm.size() == 4) x.transpose_a = imm[2] != 0, x.transpose_b = imm[3] != 0;
      if (a_registers && imm.size() == 3) x.transpose_b = imm[2] != 0;
    }
  }
  x.a_registers = a;
  SharedMemory shared(c.grid, cta);
  wgmma_execute(op, x, shared, d);
  for (uint32_t w = 0; w < 4; ++w) {
    Warp& warp = *cta.warps[4 * group + w];
    ExecContext wc{c.grid, c.fn, warp, c.pc, c.group, c.active};
    for (int l = 0; l < 32; ++l)
      for (uint32_t r = 0; r < dregs; ++r) wc.set(wc.element(o[0], r), l, d[(32 * w + size_t(l)) * dregs + r], 32);
    if (&warp != &c.warp)  // the three that waited go on past the instruction
      for (int l = 0; l < 32; ++l)
        if (warp.state[l] == LaneState::waiting && warp.wait[l].kind == Wait::Kind::warpgroup) warp.state[l] = LaneState::ready, warp.pc[l] = c.pc + 1;
  }
}

void exec_nothing(const Instruction&, ExecContext&) {}

}  // namespace

bool decode_wgmma(Instruction& in, const Opcode& op) {
  if (op[0] != "wgmma" || op.size() < 2) return false;
  if (op[1] == "fence" || op[1] == "commit_group" || op[1] == "wait_group") return bind(in, exec_nothing);
  if (op[1] != "mma_async") return false;
  in.decoded = std::make_shared<Wgmma>(parse_wgmma(joined(op)));
  if (in.operands.size() < 4) throw Fault("wgmma.mma_async takes d, a, b and scale-d");
  return bind(in, exec_wgmma);
}

}  // namespace cutejit::emulator
