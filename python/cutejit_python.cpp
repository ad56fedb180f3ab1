// The C ABI the Python module calls through ctypes: load a plugin library of registered
// kernels, find one by name, launch it on framework tensors (DLPack) and numbers. C, so that one
// build serves every Python version; every call returns 0 or -1 and never throws across the ABI.
#include <dlfcn.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <cutejit/cutejit.hpp>
#include <cutejit/interop/dlpack.hpp>
#include <cutejit/jit/registry.hpp>

namespace {

thread_local std::string last_error;

int failed(const std::string& message) {
  last_error = message;
  return -1;
}

/// One Device per GPU, made on first use: the primary context, which PyTorch and CuPy share.
const cutejit::Device& device(int ordinal) {
  static std::mutex mutex;
  static std::map<int, std::unique_ptr<cutejit::Device>> devices;
  std::lock_guard lock(mutex);
  auto& d = devices[ordinal];
  if (!d) d = std::make_unique<cutejit::Device>(ordinal);
  return *d;
}

}  // namespace

extern "C" {

/// One argument: a tensor (a DLTensor*, the pointer a DLPack capsule holds), an integer or a float.
struct cutejit_arg {
  int kind;  // 0 tensor, 1 integer, 2 float
  const DLTensor* tensor;
  int64_t integer;
  double real;
};

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

__attribute__((visibility("default"))) int cutejit_launch(void* kernel, int ordinal, const uint32_t* grid, const uint32_t* block,
                                                          uint32_t shared_bytes, uint64_t stream, const cutejit_arg* args, int count) {
  try {
    const auto& k = *static_cast<const cutejit::RegisteredKernel*>(kernel);
    std::vector<cutejit::DynamicArg> converted;
    converted.reserve(size_t(count));
    for (int i = 0; i < count; ++i) {
      const cutejit_arg& a = args[i];
      if (a.kind == 0) {
        try {
          converted.push_back(cutejit::dynamic_arg_from_dlpack(*a.tensor, ordinal));
        } catch (const cutejit::Error& e) {
          return failed("error: argument " + std::to_string(i + 1) + " of kernel '" + k.name + "': " + std::string(e.what()).substr(7));
        }
      } else {
        converted.push_back(a.kind == 1 ? cutejit::DynamicArg::of_integer(a.integer) : cutejit::DynamicArg::of_real(a.real));
      }
    }
    cutejit::Launch cfg{.grid = {grid[0], grid[1], grid[2]}, .block = {block[0], block[1], block[2]}, .shared_bytes = shared_bytes};
    cfg.stream = reinterpret_cast<cutejit::StreamHandle>(stream);
    k.launch(device(ordinal), cfg, converted);
    return 0;
  } catch (const std::exception& e) {
    return failed(e.what());
  }
}

}  // extern "C"
