#include "driver/driver.hpp"

#include <dlfcn.h>

#include <mutex>
#include <optional>

#include "cutejit/core/error.hpp"
#include "driver/emulated_driver.hpp"

namespace cutejit::detail {

namespace {

struct Loaded {
  Driver driver{};
  std::string error;  ///< why there is no driver, when there is none
};

const Loaded& load() {
  static Loaded loaded = [] {
    Loaded l;
    void* so = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!so) {
      l.error = "the CUDA driver (libcuda.so.1) could not be loaded: " + std::string(dlerror()) +
                ". Running kernels needs an NVIDIA GPU and its driver; tracing and Kernel::compile for a named Target work "
                "without one";
      return l;
    }
    using GetProc = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
    auto get_proc = reinterpret_cast<GetProc>(dlsym(so, "cuGetProcAddress_v2"));
    if (!get_proc) {
      l.error = "the CUDA driver is too old: cuGetProcAddress_v2 is missing (cutejit needs a CUDA 12 or newer driver)";
      return l;
    }
    Driver& d = l.driver;
    std::string missing;
    auto sym = [&](auto& fn, const char* name) {
      void* p = nullptr;
      CUdriverProcAddressQueryResult status;
      if (get_proc(name, &p, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &status) != CUDA_SUCCESS || !p) missing += std::string(" ") + name;
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
    };
    sym(d.cuInit, "cuInit");
    sym(d.cuDriverGetVersion, "cuDriverGetVersion");
    sym(d.cuDeviceGetCount, "cuDeviceGetCount");
    sym(d.cuDeviceGet, "cuDeviceGet");
    sym(d.cuDeviceGetName, "cuDeviceGetName");
    sym(d.cuDeviceGetAttribute, "cuDeviceGetAttribute");
    sym(d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    sym(d.cuCtxSetCurrent, "cuCtxSetCurrent");
    sym(d.cuCtxSynchronize, "cuCtxSynchronize");
    sym(d.cuMemAlloc, "cuMemAlloc");
    sym(d.cuMemFree, "cuMemFree");
    sym(d.cuMemcpyHtoD, "cuMemcpyHtoD");
    sym(d.cuMemcpyDtoH, "cuMemcpyDtoH");
    sym(d.cuPointerGetAttribute, "cuPointerGetAttribute");
    sym(d.cuModuleLoadData, "cuModuleLoadData");
    sym(d.cuModuleGetFunction, "cuModuleGetFunction");
    sym(d.cuModuleGetGlobal, "cuModuleGetGlobal");
    sym(d.cuFuncGetAttribute, "cuFuncGetAttribute");
    sym(d.cuFuncSetAttribute, "cuFuncSetAttribute");
    sym(d.cuLaunchKernelEx, "cuLaunchKernelEx");
    sym(d.cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled");
    sym(d.cuStreamCreate, "cuStreamCreate");
    sym(d.cuStreamDestroy, "cuStreamDestroy");
    sym(d.cuStreamSynchronize, "cuStreamSynchronize");
    sym(d.cuEventCreate, "cuEventCreate");
    sym(d.cuEventDestroy, "cuEventDestroy");
    sym(d.cuEventRecord, "cuEventRecord");
    sym(d.cuEventSynchronize, "cuEventSynchronize");
    sym(d.cuEventQuery, "cuEventQuery");
    sym(d.cuEventElapsedTime, "cuEventElapsedTime");
    sym(d.cuMemsetD8Async, "cuMemsetD8Async");
    sym(d.cuMemsetD16Async, "cuMemsetD16Async");
    sym(d.cuMemsetD32Async, "cuMemsetD32Async");
    sym(d.cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync");
    sym(d.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync");
    sym(d.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync");
    sym(d.cuMemAllocHost, "cuMemAllocHost");
    sym(d.cuMemFreeHost, "cuMemFreeHost");
    sym(d.cuStreamBeginCapture, "cuStreamBeginCapture");
    sym(d.cuStreamEndCapture, "cuStreamEndCapture");
    sym(d.cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags");
    sym(d.cuGraphLaunch, "cuGraphLaunch");
    sym(d.cuGraphExecDestroy, "cuGraphExecDestroy");
    sym(d.cuGraphDestroy, "cuGraphDestroy");
    sym(d.cuGetErrorName, "cuGetErrorName");
    sym(d.cuGetErrorString, "cuGetErrorString");
    if (!missing.empty()) {
      l.error = "the CUDA driver lacks entry points cutejit needs:" + missing;
      return l;
    }
    if (CUresult rc = d.cuInit(0); rc != CUDA_SUCCESS) {
      const char* name = "?";
      d.cuGetErrorName(rc, &name);
      l.error = std::string("the CUDA driver failed to initialise (") + name + "): no usable GPU";
    }
    return l;
  }();
  return loaded;
}

}  // namespace

const Driver& Driver::get() {
  const Loaded& l = load();
  if (!l.error.empty()) throw Error("error: " + l.error);
  return l.driver;
}

bool Driver::available() { return load().error.empty(); }

const Driver& Driver::of(const void* context) {
  if (const Driver* d = emulated_driver_for(context)) return *d;
  return get();
}

const Driver& Driver::owning(uint64_t ptr) { return is_emulated_pointer(ptr) ? emulated_driver() : get(); }

void Driver::check(CUresult rc, const char* call) const {
  if (rc == CUDA_SUCCESS) return;
  const char* name = "unknown error";
  const char* text = "";
  cuGetErrorName(rc, &name);
  cuGetErrorString(rc, &text);
  throw Error(std::string("error: CUDA driver call ") + call + " failed: " + name + " (" + text + ")");
}

}  // namespace cutejit::detail
