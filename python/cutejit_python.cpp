// The C ABI the Python module calls through ctypes: load a plugin library of registered
// kernels, find one by name, launch it on framework tensors (DLPack) and numbers. C, so that one
// build serves every Python version; every call returns 0 or -1 and never throws across the ABI.
#include <dlfcn.h>

#include <cstring>
#include <string>
#include <vector>

#include <cutejit/cutejit.hpp>
#include <cutejit/interop/dlpack.hpp>
#include <cutejit/jit/registry.hpp>

#include "launch_support.hpp"

namespace {

thread_local std::string last_error;

int failed(const std::string& message) {
  last_error = message;
  return -1;
}

}  // namespace

extern "C" {

/// A launch as the Python module packs it in one buffer: a header, then one record per argument.
struct cutejit_launch_header {
  int32_t device;
  uint32_t shared_bytes;
  uint64_t stream;
  uint32_t grid[3];
  uint32_t block[3];
};
/// One argument. kind 0: a DLPack tensor (`value` is the DLTensor* a capsule holds); 1: an
/// integer (`value`); 2: a float (`real`); 3: a tensor described field by field (the fast path
/// for PyTorch tensors, which skips making a capsule): `value` its address, `code`/`bits` its
/// DLPack element type, `rank`, `shape` and `stride` in elements, on GPU `tensor_device`.
struct cutejit_arg {
  uint8_t kind, code, bits, rank;
  int32_t tensor_device;
  uint64_t value;
  double real;
  int64_t shape[4];
  int64_t stride[4];
};
static_assert(cutejit::max_tensor_rank == 4, "a record holds four modes: python/cutejit/__init__.py packs shape[4], stride[4]");
static_assert(sizeof(cutejit_launch_header) == 40 && sizeof(cutejit_arg) == 88, "the layout python/cutejit/__init__.py packs");

__attribute__((visibility("default"))) const char* cutejit_last_error() { return last_error.c_str(); }

__attribute__((visibility("default"))) int cutejit_load_plugin(const char* path) {
  // RTLD_GLOBAL is not needed: the plugin registers its kernels in libcutejit as it loads.
  if (!dlopen(path, RTLD_NOW | RTLD_LOCAL)) return failed(std::string("error: cannot load the plugin ") + path + ": " + dlerror());
  return 0;
}

/// The registered kernels' names, comma-separated.
__attribute__((visibility("default"))) const char* cutejit_kernel_names() {
  static thread_local std::string names;
  names.clear();
  for (const auto& k : cutejit::registered_kernels()) names += (names.empty() ? "" : ",") + k.name;
  return names.c_str();
}

/// A handle for the kernel registered as `name` (freed with cutejit_release_kernel), or null.
__attribute__((visibility("default"))) void* cutejit_find_kernel(const char* name) {
  try {
    return new cutejit::RegisteredKernel(cutejit::find_registered_kernel(name));
  } catch (const std::exception& e) {
    failed(e.what());
    return nullptr;
  }
}

__attribute__((visibility("default"))) void cutejit_release_kernel(void* kernel) { delete static_cast<cutejit::RegisteredKernel*>(kernel); }

__attribute__((visibility("default"))) int cutejit_launch(void* kernel, const void* packed, int count) {
  try {
    const auto& k = *static_cast<const cutejit::RegisteredKernel*>(kernel);
    cutejit_launch_header h;
    std::memcpy(&h, packed, sizeof h);
    std::vector<cutejit::DynamicArg> converted;
    converted.reserve(size_t(count));
    for (int i = 0; i < count; ++i) {
      cutejit_arg a;
      std::memcpy(&a, static_cast<const char*>(packed) + sizeof h + size_t(i) * sizeof a, sizeof a);
      if (a.kind == 1) {
        converted.push_back(cutejit::DynamicArg::of_integer(int64_t(a.value)));
      } else if (a.kind == 2) {
        converted.push_back(cutejit::DynamicArg::of_real(a.real));
      } else {
        DLTensor described{};
        if (a.kind == 3) {
          described.data = reinterpret_cast<void*>(a.value);
          described.device = {kDLCUDA, a.tensor_device};
          described.ndim = a.rank;
          described.dtype = {a.code, a.bits, 1};
          described.shape = a.shape;
          described.strides = a.stride;
        }
        if ((a.kind != 0 && a.kind != 3) || (a.kind == 0 && a.value == 0))
          return failed("error: argument " + std::to_string(i) + " of kernel '" + k.name + "' is packed wrongly (kind " +
                        std::to_string(int(a.kind)) + "); python/cutejit/__init__.py and this library do not match");
        const DLTensor& t = a.kind == 3 ? described : *reinterpret_cast<const DLTensor*>(a.value);
        try {
          converted.push_back(cutejit::dynamic_arg_from_dlpack(t, h.device));
        } catch (const cutejit::Error& e) {
          return failed("error: argument " + std::to_string(i) + " of kernel '" + k.name + "': " + std::string(e.message()));
        }
      }
    }
    cutejit::Launch cfg{.grid = {h.grid[0], h.grid[1], h.grid[2]}, .block = {h.block[0], h.block[1], h.block[2]}, .shared_bytes = h.shared_bytes};
    cfg.stream = reinterpret_cast<cutejit::StreamHandle>(h.stream);
    k.launch(cutejit::python::device(h.device), cfg, converted);
    return 0;
  } catch (const cutejit::Error& e) {
    return failed(cutejit::python::launch_error(e, __FILE__));
  } catch (const std::exception& e) {
    return failed(e.what());
  }
}

}  // extern "C"
