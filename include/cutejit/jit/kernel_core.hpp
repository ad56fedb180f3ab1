/** \file
 * The non-template half of `Kernel`: the specialization key, parameter packing, the in-memory
 * cache of loaded functions, and the entry into the pipeline (trace -> verify -> lower ->
 * assemble -> load). Kept out of the template so user files compile fast.
 */
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <source_location>
#include <string>
#include <vector>

#include "cutejit/dsl/types.hpp"
#include "cutejit/jit/compiled.hpp"
#include "cutejit/jit/error.hpp"
#include "cutejit/jit/target.hpp"
#include "cutejit/runtime/launch.hpp"

namespace cutejit {
class Device;

namespace detail {

/// The specialization of one launch: a few words per parameter (element type, rank,
/// alignment, unit strides, static values). Built on every launch, so it lives on the stack.
struct Key {
  static constexpr int capacity = 64;
  std::array<uint64_t, capacity> words;
  uint32_t size = 0;
  void push(uint64_t w) {
    if (size == capacity) throw Error("a kernel's parameters need more than 64 specialization words; split the kernel's arguments");
    words[size++] = w;
  }
  bool operator==(const Key& o) const { return size == o.size && std::memcmp(words.data(), o.words.data(), size * 8) == 0; }
  uint64_t hash() const;
};

/// The values of the kernel's flattened parameters, one after another, and where each starts.
/// The launch hands the driver one pointer per parameter: only the driver knows the offsets
/// ptxas chose in the parameter space (it pads, e.g., to align a 64-byte tensor map).
struct ParamBuffer {
  static constexpr size_t capacity = 4096;
  static constexpr size_t max_params = 256;
  alignas(64) unsigned char bytes[capacity];
  uint16_t offsets[max_params];
  uint32_t count = 0;
  size_t size = 0;
  template <class T>
  void put(const T& v) {
    size_t at = (size + alignof(T) - 1) & ~(alignof(T) - 1);
    if (at + sizeof(T) > capacity || count == max_params)
      throw Error("kernel parameters exceed 4096 bytes or 256 values; pass fewer or smaller arguments");
    std::memcpy(bytes + at, &v, sizeof(T));
    offsets[count++] = uint16_t(at);
    size = at + sizeof(T);
  }
};

/// One parameter of the generated kernel function, after flattening tensors into
/// pointer + shape + strides.
struct FlatParam {
  DType type;
  bool pointer;
  /// Nonzero for an opaque by-value block of this many bytes that the kernel reads in place
  /// (`__grid_constant__`, 64-byte aligned): a TMA tensor map.
  int grid_constant_bytes = 0;
};

/// A loaded function for one (specialization, device).
struct LoadedFunction {
  void* function = nullptr;
  int static_shared_bytes = 0;
  int max_threads_per_block = 0;
  mutable int dynamic_shared_limit_set = 0;
};

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

/// Declares the flattened parameters of the kernel being traced (called from TraceFn).
void define_parameters(const std::vector<FlatParam>& params);
[[noreturn]] void argument_error(const std::string& kernel, int index, const std::string& message);

}  // namespace detail
}  // namespace cutejit
