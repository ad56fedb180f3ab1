/** \file
 * A traced tensor: a pointer plus a shape and strides (rank 1 to 4), indexed by coordinates.
 * Kernel parameters of type `Tensor<T>` receive device buffers; the element type is fixed by
 * the kernel, the rank and the pointer's alignment by the arguments of the launch (they are
 * part of the specialization), and shape and strides are traced values, except an innermost
 * stride of 1, which is known at trace time so that contiguous accesses can be vectorised.
 */
#pragma once

#include <array>
#include <initializer_list>
#include <string>

#include "cutejit/tensor/pointer.hpp"

namespace cutejit {

inline constexpr int max_tensor_rank = 4;

template <Element T>
class Tensor {
 public:
  using element_type = T;
  Tensor() = default;
  Tensor(Pointer<T> data, std::initializer_list<Int> shape, std::initializer_list<Int> stride,
         detail::Where w = detail::Where::current())
      : data_(data), rank_(int(shape.size())) {
    if (shape.size() != stride.size() || shape.size() < 1 || shape.size() > max_tensor_rank)
      detail::fail("a tensor needs 1 to 4 modes and as many strides as shape entries", w);
    int i = 0;
    for (const Int& s : shape) shape_[i++] = s;
    i = 0;
    for (const Int& s : stride) stride_[i++] = s;
  }
  Tensor(Pointer<T> data, int rank, const std::array<Int, max_tensor_rank>& shape,
         const std::array<Int, max_tensor_rank>& stride)
      : data_(data), rank_(rank), shape_(shape), stride_(stride) {}

  int rank() const { return rank_; }
  Int shape(int mode) const { return shape_.at(mode); }
  Int stride(int mode) const { return stride_.at(mode); }
  Pointer<T> data() const { return data_; }
  /// The number of elements.
  Int size(detail::Where w = detail::Where::current()) const {
    Int n = shape_[0];
    for (int i = 1; i < rank_; ++i) n = Operand<int32_t>(n, w) * shape_[i];
    return n;
  }

  /// The element at a coordinate with one index per mode.
  using Index = Operand<int32_t>;
  detail::Ref<T> operator()(const Index& i0) const { return at({i0}, i0.where); }
  detail::Ref<T> operator()(const Index& i0, const Index& i1) const { return at({i0, i1}, i0.where); }
  detail::Ref<T> operator()(const Index& i0, const Index& i1, const Index& i2) const { return at({i0, i1, i2}, i0.where); }
  detail::Ref<T> operator()(const Index& i0, const Index& i1, const Index& i2, const Index& i3) const {
    return at({i0, i1, i2, i3}, i0.where);
  }
  /// The address of a coordinate (for vector accesses and atomics).
  Pointer<T> pointer_at(std::initializer_list<Operand<int32_t>> coord, detail::Where w = detail::Where::current()) const {
    return data_ + offset(coord, w);
  }

 private:
  detail::Ref<T> at(std::initializer_list<Operand<int32_t>> coord, detail::Where w) const {
    return *(data_ + offset(coord, w));
  }
  Operand<int32_t> offset(std::initializer_list<Operand<int32_t>> coord, detail::Where w) const {
    if (int(coord.size()) != rank_)
      detail::fail("a rank-" + std::to_string(rank_) + " tensor is indexed with " + std::to_string(coord.size()) +
                       " coordinate(s); give one per mode",
                   w);
    const Operand<int32_t>* c = coord.begin();
    Int off = Operand<int32_t>(c[0]) * Operand<int32_t>(stride_[0], w);
    for (int i = 1; i < rank_; ++i) off = Operand<int32_t>(off, w) + Operand<int32_t>(c[i]) * Operand<int32_t>(stride_[i], w);
    return Operand<int32_t>(off, w);
  }

  Pointer<T> data_;
  int rank_ = 0;
  std::array<Int, max_tensor_rank> shape_{};
  std::array<Int, max_tensor_rank> stride_{};
};

template <Element T>
Int size(const Tensor<T>& t, detail::Where w = detail::Where::current()) { return t.size(w); }

}  // namespace cutejit
