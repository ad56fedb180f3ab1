// The unpacking ldmatrix of the Blackwell a and f targets (ldmatrix.m8n16 .b8x16.b4x16_p64 and
// .b6x16_p32, CuTe's SM100_SU4_DU8x16 / SM100_SU6_DU8x16 LDSM_N) as a TiledMma copy for byte
// fragments: each lane's row address and each register's values against the PTX ISA's rule,
// the instruction in PTX and SASS, FP4 fed to kind::f8f6f4 mma.sync (the copy moves it to the
// bits the atom reads), and the targets that refuse it. None of it runs on a GPU here.
#include <catch2/catch.hpp>

#include <string>

#include "cutejit/atom/sm120/mma_block_scaled.hpp"
#include "cutejit/atom/sm80/copy.hpp"
#include "sass.hpp"
#include "support.hpp"

using namespace cutejit;
using Catch::Contains;

namespace {
const detail::Where here = detail::Where::current();

/// A kind::f8f6f4 warp tile with A and B loaded by the unpacking ldmatrix from padded shared
/// rows (16 values in each 16-byte row), multiplied, stored.
template <class Op, int Bits>
void unpacked_mma(const Tensor<float>& out) {
  using Ldsm4 = LdMatrix<4, false, Bits == 4 ? LdMatrixSource::b4x16_p64 : LdMatrixSource::b6x16_p32>;
  using Ldsm2 = LdMatrix<2, false, Bits == 4 ? LdMatrixSource::b4x16_p64 : LdMatrixSource::b6x16_p32>;
  auto tiled = make_tiled_mma(Op{}, make_layout({1, 1, 1}));
  Int t = thread_idx().x;
  auto thr = tiled.get_slice(t);
  // A (16 x 32 values) and B (8 x 32): a row's 32 values are two padded 16-byte rows.
  Tensor<uint8_t> sA = make_smem_tensor<uint8_t>(make_layout({16, 32}, LayoutRight{}));
  Tensor<uint8_t> sB = make_smem_tensor<uint8_t>(make_layout({8, 32}, LayoutRight{}));
  auto ldsm_a = make_tiled_copy_A(Ldsm4{}, tiled);
  auto ldsm_b = make_tiled_copy_B(Ldsm2{}, tiled);
  auto fa = thr.partition_fragment_A({16, 32});
  auto fb = thr.partition_fragment_B({8, 32});
  copy(ldsm_a, ldsm_a.get_slice(t).partition_S(sA), fa);
  copy(ldsm_b, ldsm_b.get_slice(t).partition_S(sB), fb);
  auto acc = thr.partition_fragment_C({16, 8});
  fill(acc, 0.0f);
  gemm(tiled, acc, fa, fb);
  copy(acc, thr.partition_C(make_tensor(out.data(), make_layout({16, 8}))));
}
}  // namespace

TEST_CASE("the unpacking ldmatrix gives lane 4g + t of register j values 4t ... 4t + 3 of row g of matrix j, row r at lane 8j + r",
          "[unit]") {
  // The PTX ISA's m8n16 rule, checked against the row addresses the tiled copy gives each lane
  // and the fragments of kind::f8f6f4's A (x4) and B (x2), in bytes of a (rows, 32) tile.
  auto tiled = make_tiled_mma(SM120_16x8x32_F32E2M1E2M1F32_TN{}, make_layout({1, 1, 1}));
  for (auto [x, count, rows] : {std::tuple{MmaOperand::a, 4, 16}, std::tuple{MmaOperand::b, 2, 8}}) {
    const detail::TiledMmaShape src = detail::ldmatrix_source(tiled.shape(), x, count, false, 1, here);
    const Layout& fragment = x == MmaOperand::a ? tiled.shape().layout_a : tiled.shape().layout_b;
    // index = row + rows * k in the (rows, 32) tile; lane l's address is its source value 0.
    auto address = [&](int lane) { return (x == MmaOperand::a ? src.layout_a : src.layout_b)(lane, 0).value(); };
    for (int lane = 0; lane < 32; ++lane) {
      const int g = lane / 4, t = lane % 4;
      for (int j = 0; j < count; ++j)
        for (int i = 0; i < 4; ++i) {
          INFO("operand " << (x == MmaOperand::a ? "A" : "B") << " lane " << lane << " register " << j << " byte " << i);
          // Row g of matrix j starts where lane 8j + g points; value 4t + i of it is 4t + i
          // bytes (elements of K) further along the row.
          CHECK(fragment(lane, 4 * j + i).value() == address(8 * j + g) + rows * (4 * t + i));
        }
    }
  }
}

TEST_CASE("the unpacking ldmatrix is LDSM.U4x16P64TO8 / LDSM.U6x16P32TO8 and feeds kind::f8f6f4 mma.sync", "[unit]") {
  Kernel fp4{"ldsm_unpacked_fp4", [](Tensor<f32> out) { unpacked_mma<SM120_16x8x32_F32E2M1E2M1F32_TN, 4>(out); }};
  Kernel fp6{"ldsm_unpacked_fp6", [](Tensor<f32> out) { unpacked_mma<SM120_16x8x32_F32E3M2E2M3F32_TN, 6>(out); }};
  for (const char* target : {"sm_120a", "sm_120f", "sm_121a"}) {
    INFO(target);
    CompiledKernel k = fp4.compile(Target::parse(target), test::vector_arg<float>(128));
    CHECK(test::contains(k.ptx, "ldmatrix.sync.aligned.m8n16.x4.shared.b8x16.b4x16_p64"));
    CHECK(test::contains(k.ptx, "ldmatrix.sync.aligned.m8n16.x2.shared.b8x16.b4x16_p64"));
    std::string sass = test::disassemble(k.cubin, "-sass");
    CHECK(test::count(sass, "LDSM.U4x16P64TO8.M816.4") == 1);
    CHECK(test::count(sass, "LDSM.U4x16P64TO8.M816.2") == 1);
    CHECK(test::count(sass, "QMMA.16832.F32.E2M1.E2M1") == 1);
    test::check_no_local_memory(k.cubin, k.name, sass);
    CompiledKernel k6 = fp6.compile(Target::parse(target), test::vector_arg<float>(128));
    CHECK(test::contains(k6.ptx, "ldmatrix.sync.aligned.m8n16.x4.shared.b8x16.b6x16_p32"));
    std::string sass6 = test::disassemble(k6.cubin, "-sass");
    CHECK(test::count(sass6, "LDSM.U6x16P32TO8.M816.4") == 1);
    CHECK(test::count(sass6, "QMMA.16832.F32.E3M2.E2M3") == 1);
  }
  // kind::f8f6f4 reads e2m1 from bits 2-5, the load leaves it in bits 0-3: the copy shifts each
  // of the six registers, four values at once, and nothing else; FP6 needs no shift.
  const std::string fp4_ptx = fp4.compile(Target::parse("sm_120a"), test::vector_arg<float>(128)).ptx;
  const std::string fp6_ptx = fp6.compile(Target::parse("sm_120a"), test::vector_arg<float>(128)).ptx;
  CHECK(test::count(fp4_ptx, "shl.b32") - test::count(fp6_ptx, "shl.b32") == 6);
  CHECK(test::count(fp4_ptx, ", 2;") - test::count(fp6_ptx, ", 2;") == 6);
}

TEST_CASE("the unpacking ldmatrix on a target without it is an error at the user's line", "[unit]") {
  // The load alone: every Blackwell a and f target has it, sm_90a and plain sm_100 do not.
  Kernel load{"ldsm_unpacked_load", [](Tensor<u8> out) {
                auto tiled = make_tiled_mma(SM120_16x8x32_F32E2M1E2M1F32_TN{}, make_layout({1, 1, 1}));
                Int t = thread_idx().x;
                auto ldsm = make_tiled_copy_A(SM100_SU4_DU8x16_LDSM_N<4>{}, tiled);
                Tensor<uint8_t> sA = make_smem_tensor<uint8_t>(make_layout({16, 32}, LayoutRight{}));
                auto fa = tiled.get_slice(t).partition_fragment_A({16, 32});
                copy(ldsm, ldsm.get_slice(t).partition_S(sA), fa);
                copy(fa, tiled.get_slice(t).partition_A(make_tensor(out.data(), make_layout({16, 32}, LayoutRight{}))));
              }};
  for (const char* target : {"sm_100a", "sm_100f", "sm_103a", "sm_110a"}) {
    INFO(target);
    CompiledKernel k = load.compile(Target::parse(target), test::vector_arg<uint8_t>(512));
    CHECK(test::count(test::disassemble(k.cubin, "-sass"), "LDSM.U4x16P64TO8.M816.4") == 1);
  }
  for (const char* target : {"sm_90a", "sm_100", "sm_89"})
    CHECK_THROWS_WITH(load.compile(Target::parse(target), test::vector_arg<uint8_t>(512)),
                      Contains("test_ldmatrix_unpacked.cpp") &&
                          Contains(std::string("ldmatrix.m8n16.b8x16.b4x16_p64 is not available on ") + target));
}
