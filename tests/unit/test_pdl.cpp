// Programmatic dependent launch: griddepcontrol reaches the PTX on sm_90 and newer, and is a
// clear error, naming the user's line, before that.
#include <catch2/catch.hpp>

#include "support.hpp"

using namespace cutejit;
using Catch::Contains;
using test::contains;

namespace {
Kernel dependent{"dependent", [](Tensor<f32> in, Tensor<f32> out) {
  Int i = block_idx().x * block_dim().x + thread_idx().x;
  griddepcontrol_wait();
  out(i) = in(i) * 2.0f;
  griddepcontrol_launch_dependents();
}};
}  // namespace

TEST_CASE("griddepcontrol compiles to its PTX instructions on sm_90a, sm_100a and sm_120a", "[unit]") {
  auto v = test::vector_arg<float>();
  for (const char* t : {"sm_90a", "sm_100a", "sm_120a"}) {
    std::string ptx = dependent.compile(Target::parse(t), v, v).ptx;
    INFO(t);
    CHECK(contains(ptx, "griddepcontrol.wait;"));
    CHECK(contains(ptx, "griddepcontrol.launch_dependents;"));
    // The wait comes before the load that depends on it.
    CHECK(ptx.find("griddepcontrol.wait;") < ptx.find("ld.global"));
  }
}

TEST_CASE("griddepcontrol before sm_90 is a trace-time error at the user's line", "[unit]") {
  auto v = test::vector_arg<float>();
  CHECK_THROWS_WITH(dependent.compile(Target::parse("sm_80"), v, v),
                    Contains("test_pdl.cpp:14") && Contains("griddepcontrol_wait (griddepcontrol.wait) is not available on sm_80"));
}
