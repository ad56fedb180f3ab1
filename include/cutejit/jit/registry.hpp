/** \file
 * Kernels a tool can find by name. `CUTEJIT_REGISTER(kernel)` next to a kernel's definition
 * makes it known to the process that loads the code; `cutejit-cache warm --plugin LIB` and
 * `cutejit-cache export --plugin LIB` load a user's shared library that way and compile the
 * specializations a manifest lists, for any target, with no GPU.
 */
#pragma once

#include <functional>
#include <source_location>
#include <string>
#include <vector>

#include <span>

#include "cutejit/core/compiled.hpp"
#include "cutejit/jit/dynamic_arg.hpp"
#include "cutejit/jit/specialization.hpp"
#include "cutejit/runtime/launch.hpp"

namespace cutejit {

class Device;

struct RegisteredKernel {
  std::string name;
  std::source_location defined_at;
  /// Per parameter: the C++ type of a `Constexpr<T>`'s value ("int32_t", "float", ...), empty
  /// for every other kind of parameter. What an exported launch function takes for it.
  std::vector<std::string> constant_types;
  /// Traces and compiles one specialization (disk cache included). Throws cutejit::Error when
  /// the words are not this kernel's (a manifest recorded from another version of the code).
  std::function<CompiledKernel(const Target&, const Specialization&)> compile;
  /// Launches with arguments typed at run time (from Python); the first launch of a
  /// specialization compiles it, as a C++ launch does.
  std::function<void(const Device&, const Launch&, std::span<const DynamicArg>)> launch;
  const void* identity = nullptr;  ///< the Kernel object: registering one twice is harmless
};

/// Every registered kernel, in registration order.
std::vector<RegisteredKernel> registered_kernels();
/// The kernel registered under `name`. Throws cutejit::Error when there is none, or when two
/// different kernels share the name, listing what is registered.
RegisteredKernel find_registered_kernel(const std::string& name);

namespace detail {
/// The registry keeps the object and a way to describe it, and describes it only when a tool
/// asks: at registration (a static initializer) the object may not be constructed yet, when it
/// is defined in another file.
using DescribeKernel = RegisteredKernel (*)(const void* kernel);
void register_kernel(const void* kernel, DescribeKernel describe);

template <class K>
RegisteredKernel describe_kernel(const void* object) {
  // Registered kernels are namespace-scope or static objects; launching changes only their
  // cache of loaded specializations, which is what a launch through the object itself does.
  K& k = *const_cast<K*>(static_cast<const K*>(object));
  return {k.name(),
          k.defined_at(),
          K::constant_types(),
          [&k](const Target& t, const Specialization& s) { return k.compile(t, s); },
          [&k](const Device& d, const Launch& l, std::span<const DynamicArg> args) { k.launch_dynamic(d, l, args); },
          object};
}
template <class K>
bool register_kernel_object(const K& kernel) {
  register_kernel(&kernel, &describe_kernel<K>);
  return true;
}
}  // namespace detail

}  // namespace cutejit

#define CUTEJIT_REGISTER_CONCAT_(a, b) a##b
#define CUTEJIT_REGISTER_CONCAT(a, b) CUTEJIT_REGISTER_CONCAT_(a, b)
/// Registers a `Kernel` object (a namespace-scope or static one: it must outlive the registry's
/// use of it) when the program or shared library that holds this line is loaded.
#define CUTEJIT_REGISTER(kernel) \
  [[maybe_unused]] static const bool CUTEJIT_REGISTER_CONCAT(cutejit_registered_, __COUNTER__) = \
      ::cutejit::detail::register_kernel_object(kernel)
