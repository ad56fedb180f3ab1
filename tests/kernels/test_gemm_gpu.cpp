// kernels::gemm against a float64 product of the same bf16 (f16, FP8) operands, outputs
// poisoned: each majorness of A and B (TN, NN, NT, TT) at ragged shapes, each epilogue term (alpha, beta with
// C read in place, bias, every activation), strided operands; mistakes are errors at this
// file's lines with nothing written; the compile form builds each architecture's kernel with
// no GPU. The same cases run on every device: up to 8 rows of A take the small-M kernel, and
// otherwise on sm_90a the wgmma kernel, on the sm_100 family the tcgen05 one (the mma.sync one
// for MN-major operands), on sm_120a the mma.sync one ([sm100] and [sm120] run them on those
// emulated devices).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <optional>

#include <cutejit/cutejit.hpp>
#include <cutejit/kernels/gemm.hpp>
#include <cutejit/kernels/gemm_hook.hpp>

#include <nlohmann/json.hpp>

#include <cutejit/jit/autotune.hpp>

#include "kernel_test_values.hpp"
#include "support.hpp"
#include "unit/cache/cache_test_support.hpp"

using namespace cutejit;
using Catch::Contains;
using kernels::Activation;
using kernels::Major;
using test::random_values;
using test::value;

namespace {

/// An operand (rows, k) of T in memory as its majorness says: K-major rows of k (row stride
/// `lead`, at least k), or MN-major columns of `rows` (column stride `lead`, at least rows).
template <class T>
struct Operand {
  std::vector<T> host;  // the memory
  int64_t rows, k, lead;
  Major major;

  static Operand random(int64_t rows, int64_t k, Major major, int64_t pad, uint32_t seed, float sigma = 1.0f) {
    const int64_t lead = (major == Major::k ? k : rows) + pad;
    return {random_values<T>(size_t(lead * (major == Major::k ? rows : k)), seed, sigma), rows, k, lead, major};
  }
  double at(int64_t r, int64_t p) const { return value(host[size_t(major == Major::k ? r * lead + p : p * lead + r)]); }
  DeviceTensor<T> view(const Buffer<T>& memory) const {
    return major == Major::k ? memory.view({rows, k}, {lead, 1}) : memory.view({rows, k}, {1, lead});
  }
};

double activate(double x, Activation f) {
  switch (f) {
    case Activation::none: return x;
    case Activation::relu: return x > 0 ? x : 0;
    case Activation::silu: return x / (1 + std::exp(-x));
    case Activation::gelu_tanh: return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  }
  return x;
}

struct Case {
  int64_t m, n, k;
  Major a_major = Major::k, b_major = Major::k;
  float alpha = 1, beta = 0;
  bool bias = false;
  Activation activation = Activation::none;
  int64_t pad = 0;  // extra elements between the operands' rows (a stride past the extent)
  bool norm = false;  // rmsnorm_a, weights random around 1
  std::optional<Activation> glu;  // B's n rows are [W; V] and C has n / 2 columns
  bool tune = false;
  int scales = 0;  // in device memory: 1, one value for A and one for B; 2, one per row of A and of B
  int hook = 0;  // GemmOptions::hook: 1, v / 2 + (row - 2 col) / 64; 2, -v
};

/// The two hooks of Case::hook, made once: each is a kernel of its own.
std::shared_ptr<const kernels::GemmHook> hook_for(int which) {
  static const auto affine = kernels::make_gemm_hook(
      [](const F32& v, const Int& row, const Int& col) { return v * 0.5f + cast<float>(row - 2 * col) * 0.015625f; });
  static const auto negate = kernels::make_gemm_hook([](const F32& v, const Int&, const Int&) { return -v; });
  return which == 1 ? affine : negate;
}
double apply_hook(int which, double v, int64_t row, int64_t col) {
  return which == 1 ? v * 0.5 + double(row - 2 * col) / 64 : which == 2 ? -v : v;
}

/// Runs gemm on one case, A and B of TA and C of TC, and returns the largest error relative to
/// the largest |reference| (bf16 output: about 2^-9); a NaN left by an unwritten element makes
/// it infinite.
template <class TA = bf16, class TC = TA>
double run_case(const Device& gpu, const Case& c) {
  INFO(name(dtype_of<TA>::value) << " operands, " << c.m << " x " << c.n << " x " << c.k << ", A " << (c.a_major == Major::k ? "K" : "M") << "-major, B "
            << (c.b_major == Major::k ? "K" : "N") << "-major, alpha " << c.alpha << ", beta " << c.beta << ", bias " << c.bias
            << ", activation " << int(c.activation) << ", norm " << c.norm << ", glu " << (c.glu ? int(*c.glu) : -1));
  const int64_t n = c.glu ? c.n / 2 : c.n;  // C's columns
  // With the norm, A's rows have an RMS near 4, so that a norm not applied shows.
  auto a = Operand<TA>::random(c.m, c.k, c.a_major, c.pad, 1, c.norm ? 4.0f : 1.0f), b = Operand<TA>::random(c.n, c.k, c.b_major, c.pad, 2);
  const std::vector<TC> hbias = random_values<TC>(size_t(n), 3);
  std::vector<bf16> hweight = random_values<bf16>(size_t(c.k), 5);
  for (bf16& w : hweight) w = bf16(1.0f + float(w) / 4);
  const double eps = 1e-5;
  // With beta, C comes in with values; without, poisoned (it must not be read).
  const std::vector<TC> hc = c.beta != 0 ? random_values<TC>(size_t(c.m * n), 4) : std::vector<TC>(size_t(c.m * n), TC(NAN));
  auto da = gpu.upload(a.host), db = gpu.upload(b.host), dbias = gpu.upload(hbias), dc = gpu.upload(hc), dweight = gpu.upload(hweight);
  kernels::GemmOptions options{.alpha = c.alpha, .beta = c.beta, .activation = c.activation, .glu = c.glu, .tune = c.tune};
  if constexpr (!std::is_same_v<TC, f8e4m3>)  // an FP8 C takes no bias
    if (c.bias) options.bias = dbias.view({n});
  // Scales between 1/4 and 4, powers of two apart from 1 so that a missing or misplaced one shows.
  std::vector<float> scale_a(size_t(c.scales == 2 ? c.m : 1)), scale_b(size_t(c.scales == 2 ? n : 1));
  for (size_t i = 0; i < scale_a.size(); ++i) scale_a[i] = std::ldexp(1.0f, int(i % 5) - 2) * (i % 2 ? 1.5f : 1.0f);
  for (size_t j = 0; j < scale_b.size(); ++j) scale_b[j] = std::ldexp(1.0f, 2 - int(j % 5)) * (j % 3 ? 1.25f : 1.0f);
  auto dscale_a = gpu.upload(scale_a), dscale_b = gpu.upload(scale_b);
  if (c.scales) options.scales = kernels::GemmScales{dscale_a.view({int64_t(scale_a.size())}), dscale_b.view({int64_t(scale_b.size())})};
  if (c.norm) options.rmsnorm_a = kernels::RmsNorm{dweight.view({c.k}), float(eps)};
  if (c.hook) options.hook = hook_for(c.hook);
  kernels::gemm(gpu, a.view(da), b.view(db), dc.view({c.m, n}), options);
  gpu.synchronize();
  const std::vector<TC> got = dc.to_host();
  double worst = 0, largest = 0;
  for (int64_t i = 0; i < c.m; ++i) {
    // A's row i as the product reads it: normalised, in float64, when the norm is fused.
    std::vector<double> row(size_t(c.k));
    double squares = 0;
    for (int64_t p = 0; p < c.k; ++p) squares += a.at(i, p) * a.at(i, p);
    for (int64_t p = 0; p < c.k; ++p)
      row[size_t(p)] = c.norm ? a.at(i, p) * value(hweight[size_t(p)]) / std::sqrt(squares / double(c.k) + eps) : a.at(i, p);
    auto dot = [&](int64_t j) {
      double x = 0;
      for (int64_t p = 0; p < c.k; ++p) x += row[size_t(p)] * b.at(j, p);
      return x;
    };
    for (int64_t j = 0; j < n; ++j) {
      double x = c.glu ? activate(dot(j), *c.glu) * dot(n + j) : dot(j);
      if (c.scales) x *= double(scale_a[scale_a.size() == 1 ? 0 : size_t(i)]) * double(scale_b[scale_b.size() == 1 ? 0 : size_t(j)]);
      x = c.alpha * x + (c.beta != 0 ? c.beta * value(hc[size_t(i * n + j)]) : 0.0) + (c.bias ? value(hbias[size_t(j)]) : 0.0);
      double want = apply_hook(c.hook, activate(x, c.activation), i, j);
      // An FP8 C saturates at its largest finite value, as cvt.rn.satfinite does.
      if constexpr (std::is_same_v<TC, f8e4m3>) want = std::clamp(want, -448.0, 448.0);
      const double g = value(got[size_t(i * n + j)]);
      if (std::isnan(g)) return INFINITY;
      worst = std::max(worst, std::abs(g - want));
      largest = std::max(largest, std::abs(want));
    }
  }
  return worst / std::max(largest, 1e-30);
}

}  // namespace

TEST_CASE("kernels::gemm matches a float64 product for A and B of either major, at ragged shapes", "[gpu][kernels][sm100][sm120]") {
  Device gpu;
  INFO(gpu.target().name());
  // Tiles are 128 x 256 (or narrower) on sm_90a, 128 x 256 on sm_100a, 128 x 128 on mma.sync:
  // these shapes leave partial tiles along M, N and K on each.
  CHECK(run_case(gpu, {.m = 136, .n = 200, .k = 72}) < 1e-2);
  CHECK(run_case(gpu, {.m = 72, .n = 136, .k = 200, .a_major = Major::mn}) < 1e-2);
  CHECK(run_case(gpu, {.m = 136, .n = 72, .k = 136, .b_major = Major::mn}) < 1e-2);
  CHECK(run_case(gpu, {.m = 40, .n = 264, .k = 64, .a_major = Major::mn, .b_major = Major::mn}) < 1e-2);
  // Rows further apart than their length: a view into a wider matrix.
  CHECK(run_case(gpu, {.m = 24, .n = 48, .k = 80, .pad = 16}) < 1e-2);
}

TEST_CASE("kernels::gemm's epilogue: alpha, beta with C read in place, a bias and each activation", "[gpu][kernels][sm100][sm120]") {
  Device gpu;
  INFO(gpu.target().name());
  CHECK(run_case(gpu, {.m = 136, .n = 136, .k = 64, .alpha = 0.5f}) < 1e-2);
  // The residual add of a transformer block: C += A B^T.
  CHECK(run_case(gpu, {.m = 136, .n = 136, .k = 64, .beta = 1}) < 1e-2);
  CHECK(run_case(gpu, {.m = 72, .n = 200, .k = 64, .alpha = 2, .beta = -0.5f, .bias = true}) < 1e-2);
  for (Activation f : {Activation::relu, Activation::silu, Activation::gelu_tanh}) {
    INFO("activation " << int(f));
    CHECK(run_case(gpu, {.m = 40, .n = 136, .k = 64, .bias = true, .activation = f}) < 1e-2);
  }
  // An MN-major B with the epilogue (on the sm_100 family, the mma.sync kernel's hook).
  CHECK(run_case(gpu, {.m = 40, .n = 72, .k = 64, .b_major = Major::mn, .beta = 1, .bias = true, .activation = Activation::silu}) < 1e-2);
}

TEST_CASE("kernels::gemm takes f16 operands (C f16) and FP8 operands (C bf16), with the epilogue", "[gpu][kernels][sm100][sm120]") {
  Device gpu;
  INFO(gpu.target().name());
  // f16: each majorness (partial tiles along M, N and K), and every epilogue term.
  CHECK(run_case<f16>(gpu, {.m = 136, .n = 200, .k = 72}) < 1e-2);
  CHECK(run_case<f16>(gpu, {.m = 72, .n = 136, .k = 200, .a_major = Major::mn, .b_major = Major::mn}) < 1e-2);
  CHECK(run_case<f16>(gpu, {.m = 40, .n = 136, .k = 64, .alpha = 2, .beta = -0.5f, .bias = true, .activation = Activation::silu}) < 1e-2);
  // FP8 (K-major only, K a multiple of 16): the product of the e4m3 values, in bf16; alpha as a
  // dequantization scale.
  CHECK(run_case<f8e4m3, bf16>(gpu, {.m = 136, .n = 200, .k = 144}) < 1e-2);
  CHECK(run_case<f8e4m3, bf16>(gpu, {.m = 40, .n = 136, .k = 272, .alpha = 0.25f, .beta = 1, .bias = true, .activation = Activation::gelu_tanh}) <
        1e-2);
  // A few rows of A: the few-row kernel, in 16-byte vectors of 8 f16 or 16 FP8 values (K = 528:
  // a whole round of 32 lanes x 4 vectors of FP8 and a tail; N = 4104: two rows of B a warp).
  CHECK(run_case<f16>(gpu, {.m = 3, .n = 72, .k = 136, .beta = 1, .bias = true, .activation = Activation::relu}) < 1e-2);
  CHECK(run_case<f16>(gpu, {.m = 8, .n = 4104, .k = 1032}) < 1e-2);
  CHECK(run_case<f8e4m3, bf16>(gpu, {.m = 1, .n = 4104, .k = 2064, .alpha = 0.5f}) < 1e-2);
  CHECK(run_case<f8e4m3, bf16>(gpu, {.m = 5, .n = 72, .k = 128, .bias = true, .pad = 16}) < 1e-2);
}

TEST_CASE("kernels::gemm writes an FP8 C, rounded to nearest and saturated", "[gpu][kernels][sm100][sm120]") {
  Device gpu;
  INFO(gpu.target().name());
  // e4m3 keeps 3 mantissa bits: each value within 2^-4 of itself, so within 1/16 of the largest.
  const double fp8 = 1.0 / 16;
  CHECK(run_case<f8e4m3, f8e4m3>(gpu, {.m = 136, .n = 208, .k = 144}) < fp8);
  CHECK(run_case<f8e4m3, f8e4m3>(gpu, {.m = 72, .n = 96, .k = 272, .alpha = 0.25f, .activation = Activation::relu, .scales = 2}) < fp8);
  // Past 448 the values saturate (alpha 400 takes most of them there); a wrapped or infinite
  // value would be far off the clamped reference.
  CHECK(run_case<f8e4m3, f8e4m3>(gpu, {.m = 40, .n = 64, .k = 144, .alpha = 400}) < fp8);
  // The few-row kernel.
  CHECK(run_case<f8e4m3, f8e4m3>(gpu, {.m = 5, .n = 4112, .k = 528, .alpha = 0.5f}) < fp8);
  // A residual or a bias would be rounded to 3 mantissa bits: refused.
  auto a = gpu.upload(random_values<f8e4m3>(64 * 64, 6)), b = gpu.upload(random_values<f8e4m3>(64 * 64, 7));
  auto c = gpu.upload(std::vector<f8e4m3>(64 * 64, f8e4m3(1.0f)));
  CHECK_THAT(test::error_of([&] { kernels::gemm(gpu, a.view({64, 64}), b.view({64, 64}), c.view({64, 64}), {.beta = 1}); }),
             Contains("test_gemm_gpu.cpp:") && Contains("an FP8 c takes no beta and no bias"));
  CHECK(float(c.to_host()[0]) == 1.0f);  // nothing written
}

TEST_CASE("kernels::gemm applies the caller's hook last, on every kernel, each hook a kernel of its own",
          "[gpu][kernels][sm100][sm120]") {
  Device gpu;
  // The main kernel of the target with the bias and an activation before the hook, then the
  // other hook at the same shape (a hook keyed by the shape alone would reuse the first).
  CHECK(run_case(gpu, {.m = 200, .n = 136, .k = 96, .bias = true, .activation = Activation::relu, .hook = 1}) < 1.0 / 128);
  CHECK(run_case(gpu, {.m = 200, .n = 136, .k = 96, .bias = true, .activation = Activation::relu, .hook = 2}) < 1.0 / 128);
  // The few-row kernel, with the gated unit; FP8 output, saturated after the hook.
  CHECK(run_case(gpu, {.m = 5, .n = 128, .k = 64, .glu = Activation::silu, .hook = 1}) < 1.0 / 128);
  CHECK(run_case<f8e4m3, f8e4m3>(gpu, {.m = 72, .n = 64, .k = 64, .alpha = 8, .hook = 1}) < 1.0 / 16);
  if (kernels::gemm_fuses_glu(gpu.target(), 130))  // the wgmma kernel's gated epilogue
    CHECK(run_case(gpu, {.m = 130, .n = 256, .k = 64, .glu = Activation::silu, .hook = 2}) < 1.0 / 128);
}

TEST_CASE("kernels::gemm_compile traces the caller's hook for every target, and an empty hook is refused", "[kernels]") {
  auto x = DeviceTensor<bf16>::for_compile({256, 128}), w = DeviceTensor<bf16>::for_compile({192, 128});
  auto y = DeviceTensor<bf16>::for_compile({256, 192});
  for (const char* t : {"sm_80", "sm_90a", "sm_100a", "sm_120a"})
    CHECK_NOTHROW(kernels::gemm_compile(Target::parse(t), x, w, y, {.hook = hook_for(1)}));
  CHECK_THROWS_WITH(kernels::make_gemm_hook(nullptr), Contains("the function is empty"));
}

TEST_CASE("kernels::gemm multiplies by scales in device memory, per tensor or per row of A and of B", "[gpu][kernels][sm100][sm120]") {
  Device gpu;
  INFO(gpu.target().name());
  // FP8 as torch._scaled_mm takes it, per tensor and row-wise, with alpha and the epilogue after.
  CHECK(run_case<f8e4m3, bf16>(gpu, {.m = 136, .n = 200, .k = 144, .scales = 1}) < 1e-2);
  CHECK(run_case<f8e4m3, bf16>(gpu, {.m = 136, .n = 200, .k = 144, .alpha = 0.5f, .beta = 1, .bias = true, .scales = 2}) < 1e-2);
  // The few-row kernel, and bf16 operands (scales are not FP8's alone).
  CHECK(run_case<f8e4m3, bf16>(gpu, {.m = 5, .n = 4104, .k = 528, .scales = 2}) < 1e-2);
  CHECK(run_case(gpu, {.m = 72, .n = 136, .k = 64, .activation = Activation::relu, .scales = 2}) < 1e-2);
  // Refused: a vector of the wrong length, and scales with glu.
  auto a = gpu.upload(random_values<bf16>(64 * 64, 6)), b = gpu.upload(random_values<bf16>(64 * 64, 7));
  auto c = gpu.upload(std::vector<bf16>(64 * 64, bf16(1.0f)));
  auto s = gpu.upload(std::vector<float>(64, 1.0f));
  CHECK_THAT(test::error_of([&] {
               kernels::gemm(gpu, a.view({64, 64}), b.view({64, 64}), c.view({64, 64}), {.scales = kernels::GemmScales{s.view({32}), s.view({1})}});
             }),
             Contains("test_gemm_gpu.cpp:") && Contains("scales.a is (32); it takes (1), one value for the tensor, or (64) contiguous values"));
  CHECK_THAT(test::error_of([&] {
               kernels::gemm(gpu, a.view({8, 64}), b.view({64, 64}), c.view({8, 32}),
                             {.scales = kernels::GemmScales{s.view({1}), s.view({1})}, .glu = Activation::silu});
             }),
             Contains("test_gemm_gpu.cpp:") && Contains("scales and glu do not combine"));
  CHECK(float(c.to_host()[0]) == 1.0f);  // nothing written
}

TEST_CASE("kernels::gemm for up to 8 rows of A (a decode step's projections) matches a float64 product, with each epilogue term",
          "[gpu][kernels][sm100][sm120]") {
  Device gpu;
  INFO(gpu.target().name());
  // K in 16-byte vectors: 9 (all in the tail loop), 129 (a whole round of 32 lanes x 4 and one
  // more), 33, 8; N from 40 to 4104 (one or two rows of B a warp).
  CHECK(run_case(gpu, {.m = 1, .n = 72, .k = 72}) < 1e-2);
  CHECK(run_case(gpu, {.m = 3, .n = 1000, .k = 1032, .beta = 1, .bias = true, .activation = Activation::silu}) < 1e-2);
  CHECK(run_case(gpu, {.m = 8, .n = 40, .k = 264, .alpha = 0.5f, .pad = 16}) < 1e-2);
  CHECK(run_case(gpu, {.m = 2, .n = 4104, .k = 64, .beta = 1}) < 1e-2);
  // An MN-major operand takes the architecture's kernel.
  CHECK(run_case(gpu, {.m = 8, .n = 72, .k = 64, .a_major = Major::mn}) < 1e-2);
}

TEST_CASE("kernels::gemm for 3 to 8 rows of bf16 or f16 A runs on the tensor cores and matches a float64 product",
          "[gpu][kernels][sm100][sm120]") {
  Device gpu;
  INFO(gpu.target().name());
  // K in chunks of 32 (a warp's round is 8 warps x 4 chunks): 2 (all in the tail loop), 33 (a
  // whole round and one more), 65; N from 16 (one CTA) to 1040.
  CHECK(run_case(gpu, {.m = 3, .n = 64, .k = 64}) < 1e-2);
  CHECK(run_case(gpu, {.m = 8, .n = 1040, .k = 1056}) < 1e-2);
  CHECK(run_case(gpu, {.m = 5, .n = 16, .k = 2080, .alpha = 0.5f}) < 1e-2);
  // Every epilogue term, on rows further apart than their length.
  CHECK(run_case(gpu, {.m = 4, .n = 272, .k = 96, .beta = 1, .bias = true, .activation = Activation::silu, .pad = 16}) < 1e-2);
  CHECK(run_case<f16>(gpu, {.m = 6, .n = 128, .k = 288, .alpha = 2, .bias = true}) < 1e-2);
  CHECK(run_case(gpu, {.m = 7, .n = 64, .k = 64, .hook = 1}) < 1.0 / 128);
  // The gated unit with each gate: W's 8 rows and V's 8 in one atom.
  for (Activation f : {Activation::none, Activation::relu, Activation::silu, Activation::gelu_tanh}) {
    INFO("glu " << int(f));
    CHECK(run_case(gpu, {.m = 8, .n = 2 * 520, .k = 1056, .glu = f}) < 1e-2);
  }
  CHECK(run_case(gpu, {.m = 3, .n = 2 * 24, .k = 64, .beta = 1, .bias = true, .glu = Activation::silu}) < 1e-2);
}

TEST_CASE("kernels::gemm for 9 to 16 rows of bf16 or f16 A runs the few-row tensor-core kernel and matches a float64 product",
          "[gpu][kernels][sm100][sm120]") {
  Device gpu;
  INFO(gpu.target().name());
  // One block of A's rows and a row more, the second block partly filled, both full.
  CHECK(run_case(gpu, {.m = 9, .n = 64, .k = 64}) < 1e-2);
  CHECK(run_case(gpu, {.m = 13, .n = 1040, .k = 1056, .beta = 1, .bias = true, .activation = Activation::silu}) < 1e-2);
  CHECK(run_case(gpu, {.m = 16, .n = 272, .k = 96, .alpha = 0.5f, .pad = 16}) < 1e-2);
  CHECK(run_case<f16>(gpu, {.m = 12, .n = 128, .k = 288, .alpha = 2, .bias = true}) < 1e-2);
  CHECK(run_case(gpu, {.m = 15, .n = 64, .k = 64, .hook = 1}) < 1.0 / 128);
  // The gated unit: W's 8 rows and V's 8 in one atom, for each block of A's rows.
  CHECK(run_case(gpu, {.m = 11, .n = 2 * 520, .k = 1056, .glu = Activation::silu}) < 1e-2);
  CHECK(run_case(gpu, {.m = 16, .n = 2 * 24, .k = 64, .beta = 1, .bias = true, .glu = Activation::gelu_tanh}) < 1e-2);
}

TEST_CASE("kernels::gemm_compile gives 9 to 16 rows of K-major A the few-row tensor-core kernel on every target, and 17 the wide one",
          "[unit][kernels]") {
  static_assert(kernels::gemm_few_rows_max_m == 16);
  auto a = DeviceTensor<bf16>::for_compile({16, 512}), b = DeviceTensor<bf16>::for_compile({384, 512});
  auto c = DeviceTensor<bf16>::for_compile({16, 384});
  auto a17 = DeviceTensor<bf16>::for_compile({17, 512}), c17 = DeviceTensor<bf16>::for_compile({17, 384});
  for (const char* t : {"sm_80", "sm_90a", "sm_100a", "sm_120a"}) {
    INFO(t);
    const std::vector<CompiledKernel> few = kernels::gemm_compile(Target::parse(t), a, b, c);
    REQUIRE(few.size() == 1);
    CHECK(test::contains(few[0].ptx, "mma.sync.aligned.m16n8k16"));
    CHECK_FALSE(test::contains(few[0].ptx, "wgmma"));
    CHECK_FALSE(test::contains(few[0].ptx, "tcgen05"));
  }
  CHECK(test::contains(kernels::gemm_compile(Target::parse("sm_90a"), a17, b, c17).at(0).ptx, "wgmma.mma_async"));
  CHECK(test::contains(kernels::gemm_compile(Target::parse("sm_100a"), a17, b, c17).at(0).ptx, "tcgen05.mma"));
  // A K that is not a multiple of the kernel's 32-value chunk takes the architecture's kernel.
  auto a_odd = DeviceTensor<bf16>::for_compile({16, 520}), b_odd = DeviceTensor<bf16>::for_compile({384, 520});
  CHECK(test::contains(kernels::gemm_compile(Target::parse("sm_90a"), a_odd, b_odd, c).at(0).ptx, "wgmma.mma_async"));
}

TEST_CASE("kernels::gemm fuses an RMSNorm of A's rows and a gated linear unit for up to 8 rows of A", "[gpu][kernels][sm100][sm120]") {
  Device gpu;
  INFO(gpu.target().name());
  // The norm alone, in the tail loop and past a whole round of vectors; one row of B a warp
  // (N = 72) and two (N = 4104).
  CHECK(run_case(gpu, {.m = 1, .n = 72, .k = 72, .norm = true}) < 1e-2);
  CHECK(run_case(gpu, {.m = 5, .n = 4104, .k = 1032, .beta = 1, .norm = true}) < 1e-2);
  // The gated unit alone, with each gate; C's columns past N / 2 would be W's rows.
  for (Activation f : {Activation::none, Activation::relu, Activation::silu, Activation::gelu_tanh}) {
    INFO("glu " << int(f));
    CHECK(run_case(gpu, {.m = 3, .n = 2 * 504, .k = 264, .glu = f}) < 1e-2);
  }
  // Both, as a SwiGLU MLP's gate/up projection takes them, and with every epilogue term.
  CHECK(run_case(gpu, {.m = 8, .n = 2 * 1000, .k = 1032, .norm = true, .glu = Activation::silu}) < 1e-2);
  CHECK(run_case(gpu, {.m = 2, .n = 2 * 40, .k = 64, .alpha = 0.5f, .beta = 1, .bias = true, .activation = Activation::relu, .pad = 16,
                       .norm = true, .glu = Activation::silu}) < 1e-2);
}

TEST_CASE("kernels::gemm fuses a gated linear unit for any M on sm_90a, and refuses it where it cannot", "[gpu][kernels][sm100][sm120]") {
  Device gpu;
  INFO(gpu.target().name());
  if (!kernels::gemm_fuses_glu(gpu.target(), 136)) {
    auto a = gpu.upload(random_values<bf16>(136 * 64, 6)), b = gpu.upload(random_values<bf16>(128 * 64, 7));
    auto c = gpu.upload(std::vector<bf16>(136 * 64, bf16(1.0f)));
    CHECK_THAT(test::error_of([&] { kernels::gemm(gpu, a.view({136, 64}), b.view({128, 64}), c.view({136, 64}), {.glu = Activation::silu}); }),
               Contains("test_gemm_gpu.cpp:") && Contains("glu is fused for M up to 16") && Contains("on " + gpu.target().name()));
    CHECK(float(c.to_host()[0]) == 1.0f);  // nothing written
    return;
  }
  // The 128-wide tile (64 columns of C from W's and V's rows each), with partial tiles along M,
  // N and K: W's rows past N / 2 are V's, and must reach no stored column.
  CHECK(run_case(gpu, {.m = 136, .n = 2 * 200, .k = 72, .glu = Activation::silu}) < 1e-2);
  for (Activation f : {Activation::none, Activation::relu, Activation::gelu_tanh}) {
    INFO("glu " << int(f));
    CHECK(run_case(gpu, {.m = 72, .n = 2 * 72, .k = 136, .glu = f}) < 1e-2);
  }
  // Every epilogue term after the gate, on rows further apart than their length.
  CHECK(run_case(gpu, {.m = 24, .n = 2 * 136, .k = 80, .alpha = 0.5f, .beta = 1, .bias = true, .activation = Activation::relu, .pad = 16,
                       .glu = Activation::silu}) < 1e-2);
  // The 256-wide tile, which the operator picks once the 128 x 256 tiles of A [W; V]^T fill the
  // GPU (at least 7/8 of one per multiprocessor: 116 on 132).
  CHECK(run_case(gpu, {.m = 1024, .n = 2 * 1896, .k = 32, .glu = Activation::silu}) < 1e-2);
}

TEST_CASE("kernels::gemm's tune times the kernels once, remembers the choice on disk, and writes C once", "[gpu][kernels][sm100][sm120]") {
  cache_test::TempCache tmp;  // the records (and kernels) in a directory of their own
  detail::forget_tune_decisions();
  Device gpu;
  INFO(gpu.target().name());
  const bool sm90 = gpu.target().name() == "sm_90a";
  auto records = [&] {
    std::vector<nlohmann::json> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(tmp.path() / "tune" / "v1", ec))
      out.push_back(nlohmann::json::parse(cache_test::read_text(e.path())));
    return out;
  };
  // C read and written in place (beta): the candidates' launches must not reach it, or the
  // product would be added more than once.
  const Case plain{.m = 136, .n = 200, .k = 72, .beta = 1, .bias = true, .tune = true};
  const Case gated{.m = 136, .n = 2 * 200, .k = 72, .beta = 1, .glu = Activation::silu, .tune = true};
  for (int round = 0; round < 2; ++round) {  // the second round answered by the records
    INFO("round " << round);
    CHECK(run_case(gpu, plain) < 1e-2);
    if (kernels::gemm_fuses_glu(gpu.target(), gated.m)) CHECK(run_case(gpu, gated) < 1e-2);
    // sm_90a chooses among its tile widths; the other targets have one kernel for each problem.
    const std::vector<nlohmann::json> files = records();
    REQUIRE(files.size() == (sm90 ? 2u : 0u));
    for (const nlohmann::json& r : files) {
      const bool glu = r["key"]["candidates"].size() == 2;
      CHECK(r["key"]["candidates"] == (glu ? nlohmann::json({"256", "128"}) : nlohmann::json({"256", "128", "64"})));
      CHECK(r["key"]["name"] == (glu ? "kernels::gemm sm90 bf16 bf16 tn glu" : "kernels::gemm sm90 bf16 bf16 tn"));
      CHECK(r["key"]["values"][0] == 136);
      CHECK(r["key"]["values"][1] == 200);
    }
  }
}

TEST_CASE("kernels::gemm refuses what it cannot take, at the caller's line, writing nothing", "[gpu][kernels]") {
  Device gpu;
  auto a = gpu.upload(random_values<bf16>(64 * 64, 6)), b = gpu.upload(random_values<bf16>(64 * 64, 7));
  auto c = gpu.upload(std::vector<bf16>(64 * 64, bf16(0.0f)));
  const std::string here = "test_gemm_gpu.cpp:";
  CHECK_THAT(test::error_of([&] { kernels::gemm(gpu, a.view({64, 64}), b.view({32, 128}), c.view({64, 32})); }),
             Contains(here) && Contains("gemm: a is (64, 64) and b is (32, 128): they must agree on K"));
  CHECK_THAT(test::error_of([&] { kernels::gemm(gpu, a.view({64, 64}), b.view({64, 64}), c.view({32, 128})); }),
             Contains(here) && Contains("c is (32, 128); for a (64, 64) and b (64, 64) it must be (64, 64)"));
  CHECK_THAT(test::error_of([&] { kernels::gemm(gpu, a.view({32, 32}, {2, 64}), b.view({32, 32}), c.view({32, 32})); }),
             Contains(here) && Contains("a (32, 32) has strides (2, 64); one of them must be 1"));
  CHECK_THAT(test::error_of([&] { kernels::gemm(gpu, a.view({64, 60}, {64, 1}), b.view({64, 60}, {64, 1}), c.view({64, 64})); }),
             Contains("a (64, 60) is K-major, so its K (60) and its other stride (64) must be multiples of 8"));
  CHECK_THAT(test::error_of([&] { kernels::gemm(gpu, a.view({64, 64}), b.view({64, 64}), c.view({64, 64}, {1, 64})); }),
             Contains("c (64, 64) must be row-major"));
  CHECK_THAT(test::error_of([&] { kernels::gemm(gpu, a.view({64, 64}), b.view({64, 64}), c.view({64, 64}), {.bias = b.view({32})}); }),
             Contains("the bias is (32); it takes (64) contiguous"));
  CHECK_THAT(test::error_of([&] { kernels::gemm(gpu, a.view({64, 64}), b.view({64, 64}), c.view({64, 64}), {.activation = Activation(9)}); }),
             Contains("the activation 9 is none of"));
  CHECK_THAT(test::error_of([&] { kernels::gemm_prepare(gpu, a.view({0, 64}), b.view({64, 64}), c.view({0, 64})); }),
             Contains("gemm_prepare: c (0, 64) is empty"));
  // The fusions: only for a few rows of A, with B's halves and the norm's weights as they must be.
  const kernels::RmsNorm norm{a.view({64}), 1e-6f};
  CHECK_THAT(test::error_of([&] { kernels::gemm(gpu, a.view({64, 64}), b.view({64, 64}), c.view({64, 64}), {.rmsnorm_a = norm}); }),
             Contains(here) && Contains("rmsnorm_a is fused only for M up to 8") && Contains("not a (64, 64)"));
  CHECK_THAT(test::error_of([&] { kernels::gemm(gpu, a.view({8, 64}), b.view({63, 64}), c.view({8, 32}), {.glu = Activation::silu}); }),
             Contains(here) && Contains("glu takes b (63, 64) as two halves [W; V]"));
  CHECK_THAT(test::error_of([&] { kernels::gemm(gpu, a.view({8, 64}), b.view({64, 64}), c.view({8, 64}), {.glu = Activation::silu}); }),
             Contains(here) && Contains("it must be (8, 32), half of b's rows with glu"));
  CHECK_THAT(test::error_of([&] {
               kernels::gemm(gpu, a.view({8, 64}), b.view({64, 64}), c.view({8, 64}), {.rmsnorm_a = kernels::RmsNorm{a.view({32}), 1e-6f}});
             }),
             Contains(here) && Contains("rmsnorm_a's weight is (32); it takes (64) contiguous"));
  CHECK_THAT(test::error_of([&] {
               kernels::gemm(gpu, a.view({8, 64}), b.view({64, 64}), c.view({8, 64}), {.rmsnorm_a = kernels::RmsNorm{a.view({64}), -1.0f}});
             }),
             Contains(here) && Contains("rmsnorm_a's eps is -1"));
  // FP8 operands are read along K only; the fusions are for bf16.
  auto a8 = gpu.upload(std::vector<f8e4m3>(64 * 64)), b8 = gpu.upload(std::vector<f8e4m3>(64 * 64));
  CHECK_THAT(test::error_of([&] { kernels::gemm(gpu, a8.view({64, 64}), b8.view({64, 64}, {1, 64}), c.view({64, 64})); }),
             Contains(here) && Contains("FP8 operands are read along K only") && Contains("b (64, 64) N-major"));
  CHECK_THAT(test::error_of([&] { kernels::gemm(gpu, a8.view({64, 56}, {64, 1}), b8.view({64, 56}, {64, 1}), c.view({64, 64})); }),
             Contains(here) && Contains("a (64, 56) is K-major, so its K (56) and its other stride (64) must be multiples of 16"));
  CHECK_THAT(test::error_of([&] { kernels::gemm(gpu, a8.view({8, 64}), b8.view({64, 64}), c.view({8, 32}), {.glu = Activation::silu}); }),
             Contains(here) && Contains("rmsnorm_a and glu are fused for bf16 operands only, not f8e4m3"));
  auto bias16 = gpu.upload(std::vector<f16>(64));
  CHECK_THAT(test::error_of([&] { kernels::gemm(gpu, a8.view({64, 64}), b8.view({64, 64}), c.view({64, 64}), {.bias = bias16.view({64})}); }),
             Contains(here) && Contains("the bias holds f16; it takes C's type, bf16"));
  gpu.synchronize();
  for (bf16 v : c.to_host()) REQUIRE(float(v) == 0.0f);
}

TEST_CASE("kernels::gemm_prepare launches the same product again with no lookup", "[gpu][kernels]") {
  Device gpu;
  const int64_t m = 72, n = 64, k = 64;
  auto a = gpu.upload(std::vector<bf16>(size_t(m * k), bf16(1.0f))), b = gpu.upload(std::vector<bf16>(size_t(n * k), bf16(0.5f)));
  auto c = gpu.upload(std::vector<bf16>(size_t(m * n), bf16(0.0f)));
  PreparedLaunch accumulate = kernels::gemm_prepare(gpu, a.view({m, k}), b.view({n, k}), c.view({m, n}), {.beta = 1});
  for (int i = 0; i < 3; ++i) accumulate();
  gpu.synchronize();
  for (bf16 v : c.to_host()) REQUIRE(float(v) == 3 * 32.0f);  // three times 64 x 0.5, each sum exact in bf16
}

TEST_CASE("kernels::gemm_compile builds each architecture's kernel with no GPU", "[unit][kernels]") {
  auto a = DeviceTensor<bf16>::for_compile({256, 512}), b = DeviceTensor<bf16>::for_compile({384, 512});
  auto c = DeviceTensor<bf16>::for_compile({256, 384}), bias = DeviceTensor<bf16>::for_compile({384});
  const kernels::GemmOptions plain{}, fused{.beta = 1, .bias = bias, .activation = Activation::silu};
  // sm_90a: one kernel per tile width gemm may pick, each of 3 warpgroups issuing wgmma.
  std::vector<CompiledKernel> hopper = kernels::gemm_compile(Target::parse("sm_90a"), a, b, c, plain);
  REQUIRE(hopper.size() == 3);
  for (const CompiledKernel& k : hopper) CHECK(test::contains(k.ptx, "wgmma.mma_async.sync.aligned"));
  CHECK(test::contains(hopper[0].ptx, "n256"));
  // The fused epilogue reads C and the bias; the plain one reads neither (only TMA touches C).
  std::vector<CompiledKernel> hopper_fused = kernels::gemm_compile(Target::parse("sm_90a"), a, b, c, fused);
  CHECK(test::contains(hopper_fused[0].ptx, "ld.global"));
  CHECK_FALSE(test::contains(hopper[0].ptx, "ld.global"));
  std::vector<CompiledKernel> blackwell = kernels::gemm_compile(Target::parse("sm_100a"), a, b, c, fused);
  REQUIRE(blackwell.size() == 1);
  CHECK(test::contains(blackwell[0].ptx, "tcgen05.mma"));
  // MN-major B on sm_100a, and every target without wgmma or tcgen05: the mma.sync kernel.
  auto b_mn = DeviceTensor<bf16>::for_compile({384, 512}, {1, 384});
  for (const char* t : {"sm_80", "sm_89", "sm_120a"}) {
    INFO(t);
    CHECK(test::contains(kernels::gemm_compile(Target::parse(t), a, b, c, fused).at(0).ptx, "mma.sync.aligned.m16n8k16"));
  }
  CHECK(test::contains(kernels::gemm_compile(Target::parse("sm_100a"), a, b_mn, c).at(0).ptx, "mma.sync.aligned.m16n8k16"));
  CHECK_THROWS_WITH(kernels::gemm_compile(Target::parse("sm_90a"), a, c, c), Contains("must agree on K"));
  // f16 (C f16) and FP8 (C bf16): each architecture's MMA of that type.
  auto a16 = DeviceTensor<f16>::for_compile({256, 512}), b16 = DeviceTensor<f16>::for_compile({384, 512});
  auto c16 = DeviceTensor<f16>::for_compile({256, 384});
  auto a8 = DeviceTensor<f8e4m3>::for_compile({256, 512}), b8 = DeviceTensor<f8e4m3>::for_compile({384, 512});
  const kernels::GemmOptions fused16{.beta = 1, .bias = DeviceTensor<f16>::for_compile({384}), .activation = Activation::silu};
  CHECK(test::contains(kernels::gemm_compile(Target::parse("sm_90a"), a16, b16, c16, fused16).at(0).ptx, ".f32.f16.f16"));
  CHECK(test::contains(kernels::gemm_compile(Target::parse("sm_90a"), a8, b8, c, fused).at(0).ptx, "k32.f32.e4m3.e4m3"));
  CHECK(test::contains(kernels::gemm_compile(Target::parse("sm_100a"), a16, b16, c16).at(0).ptx, "tcgen05.mma.cta_group::1.kind::f16"));
  CHECK(test::contains(kernels::gemm_compile(Target::parse("sm_100a"), a8, b8, c).at(0).ptx, "kind::f8f6f4"));
  for (const char* t : {"sm_89", "sm_120a"}) {
    INFO(t);
    CHECK(test::contains(kernels::gemm_compile(Target::parse(t), a16, b16, c16).at(0).ptx, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16"));
    CHECK(test::contains(kernels::gemm_compile(Target::parse(t), a8, b8, c, fused).at(0).ptx, "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3"));
  }
  CHECK_THROWS_WITH(kernels::gemm_compile(Target::parse("sm_86"), a8, b8, c), Contains("no FP8 kernel for sm_86"));
  // Up to 8 rows of FP8 A, or 1 and 2 of f16: the few-row FMA kernel, converting 16-byte vectors
  // to f32.
  auto a16_2 = DeviceTensor<f16>::for_compile({2, 512}), c16_2 = DeviceTensor<f16>::for_compile({2, 384});
  auto a8_4 = DeviceTensor<f8e4m3>::for_compile({4, 512});
  auto c8_4 = DeviceTensor<bf16>::for_compile({4, 384});
  for (const CompiledKernel& k : {kernels::gemm_compile(Target::parse("sm_90a"), a16_2, b16, c16_2).at(0),
                                  kernels::gemm_compile(Target::parse("sm_90a"), a8_4, b8, c8_4).at(0)}) {
    INFO(k.name);
    CHECK(test::contains(k.ptx, "shfl.sync.bfly"));
    CHECK(test::contains(k.ptx, "ld.global.nc.v4"));  // B in 16-byte vectors
    CHECK_FALSE(test::contains(k.ptx, "mma"));
  }
  // One or two rows of A: the FMA kernel on every target (one or two rows of B a warp), no MMA;
  // 3 to 8 rows of bf16 or f16 A: the tensor-core one, its weights and A's rows in 16-byte loads,
  // unless the norm is fused (the FMA kernel's alone).
  auto a2 = DeviceTensor<bf16>::for_compile({2, 512}), c2 = DeviceTensor<bf16>::for_compile({2, 384});
  auto a4 = DeviceTensor<bf16>::for_compile({4, 512}), c4 = DeviceTensor<bf16>::for_compile({4, 384});
  auto weight = DeviceTensor<bf16>::for_compile({512});
  for (const char* t : {"sm_80", "sm_90a", "sm_100a", "sm_120a"}) {
    INFO(t);
    std::vector<CompiledKernel> small = kernels::gemm_compile(Target::parse(t), a2, b, c2, fused);
    REQUIRE(small.size() == 2);
    CHECK(test::contains(small[0].ptx, "shfl.sync.bfly"));
    CHECK_FALSE(test::contains(small[0].ptx, "mma"));
    std::vector<CompiledKernel> mma = kernels::gemm_compile(Target::parse(t), a4, b, c4, fused);
    REQUIRE(mma.size() == 1);
    CHECK(test::contains(mma[0].ptx, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"));
    CHECK(test::contains(mma[0].ptx, "ld.global.nc.v4"));
    std::vector<CompiledKernel> normed = kernels::gemm_compile(Target::parse(t), a4, b, c4, {.rmsnorm_a = kernels::RmsNorm{weight, 1e-5f}});
    CHECK_FALSE(test::contains(normed.at(0).ptx, "mma"));
  }
}
