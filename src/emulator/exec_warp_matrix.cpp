// The warp's matrix instructions on the machine: mma.sync of every kind, ldmatrix and stmatrix,
// with the semantics of warp_mma.cpp and warp_matrix_copy.cpp. Each is .aligned: it runs once all
// 32 lanes of the warp are there, on every lane's registers at once.
#include "emulator/exec_support.hpp"
#include "emulator/instruction_set.hpp"
#include "emulator/warp_matrix_copy.hpp"
#include "emulator/warp_mma.hpp"

namespace cutejit::emulator {

namespace {

/// Every lane's registers of a vector operand (or a scalar one), lane-major.
std::vector<uint64_t> gather(ExecContext& c, const Operand& o, uint32_t per_lane) {
  uint32_t n = o.kind == Operand::Kind::vector ? o.count : 1;
  if (n != per_lane) throw Fault("an operand of " + std::to_string(n) + " registers where the instruction takes " + std::to_string(per_lane));
  std::vector<uint64_t> v(32 * size_t(n));
  for (int l = 0; l < 32; ++l)
    for (uint32_t r = 0; r < n; ++r) v[size_t(l) * n + r] = c.get(o.kind == Operand::Kind::vector ? c.element(o, r) : o, l);
  return v;
}

void scatter(ExecContext& c, const Operand& o, std::span<const uint64_t> v, uint32_t per_lane, int bits) {
  for (int l = 0; l < 32; ++l)
    for (uint32_t r = 0; r < per_lane; ++r)
      c.set(o.kind == Operand::Kind::vector ? c.element(o, r) : o, l, v[size_t(l) * per_lane + r], bits);
}

// d, a, b, c {, scale-a, {byte-id-a, thread-id-a}, scale-b, {byte-id-b, thread-id-b}}
void exec_mma(const Instruction& in, ExecContext& c) {
  if (!whole_warp(c)) return;
  const MmaSync& op = in.as<MmaSync>();
  const auto& o = in.operands;
  std::vector<uint64_t> a = gather(c, o[1], op.a_regs), b = gather(c, o[2], op.b_regs), acc = gather(c, o[3], op.c_regs);
  std::vector<uint64_t> d(32 * size_t(op.d_regs));
  MmaScaleOperands scales;
  std::vector<uint64_t> sa, ba, ta, sb, bb, tb;
  if (o.size() >= 8) {
    auto lanes = [&](const Operand& x) { return gather(c, x, 1); };
    auto pair = [&](const Operand& x, std::vector<uint64_t>& first, std::vector<uint64_t>& second) {
      if (x.kind != Operand::Kind::vector || x.count != 2) throw Fault("a scale selector is {byte-id, thread-id}");
      first = lanes(c.element(x, 0)), second = lanes(c.element(x, 1));
    };
    sa = lanes(o[4]), sb = lanes(o[6]);
    pair(o[5], ba, ta);
    pair(o[7], bb, tb);
    scales = MmaScaleOperands{sa, ba, ta, sb, bb, tb};
  }
  mma_sync(op, a, b, acc, d, scales);
  scatter(c, o[0], d, op.d_regs, 64);
}

std::vector<uint64_t> row_addresses(ExecContext& c, const Instruction& in, const Operand& o) {
  std::vector<uint64_t> addresses(32);
  for (int l = 0; l < 32; ++l) {
    uint64_t a = c.address(o, l);
    addresses[size_t(l)] = in.space == Space::generic && a >= shared_window ? a - shared_window : a;
  }
  return addresses;
}

void exec_ldmatrix(const Instruction& in, ExecContext& c) {
  if (!whole_warp(c)) return;
  const MatrixCopy& op = in.as<MatrixCopy>();
  SharedMemory shared(c.grid, c.cta());
  std::vector<uint32_t> out(32 * size_t(op.registers));
  ldmatrix(op, row_addresses(c, in, in.operands[1]), shared, out);
  for (int l = 0; l < 32; ++l)
    for (uint32_t r = 0; r < op.registers; ++r) {
      const Operand& d = in.operands[0];
      c.set(d.kind == Operand::Kind::vector ? c.element(d, r) : d, l, out[size_t(l) * op.registers + r], 32);
    }
}

void exec_stmatrix(const Instruction& in, ExecContext& c) {
  if (!whole_warp(c)) return;
  const MatrixCopy& op = in.as<MatrixCopy>();
  SharedMemory shared(c.grid, c.cta());
  std::vector<uint64_t> v = gather(c, in.operands[1], op.registers);
  std::vector<uint32_t> values(v.begin(), v.end());
  stmatrix(op, row_addresses(c, in, in.operands[0]), values, shared);
}

}  // namespace

bool decode_warp_matrix(Instruction& in, const Opcode& op) {
  std::string_view n = op[0];
  if (n == "mma") {
    std::optional<MmaSync> m = parse_mma_sync(joined(op));
    if (!m) return false;
    if (in.operands.size() != 4 && in.operands.size() != 8) throw Fault("mma.sync takes d, a, b, c (and four scale operands when block-scaled)");
    in.decoded = std::make_shared<MmaSync>(*m);
    return bind(in, exec_mma);
  }
  if (n == "ldmatrix" || n == "stmatrix") {
    std::optional<MatrixCopy> m = n == "ldmatrix" ? parse_ldmatrix(joined(op)) : parse_stmatrix(joined(op));
    if (!m) return false;
    in.decoded = std::make_shared<MatrixCopy>(*m);
    return bind(in, n == "ldmatrix" ? exec_ldmatrix : exec_stmatrix);
  }
  return false;
}

}  // namespace cutejit::emulator
