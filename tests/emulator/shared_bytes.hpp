// A Memory of plain bytes for the semantics tests: what the emulator's machine hands the
// instruction semantics as a CTA's shared memory, with only the bounds checked.
#pragma once

#include <cstring>
#include <vector>

#include "emulator/fault.hpp"

namespace test {

class SharedBytes final : public cutejit::emulator::Memory {
 public:
  explicit SharedBytes(size_t n) : bytes(n) {}
  void read(uint64_t a, void* out, size_t n) override {
    if (a + n > bytes.size()) throw cutejit::emulator::Fault("shared read out of bounds");
    std::memcpy(out, bytes.data() + a, n);
  }
  void write(uint64_t a, const void* in, size_t n) override {
    if (a + n > bytes.size()) throw cutejit::emulator::Fault("shared write out of bounds");
    std::memcpy(bytes.data() + a, in, n);
  }
  std::vector<uint8_t> bytes;
};

}  // namespace test
