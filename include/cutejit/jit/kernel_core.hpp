/** \file
 * The non-template half of `Kernel`: the in-memory cache of loaded functions per
 * specialization and device, and the entry into the pipeline (trace -> verify -> lower ->
 * assemble), whose cubin the runtime loads and launches. Kept out of the template so user
 * files compile fast.
 */
#pragma once

#include <functional>
#include <memory>
#include <source_location>
#include <string>

#include "cutejit/core/compiled.hpp"
#include "cutejit/core/kernel_abi.hpp"
#include "cutejit/runtime/module.hpp"

namespace cutejit {
class Device;

namespace detail {

class KernelCore {
 public:
  KernelCore(std::string name, std::source_location defined_at);
  ~KernelCore();
  KernelCore(const KernelCore&) = delete;
  KernelCore& operator=(const KernelCore&) = delete;

  const std::string& name() const { return name_; }
  std::source_location defined_at() const { return defined_at_; }

  /// The tracing callback: declares the flattened parameters, then runs the user's body.
  using TraceFn = std::function<void()>;

  /// The hot path: the function already loaded for this key on this device, or null.
  const LoadedFunction* find(const Key& key, const Device& device) const;
  /// The cold path: trace, compile and load, then remember the result.
  const LoadedFunction& load(const Key& key, const Device& device, const TraceFn& trace);
  /// Cross-compiles one specialization for any target; needs no GPU or driver.
  CompiledKernel compile(const Target& target, const TraceFn& trace) const;
  /// Validates the launch configuration and launches.
  void launch(const LoadedFunction& f, const Device& device, const Launch& cfg, const ParamBuffer& params) const;

 private:
  struct State;
  std::string name_;
  std::source_location defined_at_;
  std::unique_ptr<State> state_;
};


}  // namespace detail
}  // namespace cutejit
