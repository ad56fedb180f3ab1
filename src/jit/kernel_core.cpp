#include "cutejit/jit/kernel_core.hpp"

#include <atomic>
#include <cctype>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "cutejit/runtime/device.hpp"
#include "assemble/assemble.hpp"
#include "jit/pipeline.hpp"
#include "jit/record.hpp"
#include "runtime/device_hook.hpp"

namespace cutejit::detail {

namespace {

/// A process that makes a Device is about to compile for it: nvJitLink loads meanwhile.
[[maybe_unused]] const bool warm_up_on_device = (on_device_created([](const Target&) { warm_up_assembler(); }), true);

struct DeviceKey {
  Key key;
  const void* device;  ///< the device's context: GPUs and emulated devices alike
  bool operator==(const DeviceKey& o) const { return device == o.device && key == o.key; }
};
struct DeviceKeyHash {
  size_t operator()(const DeviceKey& k) const { return size_t(k.key.hash() ^ reinterpret_cast<uintptr_t>(k.device) * 0x9e3779b97f4a7c15ull); }
};
}  // namespace

struct KernelCore::State {
  using Loaded = std::unordered_map<DeviceKey, std::unique_ptr<LoadedFunction>, DeviceKeyHash>;
  mutable std::shared_mutex mutex;
  Loaded loaded;
  /// The entry the last lookup found. A kernel is usually launched with one specialization many
  /// times in a row, and comparing its key is cheaper than copying and hashing it and taking
  /// the lock. Entries are never removed and a map's nodes do not move, so it stays valid.
  mutable std::atomic<const Loaded::value_type*> last{nullptr};
  std::mutex compiling;  ///< one compile at a time per kernel, so a specialization is built once
};

KernelCore::KernelCore(std::string name, std::source_location defined_at)
    : name_(std::move(name)), defined_at_(defined_at), state_(std::make_unique<State>()) {
  bool ok = !name_.empty() && (std::isalpha(static_cast<unsigned char>(name_[0])) || name_[0] == '_');
  for (char c : name_) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  if (!ok)
    throw Error("error: kernel name '" + name_ + "' is not a valid symbol; use letters, digits and '_', not starting with a digit",
                defined_at);
}

KernelCore::~KernelCore() = default;

const LoadedFunction* KernelCore::find(const Key& key, const Device& device) const {
  const State::Loaded::value_type* last = state_->last.load(std::memory_order_acquire);
  if (last && last->first.device == device.context() && last->first.key == key) return last->second.get();
  std::shared_lock lock(state_->mutex);
  auto it = state_->loaded.find(DeviceKey{key, device.context()});
  if (it == state_->loaded.end()) return nullptr;
  state_->last.store(&*it, std::memory_order_release);
  return it->second.get();
}

const LoadedFunction& KernelCore::load(const Key& key, const Device& device, const TraceFn& trace) {
  std::lock_guard compiling(state_->compiling);
  if (const LoadedFunction* f = find(key, device)) return *f;
  CompiledKernel compiled = compile(device.target(), trace);

  auto f = std::make_unique<LoadedFunction>(load_function(compiled, device));
  record_launch(name_, key, device.target());
  std::unique_lock lock(state_->mutex);
  auto& slot = state_->loaded[DeviceKey{key, device.context()}];
  slot = std::move(f);
  return *slot;
}

CompiledKernel KernelCore::compile(const Target& target, const TraceFn& trace) const {
  return compile_specialization(name_, target, defined_at_, trace);
}

void KernelCore::launch(const LoadedFunction& f, const Device& device, const Launch& cfg, const ParamBuffer& params) const {
  launch_function(name_, f, device, cfg, params);
}

}  // namespace cutejit::detail
