/** \file
 * Tensors that bring their own storage, and reinterpretation: make_rmem_tensor /
 * make_fragment_like allocate a per-thread register tile (an alloca that LLVM promotes to
 * registers when every index is static, as RegisterArray), make_smem_tensor a block's shared
 * tile (plain or swizzled), and recast views a tensor's memory as another element type.
 */
#pragma once

#include <bit>

#include "cutejit/tensor/tensor.hpp"

namespace cutejit {

namespace detail {
/// The number of elements a tensor of layout `l` needs (its cosize, static).
int64_t register_count(const Layout& l, Where w);
/// CuTe make_fragment_like of `l` (static shape needed): mode 0 compact column-major, the
/// other modes after it in their stride order; dynamic strides order after the static ones.
Layout fragment_layout(const Layout& l, Where w);
}  // namespace detail

/// A register tensor of this layout (shape static; usually compact).
template <Element T>
Tensor<T> make_rmem_tensor(const Layout& l, detail::Where w = detail::Where::current()) {
  return Tensor<T>(Pointer<T>(detail::register_array(dtype_v<T>, detail::register_count(l, w), w)), l);
}
/// A compact column-major register tensor of this shape.
template <Element T>
Tensor<T> make_rmem_tensor(const IntTuple& shape, detail::Where w = detail::Where::current()) {
  return make_rmem_tensor<T>(make_layout(shape), w);
}
/// A register tensor for a thread's copy of its partition `t`, laid out as CuTe's
/// make_fragment_like(t.layout()): mode 0 column-major, then the other modes in t's stride
/// order ((4,8):(8,1) gives (4,(8)):(1,(4))). Element type U (default: t's).
template <Element U, Element T>
Tensor<U> make_fragment_like(const Tensor<T>& t, detail::Where w = detail::Where::current()) {
  return make_rmem_tensor<U>(detail::fragment_layout(t.layout(), w), w);
}
template <Element T>
Tensor<T> make_fragment_like(const Tensor<T>& t, detail::Where w = detail::Where::current()) {
  return make_rmem_tensor<T>(detail::fragment_layout(t.layout(), w), w);
}

/// Every element of a tensor of static size = v (CuTe fill; clear is fill with 0).
template <Element T>
void fill(const Tensor<T>& t, const std::type_identity_t<Operand<T>>& v) {
  Integer n = cutejit::size(t.layout());
  if (!n.is_static()) detail::fail("fill needs a tensor of static size, not " + to_string(t.layout()), v.where);
  for (int64_t i = 0; i < n.value(); ++i) t(IntTuple(i), v.where) = Value<T>(v.id);
}
template <Element T>
void clear(const Tensor<T>& t, detail::Where w = detail::Where::current()) {
  Value<T> zero(is_floating_v<T> ? detail::constant_float(dtype_v<T>, 0.0, w) : detail::constant_int(dtype_v<T>, 0, w));
  fill(t, Operand<T>(zero, w));
}

/// A shared-memory tile of this layout (one per block).
template <Element T>
Tensor<T> make_smem_tensor(const Layout& l, detail::Where w = detail::Where::current()) {
  return Tensor<T>(shared_array<T>(detail::register_count(l, w), 16, w), l);
}
/// A swizzled shared-memory tile, e.g. composition(Swizzle(3, 2, 3), (32,32):(32,1)) for a
/// float transpose tile with conflict-free rows and columns. The base is aligned to 1 KB so
/// that the swizzle's pattern lines up with the 32 banks.
template <Element T>
Tensor<T> make_smem_tensor(const ComposedLayout& l, detail::Where w = detail::Where::current()) {
  // The swizzle rewrites the bits of its zzz mask: offsets stay below cosize rounded up to them.
  int64_t period = int64_t(1) << std::bit_width(uint64_t(l.layout_a().zzz_mask()));
  int64_t n = (detail::register_count(l.layout_b(), w) + period - 1) / period * period;
  return make_tensor(shared_array<T>(n, 1024, w), l);
}

/// The same memory as elements of type U (CuTe recast), through recast_layout: 16 halves
/// 16:1 read as floats are 8:1; the strides must allow it (checked).
template <Element U, Element T>
Tensor<U> recast(const Tensor<T>& t, detail::Where w = detail::Where::current()) {
  if (t.swizzle()) detail::fail("recast of a swizzled tensor is not supported; recast the tensor before swizzling", w);
  return Tensor<U>(Pointer<U>(t.data().id()), recast_layout(t.layout(), int64_t(sizeof(T)) * 8, int64_t(sizeof(U)) * 8));
}

}  // namespace cutejit
