/** \file
 * What the emulated device's instruction semantics share with the machine that runs them: a
 * fault (an access or a use the ISA forbids, found while executing), and the byte-addressed
 * memory a semantics function reads and writes. The machine catches a Fault and adds where it
 * happened: the kernel, the CTA and thread, the instruction and the user's source line.
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace cutejit::emulator {

/// Something the kernel did that the PTX ISA does not allow (or leaves undefined), in words that
/// say what and with which values; thrown by semantics functions, located by the machine.
struct Fault : std::runtime_error {
  explicit Fault(const std::string& what) : std::runtime_error(what) {}
};

/// One state space's memory as the semantics functions see it. Every access is checked by the
/// implementation (bounds, alignment where the instruction demands it), which throws Fault.
class Memory {
 public:
  virtual ~Memory() = default;
  virtual void read(uint64_t address, void* out, size_t bytes) = 0;
  virtual void write(uint64_t address, const void* in, size_t bytes) = 0;

  template <class T>
  T load(uint64_t address) {
    T v;
    read(address, &v, sizeof v);
    return v;
  }
  template <class T>
  void store(uint64_t address, const T& v) {
    write(address, &v, sizeof v);
  }
};

}  // namespace cutejit::emulator
