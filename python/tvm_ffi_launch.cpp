// The launch as a TVM-FFI function: `launch` of this library as `tvm_ffi.load_module` finds it,
// the ABI that CuTeDSL, FlashInfer and FlashAttention-4 launch through. TVM-FFI hands PyTorch
// tensors over as DLTensors made by torch's DLPack exchange API (no capsule, no attribute read
// in Python) and sets the launch's stream from torch's current one, so a launch from Python
// costs little more than the driver's. Its ABI is C and stable, so one build serves every
// Python version.
//
// The TVM-FFI runtime is the one the Python process loaded with `import tvm_ffi`: its two
// functions this file calls are looked up there, so the library needs only TVM-FFI's header to
// build and still loads (for the ctypes entry) where TVM-FFI is not installed.
#include <dlfcn.h>

#include <string>
#include <vector>

#include <tvm/ffi/c_api.h>

#include <cutejit/cutejit.hpp>
#include <cutejit/interop/dlpack.hpp>
#include <cutejit/jit/registry.hpp>

#include "launch_support.hpp"

namespace {

/// TVM-FFI's functions, from the runtime already loaded in the process.
struct Runtime {
  void (*set_error)(const char* kind, const char* message) = nullptr;
  void* (*stream)(int32_t device_type, int32_t device_id) = nullptr;

  static const Runtime& get() {
    static const Runtime r = [] {
      Runtime r;
      if (void* so = dlopen("libtvm_ffi.so", RTLD_NOW | RTLD_NOLOAD)) {
        r.set_error = reinterpret_cast<decltype(r.set_error)>(dlsym(so, "TVMFFIErrorSetRaisedFromCStr"));
        r.stream = reinterpret_cast<decltype(r.stream)>(dlsym(so, "TVMFFIEnvGetStream"));
      }
      return r;
    }();
    return r;
  }
};

/// The error kind python/cutejit/__init__.py registers as cutejit.Error.
constexpr const char* error_kind = "cutejit.Error";

int raise(const std::string& message) {
  if (const Runtime& r = Runtime::get(); r.set_error) r.set_error(error_kind, message.c_str());
  return -1;
}

std::string type_name(int32_t type_index) {
  switch (type_index) {
    case kTVMFFINone: return "None";
    case kTVMFFIRawStr:
    case kTVMFFISmallStr:
    case kTVMFFIStr: return "str";
    case kTVMFFIBigInt: return "int outside the 64-bit signed range";
    default: return "value of TVM-FFI type index " + std::to_string(type_index);
  }
}

/// A tensor argument's DLTensor, or null for any other argument.
const DLTensor* tensor_of(const TVMFFIAny& a) {
  if (a.type_index == kTVMFFITensor) return TVMFFITensorGetDLTensorPtr(a.v_obj);
  if (a.type_index == kTVMFFIDLTensorPtr) return static_cast<const DLTensor*>(a.v_ptr);
  return nullptr;
}

/// The header's slots: the kernel (a handle from cutejit_find_kernel), grid x y z, block x y z,
/// dynamic shared bytes, and the stream (-1: the one TVM-FFI set for the first tensor's GPU).
constexpr int header_slots = 9;

}  // namespace

/// launch(kernel, grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_bytes, stream,
///        *arguments): the kernel's arguments are tensors, ints, bools and floats.
extern "C" TVM_FFI_DLL_EXPORT int __tvm_ffi_launch(void*, const TVMFFIAny* args, int32_t count, TVMFFIAny* result) {
  result->type_index = kTVMFFINone;
  result->v_int64 = 0;
  try {
    if (count < header_slots)
      return raise("error: launch takes the kernel, the grid, the block, the shared bytes and the stream before the arguments; "
                   "python/cutejit/__init__.py and this library do not match");
    for (int i = 0; i < header_slots; ++i)
      if (args[i].type_index != kTVMFFIInt) return raise("error: launch slot " + std::to_string(i) + " is not an int");
    const auto& k = *reinterpret_cast<const cutejit::RegisteredKernel*>(args[0].v_int64);
    auto u32 = [&](int i) { return uint32_t(args[i].v_int64); };
    const int argc = count - header_slots;
    const TVMFFIAny* kernel_args = args + header_slots;

    // The GPU is the first tensor's, and so is the stream TVM-FFI set from its framework.
    int gpu = 0;
    for (int i = 0; i < argc; ++i)
      if (const DLTensor* t = tensor_of(kernel_args[i])) {
        gpu = t->device.device_id;
        break;
      }
    std::vector<cutejit::DynamicArg> converted;
    converted.reserve(size_t(argc));
    for (int i = 0; i < argc; ++i) {
      const TVMFFIAny& a = kernel_args[i];
      if (const DLTensor* t = tensor_of(a)) {
        try {
          converted.push_back(cutejit::dynamic_arg_from_dlpack(*t, gpu));
        } catch (const cutejit::Error& e) {
          return raise("error: argument " + std::to_string(i) + " of kernel '" + k.name + "': " + std::string(e.message()));
        }
      } else if (a.type_index == kTVMFFIInt || a.type_index == kTVMFFIBool) {
        converted.push_back(cutejit::DynamicArg::of_integer(a.v_int64));
      } else if (a.type_index == kTVMFFIFloat) {
        converted.push_back(cutejit::DynamicArg::of_real(a.v_float64));
      } else {
        return raise("error: argument " + std::to_string(i) + " of kernel '" + k.name + "' is a " + type_name(a.type_index) +
                     "; give a tensor, an int or a float");
      }
    }
    cutejit::Launch cfg{.grid = {u32(1), u32(2), u32(3)}, .block = {u32(4), u32(5), u32(6)}, .shared_bytes = u32(7)};
    const int64_t stream = args[8].v_int64;
    const Runtime& r = Runtime::get();
    cfg.stream = reinterpret_cast<cutejit::StreamHandle>(stream >= 0 ? stream : r.stream ? reinterpret_cast<intptr_t>(r.stream(kDLCUDA, gpu)) : 0);
    k.launch(cutejit::python::device(gpu), cfg, converted);
    return 0;
  } catch (const cutejit::Error& e) {
    return raise(cutejit::python::launch_error(e, __FILE__));
  } catch (const std::exception& e) {
    return raise(e.what());
  }
}
