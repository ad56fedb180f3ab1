/** \file
 * The emulated device's global memory: allocations of host memory whose host addresses are
 * the device addresses kernels see, each access checked against the allocation it falls in, so
 * an out-of-bounds pointer is a report rather than a corrupted neighbour.
 */
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "emulator/fault.hpp"

namespace cutejit::emulator {

class DeviceMemory final : public Memory {
 public:
  DeviceMemory() = default;
  DeviceMemory(const DeviceMemory&) = delete;
  ~DeviceMemory() override;

  uint64_t allocate(size_t bytes);
  /// Returns false when `address` is not the start of a live allocation.
  bool free(uint64_t address);
  /// True when [address, address + bytes) lies in one live allocation.
  bool contains(uint64_t address, size_t bytes) const;
  /// The host bytes behind [address, address + bytes); throws Fault when they are not one
  /// allocation's.
  uint8_t* at(uint64_t address, size_t bytes) const;

  void read(uint64_t address, void* out, size_t bytes) override;
  void write(uint64_t address, const void* in, size_t bytes) override;

 private:
  mutable std::mutex mutex_;
  std::map<uint64_t, size_t> allocations_;  ///< start -> bytes
};

}  // namespace cutejit::emulator
