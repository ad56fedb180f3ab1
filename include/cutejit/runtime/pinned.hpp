/** \file
 * Page-locked host memory (cuMemAllocHost): what asynchronous uploads and downloads need to
 * overlap with kernels. `Device::alloc_pinned<T>(n)` gives one; it is freed with the object.
 */
#pragma once

#include <cstddef>
#include <span>

namespace cutejit {

namespace detail {
void* allocate_pinned(size_t bytes, void* context);
void free_pinned(void* p, void* context) noexcept;
}  // namespace detail

template <class T>
class PinnedBuffer {
 public:
  PinnedBuffer(size_t count, void* context)
      : data_(static_cast<T*>(detail::allocate_pinned(count * sizeof(T), context))), count_(count), context_(context) {}
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  PinnedBuffer(PinnedBuffer&& o) noexcept : data_(o.data_), count_(o.count_), context_(o.context_) { o.data_ = nullptr, o.count_ = 0; }
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    if (this != &o) {
      detail::free_pinned(data_, context_);
      data_ = o.data_, count_ = o.count_, context_ = o.context_;
      o.data_ = nullptr, o.count_ = 0;
    }
    return *this;
  }
  ~PinnedBuffer() { detail::free_pinned(data_, context_); }

  T* data() const { return data_; }
  size_t size() const { return count_; }
  T& operator[](size_t i) const { return data_[i]; }
  std::span<T> span() const { return {data_, count_}; }
  operator std::span<T>() const { return span(); }
  operator std::span<const T>() const { return {data_, count_}; }

 private:
  T* data_ = nullptr;
  size_t count_ = 0;
  void* context_ = nullptr;
};

}  // namespace cutejit
