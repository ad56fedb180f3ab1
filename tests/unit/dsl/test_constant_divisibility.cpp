// A constant's known divisibility is a fact about its value, whoever made it first: a vector
// access that used 4 as a lane index once left every later `4` "known" divisible by 1 only, so
// `i + 4` (a multiple of 4 floats) was refused for a 16-byte access (issue 35, 1.1).
#include <catch2/catch.hpp>

#include "support.hpp"

using namespace cutejit;
using Catch::Contains;

namespace {
const Target sm90a = Target::parse("sm_90a");
std::array<F32, 4> first_four(const std::array<BF16, 8>& v) { return {cast<f32>(v[0]), cast<f32>(v[1]), cast<f32>(v[2]), cast<f32>(v[3])}; }
}  // namespace

TEST_CASE("after a vector access, i + 4 is still a provable multiple of 4 elements, in all three spellings", "[dsl]") {
  Kernel k{"constant_divisor_kept", [](Tensor<bf16> x, Tensor<f32> c) {
    Int i = thread_idx().x * 8;
    std::array<BF16, 8> v = x.pointer_at({0, i}).load_vector<8>();  // extracts lanes 0..7 with the constants 0..7
    c.pointer_at({0, i + 4}).store_vector<4>(first_four(v));
    Int k4 = 4;
    c.pointer_at({1, i + k4}).store_vector<4>(first_four(v));
    (c.pointer_at({2, i}) + 4).store_vector<4>(first_four(v));
  }};
  CompiledKernel compiled = k.compile(sm90a, DeviceTensor<bf16>::for_compile({4, 1024}), DeviceTensor<float>::for_compile({4, 1024}));
  CHECK(test::count(compiled.ptx, "st.global.v4") == 3);
}

TEST_CASE("after a vector access, i + 2 is still refused for a 16-byte access, and the advice given works", "[dsl]") {
  Kernel refused{"constant_divisor_refused", [](Tensor<bf16> x, Tensor<f32> c) {
    Int i = thread_idx().x * 8;
    std::array<BF16, 8> v = x.pointer_at({0, i}).load_vector<8>();
    c.pointer_at({0, i + 2}).store_vector<4>(first_four(v));
  }};
  const int line = __LINE__ - 2;
  CHECK_THROWS_WITH(refused.compile(sm90a, DeviceTensor<bf16>::for_compile({4, 1024}), DeviceTensor<float>::for_compile({4, 1024})),
                    Contains("test_constant_divisibility.cpp:" + std::to_string(line)) &&
                        Contains("cannot prove that this 16-byte vector access is aligned: the address is known to be 8-byte aligned") &&
                        Contains("Make the offset a provable multiple of 4 elements"));
  // The advice followed: an offset that is a provable multiple of 4 elements.
  Kernel followed{"constant_divisor_followed", [](Tensor<bf16> x, Tensor<f32> c) {
    Int i = thread_idx().x * 8;
    std::array<BF16, 8> v = x.pointer_at({0, i}).load_vector<8>();
    c.pointer_at({0, i + 2 * 2}).store_vector<4>(first_four(v));
  }};
  CHECK_NOTHROW(followed.compile(sm90a, DeviceTensor<bf16>::for_compile({4, 1024}), DeviceTensor<float>::for_compile({4, 1024})));
}
