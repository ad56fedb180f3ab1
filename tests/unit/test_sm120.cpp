// The sm_120 family's block-scaled path, compile-verified: the microscaling formats' host
// conversions against their definitions, their GPU conversions' PTX and SASS, the block-scaled
// mma.sync atoms' fragments against the PTX ISA's formulas, and each kind's SASS. None of it
// runs on a GPU in these tests.
#include <catch2/catch.hpp>

#include <cctype>
#include <cmath>
#include <string>

#include "cutejit/arch/sm100/scale_factors.hpp"
#include "cutejit/atom/sm120/mma_block_scaled.hpp"
#include "cutejit/dsl/narrow_floats.hpp"
#include "cutejit/layout/blocked_scales.hpp"
#include "gemm_block_scaled_sm120.hpp"
#include "gemv_block_scaled_sm120.hpp"
#include "sass.hpp"
#include "support.hpp"

using namespace cutejit;
using Catch::Contains;

namespace {
/// A sign-magnitude minifloat's value from its definition: e exponent bits of `bias`, m
/// mantissa bits, subnormals at exponent 0, no infinities.
double minifloat(unsigned code, int e, int m, int bias) {
  const unsigned magnitude = code & ((1u << (e + m)) - 1), exponent = magnitude >> m, mantissa = magnitude & ((1u << m) - 1);
  double v = exponent == 0 ? std::ldexp(double(mantissa), 1 - bias - m) : std::ldexp(1.0 + std::ldexp(mantissa, -m), int(exponent) - bias);
  return code >> (e + m) & 1 ? -v : v;
}
}  // namespace

TEST_CASE("FP4 e2m1: the sixteen values, round to nearest even, saturation, NaN to +6", "[unit]") {
  const float values[16] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6, -0.0f, -0.5f, -1, -1.5f, -2, -3, -4, -6};
  for (unsigned c = 0; c < 16; ++c) {
    e2m1 x;
    x.bits = uint8_t(c);
    CHECK(float(x) == values[c]);
    CHECK(e2m1(values[c]).bits == c);
  }
  // Halfway cases go to the even code: 0.25 -> 0, 0.75 -> 1, 1.25 -> 1, 2.5 -> 2, 3.5 -> 4, 5 -> 4.
  const std::pair<float, float> ties[] = {{0.25f, 0}, {0.75f, 1}, {1.25f, 1}, {1.75f, 2}, {2.5f, 2}, {3.5f, 4}, {5, 4}};
  for (auto [x, want] : ties) {
    INFO(x);
    CHECK(float(e2m1(x)) == want);
    CHECK(float(e2m1(-x)) == -want);
  }
  CHECK(float(e2m1(0.26f)) == 0.5f);
  CHECK(float(e2m1(100)) == 6);
  CHECK(float(e2m1(-INFINITY)) == -6);
  CHECK(e2m1(NAN).bits == 0x7);  // NaN becomes +MAX_NORM, as cvt.satfinite does
  CHECK(e2m1(-0.0f).bits == 0x8);
  e2m1x2 pair(e2m1(1.5f), e2m1(-4));
  CHECK(pair.bits == 0xE3);  // the first value in the low nibble
  CHECK(float(pair.first()) == 1.5f);
  CHECK(float(pair.second()) == -4);
}

TEST_CASE("host packing: FP4 two to a byte (an odd count refused at the caller's line), scales into the blocked layout", "[unit]") {
  const std::vector<float> v = {1.5f, -4, 0.5f, 6};
  CHECK(pack_e2m1(v) == std::vector<uint8_t>{0xE3, 0x71});  // 1.5 = 0x3, -4 = 0xE; 0.5 = 0x1, 6 = 0x7
  CHECK(unpack_e2m1(pack_e2m1(v)) == v);
  CHECK_THROWS_WITH(pack_e2m1(std::vector<float>{1, 2, 3}),
                    Contains("test_sm120.cpp") && Contains("pack_e2m1 packs FP4 values two to a byte; 3 values leave the last byte half full"));
  // 200 rows of 6 blocks: padded to 256 x 8, each scale where cuBLAS's definition of the layout
  // (sm100::blocked_scale_offset, written from it) puts it, the padding 0x7f.
  const int64_t rows = 200, blocks = 6;
  std::vector<uint8_t> row_major(size_t(rows * blocks));
  for (size_t i = 0; i < row_major.size(); ++i) row_major[i] = uint8_t(i * 7 % 251);
  std::vector<uint8_t> blocked = blocked_scales(row_major, rows, blocks, 0x7f);
  REQUIRE(blocked.size() == 256 * 8);
  std::vector<bool> written(blocked.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t at = sm100::blocked_scale_offset(r, b, blocks);
      CHECK(blocked[size_t(at)] == row_major[size_t(r * blocks + b)]);
      written[size_t(at)] = true;
    }
  for (size_t i = 0; i < blocked.size(); ++i)
    if (!written[i]) CHECK(blocked[i] == 0x7f);
  CHECK_THROWS_WITH(blocked_scales(row_major, rows, 7), Contains("test_sm120.cpp") && Contains("not 1200 bytes for 200 x 7"));
}

TEST_CASE("FP6 e2m3 and e3m2 and the scale formats against their definitions", "[unit]") {
  for (unsigned c = 0; c < 64; ++c) {
    e2m3 a;
    a.bits = uint8_t(c);
    e3m2 b;
    b.bits = uint8_t(c);
    INFO(c);
    CHECK(float(a) == float(minifloat(c, 2, 3, 1)));
    CHECK(float(b) == float(minifloat(c, 3, 2, 3)));
    CHECK(e2m3(float(a)).bits == c);
    CHECK(e3m2(float(b)).bits == c);
  }
  CHECK(float(e2m3(1000)) == 7.5f);
  CHECK(float(e3m2(1000)) == 28);
  CHECK(float(e3m2(-29)) == -28);
  CHECK(float(e2m3(0.0625f)) == 0);      // half the smallest subnormal (0.125): ties to even, 0
  CHECK(float(e2m3(0.1875f)) == 0.25f);  // between 0.125 and 0.25: ties to the even code, 0.25
  CHECK(e3m2(NAN).bits == 0x1f);
  // UE8M0: 2^(bits - 127); toward zero by default, up on request.
  CHECK(ue8m0(1.0f).bits == 127);
  CHECK(ue8m0(3.0f).bits == 128);
  CHECK(ue8m0(3.0f, true).bits == 129);
  CHECK(ue8m0(4.0f, true).bits == 129);
  CHECK(ue8m0(0.0f).bits == 0);
  CHECK(ue8m0(-5.0f).bits == 0);
  CHECK(ue8m0(INFINITY).bits == 0xfe);
  CHECK(ue8m0(NAN).bits == 0xff);
  CHECK(float(ue8m0(0.375f)) == 0.25f);
  ue8m0 s;
  s.bits = 0xfe;
  CHECK(float(s) == std::ldexp(1.0f, 127));
  // UE4M3: E4M3's magnitudes (bias 7), largest 448 (0x7E), 0x7F NaN, negatives to 0.
  for (unsigned c = 0; c < 0x7f; ++c) {
    ue4m3 x;
    x.bits = uint8_t(c);
    CHECK(float(x) == float(minifloat(c, 4, 3, 7)));
  }
  CHECK(ue4m3(1.0f).bits == 0x38);
  CHECK(ue4m3(500.0f).bits == 0x7e);
  CHECK(ue4m3(-1.0f).bits == 0);
  CHECK(std::isnan(float(ue4m3(NAN))));
}

TEST_CASE("the GPU conversions to and from the microscaling formats are one cvt each on Blackwell", "[unit]") {
  Kernel k{"narrow_cvt", [](Tensor<f32> x, Tensor<u32> out) {
    Int i = thread_idx().x;
    F32 a = x(2 * i), b = x(2 * i + 1);
    out(4 * i) = cvt_e2m1x2(a, b);
    out(4 * i + 1) = cvt_e2m3x2(a, b) ^ cvt_e3m2x2(a, b);
    out(4 * i + 2) = cvt_ue8m0x2(a, b) ^ cvt_ue8m0x2(a, b, true);
    auto [lo, hi] = cvt_from_e2m1x2(cvt_e2m1x2(a, b));
    out(4 * i + 3) = bitcast<uint32_t>(lo + hi);
  }};
  auto x = test::vector_arg<float>();
  auto o = test::vector_arg<uint32_t>();
  for (const char* t : {"sm_100a", "sm_100f", "sm_120a", "sm_121f"}) {
    INFO(t);
    CompiledKernel c = k.compile(Target::parse(t), x, o);
    for (const char* i : {"cvt.rn.satfinite.e2m1x2.f32", "cvt.rn.satfinite.e2m3x2.f32", "cvt.rn.satfinite.e3m2x2.f32",
                          "cvt.rz.satfinite.ue8m0x2.f32", "cvt.rp.satfinite.ue8m0x2.f32", "cvt.rn.f16x2.e2m1x2"})
      CHECK(test::contains(c.ptx, i));
    std::string sass = test::disassemble(c.cubin, "-sass");
    CHECK(test::contains(sass, "F2FP.SATFINITE.E2M1.F32.PACK_AB_MERGE_C"));
    CHECK(test::contains(sass, "F2FP.F16.E2M1.UNPACK_B"));
    CHECK(test::contains(sass, "F2FP.SATFINITE.E8.F32.PACK_AB_MERGE_C.RZ"));
  }
  for (const char* t : {"sm_90a", "sm_100", "sm_120", "sm_89"})
    CHECK_THROWS_WITH(k.compile(Target::parse(t), x, o),
                      Contains("test_sm120.cpp") && Contains(std::string("cvt.rn.satfinite.e2m1x2.f32 is not available on ") + t));
}

TEST_CASE("the block-scaled atoms' fragments are the ISA's", "[unit]") {
  // The PTX ISA's m16n8k32 8-bit fragments (g = lane / 4, t = lane % 4), which the k64 FP4
  // kinds share in bytes: A value i is row g + 8 ((i / 4) % 2), K byte 4 t + i % 4 + 16 (i / 8);
  // B value i column g, K byte 4 t + i % 4 + 16 (i / 4); C value i row g + 8 (i / 2), column
  // 2 t + i % 2. The scale-factor owners (lane 4 g: row g, lane 4 g + 1: row g + 8, lane 4 g:
  // column g, with selectors 0) are CUTLASS's SM120 layouts; the ISA shows them only as figures.
  using Nvf4 = SM120_16x8x64_F32E2M1E2M1F32_UE4M3_TN;
  using Mxf8 = SM120_16x8x32_F32E4M3E4M3F32_UE8M0_TN;
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane / 4, t = lane % 4;
    for (int i = 0; i < 16; ++i) CHECK(Nvf4::layout_a()(lane, i).value() == (g + 8 * ((i / 4) % 2)) + 16 * (4 * t + i % 4 + 16 * (i / 8)));
    for (int i = 0; i < 8; ++i) CHECK(Nvf4::layout_b()(lane, i).value() == g + 8 * (4 * t + i % 4 + 16 * (i / 4)));
    for (int i = 0; i < 4; ++i) CHECK(Nvf4::layout_c()(lane, i).value() == (g + 8 * (i / 2)) + 16 * (2 * t + i % 2));
    for (int j = 0; j < Nvf4::scales; ++j) {
      CHECK(Nvf4::layout_sfa()(lane, j).value() == (g + 8 * (t % 2)) + 16 * j);
      CHECK(Nvf4::layout_sfb()(lane, j).value() == g + 8 * j);
    }
  }
  CHECK(Nvf4::k_elements == 64);
  CHECK(Nvf4::scales == 4);
  CHECK(Mxf8::k_elements == 32);
  CHECK(Mxf8::scales == 1);
  CHECK(SM120_16x8x64_F32E2M1E2M1F32_UE8M0_TN::scales == 2);
}

namespace {
/// The atom's name as a kernel name (PTX identifiers have no '.' or ':').
template <class Op>
std::string kernel_name() {
  std::string s = Op::name();
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

/// One atom of `Op` on bytes and scales read from global memory, for its PTX and SASS.
template <class Op>
auto& atom_kernel() {
  static Kernel k{kernel_name<Op>(),
                  [](Tensor<u8> ab, Tensor<u32> scales, Tensor<f32> d) {
                    Int lane = thread_idx().x;
                    Tensor<uint8_t> a = make_rmem_tensor<uint8_t>(IntTuple{16}), b = make_rmem_tensor<uint8_t>(IntTuple{8});
                    Tensor<float> c = make_rmem_tensor<float>(IntTuple{4}), out = make_rmem_tensor<float>(IntTuple{4});
                    for (int i = 0; i < 16; ++i) a(i) = ab(lane * 24 + i);
                    for (int i = 0; i < 8; ++i) b(i) = ab(lane * 24 + 16 + i);
                    fill(c, 0.0f);
                    mma(Op{}, out, a, b, c, scales(2 * lane), scales(2 * lane + 1));
                    for (int i = 0; i < 4; ++i) d(lane * 4 + i) = out(i);
                  }};
  return k;
}

template <class Op>
CompiledKernel compile_atom(const char* target) {
  return atom_kernel<Op>().compile(Target::parse(target), test::vector_arg<uint8_t>(), test::vector_arg<uint32_t>(),
                                   test::vector_arg<float>());
}
}  // namespace

TEST_CASE("each block-scaled kind is QMMA.SF or OMMA.SF on sm_120a and sm_121a", "[unit]") {
  for (const char* t : {"sm_120a", "sm_121a"}) {
    INFO(t);
    CompiledKernel mx8 = compile_atom<SM120_16x8x32_F32E4M3E4M3F32_UE8M0_TN>(t);
    CHECK(test::contains(mx8.ptx, "mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e4m3.e4m3.f32.ue8m0"));
    CHECK(test::contains(test::disassemble(mx8.cubin, "-sass"), "QMMA.SF.16832.F32.E4M3.E4M3.E8"));
    CompiledKernel mx4pad = compile_atom<SM120_16x8x32_F32E2M1E2M1F32_UE8M0_TN>(t);
    CHECK(test::contains(test::disassemble(mx4pad.cubin, "-sass"), "QMMA.SF.16832.F32.E2M1.E2M1.E8"));
    CompiledKernel mx4 = compile_atom<SM120_16x8x64_F32E2M1E2M1F32_UE8M0_TN>(t);
    CHECK(test::contains(mx4.ptx, "kind::mxf4.block_scale.scale_vec::2X.f32.e2m1.e2m1.f32.ue8m0"));
    CHECK(test::contains(test::disassemble(mx4.cubin, "-sass"), "OMMA.SF.16864.F32.E2M1.E2M1.E8"));
    CompiledKernel nv4 = compile_atom<SM120_16x8x64_F32E2M1E2M1F32_UE4M3_TN>(t);
    CHECK(test::contains(nv4.ptx, "kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3"));
    std::string sass = test::disassemble(nv4.cubin, "-sass");
    CHECK(test::contains(sass, "OMMA.SF.16864.F32.E2M1.E2M1.UE4M3.4X"));
    CHECK_FALSE(test::contains(sass, "LDL"));
  }
  // The family targets take every dense kind (the FP4 kinds' "a only" note is mma.sp's).
  for (const char* t : {"sm_120f", "sm_121f"}) {
    INFO(t);
    CHECK(test::contains(test::disassemble(compile_atom<SM120_16x8x32_F32E4M3E4M3F32_UE8M0_TN>(t).cubin, "-sass"), "QMMA.SF"));
    CHECK(test::contains(test::disassemble(compile_atom<SM120_16x8x64_F32E2M1E2M1F32_UE4M3_TN>(t).cubin, "-sass"),
                         "OMMA.SF.16864.F32.E2M1.E2M1.UE4M3.4X"));
  }
  for (const char* t : {"sm_100a", "sm_90a", "sm_120"})
    CHECK_THROWS_WITH(compile_atom<SM120_16x8x32_F32E4M3E4M3F32_UE8M0_TN>(t),
                      Contains("test_sm120.cpp") && Contains(std::string("is not available on ") + t));
  CHECK_THROWS_WITH(compile_atom<SM120_16x8x32_F32E4M3E4M3F32_UE8M0_TN>("sm_100a"),
                    Contains("kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e4m3.e4m3.f32.ue8m0 is not available on sm_100a; it needs "
                             "sm_120a, sm_120f, sm_121a or sm_121f"));
}

TEST_CASE("the block-scaled GEMMs' SASS: 8 OMMA.SF or QMMA.SF per K step, 4-byte operand loads, no local memory", "[unit]") {
  for (const char* t : {"sm_120a", "sm_121a"}) {
    INFO(t);
    std::string nv4 = test::disassemble(
        fixtures::gemm_block_scaled_compile<SM120_16x8x64_F32E2M1E2M1F32_UE4M3_TN>(fixtures::gemm_nvfp4_sm120, Target::parse(t)).cubin,
        "-sass");
    CHECK(test::count(nv4, "OMMA.SF.16864.F32.E2M1.E2M1.UE4M3.4X") == 8);
    // A's 16 bytes and B's 8 x 8 per thread and step: 4 + 16 four-byte loads.
    CHECK(test::count(nv4, "LDG.E ") + test::count(nv4, "LDG.E.CONSTANT ") == 20);
    CHECK_FALSE(test::contains(nv4, "LDL"));
    std::string mx4 = test::disassemble(
        fixtures::gemm_block_scaled_compile<SM120_16x8x64_F32E2M1E2M1F32_UE8M0_TN>(fixtures::gemm_mxfp4_sm120, Target::parse(t)).cubin,
        "-sass");
    CHECK(test::count(mx4, "OMMA.SF.16864.F32.E2M1.E2M1.E8") == 8);
    std::string mx8 = test::disassemble(
        fixtures::gemm_block_scaled_compile<SM120_16x8x32_F32E4M3E4M3F32_UE8M0_TN>(fixtures::gemm_mxfp8_sm120, Target::parse(t)).cubin,
        "-sass");
    CHECK(test::count(mx8, "QMMA.SF.16832.F32.E4M3.E4M3.E8") == 8);
  }
  CHECK_NOTHROW(fixtures::gemm_block_scaled_compile<SM120_16x8x32_F32E4M3E4M3F32_UE8M0_TN>(fixtures::gemm_mxfp8_sm120,
                                                                                           Target::parse("sm_120f")));
  CHECK_NOTHROW(fixtures::gemm_block_scaled_compile<SM120_16x8x64_F32E2M1E2M1F32_UE4M3_TN>(fixtures::gemm_nvfp4_sm120,
                                                                                           Target::parse("sm_121f")));
  CHECK_THROWS_WITH(fixtures::gemm_block_scaled_compile<SM120_16x8x64_F32E2M1E2M1F32_UE4M3_TN>(fixtures::gemm_nvfp4_sm120,
                                                                                               Target::parse("sm_100a")),
                    Contains("kernels/gemm/sm120_block_scaled.hpp") && Contains("is not available on sm_100a"));
  CHECK_THROWS_WITH(fixtures::gemm_block_scaled_compile<SM120_16x8x64_F32E2M1E2M1F32_UE4M3_TN>(fixtures::gemm_nvfp4_sm120,
                                                                                               Target::parse("sm_120a"), 64, 64, 96),
                    Contains("needs M and N of at least 1, K a multiple of 64"));
}

TEST_CASE("the block-scaled GEMVs' SASS: four K steps' loads before their MMAs, one reduction through shared memory, no local memory",
          "[unit]") {
  using fixtures::gemv_block_scaled_compile;
  for (const char* t : {"sm_120a", "sm_121a"}) {
    INFO(t);
    CompiledKernel nv = gemv_block_scaled_compile<SM120_16x8x64_F32E2M1E2M1F32_UE4M3_TN>(fixtures::gemv_nvfp4_sm120, Target::parse(t), 4096, 3);
    std::string sass = test::disassemble(nv.cubin, "-sass");
    // The K loop unrolled four times, and its remainder: five steps of one MMA each.
    CHECK(test::count(sass, "OMMA.SF.16864.F32.E2M1.E2M1.UE4M3.4X") == 5);
    // Per step and thread: W's 16 bytes and the tokens' 8 as 4-byte loads (the tokens' under a
    // predicate), and 4 + 4 scale bytes.
    CHECK(test::count(sass, "LDG.E.CONSTANT ") == 5 * 6);
    CHECK(test::count(sass, "LDG.E.U8.CONSTANT ") == 5 * 8);
    CHECK(test::count(sass, "BAR.SYNC") == 1);  // the warps' partial sums meet once
    CHECK(test::count(sass, "STG.E ") == 4);    // a thread's 4 accumulators, each under its token's predicate
    test::check_no_local_memory(nv.cubin, nv.name, sass);
    CHECK(test::resource_usage(nv.cubin, nv.name, "REG") <= 128);  // 96
    // The four steps' operand loads are issued before the first of their MMAs.
    const size_t first_mma = sass.find("OMMA.SF"), twelfth_load = [&] {
      size_t at = 0;
      for (int i = 0; i < 12; ++i) at = sass.find("LDG.E.CONSTANT ", at + 1);
      return at;
    }();
    CHECK(twelfth_load < sass.find("OMMA.SF", first_mma + 1));
    CompiledKernel mx4 = gemv_block_scaled_compile<SM120_16x8x64_F32E2M1E2M1F32_UE8M0_TN>(fixtures::gemv_mxfp4_sm120, Target::parse(t), 4096, 8);
    CHECK(test::count(test::disassemble(mx4.cubin, "-sass"), "OMMA.SF.16864.F32.E2M1.E2M1.E8") == 5);
    CompiledKernel mx8 = gemv_block_scaled_compile<SM120_16x8x32_F32E4M3E4M3F32_UE8M0_TN>(fixtures::gemv_mxfp8_sm120, Target::parse(t), 4096, 1);
    std::string mx8_sass = test::disassemble(mx8.cubin, "-sass");
    CHECK(test::count(mx8_sass, "QMMA.SF.16832.F32.E4M3.E4M3.E8") == 5);
    test::check_no_local_memory(mx8.cubin, mx8.name, mx8_sass);
  }
  // The epilogue hook: silu times a gate read per (token, row), applied once per stored value
  // after the warps' sums meet; the MMAs and the reduction are the plain GEMV's.
  for (const char* t : {"sm_120a", "sm_121a"}) {
    INFO(t);
    const int64_t n = 4096, tokens = 3, k = 4096;
    CompiledKernel gated = fixtures::gemv_nvfp4_sm120_silu_gate.compile(
        Target::parse(t), DeviceTensor<uint8_t>::for_compile({n * k / 2}), DeviceTensor<uint8_t>::for_compile({tokens * k / 2}),
        DeviceTensor<uint8_t>::for_compile({n * k / 16}), DeviceTensor<uint8_t>::for_compile({tokens * k / 16}),
        DeviceTensor<float>::for_compile({tokens * n}), DeviceTensor<float>::for_compile({tokens * n}), int32_t(n), int32_t(tokens), int32_t(k));
    CHECK(test::contains(gated.ptx, "ex2.approx"));  // the silu's exp
    std::string sass = test::disassemble(gated.cubin, "-sass");
    CHECK(test::count(sass, "OMMA.SF.16864.F32.E2M1.E2M1.UE4M3.4X") == 5);
    CHECK(test::count(sass, "BAR.SYNC") == 1);
    CHECK(test::count(sass, "MUFU.EX2") == 4);  // one per stored value of a thread
    test::check_no_local_memory(gated.cubin, gated.name, sass);
  }
  auto nvfp4 = [](const char* target, int64_t n, int64_t tokens, int64_t k) {
    return gemv_block_scaled_compile<SM120_16x8x64_F32E2M1E2M1F32_UE4M3_TN>(fixtures::gemv_nvfp4_sm120, Target::parse(target), n, tokens, k);
  };
  CHECK_THROWS_WITH(nvfp4("sm_120a", 4096, 9, 4096), Contains("test_sm120.cpp") && Contains("gemv_nvfp4_sm120 needs N a multiple of 16, K of "
                                                                                             "64, N x K below 2^31 and 1 to 8 tokens, not N "
                                                                                             "= 4096, K = 4096 and 9 tokens"));
  CHECK_THROWS_WITH(nvfp4("sm_120a", 4104, 1, 4096), Contains("not N = 4104"));
  CHECK_THROWS_WITH(nvfp4("sm_120a", 4096, 1, 4000), Contains("K = 4000"));
  CHECK_THROWS_WITH(nvfp4("sm_120a", 4096, 0, 4096), Contains("and 0 tokens"));
  CHECK_THROWS_WITH(nvfp4("sm_100a", 4096, 1, 4096), Contains("kernels/gemm/sm120_gemv_block_scaled.hpp") && Contains("is not available on sm_100a"));
}

TEST_CASE("kind::f8f6f4 mma.sync without scales takes FP6 and FP4 operands through TiledMma", "[unit]") {
  // A 16 x 32-byte tile of A and 8 x 32 of B from global memory, one atom: the plain atoms' path.
  Kernel k{"f8f6f4_tiled", [](Tensor<u8> a, Tensor<u8> b, Tensor<f32> c) {
    auto tiled = make_tiled_mma(SM120_16x8x32_F32E2M1E2M1F32_TN{}, make_layout({1, 1, 1}));
    auto thr = tiled.get_slice(thread_idx().x);
    Tensor<uint8_t> A = make_tensor(a.data(), make_layout({16, 32}, LayoutRight{}));
    Tensor<uint8_t> B = make_tensor(b.data(), make_layout({8, 32}, LayoutRight{}));
    Tensor<float> C = make_tensor(c.data(), make_layout({16, 8}, LayoutRight{}));
    Tensor<uint8_t> fa = thr.partition_fragment_A({16, 32}), fb = thr.partition_fragment_B({8, 32});
    copy(thr.partition_A(A), fa);
    copy(thr.partition_B(B), fb);
    Tensor<float> acc = thr.partition_fragment_C({16, 8});
    fill(acc, 0.0f);
    gemm(tiled, acc, fa, fb);
    copy(acc, thr.partition_C(C));
  }};
  auto bytes = test::vector_arg<uint8_t>();
  auto floats = test::vector_arg<float>();
  for (const char* t : {"sm_120a", "sm_121a", "sm_120f"}) {
    INFO(t);
    CompiledKernel c = k.compile(Target::parse(t), bytes, bytes, floats);
    CHECK(test::contains(c.ptx, "mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f32.e2m1.e2m1.f32"));
    CHECK(test::contains(test::disassemble(c.cubin, "-sass"), "QMMA.16832.F32.E2M1.E2M1"));
  }
  CHECK_THROWS_WITH(k.compile(Target::parse("sm_100a"), bytes, bytes, floats),
                    Contains("test_sm120.cpp") && Contains("kind::f8f6f4.f32.e2m1.e2m1.f32 is not available on sm_100a"));
}
