/** \file
 * `Kernel{name, callable}`: a kernel is a C++ callable over traced parameters
 * (`Tensor<T>`, `Value<T>`, `Constexpr<T>`). Launching it with host arguments specializes it
 * (element types, ranks, alignment, unit strides, static values), traces and compiles that
 * specialization once, and afterwards goes straight from the arguments to cuLaunchKernelEx.
 */
#pragma once

#include <bit>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "cutejit/dsl/constexpr.hpp"
#include "cutejit/jit/kernel_core.hpp"
#include "cutejit/runtime/buffer.hpp"
#include "cutejit/runtime/device.hpp"
#include "cutejit/tensor/tensor.hpp"

namespace cutejit {

namespace detail {

enum class ParamKind : uint64_t { tensor = 1, scalar = 2, constant = 3, tensor_map = 4 };
constexpr uint64_t param_word(ParamKind k, DType t) { return uint64_t(k) << 56 | uint64_t(t) << 48; }

/// How a kernel parameter type is specialized, packed and traced. One specialization per
/// kind of parameter; `accepts<A>` says which host arguments it takes.
template <class P> struct KernelParam {
  static_assert(sizeof(P) == 0, "a kernel parameter must be Tensor<T>, Value<T> (F32, Int, ...), Constexpr<T> or TmaDescriptor<T>");
};

template <Element T>
struct KernelParam<Tensor<T>> {
  template <class A> static constexpr bool accepts = std::is_convertible_v<A, DeviceTensor<T>>;
  static constexpr const char* expects = "a Buffer<T> or DeviceTensor<T> of the kernel's element type";

  /// log2 of the power of two (at most 16) dividing a shape or stride: 3 bits of the key each.
  /// Knowing that sizes and strides are multiples of 4, 8 or 16 is what lets tiles of a tensor
  /// argument be proven aligned for vector accesses (as Triton's divisibility specialization).
  static uint64_t divisibility(int64_t x) { return x == 0 ? 4 : uint64_t(std::min(4, std::countr_zero(uint64_t(x)))); }
  static void specialize(const DeviceTensor<T>& a, Key& key) {
    int align_log2 = a.ptr ? std::min(4, std::countr_zero(a.ptr)) : 4;
    uint64_t unit = 0, div = 0;
    for (int i = 0; i < a.rank; ++i) unit |= uint64_t(a.stride[i] == 1) << i;
    for (int i = 0; i < a.rank; ++i) div |= (divisibility(a.shape[i]) | divisibility(a.stride[i]) << 3) << (8 + 6 * i);
    key.push(param_word(ParamKind::tensor, dtype_v<T>) | uint64_t(a.rank) << 40 | uint64_t(align_log2) << 32 | div | unit);
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
    int rank = int(*w++ >> 40 & 0xff);
    out.push_back({dtype_v<T>, true});
    for (int i = 0; i < 2 * rank; ++i) out.push_back({DType::i32, false});
  }
  /// Shapes and strides are traced Ints carrying their specialized divisibility; a unit
  /// stride is a static 1. A rank-1 tensor has a leaf layout (n:1), as CuTe's make_layout(n).
  static Tensor<T> trace(const uint64_t*& w, int& flat) {
    uint64_t word = *w++;
    int rank = int(word >> 40 & 0xff);
    int64_t alignment = int64_t(1) << (word >> 32 & 0xff);
    Where here = Where::current();
    auto known = [&](int i, int which) { return int64_t(1) << (word >> (8 + 6 * i + 3 * which) & 7); };
    auto dynamic = [&](int64_t divisor) -> IntTuple {
      Int v(argument(flat++, here));
      return divisor > 1 ? assume_divisible(v, divisor, here) : v;
    };
    Pointer<T> data(assume_pointer_alignment(argument(flat++, here), alignment));
    std::vector<IntTuple> shape, stride;
    for (int i = 0; i < rank; ++i) shape.push_back(dynamic(known(i, 0)));
    for (int i = 0; i < rank; ++i) {
      IntTuple s = dynamic(known(i, 1));
      stride.push_back((word >> i & 1) ? IntTuple(1) : s);
    }
    if (rank == 1) return Tensor<T>(data, Layout(shape[0], stride[0]));
    return Tensor<T>(data, Layout(IntTuple(std::move(shape)), IntTuple(std::move(stride))));
  }
};

template <Element T>
struct KernelParam<Value<T>> {
  template <class A> static constexpr bool accepts =
      std::is_same_v<A, T> || (std::is_arithmetic_v<A> && std::is_arithmetic_v<T> && std::is_convertible_v<A, T>);
  static constexpr const char* expects = "a host number convertible to the parameter's element type";
  static void specialize(const T&, Key& key) { key.push(param_word(ParamKind::scalar, dtype_v<T>)); }
  static void check(const T&, const std::string&, int) {}
  static void pack(const T& a, ParamBuffer& p) { p.put(a); }
  static void flatten(const uint64_t*& w, std::vector<FlatParam>& out) { ++w, out.push_back({dtype_v<T>, false}); }
  static Value<T> trace(const uint64_t*& w, int& flat) { ++w; return Value<T>(argument(flat++, Where::current())); }
};

template <class T>
struct KernelParam<Constexpr<T>> {
  template <class A> static constexpr bool accepts = std::is_convertible_v<A, T>;
  static constexpr const char* expects = "a host value convertible to the Constexpr's type";
  static void specialize(const T& a, Key& key) {
    key.push(param_word(ParamKind::constant, DType::i64));
    uint64_t bits = 0;
    std::memcpy(&bits, &a, sizeof(T));
    key.push(bits);
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

template <class F> struct Signature : Signature<decltype(&F::operator())> {};
template <class C, class R, class... Ps> struct Signature<R (C::*)(Ps...) const> {
  using params = std::tuple<std::decay_t<Ps>...>;
};
template <class C, class R, class... Ps> struct Signature<R (C::*)(Ps...)> {
  using params = std::tuple<std::decay_t<Ps>...>;
};
template <class R, class... Ps> struct Signature<R (*)(Ps...)> {
  using params = std::tuple<std::decay_t<Ps>...>;
};

}  // namespace detail

/// A launch whose specialization is resolved and whose parameters are packed: calling it
/// costs one cuLaunchKernelEx.
class PreparedLaunch {
 public:
  void operator()() const { core_->launch(*function_, *device_, config_, params_); }
  /// The same launch on another stream.
  void operator()(Stream stream) const {
    Launch cfg = config_;
    cfg.stream = stream;
    core_->launch(*function_, *device_, cfg, params_);
  }

 private:
  template <class F> friend class Kernel;
  const detail::KernelCore* core_ = nullptr;
  const detail::LoadedFunction* function_ = nullptr;
  const Device* device_ = nullptr;
  Launch config_;
  detail::ParamBuffer params_;
};

template <class F>
class Kernel {
  using Params = typename detail::Signature<F>::params;
  static constexpr size_t arity = std::tuple_size_v<Params>;

 public:
  Kernel(std::string name, F body, std::source_location where = std::source_location::current())
      : core_(std::move(name), where), body_(std::move(body)) {}

  const std::string& name() const { return core_.name(); }

  /// Launches on `device`; the first launch of a specialization traces and compiles it.
  template <class... Args>
  void operator()(const Device& device, const Launch& cfg, const Args&... args) {
    detail::ParamBuffer params;
    const detail::LoadedFunction& f = resolve(device, params, args...);
    core_.launch(f, device, cfg, params);
  }

  /// Resolves and packs once; the returned object launches with no lookup at all.
  template <class... Args>
  PreparedLaunch prepare(const Device& device, const Launch& cfg, const Args&... args) {
    PreparedLaunch p;
    p.function_ = &resolve(device, p.params_, args...);
    p.core_ = &core_;
    p.device_ = &device;
    p.config_ = cfg;
    return p;
  }

  /// Traces and compiles the specialization these arguments select, for any target, with no
  /// GPU needed. Tensor arguments may have null pointers here (16-byte alignment is assumed).
  template <class... Args>
  CompiledKernel compile(const Target& target, const Args&... args) const {
    check_arity<Args...>();
    detail::Key key;
    specialize_all(key, std::index_sequence_for<Args...>{}, args...);
    return core_.compile(target, [&] { trace(key); });
  }

 private:
  template <class... Args>
  static constexpr void check_arity() {
    static_assert(sizeof...(Args) == arity, "wrong number of kernel arguments: give one host argument per kernel parameter");
  }

  template <class... Args>
  const detail::LoadedFunction& resolve(const Device& device, detail::ParamBuffer& params, const Args&... args) {
    check_arity<Args...>();
    detail::Key key;
    specialize_all(key, std::index_sequence_for<Args...>{}, args...);
    check_and_pack(params, std::index_sequence_for<Args...>{}, args...);
    if (const detail::LoadedFunction* f = core_.find(key, device)) return *f;
    return core_.load(key, device, [&] { trace(key); });
  }

  template <size_t... I, class... Args>
  void specialize_all(detail::Key& key, std::index_sequence<I...>, const Args&... args) const {
    (specialize_one<I>(key, args), ...);
  }
  template <size_t I, class A>
  static void specialize_one(detail::Key& key, const A& a) {
    using P = detail::KernelParam<std::tuple_element_t<I, Params>>;
    static_assert(P::template accepts<A>, "a kernel argument does not match its parameter's type (see the parameter's `expects`)");
    P::specialize(a, key);
  }

  template <size_t... I, class... Args>
  void check_and_pack(detail::ParamBuffer& params, std::index_sequence<I...>, const Args&... args) const {
    (pack_one<I>(params, args), ...);
  }
  template <size_t I, class A>
  void pack_one(detail::ParamBuffer& params, const A& a) const {
    using P = detail::KernelParam<std::tuple_element_t<I, Params>>;
    P::check(a, core_.name(), int(I));
    P::pack(a, params);
  }

  void trace(const detail::Key& key) const {
    std::vector<detail::FlatParam> flat;
    const uint64_t* w = key.words.data();
    flatten_all(w, flat, std::make_index_sequence<arity>{});
    detail::define_parameters(flat);
    w = key.words.data();
    int index = 0;
    Params traced = trace_all(w, index, std::make_index_sequence<arity>{});
    std::apply(body_, traced);
  }
  template <size_t... I>
  static void flatten_all(const uint64_t*& w, std::vector<detail::FlatParam>& flat, std::index_sequence<I...>) {
    (detail::KernelParam<std::tuple_element_t<I, Params>>::flatten(w, flat), ...);
  }
  template <size_t... I>
  static Params trace_all(const uint64_t*& w, int& index, std::index_sequence<I...>) {
    // a braced list evaluates left to right, so parameters are traced in order
    return Params{detail::KernelParam<std::tuple_element_t<I, Params>>::trace(w, index)...};
  }

  detail::KernelCore core_;
  F body_;
};

}  // namespace cutejit
