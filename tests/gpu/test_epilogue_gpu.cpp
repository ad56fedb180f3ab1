// The epilogue's building blocks on the GPU: stmatrix from accumulator fragments into a tile a
// TMA store writes out (swizzled and plain), stmatrix's transposed form, and TMA reduce-add.
#include <catch2/catch.hpp>

#include "epilogue_kernels.hpp"
#include "support.hpp"

using namespace cutejit;

namespace {
std::vector<uint16_t> bits_of(const std::vector<bf16>& v) {
  std::vector<uint16_t> out;
  for (bf16 x : v) out.push_back(x.bits);
  return out;
}

std::vector<bf16> poison(size_t n) {
  bf16 nan;
  nan.bits = 0x7fc0;
  return std::vector<bf16>(n, nan);
}
}  // namespace

TEST_CASE("the stmatrix copy puts every value of a wgmma C fragment at its row and column, swizzled or not", "[gpu]") {
  Device gpu;
  std::vector<uint16_t> expected;
  for (int r = 0; r < 64; ++r)
    for (int c = 0; c < 64; ++c) expected.push_back(test::element_code(r, c));
  for (bool swizzled : {false, true}) {
    INFO((swizzled ? "128-byte swizzle" : "no swizzle"));
    auto out = gpu.upload(poison(64 * 64));
    auto map = make_tensor_map(out.view({64, 64}), {64, 64}, swizzled ? TmaSwizzle::bytes128 : TmaSwizzle::none);
    test::stmatrix_tile(swizzled)(gpu, Launch{.grid = 1, .block = 128, .shared_bytes = 64 * 64 * 2 + dynamic_shared_slack(1024)},
                                  map);
    gpu.synchronize();
    CHECK(bits_of(out.to_host()) == expected);
  }
}

TEST_CASE("stmatrix .trans writes each register pair down a column", "[gpu]") {
  Device gpu;
  auto out = gpu.upload(poison(256));
  test::stmatrix_transposed(gpu, Launch{.grid = 1, .block = 32}, out.view({256}));
  gpu.synchronize();
  // Matrix j sits at rows 8 (j % 2), columns 8 (j / 2); its element (r, c) in registers lands
  // at (c, r) within it.
  std::vector<uint16_t> expected(256);
  for (int j = 0; j < 4; ++j)
    for (int r = 0; r < 8; ++r)
      for (int c = 0; c < 8; ++c)
        expected[size_t((8 * (j % 2) + c) * 16 + 8 * (j / 2) + r)] = test::element_code(8 * (j % 2) + r, 8 * (j / 2) + c);
  CHECK(bits_of(out.to_host()) == expected);
}

TEST_CASE("TMA reduce-add: three blocks add their tiles into one box of the old values", "[gpu]") {
  Device gpu;
  const int rows = 64, cols = 48, blocks = 3;  // the box is the 32 x 32 corner; the rest stays
  std::vector<float> old(rows * cols);
  for (size_t i = 0; i < old.size(); ++i) old[i] = float(i % 97) - 40.0f;
  auto out = gpu.upload(old);
  auto map = make_tensor_map(out.view({rows, cols}), {32, 32}, TmaSwizzle::none);
  test::tma_reduce_add_tile(gpu, Launch{.grid = blocks, .block = 128, .shared_bytes = 32 * 32 * 4 + dynamic_shared_slack(128)}, map);
  gpu.synchronize();
  std::vector<float> expected = old;
  for (int r = 0; r < 32; ++r)
    for (int c = 0; c < 32; ++c)
      for (int b = 0; b < blocks; ++b) expected[size_t(r * cols + c)] += float((b + 1) * (r * 32 + c + 1));
  CHECK(out.to_host() == expected);  // small integers: exact in any order of addition
}
