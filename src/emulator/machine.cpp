#include "emulator/machine.hpp"

#include "emulator/instruction_set.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

namespace cutejit::emulator {

namespace {
std::string hex(uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}
const char* state_name(LaneState s) {
  switch (s) {
    case LaneState::at_barrier: return "waits at a barrier";
    case LaneState::at_collective: return "waits for the other lanes of a collective";
    case LaneState::waiting: return "waits";
    default: return "is ready";
  }
}
}  // namespace

// --- operands --------------------------------------------------------------------------------

uint64_t ExecContext::get(const Operand& o, int l) {
  switch (o.kind) {
    case Operand::Kind::reg: {
      uint64_t v = warp.reg(o.reg, l);
      return o.negated ? uint64_t(v == 0) : v;
    }
    case Operand::Kind::imm: return o.imm;
    case Operand::Kind::special: {
      Cta& c = cta();
      const LaunchConfig& cfg = grid.cfg;
      uint32_t lanebit = 1u << l;
      switch (o.special) {
        case Special::tid_x: return warp.tid_x[l];
        case Special::tid_y: return warp.tid_y[l];
        case Special::tid_z: return warp.tid_z[l];
        case Special::ntid_x: return cfg.block[0];
        case Special::ntid_y: return cfg.block[1];
        case Special::ntid_z: return cfg.block[2];
        case Special::ctaid_x: return c.ctaid[0];
        case Special::ctaid_y: return c.ctaid[1];
        case Special::ctaid_z: return c.ctaid[2];
        case Special::nctaid_x: return cfg.grid[0];
        case Special::nctaid_y: return cfg.grid[1];
        case Special::nctaid_z: return cfg.grid[2];
        case Special::laneid: return uint64_t(l);
        case Special::warpid: return warp.id;
        case Special::nwarpid: return c.warps.size();
        case Special::smid: return (c.ctaid[0] + c.ctaid[1] * cfg.grid[0]) % uint32_t(grid.options.multiprocessors);
        case Special::nsmid: return uint64_t(grid.options.multiprocessors);
        case Special::gridid: return 1;
        case Special::lanemask_eq: return lanebit;
        case Special::lanemask_le: return uint32_t((uint64_t(lanebit) << 1) - 1);
        case Special::lanemask_lt: return lanebit - 1;
        case Special::lanemask_ge: return ~(lanebit - 1);
        case Special::lanemask_gt: return ~((uint64_t(lanebit) << 1) - 1) & 0xffffffffu;
        case Special::clock: return uint32_t(grid.instructions.load(std::memory_order_relaxed));
        case Special::clock64: return grid.instructions.load(std::memory_order_relaxed);
        case Special::globaltimer:
          return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
        case Special::dynamic_smem_size: return cfg.dynamic_shared;
        case Special::total_smem_size: return grid.shared_bytes() - shared_base;
        case Special::cluster_ctaid_x: return c.cluster_ctaid[0];
        case Special::cluster_ctaid_y: return c.cluster_ctaid[1];
        case Special::cluster_ctaid_z: return c.cluster_ctaid[2];
        case Special::cluster_nctaid_x: return grid.cluster_dim[0];
        case Special::cluster_nctaid_y: return grid.cluster_dim[1];
        case Special::cluster_nctaid_z: return grid.cluster_dim[2];
        case Special::clusterid_x: return c.cluster->clusterid[0];
        case Special::clusterid_y: return c.cluster->clusterid[1];
        case Special::clusterid_z: return c.cluster->clusterid[2];
        case Special::nclusterid_x: return grid.cluster_count[0];
        case Special::nclusterid_y: return grid.cluster_count[1];
        case Special::nclusterid_z: return grid.cluster_count[2];
        case Special::cluster_ctarank: return c.rank;
        case Special::cluster_nctarank: return c.cluster->ctas.size();
        case Special::is_explicit_cluster: return grid.explicit_cluster;
      }
      return 0;
    }
    case Operand::Kind::address: return get_address(o, l);
    default: throw Fault("an operand of this kind cannot be read as a value");
  }
}

void ExecContext::set(const Operand& o, int l, uint64_t v, int bits) {
  if (o.kind == Operand::Kind::sink) return;
  if (o.kind != Operand::Kind::reg) throw Fault("the destination is not a register");
  if (bits < 64) v &= (uint64_t(1) << bits) - 1;
  warp.reg(o.reg, l) = v;
}

uint64_t ExecContext::get_address(const Operand& o, int l) {
  if (o.kind == Operand::Kind::address) return (o.has_base ? warp.reg(o.reg, l) : 0) + o.imm;
  return get(o, l);
}

// --- memory ----------------------------------------------------------------------------------

std::pair<Cta*, uint32_t> ExecContext::shared_location(Space s, uint64_t address, size_t bytes, int l) {
  Cta* target = &cta();
  uint64_t offset = address;
  if (s == Space::generic) {
    if (address < shared_window || address >= shared_window + window_size)
      throw Fault("generic address " + hex(address) + " is not in the shared window");
    offset = address - shared_window;
  }
  if (s != Space::shared_cta && offset >> cluster_rank_shift) {
    uint64_t rank = (offset >> cluster_rank_shift) - 1;
    if (rank >= target->cluster->ctas.size())
      throw Fault("shared::cluster address " + hex(offset) + " names CTA rank " + std::to_string(rank) + " of a cluster of " +
                  std::to_string(target->cluster->ctas.size()));
    target = target->cluster->ctas[rank].get();
    offset &= (uint64_t(1) << cluster_rank_shift) - 1;
  }
  grid.check_shared(offset, bytes);
  return {target, uint32_t(offset)};
}

void Grid::check_shared(uint64_t offset, size_t bytes) const {
  uint32_t size = shared_bytes();
  if (offset < shared_base || offset + bytes > size)
    throw Fault("a shared-memory access of " + std::to_string(bytes) + " bytes at offset " + hex(offset) +
                " is out of bounds: the CTA's shared memory is [" + hex(shared_base) + ", " + hex(size) + ") (" +
                std::to_string(fn.static_shared_bytes) + " bytes static, " + std::to_string(cfg.dynamic_shared) + " dynamic)");
}

void SharedMemory::read(uint64_t address, void* out, size_t bytes) {
  grid_.check_shared(address, bytes);
  for (size_t i = 0; i < bytes; ++i)
    if (cta_.written[address + i].writer == SharedByte::nobody)
      throw Fault("a read of " + std::to_string(bytes) + " bytes of shared memory at offset " + hex(address) + " reaches byte " +
                  hex(address + i) + ", which nothing has written");
  std::memcpy(out, cta_.shared.data() + address, bytes);
}

void SharedMemory::write(uint64_t address, const void* in, size_t bytes) {
  grid_.check_shared(address, bytes);
  std::memcpy(cta_.shared.data() + address, in, bytes);
  cta_.record_write(uint32_t(address), bytes, SharedByte::async_proxy);
}

void ExecContext::read(Space s, uint64_t address, void* out, size_t bytes, int l) {
  if (s == Space::generic) {
    if (address >= shared_window && address < shared_window + window_size) return read(Space::shared_cluster, address - shared_window, out, bytes, l);
    if (address >= local_window && address < local_window + window_size) return read(Space::local, address - local_window, out, bytes, l);
    if (address >= param_window && address < param_window + window_size) return read(Space::param, address - param_window, out, bytes, l);
    s = Space::global;
  }
  if (address % bytes && bytes <= 16 && std::has_single_bit(bytes))
    throw Fault("a " + std::to_string(bytes) + "-byte access at " + hex(address) + " is misaligned");
  switch (s) {
    case Space::global:
    case Space::constant: grid.memory.read(address, out, bytes); return;
    case Space::param:
      if (address >= local_window) return read(Space::local, address - local_window, out, bytes, l);
      if (address + bytes > grid.cfg.params.size())
        throw Fault("a parameter read at offset " + std::to_string(address) + " is past the kernel's " +
                    std::to_string(grid.cfg.params.size()) + " bytes of parameters");
      std::memcpy(out, grid.cfg.params.data() + address, bytes);
      return;
    case Space::local:
      if (address < 16 || address + bytes > warp.local_stride) throw Fault("a local-memory access at " + hex(address) + " is out of bounds");
      std::memcpy(out, warp.local.data() + size_t(l) * warp.local_stride + address, bytes);
      return;
    default: {
      auto [c, off] = shared_location(s, address, bytes, l);
      check_shared_access(*c, off, bytes, l, false);
      std::memcpy(out, c->shared.data() + off, bytes);
    }
  }
}

uint32_t ExecContext::thread_number(int l) const {
  const Cta& c = *warp.cta;
  return c.rank * c.threads + warp.id * 32 + uint32_t(l) + 1;
}

void ExecContext::check_shared_access(Cta& c, uint32_t off, size_t bytes, int l, bool is_write) {
  uint32_t me = thread_number(l), epoch = c.cluster->epoch;
  bool synchronises = false;
  for (size_t i = 0; i < bytes; ++i) {
    const SharedByte& b = c.written[off + i];
    if (b.writer == SharedByte::nobody && !is_write)
      throw Fault("a read of " + std::to_string(bytes) + " bytes of shared memory at offset " + hex(off) + " reaches byte " +
                  hex(off + i) + ", which nothing has written");
    bool unordered = b.writer != SharedByte::nobody && b.writer != SharedByte::async_proxy && b.writer != me && b.epoch == epoch;
    if (unordered && strong && b.strong) {  // the memory model's morally strong accesses: a release/acquire pair
      synchronises |= !is_write;
      continue;
    }
    if (unordered)
      throw Fault(std::string("a data race on shared memory: this thread ") + (is_write ? "writes" : "reads") + " byte " +
                  hex(off + i) + ", which " + grid.thread_name(b.writer) +
                  " wrote with no barrier, mbarrier wait or warp synchronisation between the two");
  }
  if (is_write)
    for (size_t i = 0; i < bytes; ++i) c.written[off + i] = SharedByte{me, epoch, strong};
  if (synchronises) ++c.cluster->epoch;
}

void Cta::record_write(uint32_t offset, size_t bytes, uint32_t writer) {
  for (size_t i = 0; i < bytes; ++i) written[offset + i] = SharedByte{writer, cluster->epoch};
}

std::string Grid::thread_name(uint32_t number) const {
  uint32_t threads = cfg.block[0] * cfg.block[1] * cfg.block[2];
  uint32_t t = (number - 1) % threads, rank = (number - 1) / threads;
  return "thread (" + std::to_string(t % cfg.block[0]) + ", " + std::to_string(t / cfg.block[0] % cfg.block[1]) + ", " +
         std::to_string(t / (cfg.block[0] * cfg.block[1])) + ")" + (rank ? " of the cluster's CTA " + std::to_string(rank) : "");
}

void ExecContext::write(Space s, uint64_t address, const void* in, size_t bytes, int l) {
  if (s == Space::generic) {
    if (address >= shared_window && address < shared_window + window_size) return write(Space::shared_cluster, address - shared_window, in, bytes, l);
    if (address >= local_window && address < local_window + window_size) return write(Space::local, address - local_window, in, bytes, l);
    s = Space::global;
  }
  if (address % bytes && bytes <= 16 && std::has_single_bit(bytes))
    throw Fault("a " + std::to_string(bytes) + "-byte access at " + hex(address) + " is misaligned");
  switch (s) {
    case Space::global: grid.memory.write(address, in, bytes); return;
    case Space::constant: throw Fault("a store to the constant space");
    case Space::param:
      if (address >= local_window) return write(Space::local, address - local_window, in, bytes, l);
      throw Fault("a store to the kernel's parameters");
    case Space::local:
      if (address < 16 || address + bytes > warp.local_stride) throw Fault("a local-memory access at " + hex(address) + " is out of bounds");
      std::memcpy(warp.local.data() + size_t(l) * warp.local_stride + address, in, bytes);
      return;
    default: {
      auto [c, off] = shared_location(s, address, bytes, l);
      check_shared_access(*c, off, bytes, l, true);
      std::memcpy(c->shared.data() + off, in, bytes);
    }
  }
}

uint8_t* ExecContext::global_bytes(uint64_t address, size_t bytes) {
  if (address % bytes) throw Fault("a " + std::to_string(bytes) + "-byte atomic at " + hex(address) + " is misaligned");
  return grid.memory.at(address, bytes);
}

void ExecContext::hold(uint32_t mask, LaneState why) {
  held |= mask;
  each(mask, [&](int l) {
    warp.pc[l] = pc;
    warp.state[l] = why;
  });
}

// --- the grid --------------------------------------------------------------------------------

Grid::Grid(const Module& m, const Function& f, const LaunchConfig& c, DeviceMemory& mem, const RunOptions& o)
    : module(m), fn(f), cfg(c), memory(mem), options(o), rng_(o.seed) {
  for (int i = 0; i < 3; ++i) {
    cluster_dim[i] = fn.required_cluster[i] ? fn.required_cluster[i] : cfg.cluster[i];
    if (cluster_dim[i] == 0 || cfg.grid[i] % cluster_dim[i]) throw Fault("the grid is not a multiple of the cluster shape");
    cluster_count[i] = cfg.grid[i] / cluster_dim[i];
  }
  explicit_cluster = fn.explicit_cluster || fn.required_cluster[0] || cluster_dim[0] * cluster_dim[1] * cluster_dim[2] > 1;
}

void Grid::run() {
  uint64_t clusters = this->clusters();
  std::mutex mutex;
  std::string first_fault;
  auto worker = [&] {
    for (uint64_t i; !stop.load() && (i = next_cluster.fetch_add(1)) < clusters;) {
      try {
        run_cluster(i);
      } catch (const Fault& f) {
        std::lock_guard lock(mutex);
        if (first_fault.empty()) first_fault = f.what();
        stop = true;
      }
    }
  };
  unsigned threads = options.seed ? 1 : std::max(1u, std::min<unsigned>(options.threads, unsigned(std::min<uint64_t>(clusters, 256))));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  if (!first_fault.empty()) throw Fault(first_fault);
}

void Grid::run_cluster(uint64_t index) {
  Cluster cluster;
  uint32_t cx = uint32_t(index % cluster_count[0]), cy = uint32_t(index / cluster_count[0] % cluster_count[1]),
           cz = uint32_t(index / (uint64_t(cluster_count[0]) * cluster_count[1]));
  cluster.clusterid[0] = cx, cluster.clusterid[1] = cy, cluster.clusterid[2] = cz;
  uint32_t threads = cfg.block[0] * cfg.block[1] * cfg.block[2];
  uint32_t cluster_size = cluster_dim[0] * cluster_dim[1] * cluster_dim[2];
  cluster.barrier_phase_of.assign(size_t(threads) * cluster_size, 0);
  for (uint32_t r = 0; r < cluster_size; ++r) {
    auto cta = std::make_unique<Cta>();
    cta->cluster = &cluster;
    cta->rank = r;
    cta->cluster_ctaid[0] = r % cluster_dim[0];
    cta->cluster_ctaid[1] = r / cluster_dim[0] % cluster_dim[1];
    cta->cluster_ctaid[2] = r / (cluster_dim[0] * cluster_dim[1]);
    cta->ctaid[0] = cx * cluster_dim[0] + cta->cluster_ctaid[0];
    cta->ctaid[1] = cy * cluster_dim[1] + cta->cluster_ctaid[1];
    cta->ctaid[2] = cz * cluster_dim[2] + cta->cluster_ctaid[2];
    cta->threads = threads;
    cta->shared.assign(shared_bytes(), 0);
    cta->written.assign(shared_bytes(), SharedByte{});
    for (uint32_t w = 0; w * 32 < threads; ++w) {
      auto warp = std::make_unique<Warp>();
      warp->cta = cta.get();
      warp->id = w;
      warp->regs.assign(size_t(fn.registers) * 32, 0);
      warp->local_stride = fn.local_bytes + 16;
      warp->local.assign(size_t(warp->local_stride) * 32, 0);
      for (int l = 0; l < 32; ++l) {
        uint32_t t = w * 32 + uint32_t(l);
        warp->state[l] = t < threads ? LaneState::ready : LaneState::inactive;
        warp->tid_x[l] = t % cfg.block[0];
        warp->tid_y[l] = t / cfg.block[0] % cfg.block[1];
        warp->tid_z[l] = t / (cfg.block[0] * cfg.block[1]);
      }
      cta->warps.push_back(std::move(warp));
    }
    cluster.ctas.push_back(std::move(cta));
  }

  std::vector<Warp*> warps;
  for (auto& c : cluster.ctas)
    for (auto& w : c->warps) warps.push_back(w.get());
  for (;;) {
    if (stop.load(std::memory_order_relaxed)) return;
    bool live = false, progress = false;
    if (options.seed) std::shuffle(warps.begin(), warps.end(), rng_);
    for (Warp* w : warps) {
      bool any = false;
      for (int l = 0; l < 32; ++l) any |= w->state[l] != LaneState::exited && w->state[l] != LaneState::inactive;
      if (!any) continue;
      live = true;
      wake(*w);
      int quantum = options.seed ? int(rng_() % 64) + 1 : 256;
      progress |= step_warp(*w, quantum);
      if (options.seed && rng_() % 4 == 0) {
        Cta& c = *w->cta;
        if (!c.async.empty()) {
          size_t pick = rng_() % c.async.size();
          size_t i = 0;
          complete_async(c, [&](const AsyncOp&) { return i++ == pick; });
          progress = true;  // it may have completed the phase a waiter needs: look again before a deadlock
        }
      }
    }
    if (!live) break;
    if (!progress) {
      bool pending = false;
      for (auto& c : cluster.ctas)
        if (!c->async.empty()) pending = true, complete_async(*c);
      if (!pending) throw Fault(deadlock_report(cluster));
    }
  }
  for (auto& c : cluster.ctas) {
    if (!c->async.empty()) complete_async(*c);
    try {
      check_cta_end(*c);
    } catch (const Fault& f) {
      throw Fault("in kernel '" + fn.name + "': " + f.what());
    }
  }
}

bool Grid::wake(Warp& w) {
  bool woke = false;
  for (int l = 0; l < 32; ++l) {
    if (w.state[l] != LaneState::waiting) continue;
    Wait& wt = w.wait[l];
    bool done = false;
    switch (wt.kind) {
      case Wait::Kind::mbarrier_phase: {
        auto it = wt.cta->mbarriers.find(wt.address);
        done = it != wt.cta->mbarriers.end() && (it->second.completed_phases & 1) != wt.parity;
        break;
      }
      case Wait::Kind::cluster_barrier: {
        Cluster& c = *w.cta->cluster;
        done = c.barrier_phase > wt.parity;
        break;
      }
      case Wait::Kind::warpgroup: done = false; break;  // released by the last warp of its group
      default: done = true;
    }
    if (done) w.state[l] = LaneState::ready, woke = true;
  }
  return woke;
}

bool Grid::step_warp(Warp& w, int budget) {
  bool executed = false;
  // A pick whose lanes are all held (they went back to wait) is not a step: it does not count
  // against the budget, so a turn ends having advanced a lane whenever one could advance (else a
  // turn of one held pick would look like a deadlock). Held lanes leave the ready set, so the
  // picks that do not count are at most the warp's 32 lanes.
  for (int n = 0; n < budget;) {
    uint32_t ready = w.mask(LaneState::ready);
    if (!ready) return executed;
    uint32_t pc = UINT32_MAX;
    if (options.seed) {
      int pick = int(rng_() % uint64_t(std::popcount(ready)));
      uint32_t m = ready;
      for (int i = 0; i < pick; ++i) m &= m - 1;
      pc = w.pc[std::countr_zero(m)];
    } else {
      for (uint32_t m = ready; m; m &= m - 1) pc = std::min(pc, w.pc[std::countr_zero(m)]);
      // Lowest pc first keeps lanes converged, but a lane spinning there would starve the others
      // (independent thread scheduling forbids that): each turn starts with the next group instead.
      if (n == 0) {
        uint32_t next = UINT32_MAX;
        for (uint32_t m = ready; m; m &= m - 1)
          if (w.pc[std::countr_zero(m)] > w.turn_pc) next = std::min(next, w.pc[std::countr_zero(m)]);
        if (next != UINT32_MAX) pc = next;
        w.turn_pc = pc;
      }
    }
    uint32_t group = 0;
    for (int l = 0; l < 32; ++l)
      if (w.pc[l] == pc && (w.state[l] == LaneState::ready || w.state[l] == LaneState::at_collective)) group |= 1u << l;
    if (pc >= fn.code.size()) throw Fault(locate(w, std::countr_zero(group), pc) + "execution ran past the end of the function");
    const Instruction& in = fn.code[pc];
    uint32_t active = group;
    if (in.guard >= 0) {
      active = 0;
      for (uint32_t m = group; m; m &= m - 1) {
        int l = std::countr_zero(m);
        if ((w.reg(uint32_t(in.guard), l) != 0) != in.guard_negated) active |= 1u << l;
      }
    }
    for (uint32_t m = group; m; m &= m - 1) {
      int l = std::countr_zero(m);
      w.pc[l] = pc + 1;
      w.state[l] = LaneState::ready;
    }
    ExecContext ctx{*this, fn, w, pc, group, active};
    try {
      if (active) in.execute(in, ctx);
    } catch (const Fault& f) {
      throw Fault(locate(w, ctx.lane >= 0 ? ctx.lane : std::countr_zero(active), pc) + f.what());
    }
    // Lanes that only went back to wait did not advance; the warp's other ready lanes may.
    if ((ctx.held & group) == group) continue;
    ++n;
    executed = true;
    thread_instructions.fetch_add(uint64_t(std::popcount(active)), std::memory_order_relaxed);
    uint64_t count = instructions.fetch_add(1, std::memory_order_relaxed) + 1;
    if (options.instruction_budget && count > options.instruction_budget)
      throw Fault(locate(w, std::countr_zero(group), pc) + "the launch ran past its budget of " + std::to_string(options.instruction_budget) +
                  " warp instructions (a loop that never ends? raise CUTEJIT_EMULATOR_BUDGET for a longer kernel)");
  }
  return executed;
}

std::string Grid::locate(const Warp& w, int lane, uint32_t pc) const {
  const Cta& c = *w.cta;
  std::ostringstream s;
  if (pc < fn.code.size()) {
    std::string at = module.where(fn.code[pc].where);
    if (!at.empty()) s << at << ": ";
  }
  s << "in kernel '" << fn.name << "'";
  if (pc < fn.code.size() && fn.function_at(pc) != fn.name) s << ", function '" << fn.function_at(pc) << "'";
  s << ", CTA (" << c.ctaid[0] << ", " << c.ctaid[1] << ", " << c.ctaid[2] << ")";
  if (lane >= 0 && lane < 32)
    s << " thread (" << w.tid_x[lane] << ", " << w.tid_y[lane] << ", " << w.tid_z[lane] << ") [warp " << w.id << ", lane " << lane << "]";
  if (pc < fn.code.size()) s << ", at '" << fn.code[pc].text << "'";
  s << ": ";
  return s.str();
}

std::string Grid::deadlock_report(Cluster& cluster) const {
  std::ostringstream s;
  const Cta& first = *cluster.ctas.front();
  s << "in kernel '" << fn.name << "', cluster of CTA (" << first.ctaid[0] << ", " << first.ctaid[1] << ", " << first.ctaid[2]
    << "): deadlock: every thread that has not exited is blocked";
  for (const auto& c : cluster.ctas)
    for (const auto& w : c->warps) {
      std::map<uint32_t, std::pair<uint32_t, LaneState>> at;
      for (int l = 0; l < 32; ++l)
        if (w->state[l] != LaneState::exited && w->state[l] != LaneState::inactive) {
          auto& e = at[w->pc[l]];
          e.first |= 1u << l;
          e.second = w->state[l];
        }
      for (auto& [pc, e] : at) {
        s << "\n  CTA (" << c->ctaid[0] << ", " << c->ctaid[1] << ", " << c->ctaid[2] << ") warp " << w->id << " lanes " << hex(e.first) << " "
          << state_name(e.second);
        if (pc < fn.code.size()) {
          std::string where = module.where(fn.code[pc].where);
          s << " at '" << fn.code[pc].text << "'" << (where.empty() ? "" : " (" + where + ")");
        }
      }
    }
  return s.str();
}

void Grid::complete_async(Cta& cta, const std::function<bool(const AsyncOp&)>& pred) {
  // Completing one may issue none, but its effects may fault: report the issuing thread.
  for (size_t i = 0; i < cta.async.size();) {
    if (pred && !pred(cta.async[i])) {
      ++i;
      continue;
    }
    AsyncOp op = std::move(cta.async[i]);
    cta.async.erase(cta.async.begin() + ptrdiff_t(i));
    op.complete();
  }
}

void Grid::check_barrier(Cta& cta, uint32_t id) {
  NamedBarrier& b = cta.barriers[id];
  uint32_t expected = b.expected ? b.expected : cta.live_threads();
  if (b.arrived == 0 || b.arrived < expected) return;
  for (auto& w : cta.warps)
    for (int l = 0; l < 32; ++l)
      if (w->state[l] == LaneState::at_barrier && w->wait[l].address == id) w->state[l] = LaneState::ready;
  b = NamedBarrier{};
  ++cta.cluster->epoch;
}

void Grid::check_cluster_barrier(Cluster& c) {
  uint32_t live = 0;
  for (auto& cta : c.ctas) live += cta->live_threads();
  if (c.barrier_arrived && c.barrier_arrived >= live) {
    ++c.barrier_phase;
    c.barrier_arrived = 0;
    ++c.epoch;
  }
}

void Grid::mbarrier_arrive(Cta& cta, uint32_t address, uint32_t count, const char* what) {
  auto it = cta.mbarriers.find(address);
  if (it == cta.mbarriers.end()) throw Fault(std::string(what) + " on shared offset " + hex(address) + ", where no mbarrier was initialised");
  MBarrier& m = it->second;
  m.pending -= count;
  if (m.pending < 0)
    throw Fault(std::string(what) + ": more arrivals than the mbarrier at shared offset " + hex(address) + " expects in a phase (" +
                std::to_string(m.expected) + ")");
  if (m.pending == 0 && m.tx == 0) ++m.completed_phases, m.pending = m.expected, ++cta.cluster->epoch;
}

void Grid::mbarrier_complete_tx(Cta& cta, uint32_t address, int64_t bytes) {
  auto it = cta.mbarriers.find(address);
  if (it == cta.mbarriers.end()) throw Fault("an asynchronous copy signals shared offset " + hex(address) + ", where no mbarrier was initialised");
  MBarrier& m = it->second;
  m.tx -= bytes;
  if (m.tx < -((int64_t(1) << 20) - 1)) throw Fault("the tx-count of the mbarrier at shared offset " + hex(address) + " underflows");
  if (m.pending == 0 && m.tx == 0) ++m.completed_phases, m.pending = m.expected, ++cta.cluster->epoch;
}

}  // namespace cutejit::emulator
