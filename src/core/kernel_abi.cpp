#include "cutejit/core/kernel_abi.hpp"

namespace cutejit::detail {

uint64_t Key::hash() const {
  // FNV-1a over the words: the key is a handful of words and is hashed on every launch.
  uint64_t h = 1469598103934665603ull;
  for (uint32_t i = 0; i < size; ++i) h = (h ^ words[i]) * 1099511628211ull;
  return h;
}

void argument_error(const std::string& kernel, int index, const std::string& message) {
  throw Error("error: argument " + std::to_string(index) + " of kernel '" + kernel + "' " + message);
}

}  // namespace cutejit::detail
