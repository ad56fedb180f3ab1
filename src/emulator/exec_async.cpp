// Asynchronous copies of the sm_80 kind (cp.async with commit and wait groups, and
// cp.async.mbarrier.arrive). Each copy is queued and happens when the thread waits for its group
// (or, in a seeded schedule, at a random earlier point): a read of its destination before the
// wait finds the bytes unwritten and is reported. The bulk and tensor copies of sm_90 and later
// are in exec_bulk_copy.cpp.
#include "emulator/exec_support.hpp"
#include "emulator/instruction_set.hpp"

namespace cutejit::emulator {

bool decode_bulk_copy(Instruction& in, const Opcode& op);  // exec_bulk_copy.cpp

namespace {

constexpr uint64_t uncommitted = 0;

// cp.async.ca/cg.shared.global [dst], [src], cp-size{, src-size}
void exec_cp_async(const Instruction& in, ExecContext& c) {
  const auto& o = in.operands;
  Cta& cta = c.cta();
  c.each(c.active, [&](int l) {
    uint64_t dst = c.address(o[0], l), src = c.address(o[1], l);
    uint32_t size = uint32_t(c.get(o[2], l));
    // With .L2::cache_hint the last operand is the cache policy, not a source size.
    size_t operands = o.size() - (in.flags & 1);
    uint32_t src_size = operands > 3 && o[3].kind != Operand::Kind::none ? uint32_t(c.get(o[3], l)) : size;
    if (size != 4 && size != 8 && size != 16) throw Fault("cp.async copies 4, 8 or 16 bytes, not " + std::to_string(size));
    if (src_size > size) throw Fault("cp.async's source size " + std::to_string(src_size) + " is more than its copy size " + std::to_string(size));
    auto [target, offset] = c.shared_location(Space::shared_cta, dst, size, l);
    if (dst % size || src % size) throw Fault("cp.async's addresses must be aligned to its size of " + std::to_string(size) + " bytes");
    if (src_size) c.grid.memory.at(src, src_size);  // a bad source is reported where it is issued
    Grid& grid = c.grid;
    Cta* t = target;
    cta.async.push_back(AsyncOp{&c.warp, l, uncommitted, [&grid, t, offset, src, size, src_size] {
                                  uint8_t buf[16] = {};
                                  if (src_size) grid.memory.read(src, buf, src_size);
                                  std::memcpy(t->shared.data() + offset, buf, size);
                                  t->record_write(offset, size, SharedByte::async_proxy);
                                }});
  });
}

void exec_commit(const Instruction& in, ExecContext& c) {
  Cta& cta = c.cta();
  c.each(c.active, [&](int l) {
    uint64_t group = ++c.warp.cp_async_committed[l];
    for (AsyncOp& op : cta.async)
      if (op.warp == &c.warp && op.lane == l && op.group == uncommitted && !op.mbarrier) op.group = group;
  });
}

// cp.async.wait_group N: all but the N most recent groups are complete; wait_all: everything.
void exec_wait(const Instruction& in, ExecContext& c) {
  Cta& cta = c.cta();
  bool all = in.op == 1;
  uint64_t keep = all ? 0 : c.get(in.operands[0], std::countr_zero(c.active));
  c.each(c.active, [&](int l) {
    uint64_t committed = c.warp.cp_async_committed[l];
    c.grid.complete_async(cta, [&](const AsyncOp& op) {
      if (op.warp != &c.warp || op.lane != l || op.mbarrier) return false;
      if (all) return true;
      return op.group != uncommitted && op.group + keep <= committed;
    });
  });
}

// cp.async.mbarrier.arrive{.noinc}.shared.b64 [mbar]: the barrier is signalled once the thread's
// earlier copies are done; without .noinc the pending count is raised first, so the signal does
// not count as one of the phase's expected arrivals.
void exec_cp_async_arrive(const Instruction& in, ExecContext& c) {
  Cta& cta = c.cta();
  bool noinc = in.op == 1;
  c.each(c.active, [&](int l) {
    auto [target, at] = c.shared_location(in.space, c.address(in.operands[0], l), 8, l);
    auto it = target->mbarriers.find(at);
    if (it == target->mbarriers.end()) throw Fault("cp.async.mbarrier.arrive on shared offset " + std::to_string(at) + ", where no mbarrier was initialised");
    if (!noinc) ++it->second.pending;
    Grid& grid = c.grid;
    Warp* w = &c.warp;
    Cta* t = target;
    Cta* own = &cta;
    cta.async.push_back(AsyncOp{w, l, uncommitted, [&grid, w, l, t, at, own] {
                                  grid.complete_async(*own, [&](const AsyncOp& op) { return op.warp == w && op.lane == l && !op.mbarrier; });
                                  grid.mbarrier_arrive(*t, at, 1, "cp.async.mbarrier.arrive");
                                },
                                at, t});
  });
}

}  // namespace

bool decode_async(Instruction& in, const Opcode& op) {
  if (op[0] != "cp" || op.size() < 2) return false;
  if (op[1] == "async" && op.size() > 2) {
    std::string_view what = op[2];
    if (what == "ca" || what == "cg") {
      if (has(op, "L2::cache_hint")) in.flags |= 1;
      return bind(in, exec_cp_async);
    }
    if (what == "commit_group") return bind(in, exec_commit);
    if (what == "wait_group") return bind(in, exec_wait, 0);
    if (what == "wait_all") return bind(in, exec_wait, 1);
    if (what == "mbarrier") return bind(in, exec_cp_async_arrive, has(op, "noinc") ? 1 : 0);
  }
  return decode_bulk_copy(in, op);
}

}  // namespace cutejit::emulator
