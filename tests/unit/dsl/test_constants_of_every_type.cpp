// C++ numbers become constants of every element type (issue 35, 1.2): rounded at trace time to
// the type's nearest value, ties to even, in one rounding from the number as written; FP8
// saturates as cvt.rn.satfinite. Checked in the PTX's immediates.
#include <catch2/catch.hpp>

#include "support.hpp"

using namespace cutejit;
using test::contains;

namespace {
const Target sm90a = Target::parse("sm_90a");
}

TEST_CASE("float literals on bf16, f16 and FP8 tensors compile and round to nearest even, once", "[dsl]") {
  Kernel k{"literals_of_every_type", [](Tensor<bf16> x, Tensor<f16> h, Tensor<f8e4m3> e, Tensor<f8e5m2> m) {
    Int i = thread_idx().x;
    BF16 z = 0.0f;
    x(i) = 0.0f;
    x(i + 1) = x(i) * 2.0f + z;
    x(i + 2) = 1.00390625;             // halfway between bf16 1 and 1 + 2^-7: to even, 0x3F80
    x(i + 3) = 1.00390625 + 0x1p-40;   // just above halfway: 0x3F81 (through f32 first it would tie to 0x3F80)
    Var<bf16> acc = 1.0f;
    acc = 3;                           // integers too: 0x4040
    x(i + 4) = acc;
    h(i) = h(i) * 0.5;
    e(i) = 1000.0f;                    // saturates to 448 (0x7E = 126)
    m(i) = 1.5;                        // exact: 0x3E = 62
  }};
  std::string ptx = k.compile(sm90a, DeviceTensor<bf16>::for_compile({64}), DeviceTensor<f16>::for_compile({64}),
                              DeviceTensor<f8e4m3>::for_compile({64}), DeviceTensor<f8e5m2>::for_compile({64}))
                        .ptx;
  CHECK(contains(ptx, "0x3F80;"));
  CHECK(contains(ptx, "0x3F81;"));
  CHECK(contains(ptx, "0x4040;"));
  CHECK(contains(ptx, ", 126;"));
  CHECK(contains(ptx, ", 62;"));
}

TEST_CASE("load_if's default fill is 0 of any element type", "[dsl]") {
  Kernel k{"load_if_bf16", [](Tensor<bf16> a, Tensor<bf16> out) {
    CoordTensor coords = make_identity_tensor(IntTuple{8});
    TensorSSA<bf16> tile = load_if(local_tile(a, {8}, {0}), coords, {5});
    store(tile * 2.0f, local_tile(out, {8}, {0}));
  }};
  CHECK_NOTHROW(k.compile(sm90a, DeviceTensor<bf16>::for_compile({64}), DeviceTensor<bf16>::for_compile({64})));
}
