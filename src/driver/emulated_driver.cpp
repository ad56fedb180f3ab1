#include "driver/emulated_driver.hpp"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>

#include "emulator/device_memory.hpp"
#include "emulator/machine.hpp"
#include "emulator/ptx_program.hpp"
#include "emulator/tensor_map.hpp"
#include "core/warnings.hpp"

namespace cutejit::detail {

namespace emu = cutejit::emulator;

namespace {

struct EmulatedDevice {
  Target target;
  std::string name;
  int multiprocessors = 132;
  int max_shared_per_block = 0;
};

struct EmulatedModule {
  std::unique_ptr<emu::Module> module;
  std::vector<uint64_t> globals;  ///< addresses of the module's variables, freed with it
  std::map<std::string, uint64_t, std::less<>> global_address;
};

struct EmulatedFunction {
  EmulatedModule* module;
  const emu::Function* fn;
};

struct EmulatedEvent {
  std::chrono::steady_clock::time_point at;
};

/// Everything the emulated devices share: one memory (every emulated device's buffers are host
/// memory; a pointer is valid on any of them), the devices by target, the run options.
struct State {
  std::mutex mutex;
  emu::DeviceMemory memory;
  std::map<std::string, std::unique_ptr<EmulatedDevice>> devices;
  std::map<const void*, bool> contexts;
  std::map<void*, size_t> pinned;
  emu::RunOptions options;
};

State& state() {
  static State* s = [] {
    auto* st = new State;  // lives to the end of the process: buffers may be freed at exit
    auto number = [](const char* name, uint64_t fallback) {
      const char* v = std::getenv(name);
      if (!v || !*v) return fallback;
      char* end = nullptr;
      unsigned long long x = std::strtoull(v, &end, 0);
      if (*end || end == v) {
        warn_once(name, std::string(name) + "='" + v + "' is not a number; using " + std::to_string(fallback));
        return fallback;
      }
      return uint64_t(x);
    };
    st->options.seed = number("CUTEJIT_EMULATOR_SEED", 0);
    st->options.instruction_budget = number("CUTEJIT_EMULATOR_BUDGET", 1'000'000'000);
    st->options.threads = unsigned(number("CUTEJIT_EMULATOR_THREADS", std::max(1u, std::thread::hardware_concurrency())));
    return st;
  }();
  return *s;
}

thread_local EmulatedDevice* current = nullptr;
/// Set once the first emulated device exists: until then no driver call pays for the lookup.
std::atomic<bool> any_emulated{false};
thread_local std::string last_error;

CUresult fail(CUresult rc, std::string message) {
  last_error = std::move(message);
  return rc;
}

// --- the entry points ------------------------------------------------------------------------

CUresult init(unsigned) { return CUDA_SUCCESS; }
CUresult driver_version(int* v) { return *v = 13000, CUDA_SUCCESS; }
CUresult device_count(int* n) { return *n = 1, CUDA_SUCCESS; }
CUresult device_get(CUdevice* d, int ordinal) { return *d = ordinal, CUDA_SUCCESS; }
CUresult device_name(char* out, int size, CUdevice) {
  std::string n = current ? current->name : "cutejit emulated device";
  std::snprintf(out, size_t(size), "%s", n.c_str());
  return CUDA_SUCCESS;
}
CUresult device_attribute(int* v, CUdevice_attribute a, CUdevice) {
  if (!current) return fail(CUDA_ERROR_INVALID_CONTEXT, "no emulated device is current");
  switch (a) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = current->target.sm / 10; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = current->target.sm % 10; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = current->multiprocessors; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *v = current->max_shared_per_block; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *v = 48 * 1024; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *v = 32; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *v = 1'000'000; break;
    default: *v = 0;
  }
  return CUDA_SUCCESS;
}
CUresult primary_ctx_retain(CUcontext* c, CUdevice) { return *c = reinterpret_cast<CUcontext>(current), CUDA_SUCCESS; }
CUresult ctx_set_current(CUcontext c) {
  current = reinterpret_cast<EmulatedDevice*>(c);
  return CUDA_SUCCESS;
}
CUresult ctx_synchronize() { return CUDA_SUCCESS; }

CUresult mem_alloc(CUdeviceptr* p, size_t bytes) {
  *p = state().memory.allocate(bytes);
  return *p ? CUDA_SUCCESS : fail(CUDA_ERROR_OUT_OF_MEMORY, "the emulated device could not allocate " + std::to_string(bytes) + " bytes of host memory");
}
CUresult mem_free(CUdeviceptr p) {
  return state().memory.free(p) ? CUDA_SUCCESS : fail(CUDA_ERROR_INVALID_VALUE, "cuMemFree of a pointer the emulated device did not allocate");
}

/// Runs `f`, turning a Fault (a bad pointer, a failed launch) into the driver's error code.
template <class F>
CUresult guarded(CUresult code, F&& f) {
  try {
    f();
    return CUDA_SUCCESS;
  } catch (const emu::Fault& e) {
    return fail(code, e.what());
  }
}

CUresult copy_in(CUdeviceptr d, const void* s, size_t n) { return guarded(CUDA_ERROR_INVALID_VALUE, [&] { state().memory.write(d, s, n); }); }
CUresult copy_out(void* d, CUdeviceptr s, size_t n) { return guarded(CUDA_ERROR_INVALID_VALUE, [&] { state().memory.read(s, d, n); }); }
// Stream capture: the device runs each call when it is made, so a stream being captured keeps
// its calls instead, and a graph is the list of them, run in order at each launch (as a CUDA
// graph of a single stream replays its nodes). A call's arguments are copied when it is
// captured; a copy from or to host memory reads or writes that memory at each replay.
struct EmulatedGraph {
  std::vector<std::function<CUresult()>> calls;
};
struct Capture {
  std::mutex mutex;
  std::map<CUstream, EmulatedGraph> streams;
};
Capture& capture() {
  static Capture c;
  return c;
}
/// Runs `call` now, or keeps it when `stream` is being captured.
CUresult queued(CUstream stream, std::function<CUresult()> call) {
  {
    std::lock_guard lock(capture().mutex);
    if (auto it = capture().streams.find(stream); it != capture().streams.end()) {
      it->second.calls.push_back(std::move(call));
      return CUDA_SUCCESS;
    }
  }
  return call();
}
CUresult begin_capture(CUstream stream, CUstreamCaptureMode) {
  if (!stream) return fail(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "the legacy default stream cannot be captured");
  std::lock_guard lock(capture().mutex);
  if (!capture().streams.emplace(stream, EmulatedGraph{}).second) return fail(CUDA_ERROR_ILLEGAL_STATE, "the stream is already being captured");
  return CUDA_SUCCESS;
}
CUresult end_capture(CUstream stream, CUgraph* graph) {
  std::lock_guard lock(capture().mutex);
  auto it = capture().streams.find(stream);
  if (it == capture().streams.end()) return fail(CUDA_ERROR_ILLEGAL_STATE, "the stream is not being captured");
  *graph = reinterpret_cast<CUgraph>(new EmulatedGraph(std::move(it->second)));
  capture().streams.erase(it);
  return CUDA_SUCCESS;
}
CUresult graph_instantiate(CUgraphExec* exec, CUgraph graph, unsigned long long) {
  *exec = reinterpret_cast<CUgraphExec>(new EmulatedGraph(*reinterpret_cast<EmulatedGraph*>(graph)));
  return CUDA_SUCCESS;
}
CUresult graph_launch(CUgraphExec exec, CUstream stream) {
  const auto* g = reinterpret_cast<EmulatedGraph*>(exec);
  return queued(stream, [g] {
    for (const auto& call : g->calls)
      if (CUresult rc = call(); rc != CUDA_SUCCESS) return rc;
    return CUDA_SUCCESS;
  });
}
CUresult graph_exec_destroy(CUgraphExec exec) { return delete reinterpret_cast<EmulatedGraph*>(exec), CUDA_SUCCESS; }
CUresult graph_destroy(CUgraph graph) { return delete reinterpret_cast<EmulatedGraph*>(graph), CUDA_SUCCESS; }

CUresult copy_in_async(CUdeviceptr d, const void* s, size_t n, CUstream stream) { return queued(stream, [=] { return copy_in(d, s, n); }); }
CUresult copy_out_async(void* d, CUdeviceptr s, size_t n, CUstream stream) { return queued(stream, [=] { return copy_out(d, s, n); }); }
CUresult copy_device(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream stream) {
  return queued(stream, [=] { return guarded(CUDA_ERROR_INVALID_VALUE, [&] { std::memmove(state().memory.at(d, n), state().memory.at(s, n), n); }); });
}
template <class T>
CUresult fill(CUdeviceptr d, T v, size_t n, CUstream stream) {
  return queued(stream, [=] {
    return guarded(CUDA_ERROR_INVALID_VALUE, [&] {
      T* p = reinterpret_cast<T*>(state().memory.at(d, n * sizeof(T)));
      std::fill(p, p + n, v);
    });
  });
}
CUresult fill8(CUdeviceptr d, unsigned char v, size_t n, CUstream s) { return fill<uint8_t>(d, v, n, s); }
CUresult fill16(CUdeviceptr d, unsigned short v, size_t n, CUstream s) { return fill<uint16_t>(d, v, n, s); }
CUresult fill32(CUdeviceptr d, unsigned int v, size_t n, CUstream s) { return fill<uint32_t>(d, v, n, s); }

CUresult pointer_attribute(void* out, CUpointer_attribute a, CUdeviceptr p) {
  if (a != CU_POINTER_ATTRIBUTE_MEMORY_TYPE || !state().memory.contains(p, 1)) return fail(CUDA_ERROR_INVALID_VALUE, "not emulated device memory");
  *static_cast<unsigned*>(out) = CU_MEMORYTYPE_DEVICE;
  return CUDA_SUCCESS;
}

// A module's image is its PTX text (as cuModuleLoadData also accepts on a GPU).
CUresult module_load(CUmodule* out, const void* image) { return load_emulated_module(out, {static_cast<const char*>(image)}); }
CUresult module_function(CUfunction* f, CUmodule m, const char* name) {
  auto* mod = reinterpret_cast<EmulatedModule*>(m);
  const emu::Function* fn = mod->module->find(name);
  if (!fn || !fn->entry) return fail(CUDA_ERROR_NOT_FOUND, std::string("the module has no kernel '") + name + "'");
  *f = reinterpret_cast<CUfunction>(new EmulatedFunction{mod, fn});
  return CUDA_SUCCESS;
}
CUresult module_global(CUdeviceptr* p, size_t* bytes, CUmodule m, const char* name) {
  auto* mod = reinterpret_cast<EmulatedModule*>(m);
  auto it = mod->global_address.find(name);
  if (it == mod->global_address.end()) return fail(CUDA_ERROR_NOT_FOUND, std::string("the module has no variable '") + name + "'");
  if (p) *p = it->second;
  if (bytes)
    for (const auto& g : mod->module->globals)
      if (g.name == name) *bytes = g.init.size();
  return CUDA_SUCCESS;
}
CUresult func_attribute(int* v, CUfunction_attribute a, CUfunction f) {
  const emu::Function& fn = *reinterpret_cast<EmulatedFunction*>(f)->fn;
  switch (a) {
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *v = int(fn.static_shared_bytes); break;
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = int(fn.max_threads); break;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH: *v = int(fn.required_cluster[0]); break;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT: *v = int(fn.required_cluster[1]); break;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH: *v = int(fn.required_cluster[2]); break;
    case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *v = int(fn.local_bytes); break;
    default: *v = 0;
  }
  return CUDA_SUCCESS;
}
CUresult func_set_attribute(CUfunction, CUfunction_attribute, int) { return CUDA_SUCCESS; }

CUresult launch(const CUlaunchConfig* config, CUfunction f, void** args, void**) {
  const auto& ef = *reinterpret_cast<EmulatedFunction*>(f);
  const emu::Function& fn = *ef.fn;
  emu::LaunchConfig cfg;
  cfg.grid[0] = config->gridDimX, cfg.grid[1] = config->gridDimY, cfg.grid[2] = config->gridDimZ;
  cfg.block[0] = config->blockDimX, cfg.block[1] = config->blockDimY, cfg.block[2] = config->blockDimZ;
  cfg.dynamic_shared = config->sharedMemBytes;
  for (unsigned i = 0; i < config->numAttrs; ++i)
    if (config->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
      const auto& d = config->attrs[i].value.clusterDim;
      cfg.cluster[0] = d.x, cfg.cluster[1] = d.y, cfg.cluster[2] = d.z;
    }
  cfg.params.assign(fn.param_bytes, 0);
  for (size_t i = 0; i < fn.params.size(); ++i) std::memcpy(cfg.params.data() + fn.params[i].offset, args[i], fn.params[i].bytes);
  emu::RunOptions options = state().options;
  if (current) options.multiprocessors = current->multiprocessors;
  return queued(config->hStream, [&ef, &fn, cfg, options] {
    return guarded(CUDA_ERROR_LAUNCH_FAILED, [&] {
      emu::Grid grid(*ef.module->module, fn, cfg, state().memory, options);
      grid.run();
    });
  });
}

CUresult stream_create(CUstream* s, unsigned) { return *s = reinterpret_cast<CUstream>(new char(0)), CUDA_SUCCESS; }
CUresult stream_destroy(CUstream s) { return delete reinterpret_cast<char*>(s), CUDA_SUCCESS; }
CUresult stream_synchronize(CUstream) { return CUDA_SUCCESS; }
CUresult event_create(CUevent* e, unsigned) { return *e = reinterpret_cast<CUevent>(new EmulatedEvent{}), CUDA_SUCCESS; }
CUresult event_destroy(CUevent e) { return delete reinterpret_cast<EmulatedEvent*>(e), CUDA_SUCCESS; }
CUresult event_record(CUevent e, CUstream) {
  reinterpret_cast<EmulatedEvent*>(e)->at = std::chrono::steady_clock::now();
  return CUDA_SUCCESS;
}
CUresult event_synchronize(CUevent) { return CUDA_SUCCESS; }
CUresult event_query(CUevent) { return CUDA_SUCCESS; }
CUresult event_elapsed(float* ms, CUevent a, CUevent b) {
  *ms = std::chrono::duration<float, std::milli>(reinterpret_cast<EmulatedEvent*>(b)->at - reinterpret_cast<EmulatedEvent*>(a)->at).count();
  return CUDA_SUCCESS;
}
CUresult alloc_host(void** p, size_t bytes) {
  *p = std::malloc(std::max<size_t>(bytes, 1));
  return *p ? CUDA_SUCCESS : fail(CUDA_ERROR_OUT_OF_MEMORY, "out of host memory");
}
CUresult free_host(void* p) { return std::free(p), CUDA_SUCCESS; }

// The emulator's own encoding of the map (emulator/tensor_map.hpp), checked as the driver
// documents; the enums' numbers are the driver's.
CUresult tensor_map_encode(CUtensorMap* map, CUtensorMapDataType type, cuuint32_t rank, void* address, const cuuint64_t* dims,
                           const cuuint64_t* strides, const cuuint32_t* box, const cuuint32_t* element_strides,
                           CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2,
                           CUtensorMapFloatOOBfill fill) {
  if (rank < 1 || rank > 5) return fail(CUDA_ERROR_INVALID_VALUE, "a tensor map has rank 1 to 5, not " + std::to_string(rank));
  emu::TensorMapDescription d;
  d.data_type = emu::TensorDataType(type);
  d.rank = rank;
  d.global_address = reinterpret_cast<uint64_t>(address);
  for (cuuint32_t i = 0; i < rank; ++i) {
    d.global_dims[i] = dims[i];
    d.box_dims[i] = box[i];
    d.element_strides[i] = element_strides[i];
    if (i + 1 < rank) d.global_strides[i] = strides[i];
  }
  d.interleave = emu::TensorInterleave(interleave);
  d.swizzle = emu::TensorSwizzle(swizzle);
  d.l2_promotion = emu::TensorL2Promotion(l2);
  d.oob_fill = emu::TensorOobFill(fill);
  if (std::string error = emu::tensor_map_error(d); !error.empty()) return fail(CUDA_ERROR_INVALID_VALUE, error);
  return guarded(CUDA_ERROR_INVALID_VALUE, [&] { emu::encode_tensor_map(d, std::span<uint8_t, 128>(reinterpret_cast<uint8_t*>(map), 128)); });
}

CUresult error_name(CUresult rc, const char** out) {
  switch (rc) {
    case CUDA_ERROR_LAUNCH_FAILED: *out = "CUDA_ERROR_LAUNCH_FAILED"; break;
    case CUDA_ERROR_INVALID_PTX: *out = "CUDA_ERROR_INVALID_PTX"; break;
    case CUDA_ERROR_OUT_OF_MEMORY: *out = "CUDA_ERROR_OUT_OF_MEMORY"; break;
    case CUDA_ERROR_NOT_FOUND: *out = "CUDA_ERROR_NOT_FOUND"; break;
    case CUDA_ERROR_NOT_SUPPORTED: *out = "CUDA_ERROR_NOT_SUPPORTED"; break;
    default: *out = "CUDA_ERROR_INVALID_VALUE";
  }
  return CUDA_SUCCESS;
}
CUresult error_string(CUresult, const char** out) {
  *out = last_error.c_str();
  return CUDA_SUCCESS;
}

Driver make_table() {
  Driver d{};
  d.cuInit = init;
  d.cuDriverGetVersion = driver_version;
  d.cuDeviceGetCount = device_count;
  d.cuDeviceGet = device_get;
  d.cuDeviceGetName = device_name;
  d.cuDeviceGetAttribute = device_attribute;
  d.cuDevicePrimaryCtxRetain = primary_ctx_retain;
  d.cuCtxSetCurrent = ctx_set_current;
  d.cuCtxSynchronize = ctx_synchronize;
  d.cuMemAlloc = mem_alloc;
  d.cuMemFree = mem_free;
  d.cuMemcpyHtoD = copy_in;
  d.cuMemcpyDtoH = copy_out;
  d.cuPointerGetAttribute = pointer_attribute;
  d.cuModuleLoadData = module_load;
  d.cuModuleGetFunction = module_function;
  d.cuModuleGetGlobal = module_global;
  d.cuFuncGetAttribute = func_attribute;
  d.cuFuncSetAttribute = func_set_attribute;
  d.cuLaunchKernelEx = launch;
  d.cuTensorMapEncodeTiled = tensor_map_encode;
  d.cuStreamCreate = stream_create;
  d.cuStreamDestroy = stream_destroy;
  d.cuStreamSynchronize = stream_synchronize;
  d.cuEventCreate = event_create;
  d.cuEventDestroy = event_destroy;
  d.cuEventRecord = event_record;
  d.cuEventSynchronize = event_synchronize;
  d.cuEventQuery = event_query;
  d.cuEventElapsedTime = event_elapsed;
  d.cuMemsetD8Async = fill8;
  d.cuMemsetD16Async = fill16;
  d.cuMemsetD32Async = fill32;
  d.cuMemcpyDtoDAsync = copy_device;
  d.cuMemcpyHtoDAsync = copy_in_async;
  d.cuMemcpyDtoHAsync = copy_out_async;
  d.cuMemAllocHost = alloc_host;
  d.cuMemFreeHost = free_host;
  d.cuStreamBeginCapture = begin_capture;
  d.cuStreamEndCapture = end_capture;
  d.cuGraphInstantiateWithFlags = graph_instantiate;
  d.cuGraphLaunch = graph_launch;
  d.cuGraphExecDestroy = graph_exec_destroy;
  d.cuGraphDestroy = graph_destroy;
  d.cuGetErrorName = error_name;
  d.cuGetErrorString = error_string;
  return d;
}

}  // namespace

CUresult load_emulated_module(CUmodule* out, const std::vector<std::string_view>& ptx) {
  auto m = std::make_unique<EmulatedModule>();
  CUresult rc = guarded(CUDA_ERROR_INVALID_PTX, [&] {
    m->module = emu::link_ptx(ptx, [&](const emu::GlobalVariable& g) {
      uint64_t a = state().memory.allocate(g.init.size());
      state().memory.write(a, g.init.data(), g.init.size());
      m->globals.push_back(a);
      m->global_address[g.name] = a;
      return a;
    });
  });
  if (rc != CUDA_SUCCESS) {
    last_error = "the emulated device cannot run this kernel: " + last_error;
    for (uint64_t a : m->globals) state().memory.free(a);
    return rc;
  }
  *out = reinterpret_cast<CUmodule>(m.release());  // modules live as long as the process, as on a GPU
  return CUDA_SUCCESS;
}

const Driver& emulated_driver() {
  static const Driver table = make_table();
  return table;
}

EmulatedDeviceInfo emulated_device(const Target& target) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  auto& d = s.devices[target.name()];
  if (!d) {
    d = std::make_unique<EmulatedDevice>();
    d->target = target;
    d->name = "cutejit emulated " + target.name();
    d->max_shared_per_block = target.max_shared_per_block();
    s.contexts[d.get()] = true;
    any_emulated = true;
  }
  return EmulatedDeviceInfo{d.get(), d->name, d->multiprocessors, d->max_shared_per_block};
}

const Driver* emulated_driver_for(const void* context) {
  if (!context || !any_emulated.load(std::memory_order_relaxed)) return nullptr;
  State& s = state();
  std::lock_guard lock(s.mutex);
  return s.contexts.count(context) ? &emulated_driver() : nullptr;
}

bool is_emulated_pointer(uint64_t ptr) { return any_emulated.load(std::memory_order_relaxed) && state().memory.contains(ptr, 1); }

}  // namespace cutejit::detail
