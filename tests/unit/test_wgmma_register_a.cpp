// wgmma with A from registers, traced on the CPU: the instruction reaches the PTX with four
// A registers, the fragment's layout is the documented one, and other targets are refused.
#include <catch2/catch.hpp>

#include <cutejit/atom/sm90/wgmma.hpp>
#include <cutejit/pipeline/shared_storage.hpp>

#include "support.hpp"

using namespace cutejit;
using Catch::Contains;
using test::contains;

namespace {
Kernel register_a_ptx{"register_a_ptx", [](Tensor<bf16> a) {
  Pointer<bf16> tile = dynamic_shared_aligned<bf16>(1024);
  WgmmaAccumulator<64> acc;
  WgmmaFragmentA<bf16> fa = WgmmaFragmentA<bf16>::load(a, 0, 0, thread_idx().x);
  WgmmaOperand<bf16> B(tile, TmaSwizzle::bytes32);
  wgmma(acc, fa, B.slice(0, 0));
}};
}  // namespace

TEST_CASE("wgmma with A from registers compiles to the register form of the instruction", "[unit]") {
  auto a = DeviceTensor<bf16>::make(0, std::array<int64_t, 2>{64, 16}, std::array<int64_t, 2>{16, 1});
  std::string ptx = register_a_ptx.compile(Target::parse("sm_90a"), a).ptx;
  CHECK(contains(ptx, "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16"));
  // A is four 32-bit registers in braces, then B's 64-bit descriptor.
  size_t at = ptx.find("wgmma.mma_async.sync.aligned.m64n64k16");
  REQUIRE(at != std::string::npos);
  std::string line = ptx.substr(at, ptx.find(';', at) - at);
  CHECK(std::count(line.begin(), line.end(), '{') == 2);
  CHECK(contains(line, "p, 1, 1, 0"));
  CHECK_THROWS_WITH(register_a_ptx.compile(Target::parse("sm_100a"), a),
                    Contains("test_wgmma_register_a.cpp") && Contains("not available on sm_100a; it needs sm_90a only"));
}

TEST_CASE("the A fragment's layout covers the 64 x 16 slice once", "[unit]") {
  std::vector<int> seen(64 * 16, 0);
  for (int t = 0; t < 128; ++t)
    for (int reg = 0; reg < 4; ++reg)
      for (int half = 0; half < 2; ++half)
        ++seen[size_t(WgmmaFragmentA<bf16>::row_of(t, reg) * 16 + WgmmaFragmentA<bf16>::col_of(t, reg) + half)];
  CHECK(std::count(seen.begin(), seen.end(), 1) == 64 * 16);
}
