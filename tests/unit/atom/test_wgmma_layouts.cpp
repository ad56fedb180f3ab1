// The wgmma atoms' thread-value layouts against the PTX ISA's wgmma fragments ("Register
// fragments for wgmma": the D matrix and the A matrix in registers), transcribed here as
// row/column formulas of the warpgroup thread t; the TiledMma partitions and the stmatrix copy
// built on them; and the traced gemm over descriptors and register fragments.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <cutejit/cutejit.hpp>

#include "sass.hpp"
#include "support.hpp"

using namespace cutejit;
using Catch::Matchers::Contains;
using test::count;

namespace {
const Target sm90a = Target::parse("sm_90a");

// The ISA's D fragment of m64nNk*: value i of thread t.
int d_row(int t, int i) { return 16 * (t / 32) + (t % 32) / 4 + 8 * ((i / 2) % 2); }
int d_col(int t, int i) { return 8 * (i / 4) + 2 * (t % 4) + (i % 2); }
// The ISA's A fragment of m64nNk16 in registers (16-bit): register r of thread t holds two K
// neighbours, the lower one in its low half; value 2 r + h is its half h.
int a_row(int t, int v) { return 16 * (t / 32) + (t % 32) / 4 + 8 * ((v / 2) % 2); }
int a_col(int t, int v) { return 2 * (t % 4) + 8 * (v / 4) + v % 2; }
}  // namespace

TEST_CASE("the wgmma C layout is the ISA's D fragment, for every N, and covers the tile once", "[unit]") {
  for (int n : {8, 16, 64, 128, 256}) {
    INFO("N = " << n);
    Layout c = detail::wgmma_layout_c(n);
    REQUIRE(size(c).value() == 128 * n / 2);
    std::vector<int> seen(size_t(64 * n), 0);
    for (int t = 0; t < 128; ++t)
      for (int i = 0; i < n / 2; ++i) {
        int64_t index = c(t, i).value();
        INFO("thread " << t << " value " << i);
        CHECK(index == d_row(t, i) + 64 * d_col(t, i));
        ++seen[size_t(index)];
      }
    for (int s : seen) REQUIRE(s == 1);
  }
  CHECK(to_string(SM90_64xNx16_F32BF16BF16_SS<256>::layout_c()) == "((4,8,4),(2,2,32)):((128,1,16),(64,8,512))");
  CHECK(to_string(SM90_64xNx16_F32BF16BF16_SS<256>::layout_a()) == "(128,(64,16)):(0,(1,64))");
  CHECK(to_string(SM90_64xNx32_F32E4M3E4M3_SS_TN<128>::layout_b()) == "(128,(128,32)):(0,(1,128))");
  CHECK(SM90_64xNx32_F32E4M3E4M3_SS_TN<128>::name() == "wgmma.m64n128k32.f32.f8e4m3.f8e4m3");
  CHECK(WgmmaSS<bf16, 64, WgmmaMajor::mn>::name() == "wgmma.m64n64k16.f32.bf16.bf16 A MN-major");
}

TEST_CASE("the wgmma register A layout is the ISA's A fragment", "[unit]") {
  Layout a = SM90_64xNx16_F32BF16BF16_RS<64>::layout_a();
  CHECK(to_string(a) == "((4,8,4),(2,2,2)):((128,1,16),(64,8,512))");
  std::vector<int> seen(64 * 16, 0);
  for (int t = 0; t < 128; ++t)
    for (int v = 0; v < 8; ++v) {
      int64_t index = a(t, v).value();
      INFO("thread " << t << " value " << v);
      CHECK(index == a_row(t, v) + 64 * a_col(t, v));
      ++seen[size_t(index)];
    }
  for (int s : seen) REQUIRE(s == 1);
}

TEST_CASE("the m64nN C layout is N / 64 m64n64 ones side by side (the GEMM's epilogue chunks)", "[unit]") {
  Layout wide = detail::wgmma_layout_c(256), chunk = detail::wgmma_layout_c(64);
  for (int c = 0; c < 4; ++c)
    for (int t = 0; t < 128; ++t)
      for (int v = 0; v < 32; ++v) REQUIRE(wide(t, 32 * c + v).value() == chunk(t, v).value() + 64 * 64 * c);
}

TEST_CASE("two warpgroups tiled along M: each thread's accumulators, and its rows of A", "[unit]") {
  auto tiled = make_tiled_mma(SM90_64xNx16_F32BF16BF16_SS<128>{}, make_layout({2, 1, 1}));
  CHECK(tiled.size() == 256);
  CHECK(tiled.tile_m() == 128);
  CHECK(tiled.tile_n() == 128);
  // Thread 128 + t of the tiling is thread t of the second warpgroup: rows 64 ... 127.
  Layout tile = make_layout({128, 128});  // index m + 128 n
  for (int t : {0, 37, 128 + 37, 255}) {
    SlicedLayout mine = detail::mma_partition(tiled.shape(), MmaOperand::c, tile, Integer(t), detail::Where::current());
    CHECK(to_string(mine.layout.shape()) == "((2,2,16),1,1)");
    for (int i = 0; i < 64; ++i) {
      int64_t index = mine.offset.value() + mine.layout(i, 0, 0).value();
      INFO("thread " << t << " value " << i);
      CHECK(index == 64 * (t / 128) + d_row(t % 128, i) + 128 * d_col(t % 128, i));
    }
  }
  // A from shared memory: every thread of a warpgroup sees its 64 rows (through the descriptor).
  SlicedLayout a = detail::mma_partition(tiled.shape(), MmaOperand::a, make_layout({128, 64}), Integer(130), detail::Where::current());
  CHECK(a.offset.value() == 64);
  CHECK(to_string(a.layout) == "((64,16),1,4):((1,128),0,2048)");
}

TEST_CASE("stmatrix destinations: each lane's row address in a TiledMma's C tile, per the ISA", "[unit]") {
  // stmatrix: lane l addresses row l % 8 of matrix l / 8; matrix j of a group of Count is the
  // fragment's register (packed pair) g Count + j, whose row r is held by lanes 4 r ... 4 r + 3.
  auto check = [](auto atom) {
    const int n = decltype(atom)::n;
    INFO("N = " << n);
    detail::TiledMmaShape d = detail::stmatrix_destination(make_tiled_mma(atom).shape(), 4, detail::Where::current());
    for (int t = 0; t < 128; ++t)
      for (int g = 0; g < n / 16; ++g) {
        int lane = t % 32, r = lane % 8, p = 4 * g + lane / 8;  // the register whose row this lane writes
        int owner = 32 * (t / 32) + 4 * r;                      // the first lane holding that row
        for (int e = 0; e < 8; ++e) {
          INFO("thread " << t << " group " << g << " value " << e);
          CHECK(d.layout_c(t, IntTuple{e, g}).value() == d_row(owner, 2 * p) + 64 * (d_col(owner, 2 * p) + e));
        }
      }
  };
  check(WgmmaSS<bf16, 16>{});
  check(WgmmaSS<bf16, 64>{});
  check(WgmmaSS<bf16, 256>{});
  // mma.sync's m16n8 C has two registers of pairs: one stmatrix.x2, not an x4.
  auto sync = make_tiled_mma(SM80_16x8x16_F32BF16BF16F32_TN{});
  CHECK_NOTHROW(detail::stmatrix_destination(sync.shape(), 2, detail::Where::current()));
  CHECK_THROWS_WITH(detail::stmatrix_destination(sync.shape(), 4, detail::Where::current()),
                    Contains("stmatrix.x4 stores 4 registers per instruction, but the C fragment of mma.sync.m16n8k16.f32.bf16.bf16.f32 has 2"));
}

namespace {
// Two warpgroups: a 128 x 64 x 32 tile of C += A * B with A and B in 128-byte swizzled shared
// tiles, then converted to bf16 and stored by the stmatrix copy into a row-major C tile.
Kernel tiled_wgmma{"tiled_wgmma", [](Tensor<bf16> out) {
  Pointer<bf16> a = dynamic_shared_aligned<bf16>(1024), b = dynamic_shared_aligned<bf16>(1024, 128 * 64 * 2);
  Int t = thread_idx().x;
  auto tiled = make_tiled_mma(SM90_64xNx16_F32BF16BF16_SS<64>{}, make_layout({2, 1, 1}));
  auto thr = tiled.get_slice(t);
  Tensor<float> acc = thr.partition_fragment_C({128, 64});
  clear(acc);
  WgmmaOperand<bf16> A(a + (t / 128) * (64 * 64), TmaSwizzle::bytes128), B(b, TmaSwizzle::bytes128);
  wgmma_fence();
  gemm(tiled, acc, A, B);
  wgmma_commit_group();
  wgmma_wait_group(0);
  wgmma_fence_operands(acc);
  Tensor<bf16> c = thr.partition_fragment_C<bf16>({128, 64});
  // Pairs converted together are one cvt.rn.bf16x2.f32 each, kept as the fragment's 32-bit
  // registers, which the stmatrix copy reads.
  for (int p = 0; p < 16; ++p)
    recast<uint32_t>(c)(IntTuple(p)) = pack_pair(cast<bf16>(F32(acc(IntTuple(2 * p)))), cast<bf16>(F32(acc(IntTuple(2 * p + 1)))));
  Tensor<bf16> sC = make_tensor(shared_array<bf16>(128 * 64, 1024), make_layout({128, 64}, LayoutRight{}));
  auto r2s = make_tiled_copy_C(StMatrix<4>{}, tiled);
  copy(r2s, c, r2s.get_slice(t).partition_D(sC));
  sync_threads();
  for (int i = 0; i < 32; ++i) out(t * 32 + i) = Value<bf16>(sC.data()[t * 32 + i]);
}};
}  // namespace

TEST_CASE("gemm over a tiled wgmma: one wgmma per K step, one stmatrix.x4 per 16 columns", "[unit]") {
  std::string ptx = tiled_wgmma.compile(sm90a, test::vector_arg<bf16>(128 * 64)).ptx;
  CHECK(count(ptx, "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16") == 4);  // 64 bytes of K: 4 k16 steps
  CHECK(count(ptx, "stmatrix.sync.aligned.m8n8.x4.shared.b16") == 4);
  CHECK(count(ptx, "cvt.rn.bf16x2.f32") == 16);
}

TEST_CASE("wgmma with A in registers over a tiled atom: one wgmma per k16 slice of the fragment", "[unit]") {
  Kernel rs{"tiled_wgmma_rs", [](Tensor<bf16> a, Tensor<f32> out) {
    Pointer<bf16> b = dynamic_shared_aligned<bf16>(1024);
    Int t = thread_idx().x;
    auto tiled = make_tiled_mma(SM90_64xNx16_F32BF16BF16_RS<64>{});
    auto thr = tiled.get_slice(t);
    Tensor<float> acc = thr.partition_fragment_C({64, 64});
    clear(acc);
    Tensor<bf16> gA = make_tensor(a.data(), make_layout({64, 32}, LayoutRight{}));
    Tensor<bf16> fa = thr.partition_fragment_A({64, 32});
    copy(thr.partition_A(gA), fa);
    WgmmaOperand<bf16> B(b, TmaSwizzle::bytes64);  // 64 rows of 64 bytes: two k16 steps
    wgmma_fence();
    gemm(tiled, acc, fa, B);
    wgmma_commit_group();
    wgmma_wait_group(0);
    wgmma_fence_operands(acc);
    copy(acc, thr.partition_C(make_tensor(out.data(), make_layout({64, 64}, LayoutRight{}))));
  }};
  std::string ptx = rs.compile(sm90a, test::vector_arg<bf16>(64 * 32), test::vector_arg<float>(64 * 64)).ptx;
  CHECK(count(ptx, "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16") == 2);
}

TEST_CASE("a device_assert in a kernel that issues wgmma traps without printing, and its wgmma stay asynchronous", "[unit]") {
  // printf is a call to vprintf, and ptxas serializes every wgmma of a function that makes any
  // call (C7510): a wait after each one. So the assert keeps only its trap.
  Kernel k{"wgmma_with_assert", [](Tensor<bf16> a, Tensor<f32> out) {
    Int t = thread_idx().x;
    device_assert(a.shape(0) >= 64 * 16, "a holds the 64 x 16 tile");
    Pointer<bf16> s = dynamic_shared_aligned<bf16>(1024);
    auto tiled = make_tiled_mma(SM90_64xNx16_F32BF16BF16_SS<64>{});
    auto thr = tiled.get_slice(t);
    Tensor<float> acc = thr.partition_fragment_C({64, 64});
    clear(acc);
    wgmma_fence();
    gemm(tiled, acc, WgmmaOperand<bf16>(s, TmaSwizzle::bytes32), WgmmaOperand<bf16>(s + 1024, TmaSwizzle::bytes32));
    wgmma_commit_group();
    gemm(tiled, acc, WgmmaOperand<bf16>(s, TmaSwizzle::bytes32), WgmmaOperand<bf16>(s + 1024, TmaSwizzle::bytes32));
    wgmma_commit_group();
    wgmma_wait_group(0);
    wgmma_fence_operands(acc);
    copy(acc, thr.partition_C(make_tensor(out.data(), make_layout({64, 64}, LayoutRight{}))));
  }};
  CompiledKernel c = k.compile(sm90a, test::vector_arg<bf16>(64 * 16), test::vector_arg<float>(64 * 64));
  CHECK(count(c.ptx, "wgmma.mma_async") == 2);
  CHECK(count(c.ptx, "trap;") == 1);
  CHECK(count(c.ptx, "vprintf") == 0);
  CHECK_FALSE(test::contains(c.ptx, "a holds the 64 x 16 tile"));
  test::check_wgmma_not_serialized(c.ptx, c.cubin);
}

TEST_CASE("a wgmma accumulator is the register A of the next wgmma, 16 columns at a time", "[unit]") {
  // The PTX ISA's fragments, per thread (lane l of warp w of the warpgroup): accumulator value
  // i = a + 2 b + 4 c of m64nN is at row 16 w + l / 4 + 8 b, column 8 c + 2 (l % 4) + a; register
  // A value j = a + 2 b + 4 c of m64k16 is at row 16 w + l / 4 + 8 b, column 8 c + 2 (l % 4) + a.
  // So K block kk (columns 16 kk ...) of A is accumulator values 8 kk ... 8 kk + 7, in order.
  detail::Where w = detail::Where::current();
  auto s = make_tiled_mma(SM90_64xNx16_F32BF16BF16_SS<128>{}, make_layout({2, 1, 1}));
  auto pv = make_tiled_mma(SM90_64xNx16_F32BF16BF16_RS<64, WgmmaMajor::mn>{}, make_layout({2, 1, 1}));
  auto map = detail::accumulator_to_a(s.shape(), pv.shape(), 8, w);
  REQUIRE(map.size() == 64);
  for (int kk = 0; kk < 8; ++kk)
    for (int j = 0; j < 8; ++j) {
      INFO("K block " << kk << ", A value " << j);
      CHECK(map[size_t(8 * kk + j)] == std::pair<int, int>{8 * kk + j, 0});
    }
  // A K block that straddles accumulator atoms unevenly has no such map.
  auto narrow = make_tiled_mma(SM90_64xNx16_F32BF16BF16_SS<24>{}, make_layout({2, 1, 1}));
  CHECK_THROWS_WITH(detail::accumulator_to_a(narrow.shape(), pv.shape(), 3, w), Contains("a multiple or a divisor of the first's N (24)"));
}

TEST_CASE("wgmma atoms refuse fragments and operands that are not theirs, naming the line", "[unit]") {
  Kernel major{"wgmma_wrong_major", [](Tensor<f32> out) {
    auto tiled = make_tiled_mma(SM90_64xNx16_F32BF16BF16_SS<64>{});
    Tensor<float> acc = tiled.get_slice(thread_idx().x).partition_fragment_C({64, 64});
    WgmmaOperand<bf16> A(dynamic_shared_aligned<bf16>(1024), TmaSwizzle::bytes128);
    WgmmaOperand<bf16> B = WgmmaOperand<bf16>::mn_major(dynamic_shared_aligned<bf16>(1024, 8192), TmaSwizzle::bytes128, 64);
    gemm(tiled, acc, A, B);
  }};
  CHECK_THROWS_WITH(major.compile(sm90a, test::vector_arg<float>()),
                    Contains("test_wgmma_layouts.cpp") &&
                        Contains("gemm's operands are K-major (A) and MN-major (B), but the atom is wgmma.m64n64k16.f32.bf16.bf16"));
  Kernel small{"wgmma_wrong_fragment", [](Tensor<f32> out) {
    auto tiled = make_tiled_mma(SM90_64xNx16_F32BF16BF16_SS<128>{});
    Tensor<float> acc = make_rmem_tensor<float>(IntTuple{32, 1, 1});
    WgmmaOperand<bf16> A(dynamic_shared_aligned<bf16>(1024), TmaSwizzle::bytes128);
    gemm(tiled, acc, A, A);
  }};
  CHECK_THROWS_WITH(small.compile(sm90a, test::vector_arg<float>()),
                    Contains("test_wgmma_layouts.cpp") && Contains("gemm's accumulator fragment (32,1,1):(1,0,0) is not a (V, RestM, "
                                                                   "RestN) register tile with the 64 values per thread"));
  Kernel global{"wgmma_global_acc", [](Tensor<f32> out) {
    WgmmaOperand<bf16> A(dynamic_shared_aligned<bf16>(1024), TmaSwizzle::bytes128);
    wgmma(make_tensor(out.data(), make_layout(32)), A.slice(0, 0), A.slice(0, 0));
  }};
  CHECK_THROWS_WITH(global.compile(sm90a, test::vector_arg<float>()),
                    Contains("test_wgmma_layouts.cpp") && Contains("wgmma's accumulators are a register tensor of N / 2 f32 values in register order") && Contains("a tensor outside registers 32:1"));
  Kernel column_major{"stmatrix_column_major", [](Tensor<f32> out) {
    auto tiled = make_tiled_mma(SM90_64xNx16_F32BF16BF16_SS<64>{});
    auto thr = tiled.get_slice(thread_idx().x);
    Tensor<bf16> c = thr.partition_fragment_C<bf16>({64, 64});
    clear(c);
    auto r2s = make_tiled_copy_C(StMatrix<4>{}, tiled);
    copy(r2s, c, r2s.get_slice(thread_idx().x).partition_D(make_tensor(shared_array<bf16>(64 * 64, 16), make_layout({64, 64}))));
  }};
  CHECK_THROWS_WITH(column_major.compile(sm90a, test::vector_arg<float>()),
                    Contains("test_wgmma_layouts.cpp") && Contains("stmatrix writes 16 contiguous bytes per row address") &&
                        Contains("store C row-major"));
}
