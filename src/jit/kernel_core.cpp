#include "cutejit/jit/kernel_core.hpp"

#include <cctype>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "cutejit/runtime/device.hpp"
#include "driver/driver.hpp"
#include "jit/pipeline.hpp"
#include "jit/record.hpp"

namespace cutejit::detail {

uint64_t Key::hash() const {
  // FNV-1a over the words: the key is a handful of words and is hashed on every launch.
  uint64_t h = 1469598103934665603ull;
  for (uint32_t i = 0; i < size; ++i) h = (h ^ words[i]) * 1099511628211ull;
  return h;
}

namespace {
struct DeviceKey {
  Key key;
  int device;
  bool operator==(const DeviceKey& o) const { return device == o.device && key == o.key; }
};
struct DeviceKeyHash {
  size_t operator()(const DeviceKey& k) const { return size_t(k.key.hash() ^ uint64_t(k.device) * 0x9e3779b97f4a7c15ull); }
};

void make_current(const Device& device) {
  thread_local void* current = nullptr;
  if (current != device.context()) {
    Driver::get().check(Driver::get().cuCtxSetCurrent(static_cast<CUcontext>(device.context())), "cuCtxSetCurrent");
    current = device.context();
  }
}

std::string dims(const Dim3& d) {
  return "(" + std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z) + ")";
}
}  // namespace

struct KernelCore::State {
  mutable std::shared_mutex mutex;
  std::unordered_map<DeviceKey, std::unique_ptr<LoadedFunction>, DeviceKeyHash> loaded;
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
  std::shared_lock lock(state_->mutex);
  auto it = state_->loaded.find(DeviceKey{key, device.ordinal()});
  return it == state_->loaded.end() ? nullptr : it->second.get();
}

const LoadedFunction& KernelCore::load(const Key& key, const Device& device, const TraceFn& trace) {
  std::lock_guard compiling(state_->compiling);
  if (const LoadedFunction* f = find(key, device)) return *f;
  CompiledKernel compiled = compile(device.target(), trace);

  const Driver& d = Driver::get();
  make_current(device);
  CUmodule module = nullptr;
  d.check(d.cuModuleLoadData(&module, compiled.cubin.data()), "cuModuleLoadData");
  CUfunction function = nullptr;
  d.check(d.cuModuleGetFunction(&function, module, name_.c_str()), "cuModuleGetFunction");
  auto f = std::make_unique<LoadedFunction>();
  f->function = function;
  d.check(d.cuFuncGetAttribute(&f->static_shared_bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, function), "cuFuncGetAttribute");
  d.check(d.cuFuncGetAttribute(&f->max_threads_per_block, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, function),
          "cuFuncGetAttribute");

  record_launch(name_, key, device.target());
  std::unique_lock lock(state_->mutex);
  auto& slot = state_->loaded[DeviceKey{key, device.ordinal()}];
  slot = std::move(f);
  return *slot;
}

CompiledKernel KernelCore::compile(const Target& target, const TraceFn& trace) const {
  return compile_specialization(name_, target, defined_at_, trace);
}

void KernelCore::launch(const LoadedFunction& f, const Device& device, const Launch& cfg, const ParamBuffer& params) const {
  const Driver& d = Driver::get();
  auto fail = [&](const std::string& what) { throw Error("error: cannot launch kernel '" + name_ + "': " + what); };
  if (cfg.grid.count() == 0 || cfg.block.count() == 0) fail("grid " + dims(cfg.grid) + " and block " + dims(cfg.block) + " must not be empty");
  if (cfg.block.count() > uint64_t(f.max_threads_per_block))
    fail("a block of " + std::to_string(cfg.block.count()) + " threads is more than this kernel allows (" +
         std::to_string(f.max_threads_per_block) + ")");
  uint64_t shared = uint64_t(f.static_shared_bytes) + cfg.shared_bytes;
  if (shared > uint64_t(device.max_shared_per_block()))
    fail("it needs " + std::to_string(shared) + " bytes of shared memory per block (" + std::to_string(f.static_shared_bytes) +
         " static + " + std::to_string(cfg.shared_bytes) + " dynamic) but " + device.name() + " allows at most " +
         std::to_string(device.max_shared_per_block()));
  make_current(device);
  if (int(cfg.shared_bytes) > f.dynamic_shared_limit_set && cfg.shared_bytes > 48 * 1024) {
    d.check(d.cuFuncSetAttribute(static_cast<CUfunction>(f.function), CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                 int(cfg.shared_bytes)),
            "cuFuncSetAttribute");
    f.dynamic_shared_limit_set = int(cfg.shared_bytes);
  }

  CUlaunchConfig config{};
  config.gridDimX = cfg.grid.x, config.gridDimY = cfg.grid.y, config.gridDimZ = cfg.grid.z;
  config.blockDimX = cfg.block.x, config.blockDimY = cfg.block.y, config.blockDimZ = cfg.block.z;
  config.sharedMemBytes = cfg.shared_bytes;
  config.hStream = static_cast<CUstream>(cfg.stream);
  CUlaunchAttribute attributes[2]{};
  config.attrs = attributes;
  if (cfg.cluster.count() > 1) {
    if (device.target().sm < 90) fail("thread-block clusters need sm_90 or newer; " + device.name() + " is " + device.target().name());
    if (cfg.cluster.count() > 8) fail("a cluster of " + std::to_string(cfg.cluster.count()) + " blocks is over the portable limit of 8");
    if (cfg.grid.x % cfg.cluster.x || cfg.grid.y % cfg.cluster.y || cfg.grid.z % cfg.cluster.z)
      fail("the grid " + dims(cfg.grid) + " is not a multiple of the cluster shape " + dims(cfg.cluster));
    CUlaunchAttribute& cluster = attributes[config.numAttrs++];
    cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    cluster.value.clusterDim.x = cfg.cluster.x, cluster.value.clusterDim.y = cfg.cluster.y, cluster.value.clusterDim.z = cfg.cluster.z;
  }
  if (cfg.programmatic_dependent_launch) {
    if (device.target().sm < 90)
      fail("programmatic dependent launch needs sm_90 or newer; " + device.name() + " is " + device.target().name());
    CUlaunchAttribute& pdl = attributes[config.numAttrs++];
    pdl.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    pdl.value.programmaticStreamSerializationAllowed = 1;
  }
  void* args[ParamBuffer::max_params];
  for (uint32_t i = 0; i < params.count; ++i) args[i] = const_cast<unsigned char*>(params.bytes) + params.offsets[i];
  d.check(d.cuLaunchKernelEx(&config, static_cast<CUfunction>(f.function), args, nullptr), "cuLaunchKernelEx");
}

void argument_error(const std::string& kernel, int index, const std::string& message) {
  throw Error("error: argument " + std::to_string(index) + " of kernel '" + kernel + "' " + message);
}

}  // namespace cutejit::detail
