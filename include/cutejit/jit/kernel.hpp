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

#include "cutejit/jit/dynamic_arg.hpp"
#include "cutejit/jit/kernel_core.hpp"
#include "cutejit/jit/kernel_param.hpp"
#include "cutejit/jit/prepared_launch.hpp"
#include "cutejit/runtime/device.hpp"

namespace cutejit {

namespace detail {

/// The C++ spelling of a Constexpr's value type, for exported launch functions; empty for
/// other parameters and for values that are not numbers, bools or enums.
template <class P> std::string constant_type_name_of_value() {
  if constexpr (std::is_enum_v<P>) return constant_type_name_of_value<std::underlying_type_t<P>>();
  else if constexpr (std::is_same_v<P, bool>) return "bool";
  else if constexpr (std::is_same_v<P, float>) return "float";
  else if constexpr (std::is_same_v<P, double>) return "double";
  else if constexpr (std::is_integral_v<P>) return (std::is_signed_v<P> ? "int" : "uint") + std::to_string(8 * sizeof(P)) + "_t";
  else return "";
}
template <class T> struct ConstantTypeName { static std::string get() { return ""; } };
template <class T> struct ConstantTypeName<Constexpr<T>> { static std::string get() { return constant_type_name_of_value<T>(); } };

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

/// The host argument a DynamicArg becomes for a parameter of type P, checked as a C++
/// argument of that type would be.
/// Parameters of other kinds (a TmaDescriptor, a Constexpr of a struct or enum) have no
/// run-time-typed form: a kernel with one cannot be launched that way.
template <class P> struct FromDynamic {
  static constexpr bool supported = false;
};
template <Element T> struct FromDynamic<Tensor<T>> {
  static constexpr bool supported = true;
  static DeviceTensor<T> convert(const DynamicArg& a, const std::string& kernel, int index) {
    if (a.kind != DynamicArg::Kind::tensor) argument_error(kernel, index, "is " + a.describe() + ", where the kernel takes a tensor");
    if (a.dtype != dtype_v<T>)
      argument_error(kernel, index, "is " + a.describe() + ", where the kernel takes a " + std::string(name(dtype_v<T>)) + " tensor");
    return DeviceTensor<T>::make(a.ptr, std::span<const int64_t>(a.shape.data(), size_t(a.rank)),
                                 std::span<const int64_t>(a.stride.data(), size_t(a.rank)));
  }
};
/// A number for a parameter of type T: integers must fit (bool takes 0 and 1), floats take
/// integers and floats.
template <class T>
T number_from_dynamic(const DynamicArg& a, const std::string& kernel, int index) {
  if (a.kind == DynamicArg::Kind::tensor) argument_error(kernel, index, "is " + a.describe() + ", where the kernel takes a number");
  if constexpr (std::is_same_v<T, bool>) {
    if (a.kind != DynamicArg::Kind::integer || (a.integer != 0 && a.integer != 1))
      argument_error(kernel, index, "is " + a.describe() + ", where the kernel takes a bool (0 or 1)");
    return a.integer == 1;
  } else if constexpr (std::is_integral_v<T>) {
    if (a.kind == DynamicArg::Kind::real) argument_error(kernel, index, "is " + a.describe() + ", where the kernel takes an integer");
    if (!std::in_range<T>(a.integer)) argument_error(kernel, index, "is " + a.describe() + ", which the parameter's type does not hold");
    return T(a.integer);
  } else if constexpr (std::is_arithmetic_v<T>) {
    return a.kind == DynamicArg::Kind::real ? T(a.real) : T(a.integer);
  } else {  // f16, bf16: rounded from the float
    return T(float(a.kind == DynamicArg::Kind::real ? a.real : double(a.integer)));
  }
}
template <class T>
inline constexpr bool dynamic_number = std::is_arithmetic_v<T> || std::is_same_v<T, f16> || std::is_same_v<T, bf16>;
template <Element T>
  requires dynamic_number<T>
struct FromDynamic<Value<T>> {
  static constexpr bool supported = true;
  static T convert(const DynamicArg& a, const std::string& kernel, int index) { return number_from_dynamic<T>(a, kernel, index); }
};
template <class T>
  requires dynamic_number<T>
struct FromDynamic<Constexpr<T>> {
  static constexpr bool supported = true;
  static T convert(const DynamicArg& a, const std::string& kernel, int index) { return number_from_dynamic<T>(a, kernel, index); }
};

}  // namespace detail

template <class F>
class Kernel {
  using Params = typename detail::Signature<F>::params;
  static constexpr size_t arity = std::tuple_size_v<Params>;

 public:
  Kernel(std::string name, F body, std::source_location where = std::source_location::current())
      : core_(std::move(name), where), body_(std::move(body)) {}

  const std::string& name() const { return core_.name(); }
  std::source_location defined_at() const { return core_.defined_at(); }

  /// Launches on `device`; the first launch of a specialization traces and compiles it.
  template <class... Args>
  void operator()(const Device& device, const Launch& cfg, const Args&... args) {
    detail::ParamBuffer params;
    const detail::LoadedFunction& f = resolve(device, params, args...);
    core_.launch(f, device, cfg, params);
  }

  /// Launches with arguments typed at run time (a registered kernel called from Python): each
  /// is converted to its parameter's host type and checked as a C++ argument would be.
  void launch_dynamic(const Device& device, const Launch& cfg, std::span<const DynamicArg> args) {
    if (args.size() != arity)
      throw Error("kernel '" + core_.name() + "' takes " + std::to_string(arity) + " arguments, not " + std::to_string(args.size()),
                  core_.defined_at());
    launch_converted(device, cfg, args, std::make_index_sequence<arity>{});
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

  /// The specialization these arguments select, as data (see specialization.hpp).
  template <class... Args>
  Specialization specialization(const Args&... args) const {
    check_arity<Args...>();
    detail::Key key;
    specialize_all(key, std::index_sequence_for<Args...>{}, args...);
    return {core_.name(), std::vector<uint64_t>(key.words.begin(), key.words.begin() + key.size), ""};
  }

  /// Traces and compiles a specialization recorded earlier (a manifest's entry), for any
  /// target. Throws cutejit::Error when its words are not this kernel's parameters.
  CompiledKernel compile(const Target& target, const Specialization& s) const {
    if (s.kernel != core_.name())
      throw Error("error: a specialization of kernel '" + s.kernel + "' cannot be compiled by kernel '" + core_.name() + "'");
    if (!words_fit(s.words.data(), s.words.data() + s.words.size(), std::make_index_sequence<arity>{}))
      throw Error("error: a recorded specialization of kernel '" + core_.name() +
                      "' does not match the kernel's parameters; it was recorded from another version of the kernel. "
                      "Record the manifest again (CUTEJIT_RECORD=FILE) with this build",
                  core_.defined_at());
    detail::Key key;
    for (uint64_t w : s.words) key.push(w);
    return core_.compile(target, [&] { trace(key); });
  }

  /// Per parameter, the C++ type of a Constexpr's value; empty for other parameters.
  static std::vector<std::string> constant_types() {
    return constant_types_of(std::make_index_sequence<arity>{});
  }

 private:
  template <size_t... I>
  void launch_converted(const Device& device, const Launch& cfg, std::span<const DynamicArg> args, std::index_sequence<I...>) {
    if constexpr ((detail::FromDynamic<std::tuple_element_t<I, Params>>::supported && ...)) {
      // A braced list converts left to right, so the first bad argument is the one reported.
      std::tuple converted{detail::FromDynamic<std::tuple_element_t<I, Params>>::convert(args[I], core_.name(), int(I))...};
      std::apply([&](const auto&... a) { (*this)(device, cfg, a...); }, converted);
    } else {
      int first = -1;
      ((first < 0 && !detail::FromDynamic<std::tuple_element_t<I, Params>>::supported ? first = int(I) : 0), ...);
      throw Error("kernel '" + core_.name() + "' cannot be launched with run-time-typed arguments (from Python): its parameter " +
                      std::to_string(first) + " has no run-time form (only Tensor<T>, Value<T> and Constexpr<T> of a number do)",
                  core_.defined_at());
    }
  }
  template <size_t... I>
  static bool words_fit(const uint64_t* w, const uint64_t* end, std::index_sequence<I...>) {
    auto one = [&]<class P>(std::type_identity<P>) {
      int n = detail::param_words(detail::param_kind(P::header));
      bool ok = end - w >= n && (w[0] & detail::param_header_mask) == P::header && P::well_formed(w);
      if (ok) w += n;
      return ok;
    };
    return (one(std::type_identity<detail::KernelParam<std::tuple_element_t<I, Params>>>{}) && ...) && w == end;
  }
  template <size_t... I>
  static std::vector<std::string> constant_types_of(std::index_sequence<I...>) {
    return {detail::ConstantTypeName<std::tuple_element_t<I, Params>>::get()...};
  }

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
  void specialize_one(detail::Key& key, const A& a) const {
    using P = detail::KernelParam<std::tuple_element_t<I, Params>>;
    // A mismatch is one static_assert naming the parameter, the argument's index and its type;
    // nothing else is compiled for it, so no conversion errors follow.
    if constexpr (P::template accept<I, A>()) {
      // Before the conversion to the parameter's type, which would narrow silently.
      if constexpr (requires { P::check_range(a, std::string(), 0); }) P::check_range(a, core_.name(), int(I));
      P::specialize(a, key);
    }
  }

  template <size_t... I, class... Args>
  void check_and_pack(detail::ParamBuffer& params, std::index_sequence<I...>, const Args&... args) const {
    (pack_one<I>(params, args), ...);
  }
  template <size_t I, class A>
  void pack_one(detail::ParamBuffer& params, const A& a) const {
    using P = detail::KernelParam<std::tuple_element_t<I, Params>>;
    if constexpr (P::template accepts<A>) {
      P::check(a, core_.name(), int(I));
      P::pack(a, params);
    }
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
