// wgmma with A from registers, traced on the CPU: the instruction reaches the PTX with four
// A registers, and other targets are refused (the fragment's layout: atom/test_wgmma_layouts.cpp).
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
  auto thr = make_tiled_mma(SM90_64xNx16_F32BF16BF16_RS<64>{}).get_slice(thread_idx().x);
  Tensor<float> acc = thr.partition_fragment_C({64, 64});
  Tensor<bf16> fa = thr.partition_fragment_A({64, 16});
  copy(thr.partition_A(make_tensor(a.data(), make_layout({64, 16}, LayoutRight{}))), fa);
  WgmmaOperand<bf16> B(tile, TmaSwizzle::bytes32);
  wgmma(acc, fa(_, 0, 0), B.slice(0, 0));
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
