/** \file
 * The parameter protocol of `Kernel`: for each kind of kernel parameter (`Tensor<T>`,
 * `Value<T>`, `Constexpr<T>`, `TmaDescriptor<T>`) how a host argument is checked, which
 * specialization words it adds to the key, how it is packed for the launch, and how the
 * tracer sees it. The words' encodings are in specialization.hpp.
 */
#pragma once

#include <bit>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "cutejit/atom/sm90/tma.hpp"
#include "cutejit/core/kernel_abi.hpp"
#include "cutejit/dsl/constexpr.hpp"
#include "cutejit/jit/specialization.hpp"
#include "cutejit/runtime/buffer.hpp"
#include "cutejit/runtime/tensor_map.hpp"
#include "cutejit/tensor/tensor.hpp"

namespace cutejit::detail {

/// How a kernel parameter type is specialized, packed and traced. One specialization per
/// kind of parameter; `accepts<A>` says which host arguments it takes, `well_formed` whether
/// words read from a manifest can be this parameter's.
template <class P> struct KernelParam {
  static_assert(sizeof(P) == 0, "a kernel parameter must be Tensor<T>, Value<T> (F32, Int, ...), Constexpr<T> or TmaDescriptor<T>");
};

template <Element T>
struct KernelParam<Tensor<T>> {
  template <class A> static constexpr bool accepts = std::is_convertible_v<A, DeviceTensor<T>>;
  template <size_t argument_index, class argument_type>
  static constexpr bool accept() {
    static_assert(accepts<argument_type>, "a kernel argument does not match its parameter's type: a Tensor<T> parameter takes a "
                                          "Buffer<T> or DeviceTensor<T> of the same element type T (the argument's index, from 0, "
                                          "and type are in the 'with' line above)");
    return accepts<argument_type>;
  }

  static constexpr uint64_t header = param_word(ParamKind::tensor, dtype_v<T>);
  /// A word `specialize` could have written: rank 1..4, facts up to 16, no stray bits.
  static bool well_formed(const uint64_t* w) {
    const TensorFacts f = TensorFacts::decode(*w);
    bool ok = f.rank >= 1 && f.rank <= TensorFacts::max_rank && f.alignment_log2 <= 4 && f.encode(dtype_v<T>) == *w;
    for (int i = 0; ok && i < f.rank; ++i) ok = f.shape_log2[i] <= 4 && f.stride_log2[i] <= 4;
    return ok;
  }
  static void specialize(const DeviceTensor<T>& a, Key& key) {
    TensorFacts f;
    f.rank = a.rank;
    f.alignment_log2 = a.ptr ? std::min(4, std::countr_zero(a.ptr)) : 4;
    for (int i = 0; i < a.rank; ++i) {
      f.unit_stride[i] = a.stride[i] == 1;
      f.shape_log2[i] = TensorFacts::divisibility_log2(a.shape[i]);
      f.stride_log2[i] = TensorFacts::divisibility_log2(a.stride[i]);
    }
    key.push(f.encode(dtype_v<T>));
  }
  static void check(const DeviceTensor<T>& a, const std::string& kernel, int index) {
    if (a.ptr == 0) argument_error(kernel, index, "is a null pointer");
    if (a.ptr % sizeof(T) != 0)
      argument_error(kernel, index, "is not aligned to its element size (" + std::to_string(sizeof(T)) + " bytes)");
  }
  static void pack(const DeviceTensor<T>& a, ParamBuffer& p) {
    p.put(a.ptr);
    for (int i = 0; i < a.rank; ++i) p.put(int32_t(a.shape[i]));
    for (int i = 0; i < a.rank; ++i) p.put(int32_t(a.stride[i]));
  }
  static void flatten(const uint64_t*& w, std::vector<FlatParam>& out) {
    int rank = TensorFacts::decode(*w++).rank;
    out.push_back({dtype_v<T>, true});
    for (int i = 0; i < 2 * rank; ++i) out.push_back({DType::i32, false});
  }
  /// Shapes and strides are traced Ints carrying their specialized divisibility; a unit
  /// stride is a static 1. A rank-1 tensor has a leaf layout (n:1), as CuTe's make_layout(n).
  static Tensor<T> trace(const uint64_t*& w, int& flat) {
    const TensorFacts f = TensorFacts::decode(*w++);
    Where here = Where::current();
    auto dynamic = [&](int log2) -> IntTuple {
      Int v(argument(flat++, here));
      return log2 > 0 ? assume_divisible(v, int64_t(1) << log2, here) : v;
    };
    Pointer<T> data(assume_pointer_alignment(argument(flat++, here), int64_t(1) << f.alignment_log2));
    std::vector<IntTuple> shape, stride;
    for (int i = 0; i < f.rank; ++i) shape.push_back(dynamic(f.shape_log2[i]));
    for (int i = 0; i < f.rank; ++i) {
      IntTuple s = dynamic(f.stride_log2[i]);
      stride.push_back(f.unit_stride[i] ? IntTuple(1) : s);
    }
    if (f.rank == 1) return Tensor<T>(data, Layout(shape[0], stride[0]));
    return Tensor<T>(data, Layout(IntTuple(std::move(shape)), IntTuple(std::move(stride))));
  }
};

template <Element T>
struct KernelParam<Value<T>> {
  template <class A> static constexpr bool accepts =
      std::is_same_v<A, T> || (std::is_arithmetic_v<A> && std::is_arithmetic_v<T> && std::is_convertible_v<A, T>);
  template <size_t argument_index, class argument_type>
  static constexpr bool accept() {
    static_assert(accepts<argument_type>, "a kernel argument does not match its parameter's type: a Value<T> parameter takes a host "
                                          "number convertible to T (the argument's index, from 0, and type are in the 'with' line above)");
    return accepts<argument_type>;
  }
  static constexpr uint64_t header = param_word(ParamKind::scalar, dtype_v<T>);
  static bool well_formed(const uint64_t*) { return true; }
  static void specialize(const T&, Key& key) { key.push(header); }
  static void check(const T&, const std::string&, int) {}
  static void pack(const T& a, ParamBuffer& p) { p.put(a); }
  static void flatten(const uint64_t*& w, std::vector<FlatParam>& out) { ++w, out.push_back({dtype_v<T>, false}); }
  static Value<T> trace(const uint64_t*& w, int& flat) { ++w; return Value<T>(argument(flat++, Where::current())); }
};

template <class T>
struct KernelParam<Constexpr<T>> {
  template <class A> static constexpr bool accepts = std::is_convertible_v<A, T>;
  template <size_t argument_index, class argument_type>
  static constexpr bool accept() {
    static_assert(accepts<argument_type>, "a kernel argument does not match its parameter's type: a Constexpr<T> parameter takes a "
                                          "host value convertible to T (the argument's index, from 0, and type are in the 'with' line "
                                          "above)");
    return accepts<argument_type>;
  }
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 8, "a Constexpr holds a trivially copyable value of at most 8 bytes");
  static constexpr uint64_t header = param_word(ParamKind::constant, DType::i64);
  /// The value's size and kind in the first word, so that words recorded for a Constexpr of
  /// another type are not read as this one.
  static constexpr uint64_t type_tag =
      uint64_t(sizeof(T)) << 40 | uint64_t(std::is_floating_point_v<T>) << 39 | uint64_t(std::is_same_v<T, bool>) << 38;
  static bool well_formed(const uint64_t* w) {
    if ((w[0] & ~param_header_mask) != type_tag) return false;
    if constexpr (std::is_same_v<T, bool>) return w[1] <= 1;
    else if constexpr (sizeof(T) < 8) return (w[1] >> (8 * sizeof(T))) == 0;
    else return true;
  }
  static void specialize(const T& a, Key& key) {
    key.push(header | type_tag);
    uint64_t bits = 0;
    std::memcpy(&bits, &a, sizeof(T));
    key.push(bits);
  }
  /// A host number must be a value of the Constexpr's type: 300 is not an int8_t, 2.5 not an int.
  template <class A>
  static void check_range(const A& a, const std::string& kernel, int index) {
    if constexpr (std::is_arithmetic_v<A> && std::is_integral_v<T> && !std::is_same_v<T, bool> && !std::is_same_v<A, bool>) {
      bool fits;
      if constexpr (std::is_integral_v<A>) fits = std::in_range<T>(a);
      else fits = a == std::trunc(a) && a >= double(std::numeric_limits<T>::min()) && a <= double(std::numeric_limits<T>::max());
      if (!fits)
        argument_error(kernel, index,
                       "is " + std::to_string(a) + ", which its Constexpr's type does not hold (integers from " +
                           std::to_string(std::numeric_limits<T>::min()) + " to " + std::to_string(std::numeric_limits<T>::max()) + ")");
    }
  }
  static void check(const T&, const std::string&, int) {}
  static void pack(const T&, ParamBuffer&) {}
  static void flatten(const uint64_t*& w, std::vector<FlatParam>&) { w += 2; }
  static Constexpr<T> trace(const uint64_t*& w, int&) {
    T v;
    std::memcpy(&v, w + 1, sizeof(T));
    w += 2;
    return Constexpr<T>{v};
  }
};

/// Specialized on element type, rank, box and swizzle (the words of TensorMapFacts); packed as
/// the 128 encoded bytes.
template <Element T>
struct KernelParam<TmaDescriptor<T>> {
  template <class A> static constexpr bool accepts = std::is_same_v<A, TensorMap<T>>;
  template <size_t argument_index, class argument_type>
  static constexpr bool accept() {
    static_assert(accepts<argument_type>, "a kernel argument does not match its parameter's type: a TmaDescriptor<T> parameter takes "
                                          "a TensorMap<T> of the same element type T, from make_tensor_map (the argument's index, from "
                                          "0, and type are in the 'with' line above)");
    return accepts<argument_type>;
  }

  static constexpr uint64_t header = param_word(ParamKind::tensor_map, dtype_v<T>);
  /// Words `specialize` could have written: rank 1..5, a real swizzle, no stray bits.
  static bool well_formed(const uint64_t* w) {
    const TensorMapFacts f = TensorMapFacts::decode(w);
    int s = f.swizzle_bytes;
    if (f.rank < 1 || f.rank > TensorMapFacts::max_rank || !(s == 0 || s == 32 || s == 64 || s == 128)) return false;
    TensorMapFacts::Words again = f.encode(dtype_v<T>);
    return again.first == w[0] && again.box == w[1];
  }
  static void specialize(const TensorMap<T>& m, Key& key) {
    TensorMapFacts f;
    f.rank = m.shape.rank;
    f.swizzle_bytes = int(m.shape.swizzle);
    for (int i = 0; i < f.rank; ++i) f.box[i] = m.shape.box[size_t(i)];
    TensorMapFacts::Words words = f.encode(dtype_v<T>);
    key.push(words.first);
    key.push(words.box);
  }
  static void check(const TensorMap<T>& m, const std::string& kernel, int index) {
    if (!m.encoded)
      argument_error(kernel, index, "is a tensor map made only for compiling (TensorMap::for_compile); launch with make_tensor_map");
  }
  static void pack(const TensorMap<T>& m, ParamBuffer& p) { p.put(m.bits); }
  static void flatten(const uint64_t*& w, std::vector<FlatParam>& out) {
    w += 2;
    out.push_back({dtype_v<T>, true, int(sizeof(typename TensorMap<T>::Bits))});
  }
  static TmaDescriptor<T> trace(const uint64_t*& w, int& flat) {
    const TensorMapFacts f = TensorMapFacts::decode(w);
    TensorMapShape s;
    s.element = dtype_v<T>;
    s.rank = f.rank;
    s.swizzle = TmaSwizzle(f.swizzle_bytes);
    for (int i = 0; i < s.rank; ++i) s.box[size_t(i)] = f.box[i];
    w += 2;
    return TmaDescriptor<T>(tensor_map_argument(flat++, Where::current()), s);
  }
};

}  // namespace cutejit::detail
