/** \file
 * Traced pointers into global, shared or register memory. The tracer knows each pointer's
 * address space and the byte alignment it can prove (from the kernel argument's alignment and
 * the divisibility of every offset added to it); vector accesses need that proof.
 */
#pragma once

#include <array>
#include <string>

#include "cutejit/dsl/var.hpp"

namespace cutejit {

template <Element T>
class Pointer {
 public:
  Pointer() = default;
  explicit Pointer(detail::ValueId id) : id_(id) {}

  detail::ValueId id() const { return id_; }
  Space space() const { return detail::pointer_info(id_).space; }
  /// The byte alignment the tracer can prove for this address.
  int64_t alignment() const { return detail::pointer_info(id_).alignment; }

  Pointer operator+(const Operand<int32_t>& offset) const {
    return Pointer(detail::offset_pointer(id_, offset.id, dtype_v<T>, offset.where));
  }
  detail::Ref<T> operator*() const { return detail::Ref<T>(id_); }
  detail::Ref<T> operator[](const Operand<int32_t>& i) const { return *(*this + i); }

  /// Loads N consecutive elements in one instruction (N * sizeof(T) <= 16 bytes).
  template <int N>
  std::array<Value<T>, N> load_vector(detail::Where w = detail::Where::current()) const {
    check_vector<N>(w);
    std::array<detail::ValueId, N> ids;
    detail::load_vector(id_, dtype_v<T>, ids, w);
    std::array<Value<T>, N> out;
    for (int i = 0; i < N; ++i) out[i] = Value<T>(ids[i]);
    return out;
  }
  template <int N>
  void store_vector(const std::array<Value<T>, N>& values, detail::Where w = detail::Where::current()) const {
    check_vector<N>(w);
    std::array<detail::ValueId, N> ids;
    for (int i = 0; i < N; ++i) ids[i] = values[i].id();
    detail::store_vector(id_, ids, w);
  }

 private:
  template <int N>
  void check_vector(detail::Where w) const {
    static_assert(N >= 1 && (N & (N - 1)) == 0 && N * sizeof(T) <= 16, "a vector access is 1, 2, 4, 8 or 16 bytes");
    constexpr int64_t bytes = N * int64_t(sizeof(T));
    if (alignment() < bytes)
      detail::fail("cannot prove that this " + std::to_string(bytes) + "-byte vector access is aligned: the address is known to be " +
                       std::to_string(alignment()) + "-byte aligned. Make the offset a provable multiple of " + std::to_string(N) +
                       " elements (e.g. i * " + std::to_string(N) + ", or assume_divisible(i, " + std::to_string(N) +
                       ")), and pass a base pointer aligned to " + std::to_string(bytes) + " bytes",
                   w);
  }
  detail::ValueId id_;
};

/// A static shared-memory array of `count` elements, one per block.
template <Element T>
Pointer<T> shared_array(int64_t count, int64_t alignment = 16, detail::Where w = detail::Where::current()) {
  return Pointer<T>(detail::static_shared(dtype_v<T>, count, alignment, w));
}
/// The block's dynamic shared memory (sized by Launch::shared_bytes), viewed as T from a byte offset.
template <Element T>
Pointer<T> dynamic_shared(int64_t byte_offset = 0, detail::Where w = detail::Where::current()) {
  if (byte_offset % int64_t(sizeof(T)) != 0)
    detail::fail("dynamic shared memory offset " + std::to_string(byte_offset) + " is not a multiple of the element size " +
                     std::to_string(sizeof(T)),
                 w);
  Pointer<int8_t> base(detail::dynamic_shared(w));
  return Pointer<T>((base + Operand<int32_t>(int32_t(byte_offset), w)).id());
}

}  // namespace cutejit
