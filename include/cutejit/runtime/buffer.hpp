/** \file
 * Device memory on the host side. `Buffer<T>` owns an allocation; `DeviceTensor<T>` is a
 * non-owning view (pointer, shape, strides in elements) and is what a `Tensor<T>` kernel
 * parameter receives. A raw device pointer enters through `DeviceTensor::from_pointer`, which
 * checks with the driver that it really is device memory.
 */
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <source_location>
#include <span>
#include <vector>

#include <bit>
#include <string>

#include "cutejit/core/kernel_abi.hpp"
#include "cutejit/core/types.hpp"
#include "cutejit/runtime/stream.hpp"

namespace cutejit {

namespace detail {
void free_device_memory(uint64_t ptr, void* context) noexcept;
void copy_to_device(uint64_t dst, const void* src, size_t bytes, void* context);
void copy_to_host(void* dst, uint64_t src, size_t bytes, void* context);
void check_device_pointer(uint64_t ptr);
/// Throws, located at `where`, unless the view has 1 to max_tensor_rank modes, as many strides
/// as extents, no negative ones, stays in 32-bit indexing and inside the allocation.
void check_view(int rank, size_t elements_in_allocation, std::span<const int64_t> shape, std::span<const int64_t> stride,
                std::source_location where);
/// The strides of a row-major (last mode contiguous) tensor of this shape.
inline std::vector<int64_t> row_major_strides(std::span<const int64_t> shape) {
  std::vector<int64_t> stride(shape.size());
  int64_t step = 1;
  for (size_t i = shape.size(); i-- > 0;) stride[i] = step, step *= shape[i];
  return stride;
}
/// Asynchronous on `stream` (the legacy default stream when null); each returns once queued.
void fill_device(uint64_t dst, uint32_t bits, int element_bytes, size_t count, StreamHandle stream, void* context);
void copy_device_to_device(uint64_t dst, uint64_t src, size_t bytes, StreamHandle stream, void* context);
void copy_to_device_async(uint64_t dst, const void* src, size_t bytes, StreamHandle stream, void* context);
void copy_to_host_async(void* dst, uint64_t src, size_t bytes, StreamHandle stream, void* context);
/// Throws unless a transfer of `given` elements matches a buffer of `count`.
void check_transfer(const char* what, size_t given, size_t count);
}  // namespace detail

template <class T>
struct DeviceTensor {
  using Where = std::source_location;
  uint64_t ptr = 0;
  int rank = 1;
  std::array<int64_t, max_tensor_rank> shape{};
  std::array<int64_t, max_tensor_rank> stride{};

  /// A view of memory the caller owns. Throws unless `ptr` is device memory.
  static DeviceTensor from_pointer(uint64_t ptr, std::initializer_list<int64_t> shape, std::initializer_list<int64_t> stride,
                                   Where where = Where::current()) {
    detail::check_device_pointer(ptr);
    return make(ptr, shape, stride, where);
  }
  /// A description without memory, to cross-compile with no GPU: the specialization (element
  /// type, rank, the static facts of shape and strides) is what a kernel is compiled for, so a
  /// kernel compiled with it is the one a launch with a real tensor of that shape finds. The
  /// shape and strides are checked as a view's are; the pointer is null, so it cannot be
  /// launched with.
  static DeviceTensor for_compile(std::initializer_list<int64_t> shape, std::initializer_list<int64_t> stride,
                                  Where where = Where::current()) {
    return make(0, {shape.begin(), shape.size()}, {stride.begin(), stride.size()}, where);
  }
  /// The same, row-major.
  static DeviceTensor for_compile(std::initializer_list<int64_t> shape, Where where = Where::current()) {
    std::span<const int64_t> s(shape.begin(), shape.size());
    return make(0, s, detail::row_major_strides(s), where);
  }
  /// Errors are located at `where`: the caller's line.
  static DeviceTensor make(uint64_t ptr, std::span<const int64_t> shape, std::span<const int64_t> stride,
                           Where where = Where::current()) {
    DeviceTensor t;
    t.ptr = ptr;
    t.rank = int(shape.size());
    detail::check_view(t.rank, size_t(-1), shape, stride, where);
    for (int i = 0; i < t.rank && i < max_tensor_rank; ++i) t.shape[i] = shape[i], t.stride[i] = stride[i];
    return t;
  }
};

template <class T>
class Buffer {
 public:
  Buffer() = default;
  /// How an allocation is given back: cuMemFree for Device::alloc, nvshmem_free for symmetric memory.
  using Release = void (*)(uint64_t ptr, void* context) noexcept;
  Buffer(uint64_t ptr, size_t count, void* context, Release release = detail::free_device_memory)
      : ptr_(ptr), count_(count), context_(context), release_(release) {}
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& o) noexcept : ptr_(o.ptr_), count_(o.count_), context_(o.context_), release_(o.release_) { o.ptr_ = 0, o.count_ = 0; }
  Buffer& operator=(Buffer&& o) noexcept {
    if (this != &o) {
      release();
      ptr_ = o.ptr_, count_ = o.count_, context_ = o.context_, release_ = o.release_;
      o.ptr_ = 0, o.count_ = 0;
    }
    return *this;
  }
  ~Buffer() { release(); }

  uint64_t data() const { return ptr_; }
  size_t size() const { return count_; }
  size_t bytes() const { return count_ * sizeof(T); }

  void upload(std::span<const T> host) {
    detail::copy_to_device(ptr_, host.data(), std::min(host.size(), count_) * sizeof(T), context_);
  }
  void download(std::span<T> host) const {
    detail::copy_to_host(host.data(), ptr_, std::min(host.size(), count_) * sizeof(T), context_);
  }
  /// Every element = `value` (1-, 2- or 4-byte types: cuMemsetD8/D16/D32), queued on `stream`.
  void fill(const T& value, StreamHandle stream = nullptr) {
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4,
                  "Buffer::fill sets 1-, 2- or 4-byte elements; fill wider ones with a kernel, or zero() them");
    uint32_t bits = 0;
    if constexpr (sizeof(T) == 1) bits = std::bit_cast<uint8_t>(value);
    else if constexpr (sizeof(T) == 2) bits = std::bit_cast<uint16_t>(value);
    else bits = std::bit_cast<uint32_t>(value);
    detail::fill_device(ptr_, bits, int(sizeof(T)), count_, stream, context_);
  }
  /// Every byte = 0, queued on `stream`.
  void zero(StreamHandle stream = nullptr) { detail::fill_device(ptr_, 0, 1, bytes(), stream, context_); }
  /// This buffer = `src` (the same number of elements), device to device, queued on `stream`.
  void copy_from(const Buffer& src, StreamHandle stream = nullptr) {
    detail::check_transfer("Buffer::copy_from", src.size(), count_);
    detail::copy_device_to_device(ptr_, src.ptr_, bytes(), stream, context_);
  }
  /// Queues the copy of `host` (exactly size() elements) on `stream`; `host` must stay alive
  /// and unchanged until the stream reaches it. From pinned memory (PinnedBuffer) it overlaps
  /// with kernels; from pageable memory the driver stages it first.
  void upload_async(std::span<const T> host, StreamHandle stream) {
    detail::check_transfer("Buffer::upload_async", host.size(), count_);
    detail::copy_to_device_async(ptr_, host.data(), bytes(), stream, context_);
  }
  /// Queues the copy into `host` (exactly size() elements) on `stream`; read it after the
  /// stream is synchronized.
  void download_async(std::span<T> host, StreamHandle stream) const {
    detail::check_transfer("Buffer::download_async", host.size(), count_);
    detail::copy_to_host_async(host.data(), ptr_, bytes(), stream, context_);
  }
  std::vector<T> to_host() const {
    std::vector<T> h(count_);
    download(h);
    return h;
  }

  /// The whole buffer as a 1-D tensor.
  operator DeviceTensor<T>() const {
    std::array<int64_t, 1> shape{int64_t(count_)}, stride{1};
    return DeviceTensor<T>::make(ptr_, shape, stride);
  }
  /// A view with the given shape and strides (in elements), checked to stay inside the buffer.
  DeviceTensor<T> view(std::initializer_list<int64_t> shape, std::initializer_list<int64_t> stride,
                       std::source_location where = std::source_location::current()) const {
    detail::check_view(int(shape.size()), count_, {shape.begin(), shape.size()}, {stride.begin(), stride.size()}, where);
    return DeviceTensor<T>::make(ptr_, {shape.begin(), shape.size()}, {stride.begin(), stride.size()}, where);
  }
  /// A row-major view.
  DeviceTensor<T> view(std::initializer_list<int64_t> shape, std::source_location where = std::source_location::current()) const {
    std::span<const int64_t> s(shape.begin(), shape.size());
    std::vector<int64_t> st = detail::row_major_strides(s);
    detail::check_view(int(s.size()), count_, s, st, where);
    return DeviceTensor<T>::make(ptr_, s, st, where);
  }

 private:
  void release() {
    if (ptr_) release_(ptr_, context_);
    ptr_ = 0;
  }
  uint64_t ptr_ = 0;
  size_t count_ = 0;
  void* context_ = nullptr;
  Release release_ = detail::free_device_memory;
};

}  // namespace cutejit
