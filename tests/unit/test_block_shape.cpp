// block_shape: a kernel's declared block is in its PTX (.reqntid), makes block_dim() a constant,
// is checked by block_reduce when traced, and each misuse is an error at the user's line.
#include <catch2/catch.hpp>

#include <string>

#include "support.hpp"

using namespace cutejit;
using Catch::Contains;

TEST_CASE("block_shape puts the block in the PTX, folds block_dim() and is checked where the kernel assumes a size", "[unit]") {
  auto v = test::vector_arg<float>();
  Kernel declared{"declared_block", [](Tensor<f32> a) {
    block_shape(128, 2);
    Int i = block_idx().x * (block_dim().x * block_dim().y) + thread_idx().y * block_dim().x + thread_idx().x;
    a(i) = block_reduce(F32(a(i)), 256);
  }};
  CompiledKernel k = declared.compile(Target::parse("sm_90a"), v);
  CHECK(test::contains(k.ptx, ".reqntid 128, 2, 1"));
  CHECK_FALSE(test::contains(k.ptx, "%ntid"));  // block_dim() became constants

  Kernel undeclared{"undeclared_block", [](Tensor<f32> a) { a(thread_idx().x) = cast<float>(block_dim().x); }};
  CompiledKernel u = undeclared.compile(Target::parse("sm_90a"), v);
  CHECK_FALSE(test::contains(u.ptx, ".reqntid"));
  CHECK(test::contains(u.ptx, "%ntid.x"));

  const int reduce_line = __LINE__ + 3;
  Kernel mismatch{"block_reduce_mismatch", [](Tensor<f32> a) {
    block_shape(128);
    a(thread_idx().x) = block_reduce(F32(a(thread_idx().x)), 256);
  }};
  CHECK_THROWS_WITH(mismatch.compile(Target::parse("sm_90a"), v),
                    Contains("test_block_shape.cpp:" + std::to_string(reduce_line)) &&
                        Contains("block_reduce is told the block has 256 threads, but the kernel declared a block of 128 (block_shape)"));

  const int first = __LINE__ + 2;
  Kernel twice{"block_shape_twice", [](Tensor<f32>) {
    block_shape(64);
    block_shape(128);
  }};
  CHECK_THROWS_WITH(twice.compile(Target::parse("sm_90a"), v),
                    Contains("block_shape is declared once per kernel") && Contains("test_block_shape.cpp:" + std::to_string(first)));
  Kernel big{"block_of_2048", [](Tensor<f32>) { block_shape(1024, 2); }};
  CHECK_THROWS_WITH(big.compile(Target::parse("sm_90a"), v), Contains("1024 threads in all, not 1024 x 2 x 1"));
  Kernel empty{"block_of_0", [](Tensor<f32>) { block_shape(0); }};
  CHECK_THROWS_WITH(empty.compile(Target::parse("sm_90a"), v), Contains("not 0 x 1 x 1"));
}
