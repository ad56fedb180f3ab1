// Blackwell's tcgen05 instructions on the machine: the warp-wide TMEM allocation, loads and stores,
// and the single-thread MMA, copy and commit, with the semantics of tensor_memory.cpp,
// tcgen05_copy.cpp and tcgen05_mma.cpp. The MMA and copies are executed when issued, which the
// ISA allows; their commit arrives on its mbarrier as an asynchronous operation, so a thread that
// reads the accumulator must still wait for it. A pair (cta_group::2) is the even CTA of the
// cluster and the odd one after it.
#include "emulator/exec_support.hpp"
#include "emulator/instruction_set.hpp"
#include "emulator/tcgen05_copy.hpp"
#include "emulator/tcgen05_mma.hpp"
#include "emulator/tensor_memory.hpp"

namespace cutejit::emulator {

namespace {

TensorMemory& tmem_of(Cta& cta) {
  if (!cta.tensor_memory) cta.tensor_memory = std::make_shared<TensorMemory>();
  return *static_cast<TensorMemory*>(cta.tensor_memory.get());
}

/// The CTAs an instruction of `cta_group` acts on: this one, or its pair (even first).
struct Group {
  std::vector<Cta*> ctas;
  std::vector<TensorMemory*> tmem;
  std::vector<std::unique_ptr<SharedMemory>> shared_owned;
  std::vector<Memory*> shared;
  Group(ExecContext& c, uint32_t cta_group) {
    Cta& cta = c.cta();
    if (cta_group == 2) {
      auto& all = cta.cluster->ctas;
      uint32_t even = cta.rank & ~1u;
      if (even + 1 >= all.size())
        throw Fault("a cta_group::2 instruction needs a cluster of an even number of CTAs; this one has " + std::to_string(all.size()));
      ctas = {all[even].get(), all[even + 1].get()};
    } else {
      ctas = {&cta};
    }
    for (Cta* x : ctas) {
      tmem.push_back(&tmem_of(*x));
      shared_owned.push_back(std::make_unique<SharedMemory>(c.grid, *x));
      shared.push_back(shared_owned.back().get());
    }
  }
};

uint32_t cta_group_of(const Opcode& op) { return has(op, "cta_group::2") ? 2 : 1; }

/// A cta_group::2 allocation is one operation of a warp of each CTA of the pair: true for the
/// second warp to arrive (which performs it, and lets the first go on), false for the first
/// (held until then).
bool pair_met(ExecContext& c) {
  Cluster& cluster = *c.cta().cluster;
  auto key = std::pair{c.cta().rank & ~1u, c.pc};
  auto it = cluster.pair_arrivals.find(key);
  if (it == cluster.pair_arrivals.end()) {
    cluster.pair_arrivals[key] = &c.warp;
    c.each(c.active, [&](int l) { c.warp.wait[l] = Wait{Wait::Kind::warpgroup}; });
    c.hold(c.active, LaneState::waiting);
    return false;
  }
  Warp& first = *it->second;
  if (first.cta == c.warp.cta) throw Fault("two warps of one CTA issue the same cta_group::2 allocation; a warp of each CTA of the pair must");
  cluster.pair_arrivals.erase(it);
  for (int l = 0; l < 32; ++l)
    if (first.state[l] == LaneState::waiting && first.wait[l].kind == Wait::Kind::warpgroup) first.state[l] = LaneState::ready, first.pc[l] = c.pc + 1;
  return true;
}

enum Op : uint16_t { t_alloc, t_dealloc, t_relinquish, t_ld, t_st, t_cp, t_mma, t_commit, t_nothing };

struct Decoded {
  uint32_t cta_group = 1;
  Tcgen05LdSt ldst;
  Tcgen05Cp cp;
  Tcgen05Mma mma;
};

void exec_tcgen05(const Instruction& in, ExecContext& c) {
  const auto& o = in.operands;
  const Decoded& d = in.as<Decoded>();
  int first = std::countr_zero(c.active);
  switch (Op(in.op)) {
    case t_alloc: {
      if (!whole_warp(c)) return;
      if (d.cta_group == 2 && !pair_met(c)) return;
      Group g(c, d.cta_group);
      uint64_t dst = c.address(o[0], first);
      if (in.space == Space::generic) dst -= shared_window;
      std::vector<uint64_t> dsts(g.ctas.size(), dst);
      if (!tcgen05_alloc(g.tmem, g.shared, dsts, uint32_t(c.get(o[1], first)))) {
        c.each(c.active, [&](int l) { c.warp.wait[l] = Wait{Wait::Kind::tmem_alloc}; });
        c.hold(c.active, LaneState::waiting);
      }
      return;
    }
    case t_dealloc: {
      if (!whole_warp(c)) return;
      if (d.cta_group == 2 && !pair_met(c)) return;
      Group g(c, d.cta_group);
      tcgen05_dealloc(g.tmem, uint32_t(c.get(o[0], first)), uint32_t(c.get(o[1], first)));
      return;
    }
    case t_relinquish: {
      if (!whole_warp(c)) return;
      if (d.cta_group == 2 && !pair_met(c)) return;
      Group g(c, d.cta_group);
      tcgen05_relinquish_alloc_permit(g.tmem);
      return;
    }
    case t_ld: case t_st: {
      if (!whole_warp(c)) return;
      bool store = in.op == t_st;
      // 16x32bx2's immHalfSplitoff comes last in a load ({r}, [taddr], imm) but between the
      // address and the registers in a store ([taddr], imm, {r}).
      const bool split = o.size() > 2;
      const Operand& regs = store ? o[split ? 2 : 1] : o[0];
      uint32_t taddr = uint32_t(c.address(store ? o[0] : o[1], first));
      uint32_t half = split ? uint32_t(c.get(o[store ? 1 : 2], first)) : 0;
      uint32_t n = tmem_registers(d.ldst.shape, d.ldst.num);
      if (regs.kind != Operand::Kind::vector || regs.count != n)
        throw Fault("this tcgen05 load or store moves " + std::to_string(n) + " registers a thread");
      std::vector<uint32_t> values(32 * size_t(n));
      TensorMemory& t = tmem_of(c.cta());
      if (store) {
        for (int l = 0; l < 32; ++l)
          for (uint32_t r = 0; r < n; ++r) values[size_t(l) * n + r] = uint32_t(c.get(c.element(regs, r), l));
        tcgen05_st(d.ldst, taddr, c.warp.id, t, values, half);
      } else {
        tcgen05_ld(d.ldst, taddr, c.warp.id, t, values, half);
        for (int l = 0; l < 32; ++l)
          for (uint32_t r = 0; r < n; ++r) c.set(c.element(regs, r), l, values[size_t(l) * n + r], 32);
      }
      return;
    }
    case t_cp: {
      Group g(c, d.cta_group);
      c.each(c.active, [&](int l) { tcgen05_cp(d.cp, uint32_t(c.address(o[0], l)), c.get(o[1], l), g.shared, g.tmem); });
      return;
    }
    case t_mma: {
      Group g(c, d.cta_group);
      c.each(c.active, [&](int l) {
        MmaOperands x;
        size_t i = 0;
        x.d_tmem = uint32_t(c.address(o[i++], l));
        x.a_in_tmem = o[i].kind == Operand::Kind::address;
        x.a = x.a_in_tmem ? c.address(o[i], l) : c.get(o[i], l);
        ++i;
        x.b_desc = c.get(o[i++], l);
        x.idesc = uint32_t(c.get(o[i++], l));
        if (is_block_scaled(d.mma.kind)) {
          x.scale_a_tmem = uint32_t(c.address(o[i++], l));
          x.scale_b_tmem = uint32_t(c.address(o[i++], l));
        }
        std::vector<uint32_t> disable;
        if (i < o.size() && o[i].kind == Operand::Kind::vector) {
          for (uint32_t k = 0; k < o[i].count; ++k) disable.push_back(uint32_t(c.get(c.element(o[i], k), l)));
          x.disable_output_lane = disable;
          ++i;
        }
        if (i >= o.size()) throw Fault("tcgen05.mma without its enable-input-d predicate");
        x.enable_input_d = c.get(o[i++], l) != 0;
        if (i < o.size()) x.scale_input_d = uint32_t(c.get(o[i++], l));
        tcgen05_mma(d.mma, x, g.shared, g.tmem);
      });
      return;
    }
    case t_commit: {
      // Arrives once on the mbarrier (each CTA of the mask, at the same offset) when the MMAs
      // and copies issued before it are done: here, as an asynchronous operation.
      Cta& cta = c.cta();
      Grid& grid = c.grid;
      c.each(c.active, [&](int l) {
        auto [target, at] = c.shared_location(in.space == Space::generic ? Space::generic : Space::shared_cluster, c.address(o[0], l), 8, l);
        std::vector<Cta*> ctas;
        if (o.size() > 1) {
          uint32_t mask = uint32_t(c.get(o[1], l));
          for (uint32_t r = 0; r < cta.cluster->ctas.size(); ++r)
            if (mask >> r & 1) ctas.push_back(cta.cluster->ctas[r].get());
        } else {
          ctas.push_back(target);
        }
        for (Cta* x : ctas) {
          if (!x->mbarriers.count(at)) throw Fault("tcgen05.commit to shared offset " + std::to_string(at) + ", where no mbarrier was initialised");
          cta.async.push_back(AsyncOp{&c.warp, l, 0, [&grid, x, at] { grid.mbarrier_arrive(*x, at, 1, "tcgen05.commit"); }, at, x});
        }
      });
      return;
    }
    case t_nothing: return;
  }
}

}  // namespace

void check_tensor_memory_at_exit(Cta& cta) {
  if (cta.tensor_memory && !tmem_of(cta).all_freed())
    throw Fault("CTA (" + std::to_string(cta.ctaid[0]) + ", " + std::to_string(cta.ctaid[1]) + ", " + std::to_string(cta.ctaid[2]) +
                ") ended with tensor memory still allocated: every tcgen05.alloc needs its tcgen05.dealloc before the kernel exits");
}

bool decode_tcgen05(Instruction& in, const Opcode& op, std::string_view opcode) {
  if (op[0] != "tcgen05" || op.size() < 2) return false;
  auto d = std::make_shared<Decoded>();
  d->cta_group = cta_group_of(op);
  std::string_view what = op[1];
  Op code;
  if (what == "alloc") code = t_alloc;
  else if (what == "dealloc") code = t_dealloc;
  else if (what == "relinquish_alloc_permit") code = t_relinquish;
  else if (what == "ld" || what == "st") {
    code = what == "ld" ? t_ld : t_st;
    d->ldst = parse_tcgen05_ld_st(opcode);
  } else if (what == "cp") {
    code = t_cp;
    d->cp = parse_tcgen05_cp(opcode);
  } else if (what == "mma") {
    code = t_mma;
    d->mma = parse_tcgen05_mma(opcode);
  } else if (what == "commit") code = t_commit;
  else if (what.starts_with("wait::") || what.starts_with("fence::")) code = t_nothing;
  else return false;
  in.decoded = d;
  return bind(in, exec_tcgen05, code);
}

}  // namespace cutejit::emulator
