/** \file
 * `PreparedLaunch`: a kernel's launch with its specialization resolved and its parameters
 * packed, which `Kernel::prepare` makes. Apart from kernel.hpp so that a header handing one out
 * (the kernel library's `*_prepare` operators) need not include the tracer.
 */
#pragma once

#include "cutejit/core/kernel_abi.hpp"
#include "cutejit/jit/kernel_core.hpp"
#include "cutejit/runtime/device.hpp"
#include "cutejit/runtime/launch.hpp"

namespace cutejit {

template <class F>
class Kernel;

/// A launch whose specialization is resolved and whose parameters are packed: calling it
/// costs one cuLaunchKernelEx.
class PreparedLaunch {
 public:
  void operator()() const { core_->launch(*function_, *device_, config_, params_); }
  /// The same launch on another stream.
  void operator()(StreamHandle stream) const {
    Launch cfg = config_;
    cfg.stream = stream;
    core_->launch(*function_, *device_, cfg, params_);
  }

 private:
  template <class F> friend class Kernel;
  const detail::KernelCore* core_ = nullptr;
  const detail::LoadedFunction* function_ = nullptr;
  const Device* device_ = nullptr;
  Launch config_;
  detail::ParamBuffer params_;
};

}  // namespace cutejit
