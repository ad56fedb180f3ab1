#include "emulator/device_memory.hpp"

#include <cstdlib>
#include <cstring>
#include <sstream>

namespace cutejit::emulator {

namespace {
std::string hex(uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}
}  // namespace

DeviceMemory::~DeviceMemory() {
  for (auto& [address, bytes] : allocations_) std::free(reinterpret_cast<void*>(address));
}

uint64_t DeviceMemory::allocate(size_t bytes) {
  // 256-byte aligned, as cuMemAlloc's are; never empty, so every allocation has an address.
  size_t rounded = (std::max<size_t>(bytes, 1) + 255) / 256 * 256;
  void* p = std::aligned_alloc(256, rounded);
  if (!p) return 0;
  std::lock_guard lock(mutex_);
  allocations_[reinterpret_cast<uint64_t>(p)] = bytes;
  return reinterpret_cast<uint64_t>(p);
}

bool DeviceMemory::free(uint64_t address) {
  std::lock_guard lock(mutex_);
  auto it = allocations_.find(address);
  if (it == allocations_.end()) return false;
  std::free(reinterpret_cast<void*>(address));
  allocations_.erase(it);
  return true;
}

bool DeviceMemory::contains(uint64_t address, size_t bytes) const {
  std::lock_guard lock(mutex_);
  auto it = allocations_.upper_bound(address);
  if (it == allocations_.begin()) return false;
  --it;
  return address >= it->first && address - it->first + bytes <= it->second;
}

uint8_t* DeviceMemory::at(uint64_t address, size_t bytes) const {
  std::lock_guard lock(mutex_);
  auto it = allocations_.upper_bound(address);
  if (it != allocations_.begin()) {
    --it;
    if (address >= it->first && address - it->first + bytes <= it->second) return reinterpret_cast<uint8_t*>(address);
    if (address >= it->first && address - it->first < it->second + 4096)
      throw Fault("an access of " + std::to_string(bytes) + " bytes at global address " + hex(address) + " is out of bounds: it is byte " +
                  std::to_string(address - it->first) + " of an allocation of " + std::to_string(it->second) + " bytes at " + hex(it->first));
  }
  throw Fault("an access of " + std::to_string(bytes) + " bytes at global address " + hex(address) +
              " is outside every allocation of the device");
}

void DeviceMemory::read(uint64_t address, void* out, size_t bytes) { std::memcpy(out, at(address, bytes), bytes); }
void DeviceMemory::write(uint64_t address, const void* in, size_t bytes) { std::memcpy(at(address, bytes), in, bytes); }

}  // namespace cutejit::emulator
