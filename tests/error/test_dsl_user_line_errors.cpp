// Errors of the DSL are reported at the user's line with the valid range (issue 35, 1.3), and
// operations whose result C++ and LLVM leave undefined are refused at trace time when their
// operands are constants (1.6).
#include <catch2/catch.hpp>

#include "support.hpp"

using namespace cutejit;
using Catch::Contains;

namespace {
const Target sm90a = Target::parse("sm_90a");
std::string here(int line) { return "test_dsl_user_line_errors.cpp:" + std::to_string(line) + ": error: "; }
}  // namespace

TEST_CASE("a register array index out of range is reported at the indexing line", "[error]") {
  static int line = 0;
  Kernel above{"register_index_8", [](Tensor<f32> a) {
    RegisterArray<f32, 8> r(0.0f);
    line = __LINE__ + 1;
    a(0) = r[8];
  }};
  CHECK_THROWS_WITH(above.compile(sm90a, test::vector_arg<float>()),
                    Contains(here(line)) && Contains("index 8 is out of range for a register array of 8 elements (valid: 0..7)"));
  Kernel below{"register_index_minus_1", [](Tensor<f32> a) {
    RegisterArray<f32, 8> r(0.0f);
    line = __LINE__ + 1;
    r[-1] = 1.0f;
  }};
  CHECK_THROWS_WITH(below.compile(sm90a, test::vector_arg<float>()), Contains(here(line)) && Contains("index -1 is out of range"));
}

TEST_CASE("a zero tile and a mode a tensor lacks are reported at the caller's line", "[error]") {
  static int line = 0;
  Kernel zero_tile{"zero_tile", [](Tensor<f32> a) {
    line = __LINE__ + 1;
    Tensor<f32> tiles = zipped_divide(a, {0});
  }};
  CHECK_THROWS_WITH(zero_tile.compile(sm90a, test::vector_arg<float>()),
                    Contains(here(line)) && Contains("a tile's sizes must be positive, but mode 0 of the tile shape (0) is 0"));
  Kernel no_mode{"no_mode_1", [](Tensor<f32> a) {
    line = __LINE__ + 1;
    a(0) = cast<f32>(a.shape(1));
  }};
  CHECK_THROWS_WITH(no_mode.compile(sm90a, test::vector_arg<float>()),
                    Contains(here(line)) && Contains("shape(1): a rank-1 tensor has no mode 1 (valid modes: 0..0"));
}

TEST_CASE("constant division by zero, INT_MIN / -1 and shifts out of range are trace-time errors", "[error]") {
  static int line = 0;
  auto out = test::vector_arg<int32_t>();
  Kernel div{"divide_by_0", [](Tensor<i32> a, Int n) {
    line = __LINE__ + 1;
    a(0) = n / 0;
  }};
  CHECK_THROWS_WITH(div.compile(sm90a, out, 3), Contains(here(line)) && Contains("division by the constant 0 (x / 0) is undefined"));
  Kernel rem{"remainder_by_0", [](Tensor<i32> a, Int n) {
    line = __LINE__ + 1;
    a(0) = n % 0;
  }};
  CHECK_THROWS_WITH(rem.compile(sm90a, out, 3), Contains(here(line)) && Contains("remainder by the constant 0 (x % 0) is undefined"));
  Kernel overflow{"int_min_by_minus_1", [](Tensor<i32> a) {
    line = __LINE__ + 1;
    a(0) = Int(INT32_MIN) / -1;
  }};
  CHECK_THROWS_WITH(overflow.compile(sm90a, out), Contains(here(line)) && Contains("-2147483648 / -1 overflows i32"));
  Kernel wide{"shift_by_40", [](Tensor<i32> a, Int n) {
    line = __LINE__ + 1;
    a(0) = n << 40;
  }};
  CHECK_THROWS_WITH(wide.compile(sm90a, out, 3),
                    Contains(here(line)) && Contains("a shift by 40 is undefined for an i32 value: the valid amounts are 0..31"));
  Kernel negative{"shift_by_minus_1", [](Tensor<i32> a, Int n) {
    line = __LINE__ + 1;
    a(0) = n >> -1;
  }};
  CHECK_THROWS_WITH(negative.compile(sm90a, out, 3), Contains(here(line)) && Contains("a shift by -1 is undefined for an i32 value"));
}

TEST_CASE("dynamic divisors and shift amounts get the defined results, with a guard only where needed", "[error]") {
  Kernel k{"defined_dynamic", [](Tensor<i32> a, Int n, Int m) {
    a(0) = n / m;
    a(1) = n << m;
    a(2) = n >> m;
    a(3) = n / 7;  // a constant divisor other than 0 and -1 needs no guard
  }};
  std::string ptx = k.compile(sm90a, test::vector_arg<int32_t>(), 3, 4).ptx;
  CHECK(test::contains(ptx, "selp.b32"));  // the divisor 0 (and -1) replaced by 1
  CHECK(test::contains(ptx, "min.u32"));   // signed >> clamps its amount to 31: the sign in every bit
}

TEST_CASE("a for_ step that is a constant must be positive; a dynamic one that is not runs no iterations", "[error]") {
  static int line = 0;
  auto out = test::vector_arg<int32_t>();
  Kernel zero{"for_step_0", [](Tensor<i32> a, Int n) {
    line = __LINE__ + 1;
    for_(0, n, 0, [&](Int i) { a(i) = 1; });
  }};
  CHECK_THROWS_WITH(zero.compile(sm90a, out, 3), Contains(here(line)) && Contains("for_ needs a positive step, not 0"));
  Kernel down{"for_step_minus_1", [](Tensor<i32> a, Int n) {
    line = __LINE__ + 1;
    for_(0, n, -1, [&](Int i) { a(i) = 1; });
  }};
  CHECK_THROWS_WITH(down.compile(sm90a, out, 3), Contains(here(line)) && Contains("for_ needs a positive step, not -1") &&
                                                     Contains("use i = n - 1 - k"));
  Kernel dynamic{"for_step_dynamic", [](Tensor<i32> a, Int n, Int s) { for_(0, n, s, [&](Int i) { a(i) = 1; }); }};
  CHECK(test::contains(dynamic.compile(sm90a, out, 3, 1).ptx, "setp.gt.s32"));  // step > 0, else the bound is lo
}
