// The transposing byte ldmatrix of the Blackwell a and f targets (ldmatrix.m16n16.x{1,2}.trans
// .b8, and .b8x16.b4x16_p64 / .b6x16_p32 unpacking FP4 / FP6; CuTe's SM100_U8x16_LDSM_T and
// SM100_SU4/SU6_DU8x16_LDSM_T) as a TiledMma copy for operands stored M- or N-major: each
// lane's row address and each register's bytes against the PTX ISA's rule, the instruction in
// PTX and SASS before mma.sync, the TiledMmas it cannot serve, and the targets that refuse it.
// None of it runs on a GPU here.
#include <catch2/catch.hpp>

#include <string>

#include "cutejit/atom/sm120/mma_block_scaled.hpp"
#include "cutejit/atom/sm80/copy.hpp"
#include "cutejit/atom/sm80/mma.hpp"
#include "sass.hpp"
#include "support.hpp"

using namespace cutejit;
using Catch::Contains;

namespace {
const detail::Where here = detail::Where::current();

/// A warp's 16 x 16 x 32 product (two n8 atoms) with A stored M-major and B N-major in shared
/// memory, both loaded by the transposing ldmatrix, stored as f32.
template <class Op, class Load, Element T>
void transposed_mma(const Tensor<float>& out) {
  auto tiled = make_tiled_mma(Op{}, make_layout({1, 1, 1}));
  Int t = thread_idx().x;
  auto thr = tiled.get_slice(t);
  // Column-major (M, K) and (N, K) tiles: a row of 16 M (N) values per K, 16 bytes each.
  Tensor<T> sA = make_smem_tensor<T>(make_layout({16, 32}));
  Tensor<T> sB = make_smem_tensor<T>(make_layout({16, 32}));
  auto ldsm_a = make_tiled_copy_A(Load{}, tiled);
  auto ldsm_b = make_tiled_copy_B(Load{}, tiled);
  auto fa = thr.partition_fragment_A({16, 32});
  auto fb = thr.partition_fragment_B({16, 32});
  copy(ldsm_a, ldsm_a.get_slice(t).partition_S(sA), fa);
  copy(ldsm_b, ldsm_b.get_slice(t).partition_S(sB), fb);
  auto acc = thr.partition_fragment_C({16, 16});
  fill(acc, 0.0f);
  gemm(tiled, acc, fa, fb);
  copy(acc, thr.partition_C(make_tensor(out.data(), make_layout({16, 16}))));
}
}  // namespace

TEST_CASE("ldmatrix.m16n16.trans gives lane 4g + t, register 2j + h, byte i the value at K row 16j + 4t + i, column g + 8h",
          "[unit]") {
  // The PTX ISA's rule, checked against the row address the tiled copy gives each lane and the
  // A fragment (one x2) and the two B fragments side by side (one x2) of the 8-bit mma.sync.
  auto tiled = make_tiled_mma(SM89_16x8x32_F32E4M3E4M3F32_TN{}, make_layout({1, 1, 1}));
  const detail::TiledMmaShape a = detail::ldmatrix_source(tiled.shape(), MmaOperand::a, 2, true, 1, here);
  const detail::TiledMmaShape b = detail::ldmatrix_source(tiled.shape(), MmaOperand::b, 2, true, 1, here);
  CHECK(b.atom_n == 16);  // the copy tiles N by two atoms
  // Offsets in the copy's 16-wide (16, 32) tile, column + 16 K row; lane l's row address is
  // its source value 0, the 16 bytes of the row at source values 0 ... 15.
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane / 4, t = lane % 4;
    CHECK(a.layout_a(lane, 0).value() == 16 * (lane % 16 + 16 * (lane / 16)));  // lane 16j + r: row r of matrix j
    for (int v = 0; v < 16; ++v) CHECK(a.layout_a(lane, v).value() == a.layout_a(lane, 0).value() + v);
    for (int j = 0; j < 2; ++j)
      for (int h = 0; h < 2; ++h)
        for (int i = 0; i < 4; ++i) {
          INFO("lane " << lane << " register " << 2 * j + h << " byte " << i);
          const int64_t row_address = a.layout_a(16 * j + 4 * t + i, 0).value();
          // A, (16, 32) column-major: register 2j + h is A's own register 2j + h.
          CHECK(tiled.shape().layout_a(lane, 4 * (2 * j + h) + i).value() == row_address + g + 8 * h);
          // B, (8, 32) per atom: register 2j + h is register j of atom h, whose column n is
          // column n + 8h of the pair.
          const int64_t o = tiled.shape().layout_b(lane, 4 * j + i).value(), n = o % 8, k = o / 8;
          CHECK((n + 8 * h) + 16 * k == b.layout_b(16 * j + 4 * t + i, 0).value() + g + 8 * h);
        }
  }
}

TEST_CASE("ldmatrix.m16n16.trans fills A and pairs of B atoms before mma.sync: LDSM.T in SASS on the Blackwell targets", "[unit]") {
  Kernel fp8{"ldsm_t_fp8", [](Tensor<f32> out) { transposed_mma<SM89_16x8x32_F32E4M3E4M3F32_TN, SM100_U8x16_LDSM_T, f8e4m3>(out); }};
  Kernel fp4{"ldsm_t_fp4", [](Tensor<f32> out) {
               transposed_mma<SM120_16x8x32_F32E2M1E2M1F32_TN, SM100_SU4_DU8x16_LDSM_T<2>, uint8_t>(out);
             }};
  for (const char* target : {"sm_120a", "sm_120f", "sm_121a"}) {
    INFO(target);
    CompiledKernel k = fp8.compile(Target::parse(target), test::vector_arg<float>(256));
    // One load for A, one for both B atoms.
    CHECK(test::count(k.ptx, "ldmatrix.sync.aligned.m16n16.x2.trans.shared.b8 ") == 2);
    std::string sass = test::disassemble(k.cubin, "-sass");
    INFO(sass);
    CHECK(test::count(sass, "LDSM.8.MT1616.2 ") == 2);
    CHECK(test::count(sass, "QMMA.16832.F32.E4M3.E4M3") == 2);
    CHECK(test::count(sass, "PRMT") == 0);  // the registers arrive as the atoms take them
    test::check_no_local_memory(k.cubin, k.name, sass);
    CompiledKernel k4 = fp4.compile(Target::parse(target), test::vector_arg<float>(256));
    CHECK(test::count(k4.ptx, "ldmatrix.sync.aligned.m16n16.x2.trans.shared.b8x16.b4x16_p64") == 2);
    std::string sass4 = test::disassemble(k4.cubin, "-sass");
    CHECK(test::count(sass4, "LDSM.U4x16P64TO8.MT1616.2 ") == 2);
    CHECK(test::count(sass4, "QMMA.16832.F32.E2M1.E2M1") == 2);
  }
  // kind::f8f6f4 reads e2m1 from bits 2-5: the copy shifts each of the eight registers.
  const std::string fp4_ptx = fp4.compile(Target::parse("sm_120a"), test::vector_arg<float>(256)).ptx;
  CHECK(test::count(fp4_ptx, "shl.b32") - test::count(fp8.compile(Target::parse("sm_120a"), test::vector_arg<float>(256)).ptx, "shl.b32") == 8);
}

TEST_CASE("ldmatrix.m16n16.trans on a fragment it does not fit, a TiledMma with atoms along N, or a target without it is an error",
          "[unit]") {
  auto tiled = make_tiled_mma(SM89_16x8x32_F32E4M3E4M3F32_TN{}, make_layout({1, 1, 1}));
  // K = 32 a fragment: x1 loads half of it.
  CHECK_THROWS_WITH(detail::ldmatrix_source(tiled.shape(), MmaOperand::a, 1, true, 1, here),
                    Contains("ldmatrix.m16n16.x1.trans loads 2 registers of 16 K values per thread") && Contains("use LdMatrix<2, true>"));
  // Two atoms along N put a load's two B blocks in different warps.
  auto two_n = make_tiled_mma(SM89_16x8x32_F32E4M3E4M3F32_TN{}, make_layout({1, 2, 1}));
  CHECK_THROWS_WITH(detail::ldmatrix_source(two_n.shape(), MmaOperand::b, 2, true, 1, here),
                    Contains("fills two B atoms side by side along N") && Contains("tile N with one atom"));
  // Every Blackwell a and f target has the load; sm_90a, plain sm_100 and sm_89 do not.
  Kernel fp8{"ldsm_t_fp8_any", [](Tensor<f32> out) { transposed_mma<SM89_16x8x32_F32E4M3E4M3F32_TN, SM100_U8x16_LDSM_T, f8e4m3>(out); }};
  for (const char* target : {"sm_100a", "sm_100f", "sm_103a", "sm_110a"}) {
    INFO(target);
    CompiledKernel k = fp8.compile(Target::parse(target), test::vector_arg<float>(256));
    CHECK(test::count(test::disassemble(k.cubin, "-sass"), "LDSM.8.MT1616.2 ") == 2);
  }
  for (const char* target : {"sm_90a", "sm_100", "sm_89"})
    CHECK_THROWS_WITH(fp8.compile(Target::parse(target), test::vector_arg<float>(256)),
                      Contains("test_ldmatrix_transposed.cpp") &&
                          Contains(std::string("ldmatrix.m16n16.trans.b8 is not available on ") + target));
}
