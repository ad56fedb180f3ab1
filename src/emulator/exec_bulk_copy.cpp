// The bulk copies of sm_90 and later on the machine: cp.async.bulk.tensor loads (multicast and
// pair forms included), stores and reductions through a tensor map, and the plain cp.async.bulk,
// with the semantics of tensor_copy.cpp. A load is an asynchronous operation that writes shared
// memory and signals its mbarrier when a thread waits for it (or earlier, in a seeded schedule);
// stores and reductions take effect when issued, which the ISA allows, so their bulk groups have
// nothing left to wait for.
#include <atomic>

#include "emulator/exec_support.hpp"
#include "emulator/instruction_set.hpp"
#include "emulator/tensor_copy.hpp"
#include "emulator/tensor_map.hpp"

namespace cutejit::emulator {

namespace {

/// Reductions into global memory, each element atomic on the host (CTAs run on several threads).
class AtomicReduce final : public ReduceMemory {
 public:
  explicit AtomicReduce(DeviceMemory& memory) : memory_(memory) {}
  void reduce(uint64_t address, TensorReduceOp op, TensorDataType type, uint64_t source) override {
    switch (tensor_element_bytes(type)) {
      case 2: update<uint16_t>(address, op, type, source); break;
      case 4: update<uint32_t>(address, op, type, source); break;
      case 8: update<uint64_t>(address, op, type, source); break;
      default: throw Fault("a tensor reduction on elements of this size");
    }
  }

 private:
  template <class T>
  void update(uint64_t address, TensorReduceOp op, TensorDataType type, uint64_t source) {
    std::atomic_ref<T> ref(*reinterpret_cast<T*>(memory_.at(address, sizeof(T))));
    T old = ref.load();
    while (!ref.compare_exchange_weak(old, T(tensor_reduce_element(op, type, old, source)))) {}
  }
  DeviceMemory& memory_;
};

/// The tensor map a copy names by its generic address (a kernel parameter, or global memory).
TensorMapDescription tensor_map_at(ExecContext& c, const Operand& o, int l) {
  std::array<uint8_t, 128> bytes;
  c.read(Space::generic, c.get(o, l), bytes.data(), bytes.size(), l);
  return decode_tensor_map(bytes);
}

std::vector<int32_t> coordinates(ExecContext& c, const Operand& v, int l) {
  std::vector<int32_t> coords;
  for (uint32_t i = 0; i < v.count; ++i) coords.push_back(int32_t(c.get(c.element(v, i), l)));
  return coords;
}

// [dst], [tensorMap, {coords}], [mbar] {, ctaMask} {, cache-policy}
void exec_tensor_load(const Instruction& in, ExecContext& c) {
  const BulkTensorCopy& op = in.as<BulkTensorCopy>();
  const auto& o = in.operands;
  Grid& grid = c.grid;
  Cta& cta = c.cta();
  c.each(c.active, [&](int l) {
    auto map = std::make_shared<TensorMapDescription>(tensor_map_at(c, c.element(o[1], 0), l));
    std::vector<int32_t> coords = coordinates(c, c.element(o[1], 1), l);
    uint64_t dst = c.address(o[0], l), mbar = c.address(o[2], l);
    Space space = op.shared_cluster ? Space::shared_cluster : Space::shared_cta;
    // Each destination CTA with the mbarrier its arrival signals.
    std::vector<std::pair<Cta*, std::pair<Cta*, uint32_t>>> targets;
    auto [dst_cta, dst_off] = c.shared_location(space, dst, 16, l);
    auto [bar_cta, bar_off] = c.shared_location(space, mbar, 8, l);
    if (op.multicast) {
      uint32_t mask = uint32_t(c.get(o[3], l)) & 0xffff;
      auto& ctas = cta.cluster->ctas;
      for (uint32_t r = 0; r < ctas.size(); ++r)
        if (mask >> r & 1) {
          // With cta_group::2 a pair's loads signal the barrier of the pair's even CTA.
          Cta* signalled = op.cta_group == 2 ? ctas[r & ~1u].get() : ctas[r].get();
          targets.push_back({ctas[r].get(), {signalled, bar_off}});
        }
    } else {
      targets.push_back({dst_cta, {bar_cta, bar_off}});
    }
    for (auto& [target, signal] : targets) {
      if (!signal.first->mbarriers.count(signal.second))
        throw Fault("a tensor load signals shared offset " + std::to_string(signal.second) + ", where no mbarrier was initialised");
      Cta* t = target;
      Cta* s = signal.first;
      uint32_t at = dst_off, bar = signal.second;
      cta.async.push_back(AsyncOp{&c.warp, l, 0,
                                  [&grid, map, coords, t, s, at, bar] {
                                    SharedMemory shared(grid, *t);
                                    uint32_t bytes = tensor_load(*map, coords, grid.memory, shared, at);
                                    grid.mbarrier_complete_tx(*s, bar, bytes);
                                  },
                                  bar, s});
    }
  });
}

// [tensorMap, {coords}], [src] {, cache-policy}
void exec_tensor_store(const Instruction& in, ExecContext& c) {
  const BulkTensorCopy& op = in.as<BulkTensorCopy>();
  const auto& o = in.operands;
  c.each(c.active, [&](int l) {
    TensorMapDescription map = tensor_map_at(c, c.element(o[0], 0), l);
    std::vector<int32_t> coords = coordinates(c, c.element(o[0], 1), l);
    auto [src_cta, src_off] = c.shared_location(Space::shared_cta, c.address(o[1], l), 16, l);
    SharedMemory shared(c.grid, *src_cta);
    if (op.reduce) {
      AtomicReduce global(c.grid.memory);
      tensor_reduce(op.op, map, coords, shared, src_off, global);
    } else {
      tensor_store(map, coords, shared, src_off, c.grid.memory);
    }
  });
}

// cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [src], size, [mbar]
// cp.async.bulk.global.shared::cta.bulk_group [dst], [src], size
void exec_bulk(const Instruction& in, ExecContext& c) {
  const auto& o = in.operands;
  bool to_shared = in.op == 1;
  Grid& grid = c.grid;
  c.each(c.active, [&](int l) {
    uint64_t dst = c.address(o[0], l), src = c.address(o[1], l);
    uint32_t size = uint32_t(c.get(o[2], l));
    if (!to_shared) {
      auto [src_cta, src_off] = c.shared_location(Space::shared_cta, src, size, l);
      SharedMemory shared(grid, *src_cta);
      bulk_copy(shared, src_off, grid.memory, dst, size);
      return;
    }
    auto [dst_cta, dst_off] = c.shared_location(in.space, dst, size, l);
    auto [bar_cta, bar_off] = c.shared_location(in.space, c.address(o[3], l), 8, l);
    Cta* t = dst_cta;
    Cta* s = bar_cta;
    uint32_t at = dst_off, bar = bar_off;
    c.cta().async.push_back(AsyncOp{&c.warp, l, 0,
                                    [&grid, t, s, at, bar, src, size] {
                                      SharedMemory shared(grid, *t);
                                      bulk_copy(grid.memory, src, shared, at, size);
                                      grid.mbarrier_complete_tx(*s, bar, size);
                                    },
                                    bar, s});
  });
}

void exec_nothing(const Instruction&, ExecContext&) {}

}  // namespace

bool decode_bulk_copy(Instruction& in, const Opcode& op) {
  bool reduce = op[0] == "cp" && op.size() > 3 && op[1] == "reduce" && op[2] == "async" && op[3] == "bulk";
  bool bulk = op[0] == "cp" && op.size() > 2 && op[1] == "async" && op[2] == "bulk";
  if (!reduce && !bulk) return false;
  if (bulk && op.size() > 3 && (op[3] == "commit_group" || op[3] == "wait_group")) return bind(in, exec_nothing);
  if (has(op, "tensor")) {
    auto d = std::make_shared<BulkTensorCopy>(parse_bulk_tensor(joined(op)));
    bool load = d->to_shared && !d->reduce;
    in.decoded = d;
    return bind(in, load ? exec_tensor_load : exec_tensor_store);
  }
  if (reduce) return false;  // the non-tensor bulk reductions: not covered
  if (has(op, "prefetch")) return bind(in, exec_nothing);
  // The destination's space comes first in the opcode: .shared::cluster (a load) or .global.
  bool to_shared = op.size() > 3 && op[3].starts_with("shared");
  in.space = to_shared ? (op[3] == "shared::cta" ? Space::shared_cta : Space::shared_cluster) : Space::global;
  return bind(in, exec_bulk, to_shared ? 1 : 0);
}

}  // namespace cutejit::emulator
