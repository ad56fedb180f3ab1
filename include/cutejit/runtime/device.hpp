/** \file
 * A GPU: its primary CUDA context, its compilation target, and device memory. Creating a
 * Device loads the driver (libcuda.so.1) on first use; with no driver or no GPU it throws
 * cutejit::Error, while tracing and cross-compiling keep working without one.
 *
 * Or an emulated GPU of any target (`Device::emulated`, or every default Device when
 * CUTEJIT_DEVICE=emulator:<target>): buffers in host memory, each launch executed on the CPU
 * from the kernel's PTX, with checks a GPU cannot make (docs/emulator.md).
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cutejit/core/target.hpp"
#include "cutejit/runtime/buffer.hpp"
#include "cutejit/runtime/launch.hpp"
#include "cutejit/runtime/pinned.hpp"

namespace cutejit {

class Device {
 public:
  /// The GPU with this ordinal; its target is detected (sm_90a on an H100/H200). With
  /// CUTEJIT_DEVICE=emulator:<target> set, device 0 is the emulated device of that target.
  explicit Device(int ordinal = 0);
  /// The emulated device of `target` (any target Target::parse accepts): kernels compiled for
  /// it run on the CPU, synchronously, at the launch; a fault in one is reported as an Error
  /// from that launch, naming the kernel, CTA, thread, instruction and source line.
  static Device emulated(const Target& target);
  /// How many GPUs the driver sees (0 with no driver, never throws); 1 under CUTEJIT_DEVICE=emulator:….
  static int count();

  int ordinal() const { return ordinal_; }
  Target target() const { return target_; }
  const std::string& name() const { return name_; }
  int multiprocessors() const { return multiprocessors_; }
  /// The most shared memory one block may use, dynamic and static together (opt-in limit).
  int max_shared_per_block() const { return max_shared_per_block_; }
  void* context() const { return context_; }
  bool is_emulated() const { return emulated_; }

  template <class T>
  Buffer<T> alloc(size_t count) const {
    return Buffer<T>(allocate_bytes(count * sizeof(T)), count, context_);
  }
  template <class T>
  Buffer<T> upload(std::span<const T> host) const {
    Buffer<T> b = alloc<T>(host.size());
    b.upload(host);
    return b;
  }
  template <class T>
  Buffer<T> upload(const std::vector<T>& host) const { return upload(std::span<const T>(host)); }

  /// `count` elements of page-locked host memory, for asynchronous transfers.
  template <class T>
  PinnedBuffer<T> alloc_pinned(size_t count) const {
    return PinnedBuffer<T>(count, context_);
  }
  /// Waits for all work on this device.
  void synchronize() const;

 private:
  struct EmulatedTag {};
  Device(EmulatedTag, const Target& target);
  uint64_t allocate_bytes(size_t bytes) const;

  int ordinal_ = 0;
  Target target_;
  std::string name_;
  int multiprocessors_ = 0;
  int max_shared_per_block_ = 0;
  void* context_ = nullptr;
  bool emulated_ = false;
};

}  // namespace cutejit
