// The FP8 element types: host conversions against values worked out by hand from the OCP FP8
// formats (E4M3: bias 7, 3 mantissa bits, S.1111.111 NaN, max 448; E5M2: bias 15, 2 mantissa
// bits, IEEE-style infinities, max 57344), FP8 in traced kernels (casts, loads, stores, the
// target check) and wgmma on FP8 operands.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "support.hpp"

using namespace cutejit;
using Catch::Contains;
using test::contains;

namespace {
uint8_t e4m3_bits(float x) { return f8e4m3(x).bits; }
uint8_t e5m2_bits(float x) { return f8e5m2(x).bits; }
float e4m3_value(uint8_t b) {
  f8e4m3 v;
  v.bits = b;
  return float(v);
}
float e5m2_value(uint8_t b) {
  f8e5m2 v;
  v.bits = b;
  return float(v);
}
const float inf = std::numeric_limits<float>::infinity();
const float quiet_nan = std::numeric_limits<float>::quiet_NaN();
}  // namespace

TEST_CASE("f8e4m3: host conversion rounds to nearest even and saturates", "[unit]") {
  CHECK(DType(dtype_v<f8e4m3>) == DType::f8e4m3);
  CHECK(name(DType::f8e4m3) == "f8e4m3");
  CHECK(size_in_bytes(DType::f8e4m3) == 1);
  CHECK(e4m3_bits(1.0f) == 0x38);   // exponent 0 + 7 = 0b0111, mantissa 0
  CHECK(e4m3_bits(-2.0f) == 0xC0);  // sign, exponent 1 + 7 = 0b1000
  CHECK(e4m3_bits(0.0f) == 0x00);
  CHECK(e4m3_bits(-0.0f) == 0x80);
  CHECK(e4m3_bits(448.0f) == 0x7E);  // 1.75 * 2^8: 0.1111.110, the largest finite
  CHECK(e4m3_bits(-448.0f) == 0xFE);
  CHECK(e4m3_bits(0.1f) == 0x1D);    // 1.6 * 2^-4: exponent 3, mantissa 0.6 * 8 = 4.8 -> 5
  CHECK(e4m3_bits(0.015625f) == 0x08);  // 2^-6, the smallest normal
  CHECK(e4m3_bits(0.001953125f) == 0x01);  // 2^-9, the smallest subnormal
  CHECK(e4m3_bits(7 * 0.001953125f) == 0x07);  // the largest subnormal
  // Ties go to the even mantissa: 1 + 1/16 lies between 1.0 (0x38) and 1.125 (0x39).
  CHECK(e4m3_bits(1.0625f) == 0x38);
  CHECK(e4m3_bits(1.1875f) == 0x3A);  // between 1.125 (0x39) and 1.25 (0x3A)
  CHECK(e4m3_bits(1.07f) == 0x39);    // above the tie
  CHECK(e4m3_bits(0.0009765625f) == 0x00);     // 2^-10: half the smallest subnormal, tie to 0
  CHECK(e4m3_bits(3 * 0.0009765625f) == 0x02); // 1.5 subnormal steps: tie to 2
  CHECK(e4m3_bits(1.9999f) == 0x40);  // rounds up into the next binade: 2.0
  // Saturation (satfinite): beyond 448, infinities included, is +-448; NaN is 0x7F.
  CHECK(e4m3_bits(464.0f) == 0x7E);
  CHECK(e4m3_bits(1.0e6f) == 0x7E);
  CHECK(e4m3_bits(inf) == 0x7E);
  CHECK(e4m3_bits(-inf) == 0xFE);
  CHECK(e4m3_bits(quiet_nan) == 0x7F);

  CHECK(e4m3_value(0x38) == 1.0f);
  CHECK(e4m3_value(0xC0) == -2.0f);
  CHECK(e4m3_value(0x7E) == 448.0f);
  CHECK(e4m3_value(0x01) == 0.001953125f);
  CHECK(e4m3_value(0x1D) == 0.1015625f);  // 1.625 * 2^-4
  CHECK(std::isnan(e4m3_value(0x7F)));
  CHECK(std::isnan(e4m3_value(0xFF)));
  CHECK(e4m3_value(0x78) == 256.0f);  // exponent 0b1111 is finite in E4M3 except S.1111.111
}

TEST_CASE("f8e5m2: host conversion rounds to nearest even and saturates", "[unit]") {
  CHECK(name(DType::f8e5m2) == "f8e5m2");
  CHECK(size_in_bytes(DType::f8e5m2) == 1);
  CHECK(e5m2_bits(1.0f) == 0x3C);   // exponent 15 = 0b01111, mantissa 0
  CHECK(e5m2_bits(-2.0f) == 0xC0);  // sign, exponent 16 = 0b10000
  CHECK(e5m2_bits(57344.0f) == 0x7B);  // 1.75 * 2^15: 0.11110.11
  CHECK(e5m2_bits(0.0000152587890625f) == 0x01);  // 2^-16, the smallest subnormal
  CHECK(e5m2_bits(1.125f) == 0x3C);  // tie between 1.0 and 1.25: even
  CHECK(e5m2_bits(1.375f) == 0x3E);  // tie between 1.25 (0x3D) and 1.5 (0x3E): even
  CHECK(e5m2_bits(1.0e6f) == 0x7B);
  CHECK(e5m2_bits(inf) == 0x7B);
  CHECK(e5m2_bits(-inf) == 0xFB);
  CHECK(e5m2_bits(quiet_nan) == 0x7F);
  CHECK(e5m2_value(0x3C) == 1.0f);
  CHECK(e5m2_value(0x7B) == 57344.0f);
  CHECK(e5m2_value(0x7C) == inf);
  CHECK(e5m2_value(0xFC) == -inf);
  CHECK(std::isnan(e5m2_value(0x7D)));
}

TEST_CASE("every finite FP8 code survives decode then encode", "[unit]") {
  for (int b = 0; b < 256; ++b) {
    INFO("code " << b);
    if (!std::isnan(e4m3_value(uint8_t(b)))) CHECK(e4m3_bits(e4m3_value(uint8_t(b))) == b);
    if (std::isfinite(e5m2_value(uint8_t(b)))) CHECK(e5m2_bits(e5m2_value(uint8_t(b))) == b);
  }
}

TEST_CASE("FP8 in a kernel: loads, stores and casts through the sm_89 paired conversions", "[unit]") {
  Kernel k{"fp8_casts", [](Tensor<f8e4m3> a, Tensor<f8e5m2> b, Tensor<f32> out) {
    Int i = thread_idx().x;
    F32 x = cast<float>(Value<f8e4m3>(a(i)));
    out(i) = x + cast<float>(Value<f8e5m2>(b(i)));
    a(i + 1) = cast<f8e4m3>(x * 2.0f);
    b(i + 1) = cast<f8e5m2>(cast<bf16>(x));  // through f32
  }};
  auto args = [] { return std::tuple{test::vector_arg<f8e4m3>(), test::vector_arg<f8e5m2>(), test::vector_arg<float>()}; };
  auto [a, b, out] = args();
  for (const char* t : {"sm_89", "sm_90a", "sm_100a", "sm_120a"}) {
    INFO(t);
    CompiledKernel c = k.compile(Target::parse(t), a, b, out);
    for (const char* i : {"cvt.rn.f16x2.e4m3x2", "cvt.rn.f16x2.e5m2x2", "cvt.rn.satfinite.e4m3x2.f32", "cvt.rn.satfinite.e5m2x2.f32",
                          "ld.global.b8", "st.global.b8"}) {
      INFO(i);
      CHECK(contains(c.ptx, i));
    }
  }
  for (const char* t : {"sm_80", "sm_86"}) {
    INFO(t);
    CHECK_THROWS_WITH(k.compile(Target::parse(t), a, b, out),
                      Contains("test_fp8.cpp") && Contains("in kernel 'fp8_casts'") &&
                          Contains(std::string("conversion from FP8 (cvt.rn.f16x2.e4m3x2/e5m2x2) is not available on ") + t +
                                   "; it needs sm_89 and newer"));
  }
}

TEST_CASE("FP8 values are storage only: arithmetic on them is an error naming the line", "[unit]") {
  Kernel add{"fp8_add", [](Tensor<f8e4m3> a) { a(0) = Value<f8e4m3>(a(1)) + Value<f8e4m3>(a(2)); }};
  CHECK_THROWS_WITH(add.compile(Target::parse("sm_90a"), test::vector_arg<f8e4m3>()),
                    Contains("test_fp8.cpp") && Contains("f8e4m3 values are for storage only (load, store, cast, select); "
                                                         "convert with cast<float> before arithmetic or comparison"));
  Kernel less{"fp8_compare", [](Tensor<f8e5m2> a, Tensor<i32> out) {
    out(0) = cast<int32_t>(Value<f8e5m2>(a(1)) < Value<f8e5m2>(a(2)));
  }};
  CHECK_THROWS_WITH(less.compile(Target::parse("sm_90a"), test::vector_arg<f8e5m2>(), test::vector_arg<int32_t>()),
                    Contains("f8e5m2 values are for storage only"));
}

TEST_CASE("wgmma m64nNk32 on e4m3 and e5m2 operands", "[unit]") {
  Kernel k{"wgmma_fp8", [](Tensor<f32> out) {
    Pointer<f8e4m3> a = dynamic_shared_aligned<f8e4m3>(1024);
    Pointer<f8e4m3> b = dynamic_shared_aligned<f8e4m3>(1024, 16384);
    WgmmaOperand<f8e4m3> A(a, TmaSwizzle::bytes128), B(b, TmaSwizzle::bytes128);
    WgmmaOperand<f8e5m2> E(Pointer<f8e5m2>(a.id()), TmaSwizzle::bytes64);
    Tensor<float> c256 = make_rmem_tensor<float>(IntTuple{128});
    Tensor<float> c128 = make_rmem_tensor<float>(IntTuple{64});
    fill(c256, 0.0f), fill(c128, 0.0f);
    wgmma_fence();
    for (int s = 0; s < A.k_steps(); ++s) wgmma<f8e4m3>(c256, A.slice(0, s), B.slice(0, s));
    wgmma<f8e5m2>(c128, E.slice(8, 1), E.slice(0, 0));
    wgmma_commit_group();
    wgmma_wait_group(0);
    wgmma_fence_operands(c256), wgmma_fence_operands(c128);
    out(thread_idx().x) = c256(0) + c128(63);
  }};
  // 128 bytes of K per row hold 128 FP8 elements: four k32 steps; a 64-byte row, two.
  static_assert(WgmmaOperand<f8e4m3>::k_per_mma == 32 && WgmmaOperand<bf16>::k_per_mma == 16);
  std::string ptx = k.compile(Target::parse("sm_90a"), test::vector_arg<float>()).ptx;
  CHECK(contains(ptx, "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3"));
  CHECK(contains(ptx, "wgmma.mma_async.sync.aligned.m64n128k32.f32.e5m2.e5m2"));
  CHECK_FALSE(contains(ptx, "k16.f32"));

  Kernel bad_step{"fp8_k_step", [](Tensor<f32> out) {
    WgmmaOperand<f8e4m3> A(dynamic_shared_aligned<f8e4m3>(1024), TmaSwizzle::bytes64);
    A.slice(0, 2);  // a 64-byte row is two k32 steps
  }};
  CHECK_THROWS_WITH(bad_step.compile(Target::parse("sm_90a"), test::vector_arg<float>()),
                    Contains("k step 2 is outside this tile's 2 steps"));
}

TEST_CASE("FP8 wgmma off sm_90a is a trace-time error naming the user's line", "[unit]") {
  Kernel mma{"uses_fp8_wgmma", [](Tensor<f32> a) {
    Tensor<float> acc = make_rmem_tensor<float>(IntTuple{128});
    wgmma<f8e4m3>(acc, Value<uint64_t>(0ull), Value<uint64_t>(0ull));
  }};
  for (const char* t : {"sm_80", "sm_89", "sm_90", "sm_100a", "sm_120a"}) {
    INFO(t);
    CHECK_THROWS_WITH(mma.compile(Target::parse(t), test::vector_arg<float>()),
                      Contains("test_fp8.cpp:") && Contains("in kernel 'uses_fp8_wgmma'") &&
                          Contains(std::string("wgmma.mma_async is not available on ") + t + "; it needs sm_90a only"));
  }
}

TEST_CASE("FP8 tensor maps move bytes: a 128-element row fills a 128-byte swizzle span", "[unit]") {
  TensorMap<f8e4m3> m = TensorMap<f8e4m3>::for_compile(2, {128, 128}, TmaSwizzle::bytes128);
  CHECK(m.shape.element == DType::f8e4m3);
  CHECK_THROWS_WITH(TensorMap<f8e5m2>::for_compile(2, {64, 256}, TmaSwizzle::bytes128),
                    Contains("the box's contiguous (last) mode spans 256 bytes, more than the 128-byte swizzle span"));
  CHECK_THROWS_WITH(TensorMap<f8e4m3>::for_compile(2, {64, 8}, TmaSwizzle::none),
                    Contains("the box's contiguous (last) mode spans 8 bytes; it must be a multiple of 16"));
}
