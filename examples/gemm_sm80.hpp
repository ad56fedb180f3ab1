// Named kernels of cutejit/kernels/gemm/sm80.hpp, their launches and their checks.
#pragma once

#include "cutejit/kernels/gemm/sm80.hpp"

#include "gemm_bf16.hpp"


namespace examples {
using namespace cutejit;

namespace gemm {
/// gemm_tensorop_{inputs}_{output}_{tile}_s{stages}, e.g. gemm_tensorop_bf16_bf16_128x128_s3.
template <class Op, Element Out, gemm_sm80::Config C>
std::string kernel_name() {
  std::string in(name(dtype_v<typename Op::ElementA>));
  if (Op::name().find(".tf32.") != std::string::npos) in = "tf32";
  if (!std::is_same_v<typename Op::ElementA, typename Op::ElementB>) in += "_" + std::string(name(dtype_v<typename Op::ElementB>));
  return "gemm_tensorop_" + in + "_" + std::string(name(dtype_v<Out>)) + "_" + std::to_string(C.tile_m) + "x" + std::to_string(C.tile_n) + "_s" +
         std::to_string(C.stages);
}
}  // namespace gemm

/// The multistage GEMM for one mma.sync atom and output type, with the tiles of `C`.
template <class Op, Element Out, gemm_sm80::Config C = gemm_sm80::Config{}>
inline auto gemm_tensorop = Kernel{
    gemm::kernel_name<Op, Out, C>(),
    [](Tensor<typename Op::ElementA> a, Tensor<typename Op::ElementB> b, Tensor<Out> c) { gemm_sm80::kernel<Op, Out, C>(a, b, c); }};

/// The launch of C (m x n, row-major) = A * B on device buffers, A and B laid out as `a_major`
/// and `b_major` say (gemm_sm80::operand_view), the shape checked.
template <class Op, Element Out>
PreparedLaunch gemm_tensorop_prepare(const Device& gpu, const Buffer<typename Op::ElementA>& a, const Buffer<typename Op::ElementB>& b,
                                     const Buffer<Out>& c, int64_t m, int64_t n, int64_t k, gemm_sm80::Major a_major = gemm_sm80::Major::k,
                                     gemm_sm80::Major b_major = gemm_sm80::Major::k, detail::Where w = detail::Where::current()) {
  gemm_sm80::check_shape(gemm_tensorop<Op, Out>.name(), m, n, k, int(sizeof(typename Op::ElementA)), a_major, b_major, w);
  return gemm_tensorop<Op, Out>.prepare(gpu, gemm_sm80::launch<typename Op::ElementA>(m, n, gemm_sm80::Config{}),
                                        gemm_sm80::operand_view(a, m, k, a_major), gemm_sm80::operand_view(b, n, k, b_major), c.view({m, n}));
}

/// BF16 in, f32 accumulation, BF16 out, on SM80_16x8x16_F32BF16BF16F32_TN, with the tiles of `C`.
template <gemm_sm80::Config C>
inline auto& gemm_tensorop_bf16_config = gemm_tensorop<SM80_16x8x16_F32BF16BF16F32_TN, bf16, C>;
inline auto& gemm_tensorop_bf16 = gemm_tensorop<SM80_16x8x16_F32BF16BF16F32_TN, bf16>;

/// The launch of C = A * B^T on device buffers (A: m x k, B: n x k, C: m x n, all row-major), its shape checked.
inline PreparedLaunch gemm_tensorop_bf16_prepare(const Device& gpu, const Buffer<bf16>& a, const Buffer<bf16>& b, const Buffer<bf16>& c,
                                                 int64_t m, int64_t n, int64_t k, detail::Where w = detail::Where::current()) {
  return gemm_tensorop_prepare<SM80_16x8x16_F32BF16BF16F32_TN, bf16>(gpu, a, b, c, m, n, k, gemm_sm80::Major::k, gemm_sm80::Major::k, w);
}

inline void gemm_tensorop_bf16_run(const Device& gpu, const Buffer<bf16>& a, const Buffer<bf16>& b, const Buffer<bf16>& c, int64_t m,
                                   int64_t n, int64_t k, detail::Where w = detail::Where::current()) {
  gemm_tensorop_bf16_prepare(gpu, a, b, c, m, n, k, w)();
}

namespace gemm {
/// Random host operands of type T: uniform in [-1, 1) for floats, every value for 8-bit integers.
template <Element T>
std::vector<T> random_operand(size_t n, unsigned seed) {
  if constexpr (std::is_integral_v<T>) {
    std::vector<T> v;
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> dist(std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
    for (size_t i = 0; i < n; ++i) v.push_back(T(dist(rng)));
    return v;
  } else {
    return random_values<T>(n, seed);
  }
}
/// An m x n output no kernel writes by accident: NaN, or the most negative int32.
template <Element Out>
std::vector<Out> poisoned(int64_t m, int64_t n) {
  if constexpr (std::is_integral_v<Out>) return std::vector<Out>(size_t(m * n), std::numeric_limits<Out>::min());
  else return std::vector<Out>(size_t(m * n), Out(NAN));
}
/// The float64 product of operands of any two element types (each exact in a float).
template <Element TA, Element TB>
std::vector<double> reference(const std::vector<TA>& a, const std::vector<TB>& b, int64_t m, int64_t n, int64_t k, gemm_sm80::Major a_major,
                              gemm_sm80::Major b_major) {
  auto floats = [](const auto& x) {
    std::vector<float> f;
    for (auto v : x) f.push_back(float(v));
    return f;
  };
  auto major = [](gemm_sm80::Major x) { return x == gemm_sm80::Major::k ? WgmmaMajor::k : WgmmaMajor::mn; };
  return gemm::reference(floats(a), floats(b), m, n, k, major(a_major), major(b_major));
}
}  // namespace gemm

/// C = A * B on the atom `Op` with output type Out, A and B of the given majors, against a
/// float64 product of random operands; cross-compiles for every mma.sync target with the kind.
template <class Op, Element Out>
Example gemm_tensorop_example(int64_t m, int64_t n, int64_t k, gemm_sm80::Major a_major = gemm_sm80::Major::k,
                              gemm_sm80::Major b_major = gemm_sm80::Major::k, unsigned seed = 21) {
  using TA = typename Op::ElementA;
  using TB = typename Op::ElementB;
  const bool exact = std::is_integral_v<Out>;
  std::vector<const char*> targets = {"sm_80", "sm_86", "sm_89", "sm_90a", "sm_120a"};
  if (std::is_same_v<TA, f8e4m3> || std::is_same_v<TA, f8e5m2>) targets = {"sm_89", "sm_90a", "sm_120a"};
  return {gemm_tensorop<Op, Out>.name().c_str(),
          [=](const Device& gpu) {
            auto ha = gemm::random_operand<TA>(size_t(m * k), seed), hb = gemm::random_operand<TB>(size_t(n * k), seed + 1);
            auto a = gpu.upload(ha), b = gpu.upload(hb);
            auto c = gpu.upload(gemm::poisoned<Out>(m, n));
            gemm_tensorop_prepare<Op, Out>(gpu, a, b, c, m, n, k, a_major, b_major)();
            gpu.synchronize();
            return gemm::error(gemm::to_floats(c), gemm::reference(ha, hb, m, n, k, a_major, b_major));
          },
          [=](const Target& t) {
            auto make = [](auto type_tag, int64_t rows, int64_t cols, gemm_sm80::Major major) {
              using T = decltype(type_tag);
              auto stride = major == gemm_sm80::Major::k ? std::array<int64_t, 2>{cols, 1} : std::array<int64_t, 2>{1, rows};
              return DeviceTensor<T>::make(256, std::array<int64_t, 2>{rows, cols}, stride);
            };
            return gemm_tensorop<Op, Out>.compile(t, make(TA{}, m, k, a_major), make(TB{}, n, k, b_major),
                                                  make(Out{}, m, n, gemm_sm80::Major::k));
          },
          // 16-bit outputs round to about 2^-9; TF32 inputs keep 10 mantissa bits; INT8 is exact.
          exact ? 0.0 : 1e-2,
          targets};
}

inline Example gemm_tensorop_bf16_example(int64_t m = 300, int64_t n = 200, int64_t k = 520) {
  return gemm_tensorop_example<SM80_16x8x16_F32BF16BF16F32_TN, bf16>(m, n, k);
}

}  // namespace examples
