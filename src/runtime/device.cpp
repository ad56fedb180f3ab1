#include "cutejit/runtime/device.hpp"

#include <fmt/format.h>

#include "cutejit/core/error.hpp"
#include "driver/driver.hpp"
#include "driver/emulated_driver.hpp"
#include "runtime/device_hook.hpp"

#include <atomic>
#include <cstdlib>
#include <optional>
#include <string_view>

namespace cutejit {

namespace detail {
namespace {
std::atomic<DeviceCreatedHook> device_created_hook{nullptr};
}
void on_device_created(DeviceCreatedHook hook) { device_created_hook = hook; }

/// The target CUTEJIT_DEVICE names for default devices ("emulator:sm_100a"), if any.
std::optional<Target> emulated_target_from_environment() {
  const char* v = std::getenv("CUTEJIT_DEVICE");
  if (!v || !*v || std::string_view(v) == "gpu") return std::nullopt;
  std::string_view s(v);
  if (!s.starts_with("emulator:"))
    throw Error("error: CUTEJIT_DEVICE='" + std::string(s) + "' is not understood; use emulator:<target> (emulator:sm_90a, emulator:sm_100a, …) or gpu");
  try {
    return Target::parse(s.substr(9));
  } catch (const Error& e) {
    throw Error("error: CUTEJIT_DEVICE='" + std::string(s) + "': " + std::string(e.message()));
  }
}
}  // namespace detail

Device Device::emulated(const Target& target) { return Device(EmulatedTag{}, target); }

Device::Device(EmulatedTag, const Target& target) : target_(target), emulated_(true) {
  detail::EmulatedDeviceInfo info = detail::emulated_device(target);
  name_ = info.name;
  multiprocessors_ = info.multiprocessors;
  max_shared_per_block_ = info.max_shared_per_block;
  context_ = info.context;
  // No device_created_hook: it overlaps loading the assembler with a GPU context's creation,
  // and an emulated device has none to overlap with.
  const detail::Driver& d = detail::emulated_driver();
  d.check(d.cuCtxSetCurrent(static_cast<CUcontext>(context_)), "cuCtxSetCurrent");
}

Device::Device(int ordinal) : ordinal_(ordinal) {
  if (std::optional<Target> t = detail::emulated_target_from_environment()) {
    if (ordinal != 0) throw Error("error: there is no device " + std::to_string(ordinal) + "; CUTEJIT_DEVICE names one emulated device (0)");
    *this = emulated(*t);
    return;
  }
  const detail::Driver& d = detail::Driver::get();
  int count = 0;
  d.check(d.cuDeviceGetCount(&count), "cuDeviceGetCount");
  if (count == 0) throw Error("error: no GPU present: the CUDA driver sees no device");
  if (ordinal < 0 || ordinal >= count)
    throw Error("error: there is no GPU " + std::to_string(ordinal) + "; the driver sees " + std::to_string(count) +
                " (ordinals 0.." + std::to_string(count - 1) + ")");
  CUdevice dev = 0;
  d.check(d.cuDeviceGet(&dev, ordinal), "cuDeviceGet");
  char name[256] = {};
  d.check(d.cuDeviceGetName(name, sizeof name, dev), "cuDeviceGetName");
  name_ = name;
  int major = 0, minor = 0;
  d.check(d.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev), "cuDeviceGetAttribute");
  d.check(d.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev), "cuDeviceGetAttribute");
  try {
    target_ = Target::for_compute_capability(major, minor);
  } catch (const Error& e) {
    throw Error(name_ + ": " + std::string(e.message()));
  }
  // Before the context, which takes the longest: what the JIT starts now (nvJitLink's loading)
  // runs while the driver makes it.
  if (detail::DeviceCreatedHook hook = detail::device_created_hook) hook(target_);
  d.check(d.cuDeviceGetAttribute(&multiprocessors_, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev), "cuDeviceGetAttribute");
  d.check(d.cuDeviceGetAttribute(&max_shared_per_block_, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev),
          "cuDeviceGetAttribute");
  CUcontext ctx = nullptr;
  // The primary context is the one the CUDA runtime (and PyTorch) use: buffers and streams mix freely.
  d.check(d.cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  d.check(d.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  context_ = ctx;
}

int Device::count() {
  try {
    if (detail::emulated_target_from_environment()) return 1;
  } catch (const Error&) {
    return 0;
  }
  if (!detail::Driver::available()) return 0;
  int n = 0;
  const detail::Driver& d = detail::Driver::get();
  return d.cuDeviceGetCount(&n) == CUDA_SUCCESS ? n : 0;
}

void Device::synchronize() const {
  const detail::Driver& d = detail::Driver::of(context_);
  d.check(d.cuCtxSetCurrent(static_cast<CUcontext>(context_)), "cuCtxSetCurrent");
  d.check(d.cuCtxSynchronize(), "cuCtxSynchronize (a kernel failed; the error may come from an earlier launch)");
}

uint64_t Device::allocate_bytes(size_t bytes) const {
  const detail::Driver& d = detail::Driver::of(context_);
  d.check(d.cuCtxSetCurrent(static_cast<CUcontext>(context_)), "cuCtxSetCurrent");
  CUdeviceptr p = 0;
  // cuMemAlloc rejects 0 bytes; an empty buffer is a valid, pointer-less buffer.
  if (bytes == 0) return 0;
  d.check(d.cuMemAlloc(&p, bytes), "cuMemAlloc");
  return p;
}

namespace detail {

void free_device_memory(uint64_t ptr, void* context) noexcept {
  if (const Driver* e = emulated_driver_for(context)) {
    e->cuMemFree(ptr);
    return;
  }
  if (!Driver::available()) return;
  const Driver& d = Driver::get();
  d.cuCtxSetCurrent(static_cast<CUcontext>(context));
  d.cuMemFree(ptr);
}

void copy_to_device(uint64_t dst, const void* src, size_t bytes, void* context) {
  if (bytes == 0) return;
  const Driver& d = Driver::of(context);
  d.check(d.cuCtxSetCurrent(static_cast<CUcontext>(context)), "cuCtxSetCurrent");
  d.check(d.cuMemcpyHtoD(dst, src, bytes), "cuMemcpyHtoD");
}

void copy_to_host(void* dst, uint64_t src, size_t bytes, void* context) {
  if (bytes == 0) return;
  const Driver& d = Driver::of(context);
  d.check(d.cuCtxSetCurrent(static_cast<CUcontext>(context)), "cuCtxSetCurrent");
  d.check(d.cuMemcpyDtoH(dst, src, bytes), "cuMemcpyDtoH");
}

void check_device_pointer(uint64_t ptr) {
  if (ptr == 0) throw Error("error: a null pointer cannot be a device tensor");
  if (is_emulated_pointer(ptr)) return;
  // Under an emulated device with no GPU driver, a pointer that is not its memory is host memory.
  if (emulated_target_from_environment() && !Driver::available())
    throw Error(fmt::format("error: pointer {:#x} is not device memory (a host pointer?); allocate with Device::alloc", ptr));
  const Driver& d = Driver::get();
  unsigned type = 0;
  CUresult rc = d.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, ptr);
  if (rc != CUDA_SUCCESS || type == CU_MEMORYTYPE_HOST)
    throw Error(fmt::format("error: pointer {:#x} is not device memory (a host pointer?); allocate with Device::alloc or cudaMalloc", ptr));
}

}  // namespace detail
}  // namespace cutejit
