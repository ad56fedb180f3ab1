// The tensor-core few-row GEMM (gemm/small_m_mma.hpp) called directly for up to 64 rows of A,
// 8 a block of the atom's N: kernels::gemm hands it up to 8 rows, and this is where the blocks
// past the first are checked against a float64 product of the same bf16 operands, with the
// gated unit and an epilogue, on every device.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include <cutejit/cutejit.hpp>
#include <cutejit/kernels/gemm/small_m_mma.hpp>

#include "kernel_test_values.hpp"

using namespace cutejit;
using test::random_values;
using test::value;

namespace {

namespace mma = kernels::gemm_small_m_mma;

/// C = A B^T, or with `gated` C = silu(A W^T) * (A V^T) for B = [W; V]; then an epilogue that
/// adds (row - col) / 64, so that a value stored at another row or column shows.
auto& few_rows_kernel() {
  static Kernel k{"test_small_m_mma_blocks", [](Tensor<bf16> a, Tensor<bf16> b, Tensor<bf16> c, Constexpr<int> m_blocks,
                                                Constexpr<bool> gated) {
                    kernels::gemm_small_m::Fusion fusion;
                    fusion.gated = gated;
                    if (gated) fusion.gate = [](const F32& x) { return x / (1.0f + exp(-x)); };
                    auto shifted = [](const F32& v, const Int& row, const Int& col) { return v + cast<float>(row - col) * 0.015625f; };
                    mma::kernel(mma::Config{.m_blocks = m_blocks}, a, b, c, shifted, fusion);
                  }};
  return k;
}

/// The largest error of C (m x n, n = b_rows / 2 with `gated`) against the float64 product,
/// relative to the largest |reference|; infinite where a value was not written.
double run(const Device& gpu, int64_t m, int64_t b_rows, int64_t k, bool gated) {
  INFO(m << " rows of A, " << b_rows << " of B, K " << k << (gated ? ", gated" : ""));
  const int64_t n = gated ? b_rows / 2 : b_rows;
  const std::vector<bf16> a = random_values<bf16>(size_t(m * k), 11), b = random_values<bf16>(size_t(b_rows * k), 12);
  auto da = gpu.upload(a), db = gpu.upload(b);
  auto dc = gpu.upload(std::vector<bf16>(size_t(m * n), bf16(NAN)));
  const mma::Config config{.m_blocks = mma::Config::m_blocks_for(m)};
  few_rows_kernel()(gpu, mma::launch(n, config, gated), da.view({m, k}), db.view({b_rows, k}), dc.view({m, n}), config.m_blocks, gated);
  gpu.synchronize();
  const std::vector<bf16> got = dc.to_host();
  auto dot = [&](int64_t i, int64_t j) {
    double x = 0;
    for (int64_t p = 0; p < k; ++p) x += value(a[size_t(i * k + p)]) * value(b[size_t(j * k + p)]);
    return x;
  };
  double worst = 0, largest = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const double w = dot(i, j), x = gated ? w / (1 + std::exp(-w)) * dot(i, n + j) : w;
      const double want = x + double(i - j) / 64, g = value(got[size_t(i * n + j)]);
      if (std::isnan(g)) return INFINITY;
      worst = std::max(worst, std::abs(g - want));
      largest = std::max(largest, std::abs(want));
    }
  return worst / largest;
}

}  // namespace

TEST_CASE("the tensor-core few-row GEMM takes up to 8 blocks of 8 rows of A and matches a float64 product",
          "[gpu][kernels][sm100][sm120]") {
  Device gpu;
  INFO(gpu.target().name());
  // One block and each count past it, full and ragged (rows of the last block past M are read
  // as zeros and not stored); K of a whole round of 8 warps x 4 chunks and one chunk more.
  for (int64_t m : {8, 9, 16, 27, 32, 64})
    CHECK(run(gpu, m, 48, 1056, false) < 1e-2);
  CHECK(run(gpu, 40, 2 * 24, 96, true) < 1e-2);
  CHECK(run(gpu, 64, 2 * 16, 64, true) < 1e-2);
}

TEST_CASE("the tensor-core few-row GEMM refuses more than 8 blocks of A's rows", "[kernels]") {
  auto t = [](std::initializer_list<int64_t> shape) { return DeviceTensor<bf16>::for_compile(shape); };
  auto nine_blocks = [&] {
    few_rows_kernel().compile(Target::parse("sm_90a"), t({72, 64}), t({16, 64}), t({72, 16}), Constexpr<int>{9}, Constexpr<bool>{false});
  };
  CHECK_THAT(test::error_of(nine_blocks), Catch::Contains("1 to 8 blocks of 8 rows of A, not 9"));
}
