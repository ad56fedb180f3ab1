/** \file
 * A hand-written CUDA C++ `__device__` function called from a traced kernel.
 *
 *     const auto softplus = cuda_function<float(float)>("softplus", R"(
 *       __device__ float softplus(float x) { return x > 20.f ? x : log1pf(__expf(x)); }
 *     )");
 *     ... inside a kernel:  y(i) = softplus(x(i));
 *
 * The source is compiled by NVRTC (found at run time, like nvJitLink) for the kernel's target
 * and linked with the traced code by nvJitLink. `name` is any C++ expression that names a
 * callable in the source (`my_op`, `ns::op<float>`); a generated `extern "C"` wrapper calls it,
 * so overloads, templates and namespaces work and no name is mangled by hand. The wrapper
 * passes 8- and 16-bit values (f16, bf16 among them) widened to 32 bits, so the two compilers
 * never disagree on how a narrow parameter is passed. cuda_fp16.h and cuda_bf16.h are included
 * when the signature uses f16 or bf16, and the toolkit's include folder is on the path.
 *
 * NVRTC compiles the function separately: the kernel calls it (a CALL in SASS), it is not
 * inlined. docs/interop.md measures what the call costs.
 */
#pragma once

#include <array>
#include <string>
#include <tuple>
#include <vector>

#include "cutejit/dsl/value.hpp"

namespace cutejit {

namespace detail {
/// Everything the tracer needs to declare, call and later compile one CUDA function.
struct CudaFunctionSpec {
  std::string name;
  std::string source;
  std::vector<std::string> options;
  bool returns = false;
  DType result = DType::i32;
  std::vector<DType> params;
  Where declared;
};
/// Emits the call; returns the result (no value when the function returns void).
ValueId call_cuda_function(const CudaFunctionSpec& function, std::span<const ValueId> args, Where where);
}  // namespace detail

template <class Signature>
class CudaFunction;

template <class R, Element... Args>
  requires(std::is_void_v<R> || Element<R>)
class CudaFunction<R(Args...)> {
 public:
  CudaFunction(std::string name, std::string source, std::vector<std::string> options = {},
               detail::Where declared = detail::Where::current())
      : spec_{std::move(name), std::move(source), std::move(options), !std::is_void_v<R>, result_type(), {dtype_v<Args>...},
              declared} {}

  /// A call from inside a traced kernel. Operands convert as they do for arithmetic: C++
  /// numbers become constants, tensor elements and Vars are read.
  auto operator()(const Operand<Args>&... args) const {
    const std::array<detail::ValueId, sizeof...(Args)> ids{args.id...};
    detail::Where where = spec_.declared;
    if constexpr (sizeof...(Args) > 0) where = std::get<0>(std::forward_as_tuple(args...)).where;
    detail::ValueId result = detail::call_cuda_function(spec_, ids, where);
    if constexpr (!std::is_void_v<R>) return Value<R>(result);
  }

 private:
  static DType result_type() {
    if constexpr (std::is_void_v<R>)
      return DType::i32;
    else
      return dtype_v<R>;
  }
  detail::CudaFunctionSpec spec_;
};

/// `cuda_function<float(float, float)>("my_op", source, {"-use_fast_math"})`.
template <class Signature>
CudaFunction<Signature> cuda_function(std::string name, std::string source, std::vector<std::string> options = {},
                                      detail::Where declared = detail::Where::current()) {
  return CudaFunction<Signature>(std::move(name), std::move(source), std::move(options), declared);
}

}  // namespace cutejit
