// Cluster launch control (sm_100 and later): try_cancel takes a cluster that has not started yet
// off the launch, so the asking CTA can do its work instead, and answers with that cluster's
// first CTA; query_cancel reads the answer. Clusters start in order of their index, so the one
// cancelled is the next one no host thread has taken. The 16-byte answer is the emulator's own
// encoding (the ISA leaves it opaque): word 0 bit 0 says cancelled, bits 32..63 hold the first
// CTA's x, word 1 its y (low half) and z (high half).
#include "emulator/exec_support.hpp"
#include "emulator/instruction_set.hpp"

namespace cutejit::emulator {

namespace {

enum Clc : uint16_t { try_cancel, is_canceled, first_ctaid_x, first_ctaid_y, first_ctaid_z, first_ctaid_v4 };

void exec_try_cancel(const Instruction& in, ExecContext& c) {
  const auto& o = in.operands;
  Grid& grid = c.grid;
  Cta& cta = c.cta();
  bool multicast = in.flags & 1;
  c.each(c.active, [&](int l) {
    uint64_t response = c.address(o[0], l), mbar = c.address(o[1], l);
    uint32_t at = c.shared_location(Space::shared_cta, response, 16, l).second;
    uint32_t bar = c.shared_location(Space::shared_cta, mbar, 8, l).second;
    uint64_t words[2] = {0, 0};
    uint64_t index = grid.next_cluster.fetch_add(1);
    if (index < grid.clusters()) {
      uint32_t id[3] = {uint32_t(index % grid.cluster_count[0]), uint32_t(index / grid.cluster_count[0] % grid.cluster_count[1]),
                        uint32_t(index / (uint64_t(grid.cluster_count[0]) * grid.cluster_count[1]))};
      words[0] = 1 | uint64_t(id[0] * grid.cluster_dim[0]) << 32;
      words[1] = uint64_t(id[1] * grid.cluster_dim[1]) | uint64_t(id[2] * grid.cluster_dim[2]) << 32;
    }
    std::vector<Cta*> ctas;
    if (multicast)
      for (auto& x : cta.cluster->ctas) ctas.push_back(x.get());
    else
      ctas.push_back(&cta);
    for (Cta* x : ctas)
      cta.async.push_back(AsyncOp{&c.warp, l, 0,
                                  [&grid, x, at, bar, w0 = words[0], w1 = words[1]] {
                                    SharedMemory shared(grid, *x);
                                    uint64_t answer[2] = {w0, w1};
                                    shared.write(at, answer, 16);
                                    grid.mbarrier_complete_tx(*x, bar, 16);
                                  },
                                  bar, x});
  });
}

void exec_query(const Instruction& in, ExecContext& c) {
  const auto& o = in.operands;
  const Operand& answer = o.back();
  if (answer.kind != Operand::Kind::reg) throw Fault("query_cancel reads a .b128 register");
  c.each(c.active, [&](int l) {
    uint64_t w0 = c.warp.reg(answer.reg, l), w1 = c.warp.reg(answer.reg + 1, l);
    bool canceled = w0 & 1;
    uint32_t x = uint32_t(w0 >> 32), y = uint32_t(w1), z = uint32_t(w1 >> 32);
    if (in.op != is_canceled && !canceled) throw Fault("query_cancel.get_first_ctaid of an answer that cancelled nothing (the ISA leaves it undefined)");
    switch (Clc(in.op)) {
      case is_canceled: c.set(o[0], l, canceled, 1); break;
      case first_ctaid_x: c.set(o[0], l, x, 32); break;
      case first_ctaid_y: c.set(o[0], l, y, 32); break;
      case first_ctaid_z: c.set(o[0], l, z, 32); break;
      case first_ctaid_v4: {
        const Operand& v = o[0];
        uint32_t xyz[3] = {x, y, z};
        for (uint32_t i = 0; i < v.count && i < 3; ++i) c.set(c.element(v, i), l, xyz[i], 32);
        break;
      }
      default: break;
    }
  });
}

}  // namespace

bool decode_cluster_launch_control(Instruction& in, const Opcode& op) {
  if (op[0] != "clusterlaunchcontrol" || op.size() < 2) return false;
  if (op[1] == "try_cancel") {
    if (has(op, "multicast::cluster::all")) in.flags |= 1;
    return bind(in, exec_try_cancel, try_cancel);
  }
  if (op[1] != "query_cancel") return false;
  if (has(op, "is_canceled")) return bind(in, exec_query, is_canceled);
  if (has(op, "get_first_ctaid::x")) return bind(in, exec_query, first_ctaid_x);
  if (has(op, "get_first_ctaid::y")) return bind(in, exec_query, first_ctaid_y);
  if (has(op, "get_first_ctaid::z")) return bind(in, exec_query, first_ctaid_z);
  if (has(op, "get_first_ctaid")) return bind(in, exec_query, first_ctaid_v4);
  return false;
}

}  // namespace cutejit::emulator
