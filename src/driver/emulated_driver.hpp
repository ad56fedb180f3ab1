/** \file
 * The emulated device behind the driver's own interface: a Driver table whose entry points
 * keep buffers in host memory, load modules from PTX text and run launches on the CPU
 * (src/emulator). Everything above the driver (devices, buffers, streams, modules, launches,
 * tensor maps) works on it unchanged; it is chosen by the context a call names.
 */
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cutejit/core/target.hpp"
#include "driver/driver.hpp"

namespace cutejit::detail {

/// What a Device needs to describe an emulated GPU.
struct EmulatedDeviceInfo {
  void* context = nullptr;
  std::string name;
  int multiprocessors = 0;
  int max_shared_per_block = 0;
};

/// The emulated device of `target`, one per target and process (made on first use).
EmulatedDeviceInfo emulated_device(const Target& target);
/// The emulated driver when `context` is an emulated device's, else nullptr.
const Driver* emulated_driver_for(const void* context);
/// True when `ptr` is memory of an emulated device.
bool is_emulated_pointer(uint64_t ptr);
/// The emulated driver's table (every emulated device shares it; calls name their context).
const Driver& emulated_driver();
/// cuModuleLoadData of a program on the emulated device: the kernel's PTX, then the PTX that
/// nvJitLink linked with it into the cubin (NVRTC's), parsed and linked together. The driver's
/// error code; cuGetErrorString then says why, naming a call no module defines.
CUresult load_emulated_module(CUmodule* out, const std::vector<std::string_view>& ptx);

}  // namespace cutejit::detail
