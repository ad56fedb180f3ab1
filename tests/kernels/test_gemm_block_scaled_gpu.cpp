// kernels::gemm_block_scaled against a float64 product of the operands and scales decoded on the
// host from the format definitions (gpu/block_scaled_reference.hpp), C poisoned and strided with
// its padding watched: each format the device's family has, at a ragged shape (partial tiles
// along M and N), with alpha; then the epilogue's other terms (beta, a bias, an activation and
// a hook into an f16 C) and an FP8 C saturated, against the same terms applied in float64. The
// same cases run on every device: the sm_100 family takes NVFP4 and MXFP8 (its tcgen05 kernel)
// and refuses MXFP4, the sm_120 family takes all three (its TMA mma.sync kernel), any other
// target refuses each at this file's line ([sm100] and [sm120] run them on those emulated
// devices). Mistakes are errors at this file's lines, and the compile form builds each family's
// kernels with no GPU.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>

#include <cutejit/cutejit.hpp>
#include <cutejit/kernels/gemm_block_scaled.hpp>
#include <cutejit/kernels/gemm_hook.hpp>
#include <cutejit/layout/blocked_scales.hpp>

#include "gpu/block_scaled_reference.hpp"
#include "support.hpp"

using namespace cutejit;
using Catch::Contains;
using kernels::BlockScaledFormat;
namespace bs = test::block_scaled;

namespace {

bool is_sm100_family(const Target& t) { return (t.sm == 100 || t.sm == 103) && t.variant != Target::Variant::portable; }
bool is_sm120_family(const Target& t) { return (t.sm == 120 || t.sm == 121) && t.variant != Target::Variant::portable; }

bool runs(const Target& t, BlockScaledFormat f) { return is_sm120_family(t) || (is_sm100_family(t) && f != BlockScaledFormat::mxfp4); }

const char* name_of(BlockScaledFormat f) { return f == BlockScaledFormat::nvfp4 ? "nvfp4" : f == BlockScaledFormat::mxfp4 ? "mxfp4" : "mxfp8"; }

/// Random operands and scales of `format` at m x n x k, on the device: a and b as bytes, the
/// scales in the blocked layout; the row-major scales kept for the reference.
struct Operands {
  std::vector<uint8_t> a, b, sfa, sfb;
  Buffer<uint8_t> da, db, dsfa, dsfb;
  Operands(const Device& dev, BlockScaledFormat format, int64_t m, int64_t n, int64_t k) {
    const bool fp4 = format != BlockScaledFormat::mxfp8;
    const int64_t row_bytes = fp4 ? k / 2 : k, blocks = k / kernels::scale_block(format);
    a = fp4 ? bs::random_e2m1_pairs(size_t(m * row_bytes), 11) : bs::random_e4m3(size_t(m * row_bytes), 11);
    b = fp4 ? bs::random_e2m1_pairs(size_t(n * row_bytes), 12) : bs::random_e4m3(size_t(n * row_bytes), 12);
    const bool ue4m3 = format == BlockScaledFormat::nvfp4;
    sfa = ue4m3 ? bs::random_ue4m3(size_t(m * blocks), 13) : bs::random_ue8m0(size_t(m * blocks), 13);
    sfb = ue4m3 ? bs::random_ue4m3(size_t(n * blocks), 14) : bs::random_ue8m0(size_t(n * blocks), 14);
    da = dev.upload(a), db = dev.upload(b);
    dsfa = dev.upload(blocked_scales(sfa, m, blocks)), dsfb = dev.upload(blocked_scales(sfb, n, blocks));
  }
};

/// C's value on the host: bf16 and f16 through their types, an FP8 byte through the format's
/// own definition.
double value_of(bf16 x) { return double(float(x)); }
double value_of(f16 x) { return double(float(x)); }
double value_of(f8e4m3 x) { return (x.bits & 0x7F) == 0x7F ? double(std::nanf("")) : bs::e4m3(x.bits); }  // S.1111.111 is NaN

/// Relative rounding of C's type: half an ulp.
template <class TC>
constexpr double half_ulp = std::is_same_v<TC, bf16> ? 0x1p-8 : std::is_same_v<TC, f16> ? 0x1p-11 : 0x1p-4;

/// Runs the operator on m x n x k with `options`, C's rows a few columns apart more than N and
/// holding `before` (NaN where not given), and checks every element against `expect` of the
/// float64 product (of the decoded operands and scales), its row and column, and C's old value:
/// within half an ulp of C's type of it (and 2^-14 of the largest), the padding untouched.
template <class TC>
void check_format(const Device& dev, BlockScaledFormat format, int64_t m, int64_t n, int64_t k, const kernels::BlockScaledOptions& options,
                  const std::function<double(double, int64_t, int64_t, double)>& expect, const std::vector<TC>& before = {}) {
  INFO(name_of(format) << " on " << dev.target().name() << ", " << m << " x " << n << " x " << k);
  const bool fp4 = format != BlockScaledFormat::mxfp8;
  Operands o(dev, format, m, n, k);
  const int64_t row_bytes = fp4 ? k / 2 : k, ldc = (n + 8 + 15) / 16 * 16;
  std::vector<TC> host(size_t(m * ldc), TC(std::nanf("")));
  for (int64_t i = 0; i < m && !before.empty(); ++i)
    for (int64_t j = 0; j < n; ++j) host[size_t(i * ldc + j)] = before[size_t(i * n + j)];
  auto dc = dev.upload(host);
  kernels::gemm_block_scaled(dev, format, o.da.view({m, row_bytes}), o.dsfa.view({int64_t(o.dsfa.size())}), o.db.view({n, row_bytes}),
                             o.dsfb.view({int64_t(o.dsfb.size())}), dc.view({m, n}, {ldc, 1}), options);
  dev.synchronize();
  std::vector<TC> c = dc.to_host();
  const int block = kernels::scale_block(format);
  const std::vector<double> ref = format == BlockScaledFormat::nvfp4 ? bs::reference(o.a, o.b, o.sfa, o.sfb, true, block, bs::ue4m3, m, n, k)
                                                                      : bs::reference(o.a, o.b, o.sfa, o.sfb, fp4, block, bs::ue8m0, m, n, k);
  std::vector<double> want(size_t(m * n));
  double scale = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      want[size_t(i * n + j)] = expect(ref[size_t(i * n + j)], i, j, before.empty() ? 0.0 : value_of(before[size_t(i * n + j)]));
      scale = std::max(scale, std::abs(want[size_t(i * n + j)]));
    }
  REQUIRE(std::isfinite(scale));
  REQUIRE(scale > 0);
  double worst = 0;  // the largest error over its bound
  int64_t worst_at = 0, padding_written = 0;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      const double w = want[size_t(i * n + j)], got = value_of(c[size_t(i * ldc + j)]);
      const double e = std::isnan(got) ? INFINITY : std::abs(got - w) / (std::abs(w) * half_ulp<TC> + scale * 0x1p-14);
      if (e > worst) worst = e, worst_at = i * n + j;
    }
    for (int64_t j = n; j < ldc; ++j) padding_written += !std::isnan(value_of(c[size_t(i * ldc + j)]));
  }
  INFO("worst at C(" << worst_at / n << ", " << worst_at % n << "): " << value_of(c[size_t(worst_at / n * ldc + worst_at % n)])
                     << " against " << want[size_t(worst_at)] << ", the largest magnitude " << scale);
  CHECK(worst <= 1.0);
  CHECK(padding_written == 0);
}

void check_format(const Device& dev, BlockScaledFormat format, int64_t m, int64_t n, int64_t k) {
  check_format<bf16>(dev, format, m, n, k, {.alpha = 0.5f}, [](double x, int64_t, int64_t, double) { return 0.5 * x; });
}

/// The largest magnitude of the float64 product of `format`'s operands at m x n x k (the same
/// seeds as Operands).
double largest_product(const Device& dev, BlockScaledFormat format, int64_t m, int64_t n, int64_t k) {
  Operands o(dev, format, m, n, k);
  const bool fp4 = format != BlockScaledFormat::mxfp8;
  const std::vector<double> ref = format == BlockScaledFormat::nvfp4
                                      ? bs::reference(o.a, o.b, o.sfa, o.sfb, true, 16, bs::ue4m3, m, n, k)
                                      : bs::reference(o.a, o.b, o.sfa, o.sfb, fp4, 32, bs::ue8m0, m, n, k);
  double largest = 0;
  for (double x : ref) largest = std::max(largest, std::abs(x));
  return largest;
}

}  // namespace

TEST_CASE("kernels::gemm_block_scaled matches a float64 product of the decoded operands in each format the target has",
          "[gpu][kernels][sm100][sm120]") {
  Device dev;
  // Two tiles and a partial one along M, two along N (the second partial), 3-6 K tiles.
  const int64_t m = 200, n = 136, k = 768;
  for (BlockScaledFormat f : {BlockScaledFormat::nvfp4, BlockScaledFormat::mxfp4, BlockScaledFormat::mxfp8}) {
    if (runs(dev.target(), f)) {
      check_format(dev, f, m, n, k);
      continue;
    }
    // Refused at this line, naming the target and what would run, with nothing launched.
    Operands o(dev, f, 128, 128, 256);
    const int64_t row_bytes = f == BlockScaledFormat::mxfp8 ? 256 : 128;
    auto dc = dev.upload(std::vector<bf16>(128 * 128, bf16(1.0f)));
    const int line = __LINE__ + 1;
    CHECK_THROWS_WITH(kernels::gemm_block_scaled(dev, f, o.da.view({128, row_bytes}), o.dsfa.view({int64_t(o.dsfa.size())}),
                                                 o.db.view({128, row_bytes}), o.dsfb.view({int64_t(o.dsfb.size())}), dc.view({128, 128})),
                      Contains("test_gemm_block_scaled_gpu.cpp:" + std::to_string(line)) && Contains(dev.target().name()) &&
                          Contains(is_sm100_family(dev.target()) ? "mxfp4 runs on sm_120a" : "dequantize and run kernels::gemm"));
    dev.synchronize();
    CHECK(float(dc.to_host()[0]) == 1.0f);
  }
}

TEST_CASE("kernels::gemm_block_scaled's epilogue: beta, a bias, an activation and a hook into an f16 C; an FP8 C saturated",
          "[gpu][kernels][sm100][sm120]") {
  Device dev;
  if (!is_sm100_family(dev.target()) && !is_sm120_family(dev.target())) {
    SUCCEED("no block-scaled kernel on " + dev.target().name() + ": the case above checks the refusal");
    return;
  }
  const int64_t m = 200, n = 136, k = 768;
  {
    // C = hook(relu(alpha x + 0.5 C + bias[col])), the hook v / 2 + (row - 2 col) / 64, alpha
    // taking the largest product to 4 and C and the bias about as large (f16 holds up to 65504).
    const double alpha = 4 / largest_product(dev, BlockScaledFormat::nvfp4, m, n, k);
    std::vector<f16> before(static_cast<size_t>(m * n)), bias(static_cast<size_t>(n));
    for (size_t i = 0; i < before.size(); ++i) before[i] = f16(float(4 * (double(int64_t(i * 7919 % 1001)) / 500.0 - 1.0)));
    for (size_t j = 0; j < bias.size(); ++j) bias[j] = f16(float(4 * (double(int64_t(j * 104729 % 201)) / 400.0 - 0.25)));
    auto dbias = dev.upload(bias);
    const auto hook = kernels::make_gemm_hook(
        [](const F32& v, const Int& row, const Int& col) { return v * 0.5f + cast<float>(row - 2 * col) * 0.015625f; });
    check_format<f16>(dev, BlockScaledFormat::nvfp4, m, n, k,
                      {.alpha = float(alpha), .beta = 0.5f, .bias = dbias.view({n}), .activation = kernels::Activation::relu, .hook = hook},
                      [&](double x, int64_t i, int64_t j, double c) {
                        return std::max(double(float(alpha)) * x + 0.5 * c + value_of(bias[size_t(j)]), 0.0) * 0.5 + double(i - 2 * j) / 64;
                      },
                      before);
  }
  {
    // An FP8 C with alpha taking the largest product to 1000: the larger values saturate to 448.
    const double alpha = 1000 / largest_product(dev, BlockScaledFormat::mxfp8, m, n, k);
    check_format<f8e4m3>(dev, BlockScaledFormat::mxfp8, m, n, k, {.alpha = float(alpha)}, [&](double x, int64_t, int64_t, double) {
      return std::clamp(double(float(alpha)) * x, -448.0, 448.0);
    });
  }
}

TEST_CASE("kernels::gemm_block_scaled refuses operands it cannot take, at the caller's line", "[kernels]") {
  // No GPU needed: the checks come before the target's kernel is looked up.
  const Target sm100 = Target::parse("sm_100a");
  auto bytes = [](std::initializer_list<int64_t> shape) { return DeviceTensor<uint8_t>::for_compile(shape); };
  auto c = DeviceTensor<bf16>::for_compile({256, 256});
  const auto a = bytes({256, 512}), sf = bytes({blocked_scale_bytes(256, 64)});
  auto compile = [&](const DeviceTensor<uint8_t>& a_, const DeviceTensor<uint8_t>& sfa_, const DeviceTensor<bf16>& c_,
                     std::source_location where = std::source_location::current()) {
    return kernels::gemm_block_scaled_compile(sm100, BlockScaledFormat::nvfp4, a_, sfa_, a, sf, c_, {}, where);
  };
  CHECK_THROWS_WITH(compile(bytes({256, 256}), sf, c), Contains("must have the same K"));
  CHECK_THROWS_WITH(compile(a, bytes({1024}), c), Contains("sfa is (1024)") && Contains("16384 contiguous bytes"));
  CHECK_THROWS_WITH(compile(a, sf, DeviceTensor<bf16>::for_compile({256, 128})), Contains("c is (256, 128); it takes (256, 256)"));
  CHECK_THROWS_WITH(compile(bytes({256, 8}), sf, c), Contains("a (256, 8) must start on 16 bytes"));
  const int line = __LINE__ + 1;
  CHECK_THROWS_WITH(compile(a, bytes({8}), c), Contains("test_gemm_block_scaled_gpu.cpp:" + std::to_string(line)));
  CHECK_THROWS_WITH(kernels::gemm_block_scaled_compile(Target::parse("sm_90a"), BlockScaledFormat::nvfp4, a, sf, a, sf, c),
                    Contains("no block-scaled kernel for sm_90a"));
  // The epilogue's terms are checked as kernels::gemm checks them.
  const auto c8 = DeviceTensor<f8e4m3>::for_compile({256, 256});
  CHECK_THROWS_WITH(kernels::gemm_block_scaled_compile(sm100, BlockScaledFormat::nvfp4, a, sf, a, sf, c8, {.beta = 1.0f}),
                    Contains("an FP8 c takes no beta and no bias"));
  CHECK_THROWS_WITH(kernels::gemm_block_scaled_compile(sm100, BlockScaledFormat::nvfp4, a, sf, a, sf, c,
                                                       {.bias = DeviceTensor<f16>::for_compile({256})}),
                    Contains("the bias holds f16; it takes C's type, bf16"));
  CHECK_THROWS_WITH(kernels::gemm_block_scaled_compile(sm100, BlockScaledFormat::nvfp4, a, sf, a, sf, c,
                                                       {.bias = DeviceTensor<bf16>::for_compile({128})}),
                    Contains("the bias is (128); it takes (256) contiguous"));
  CHECK_THROWS_WITH(kernels::gemm_block_scaled_compile(sm100, BlockScaledFormat::nvfp4, a, sf, a, sf,
                                                       DeviceTensor<f8e4m3>::for_compile({256, 256}, {264, 1})),
                    Contains("not a multiple of 16"));
}

TEST_CASE("kernels::gemm_block_scaled_compile builds each family's kernel for each of its formats with no GPU", "[kernels]") {
  for (const char* target : {"sm_100a", "sm_120a"}) {
    for (BlockScaledFormat f : {BlockScaledFormat::nvfp4, BlockScaledFormat::mxfp4, BlockScaledFormat::mxfp8}) {
      const Target t = Target::parse(target);
      if (!runs(t, f)) continue;
      INFO(name_of(f) << " for " << target);
      const int64_t m = 256, n = 256, k = 512, row_bytes = f == BlockScaledFormat::mxfp8 ? k : k / 2, blocks = k / kernels::scale_block(f);
      auto a = DeviceTensor<uint8_t>::for_compile({m, row_bytes});
      auto sf = DeviceTensor<uint8_t>::for_compile({blocked_scale_bytes(m, blocks)});
      const std::string name = std::string("cutejit_gemm_") + (is_sm100_family(t) ? "sm100_" : "sm120_") + name_of(f) + "_tn";
      std::vector<CompiledKernel> compiled = kernels::gemm_block_scaled_compile(t, f, a, sf, a, sf, DeviceTensor<bf16>::for_compile({m, n}));
      REQUIRE(compiled.size() == 1);
      CHECK(compiled[0].name == name);
      CHECK(compiled[0].target.name() == target);
      compiled = kernels::gemm_block_scaled_compile(t, f, a, sf, a, sf, DeviceTensor<f16>::for_compile({m, n}),
                                                    {.alpha = 2.0f, .activation = kernels::Activation::silu});
      REQUIRE(compiled.size() == 1);
      CHECK(compiled[0].name == name + "_cf16");
      compiled = kernels::gemm_block_scaled_compile(t, f, a, sf, a, sf, DeviceTensor<f8e4m3>::for_compile({m, n}));
      REQUIRE(compiled.size() == 1);
      CHECK(compiled[0].name == name + "_ce4m3");
    }
  }
}
