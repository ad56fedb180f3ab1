/** \file
 * A compiled kernel on a device: its cubin loaded as a module, the function's limits read
 * from the driver, and the launch that checks a configuration against them and calls
 * cuLaunchKernelEx with the packed parameters.
 */
#pragma once

#include <string>

#include "cutejit/core/compiled.hpp"
#include "cutejit/core/kernel_abi.hpp"
#include "cutejit/runtime/launch.hpp"

namespace cutejit {
class Device;

namespace detail {

/// A loaded function for one (specialization, device).
struct LoadedFunction {
  void* function = nullptr;
  int static_shared_bytes = 0;
  int max_threads_per_block = 0;
  /// The cluster shape compiled into the kernel (cluster_shape), or 0 x 0 x 0 for none.
  Dim3 required_cluster{0, 0, 0};
  /// The block shape compiled into the kernel (block_shape, `.reqntid`), or 0 x 0 x 0 for none.
  Dim3 required_block{0, 0, 0};
  mutable int dynamic_shared_limit_set = 0;
};

/// Loads `compiled`'s cubin on `device` and looks up its kernel function.
LoadedFunction load_function(const CompiledKernel& compiled, const Device& device);
/// Validates `cfg` against the function and the device, then launches `kernel`'s function.
void launch_function(const std::string& kernel, const LoadedFunction& f, const Device& device, const Launch& cfg,
                     const ParamBuffer& params);

}  // namespace detail
}  // namespace cutejit
