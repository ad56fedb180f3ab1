// Synchronisation: named barriers (bar / barrier .sync .arrive), the cluster barrier, mbarriers
// (the ISA's "mbarrier" section: phases, pending arrivals, tx-count) and the fences, which
// order nothing here because the emulated device's memory is sequentially consistent.
//
// A wait on an mbarrier phase (try_wait, and test_wait too) holds the thread until the phase
// completes, as if it had been scheduled later: no spin loop burns the instruction budget, and
// a phase that can never complete is reported as a deadlock.
#include "emulator/exec_support.hpp"
#include "emulator/instruction_set.hpp"

namespace cutejit::emulator {

namespace {

void exec_bar(const Instruction& in, ExecContext& c) {
  bool wait = in.op == 0;
  const auto& o = in.operands;
  Cta& cta = c.cta();
  uint32_t id = 0, count = 0;
  c.each(c.active, [&](int l) {
    id = uint32_t(c.get(o[0], l));
    count = o.size() > 1 ? uint32_t(c.get(o[1], l)) : 0;
  });
  if (id >= cta.barriers.size()) throw Fault("barrier " + std::to_string(id) + " does not exist (there are 16, 0 to 15)");
  if (count % 32) throw Fault("a barrier's thread count must be a multiple of 32, not " + std::to_string(count));
  NamedBarrier& b = cta.barriers[id];
  if (count && b.expected && b.expected != count)
    throw Fault("barrier " + std::to_string(id) + " is reached with a count of " + std::to_string(count) + " and of " +
                std::to_string(b.expected) + " in the same phase");
  if (count) b.expected = count;
  b.arrived += uint32_t(std::popcount(c.active));
  if (wait)
    c.each(c.active, [&](int l) {
      c.warp.state[l] = LaneState::at_barrier;
      c.warp.wait[l].address = id;
    });
  c.grid.check_barrier(cta, id);
}

uint32_t thread_in_cluster(ExecContext& c, int l) { return c.cta().rank * c.cta().threads + c.warp.id * 32 + uint32_t(l); }

void exec_cluster_arrive(const Instruction& in, ExecContext& c) {
  Cluster& cl = *c.cta().cluster;
  c.each(c.active, [&](int l) { cl.barrier_phase_of[thread_in_cluster(c, l)] = cl.barrier_phase; });
  cl.barrier_arrived += uint32_t(std::popcount(c.active));
  c.grid.check_cluster_barrier(cl);
}

void exec_cluster_wait(const Instruction& in, ExecContext& c) {
  Cluster& cl = *c.cta().cluster;
  c.each(c.active, [&](int l) {
    uint64_t target = cl.barrier_phase_of[thread_in_cluster(c, l)];
    if (cl.barrier_phase > target) return;
    c.warp.state[l] = LaneState::waiting;
    c.warp.wait[l] = Wait{Wait::Kind::cluster_barrier, &c.cta(), 0, uint32_t(target)};
  });
}

enum MbarOp : uint16_t { m_init, m_arrive, m_arrive_expect_tx, m_expect_tx, m_complete_tx, m_arrive_drop, m_wait, m_inval };

/// mbarrier's address operand: the CTA and shared offset it names.
std::pair<Cta*, uint32_t> barrier_at(const Instruction& in, ExecContext& c, const Operand& o, int l) {
  return c.shared_location(in.space, c.address(o, l), 8, l);
}

void exec_mbarrier(const Instruction& in, ExecContext& c) {
  const auto& o = in.operands;
  c.each(c.active, [&](int l) {
    switch (MbarOp(in.op)) {
      case m_init: {
        auto [cta, at] = barrier_at(in, c, o[0], l);
        uint32_t count = uint32_t(c.get(o[1], l));
        if (count == 0 || count >= (1u << 20)) throw Fault("an mbarrier's expected count must be 1 to 2^20 - 1, not " + std::to_string(count));
        cta->mbarriers[at] = MBarrier{count, count, 0, 0};
        uint64_t zero = 0;
        std::memcpy(cta->shared.data() + at, &zero, 8);
        cta->record_write(at, 8, SharedByte::async_proxy);  // the barrier's own word, not the thread's data
        return;
      }
      case m_inval: {
        auto [cta, at] = barrier_at(in, c, o[0], l);
        cta->mbarriers.erase(at);
        return;
      }
      case m_expect_tx: case m_complete_tx: {
        auto [cta, at] = barrier_at(in, c, o[0], l);
        auto it = cta->mbarriers.find(at);
        if (it == cta->mbarriers.end()) throw Fault("an mbarrier operation on shared offset " + std::to_string(at) + ", where no mbarrier was initialised");
        int64_t tx = int64_t(c.get(o[1], l) & 0xffffffffu);
        if (in.op == m_expect_tx) it->second.tx += tx;
        else c.grid.mbarrier_complete_tx(*cta, at, tx);
        return;
      }
      case m_arrive: case m_arrive_expect_tx: case m_arrive_drop: {
        auto [cta, at] = barrier_at(in, c, o[1], l);
        auto it = cta->mbarriers.find(at);
        if (it == cta->mbarriers.end()) throw Fault("mbarrier.arrive on shared offset " + std::to_string(at) + ", where no mbarrier was initialised");
        uint64_t token = it->second.completed_phases;
        uint32_t count = 1;
        if (in.op == m_arrive_expect_tx) it->second.tx += int64_t(c.get(o[2], l) & 0xffffffffu);
        else if (o.size() > 2) count = uint32_t(c.get(o[2], l));
        if (in.op == m_arrive_drop) it->second.expected -= count;  // for this phase's successors
        c.grid.mbarrier_arrive(*cta, at, count, "mbarrier.arrive");
        c.set(o[0], l, token, 64);
        return;
      }
      case m_wait: {
        auto [cta, at] = barrier_at(in, c, o[1], l);
        auto it = cta->mbarriers.find(at);
        if (it == cta->mbarriers.end()) throw Fault("a wait on shared offset " + std::to_string(at) + ", where no mbarrier was initialised");
        // A parity names the phase waited for; so does a state from arrive (the phases completed
        // when it arrived). Either way, that phase is over once the current phase's parity
        // differs from it: a phase cannot complete twice while a thread waits for it.
        uint32_t parity = uint32_t(c.get(o[2], l) & 1);
        if ((it->second.completed_phases & 1) != parity) {
          c.set(o[0], l, 1, 1);
          return;
        }
        c.warp.wait[l] = Wait{Wait::Kind::mbarrier_phase, cta, at, parity};
        c.hold(1u << l, LaneState::waiting);
        return;
      }
    }
  });
}

void exec_nothing(const Instruction&, ExecContext&) {}

void exec_setmaxnreg(const Instruction& in, ExecContext& c) {
  uint64_t n = c.get(in.operands[0], std::countr_zero(c.active));
  if (n < 24 || n > 256 || n % 8) throw Fault("setmaxnreg needs a register count from 24 to 256 in steps of 8, not " + std::to_string(n));
  if (c.active != c.group || std::popcount(c.group) != 32) throw Fault("setmaxnreg must be executed by all 32 lanes of the warp together");
}

}  // namespace

bool decode_sync(Instruction& in, const Opcode& op) {
  std::string_view n = op[0];
  if (n == "bar" || n == "barrier") {
    if (op.size() > 1 && op[1] == "cluster") return bind(in, has(op, "arrive") ? exec_cluster_arrive : exec_cluster_wait);
    if (op.size() > 1 && op[1] == "warp") return false;  // a warp collective: exec_warp.cpp
    size_t i = op.size() > 1 && op[1] == "cta" ? 2 : 1;   // barrier{.cta}: .cta is the default scope
    if (op.size() == i || op[i] == "sync") return bind(in, exec_bar, 0);
    if (op[i] == "arrive") return bind(in, exec_bar, 1);
    return false;
  }
  if (n == "fence" || n == "membar") return bind(in, exec_nothing);
  if (n == "griddepcontrol") return bind(in, exec_nothing);
  if (n == "setmaxnreg") return bind(in, exec_setmaxnreg);
  if (n == "mbarrier") {
    if (op.size() < 2) return false;
    std::string_view what = op[1];
    if (what == "init") return bind(in, exec_mbarrier, m_init);
    if (what == "inval") return bind(in, exec_mbarrier, m_inval);
    if (what == "expect_tx") return bind(in, exec_mbarrier, m_expect_tx);
    if (what == "complete_tx") return bind(in, exec_mbarrier, m_complete_tx);
    if (what == "arrive_drop") return bind(in, exec_mbarrier, m_arrive_drop);
    if (what == "arrive") return bind(in, exec_mbarrier, has(op, "expect_tx") ? m_arrive_expect_tx : m_arrive);
    if (what == "try_wait" || what == "test_wait") return bind(in, exec_mbarrier, m_wait);
  }
  return false;
}

}  // namespace cutejit::emulator
