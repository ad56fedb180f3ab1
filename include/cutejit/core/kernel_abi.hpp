/** \file
 * The kernel ABI every layer shares: the specialization key of a launch, the flattened
 * parameters of the generated kernel function, and the packed values a launch hands the
 * driver. The tracer declares the parameters, the Kernel template fills the key and the
 * buffer, the runtime launches with it.
 */
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "cutejit/core/error.hpp"
#include "cutejit/core/types.hpp"

namespace cutejit {

/// The most modes a kernel's tensor argument has: the specialization word of a tensor
/// parameter holds four modes' facts. One rule for DeviceTensor, DLPack and Python; inside a
/// kernel, layouts and the tensors made of them (local_tile, partitions) have any rank.
inline constexpr int max_tensor_rank = 4;

}  // namespace cutejit

namespace cutejit::detail {

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

/// Declares the flattened parameters of the kernel being traced (called while tracing).
void define_parameters(const std::vector<FlatParam>& params);
[[noreturn]] void argument_error(const std::string& kernel, int index, const std::string& message);

}  // namespace cutejit::detail
