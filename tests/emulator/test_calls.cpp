// Calls of .func functions, as NVRTC's PTX makes them: arguments passed by value through .param
// slots, a return value read back, calls nested, a callee's registers and local memory its own,
// lanes that call and lanes that do not; and the programs the emulated device refuses, each
// named (a function no module defines, recursion, an indirect call).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "emulator/machine.hpp"
#include "ptx_kernel.hpp"

using namespace cutejit::emulator;
using Catch::Matchers::Contains;
using test::kernel;
using test::Run;

namespace {

const char* store_r9 =
    "  mov.u32 %r1, %tid.x;\n  mul.wide.u32 %rd2, %r1, 4;\n  add.s64 %rd3, %rd1, %rd2;\n  st.global.u32 [%rd3], %r9;\n";

/// The kernel of test::kernel with `module_scope` (functions, declarations) placed before it.
std::string with(const std::string& module_scope, const std::string& kernel_text) {
  std::string k = kernel_text;
  return k.insert(k.find(".visible .entry"), module_scope);
}

/// A module of its own, as NVRTC writes one.
std::string module(const std::string& functions) { return ".version 8.6\n.target sm_90a\n.address_size 64\n" + functions; }

// twice_plus(a, b) = 2a + b, with a register named as one of the kernel's.
const char* twice_plus = R"(
.visible .func  (.param .b32 func_retval0) twice_plus(
	.param .b32 twice_plus_param_0,
	.param .b32 twice_plus_param_1
)
{
	.reg .b32 %r<8>;
	ld.param.u32 %r5, [twice_plus_param_0];
	ld.param.u32 %r6, [twice_plus_param_1];
	shl.b32 %r5, %r5, 1;
	add.u32 %r7, %r5, %r6;
	st.param.b32 [func_retval0+0], %r7;
	ret;
}
)";

const char* call_twice_plus = R"(
  mov.u32 %r1, %tid.x;
  mov.u32 %r5, 7;
  {
  .param .b32 param0;
  .param .b32 param1;
  .param .b32 retval0;
  st.param.b32 [param0], %r1;
  st.param.b32 [param1], 1000;
  call.uni (retval0), twice_plus, (param0, param1);
  ld.param.b32 %r6, [retval0];
  }
  add.u32 %r9, %r6, %r5;
)";

const char* declare_twice_plus =
    ".extern .func  (.param .b32 func_retval0) twice_plus(.param .b32 twice_plus_param_0, .param .b32 twice_plus_param_1);\n";

}  // namespace

TEST_CASE("a kernel calls a .func of a linked module: arguments in, the result out, each its own registers", "[emulator]") {
  Run r({with(declare_twice_plus, kernel("", std::string(call_twice_plus) + store_r9)), module(twice_plus)}, 64);
  REQUIRE(r.fault.empty());
  // The callee's %r5 is not the kernel's: the kernel's 7 survives the call.
  for (uint32_t t = 0; t < 64; ++t) CHECK(r.out[t] == 2 * t + 1000 + 7);
}

TEST_CASE("calls nest, only the lanes that branch to them call, and each function's local memory is its own", "[emulator]") {
  // inner(x) = x + 1 through its own local depot (written at the depot's first byte, where the
  // kernel's depot starts too); outer(x) = inner(x) + inner(10 x).
  const std::string functions = R"(
.func  (.param .b32 inner_ret) inner(.param .b32 inner_x)
{
	.local .align 4 .b8 __local_depot1[4];
	.reg .b64 %SP;
	.reg .b64 %SPL;
	.reg .b32 %r<4>;
	mov.u64 %SPL, __local_depot1;
	cvta.local.u64 %SP, %SPL;
	ld.param.u32 %r1, [inner_x];
	st.u32 [%SP], %r1;
	ld.u32 %r2, [%SP];
	add.u32 %r3, %r2, 1;
	st.param.b32 [inner_ret], %r3;
	ret;
}
.func  (.param .b32 outer_ret) outer(.param .b32 outer_x)
{
	.reg .b32 %r<8>;
	ld.param.u32 %r1, [outer_x];
	{
	.param .b32 param0;
	.param .b32 retval0;
	st.param.b32 [param0], %r1;
	call (retval0), inner, (param0);
	ld.param.b32 %r2, [retval0];
	}
	mul.lo.u32 %r3, %r1, 10;
	{
	.param .b32 param0;
	.param .b32 retval0;
	st.param.b32 [param0], %r3;
	call (retval0), inner, (param0);
	ld.param.b32 %r4, [retval0];
	}
	add.u32 %r5, %r2, %r4;
	st.param.b32 [outer_ret], %r5;
	ret;
}
)";
  const std::string body = R"(
  mov.u32 %r1, %tid.x;
  mov.u64 %rd5, __local_depot0;
  st.local.u32 [%rd5], 77;
  mov.u32 %r9, 5;
  and.b32 %r2, %r1, 1;
  setp.eq.u32 %p1, %r2, 0;
  @%p1 bra DONE;
  {
  .param .b32 param0;
  .param .b32 retval0;
  st.param.b32 [param0], %r1;
  call (retval0), outer, (param0);
  ld.param.b32 %r9, [retval0];
  }
DONE:
  ld.local.u32 %r3, [%rd5];
  add.u32 %r9, %r9, %r3;
)";
  Run r(with(functions, kernel("  .local .align 4 .b8 __local_depot0[4];\n", body + store_r9)), 64);
  REQUIRE(r.fault.empty());
  for (uint32_t t = 0; t < 64; ++t) CHECK(r.out[t] == (t % 2 ? (t + 1) + (10 * t + 1) : 5) + 77);
}

TEST_CASE("a fault inside a callee names the function", "[emulator]") {
  const std::string bad = ".func bad()\n{\n  .reg .b64 %rd<2>;\n  mov.u64 %rd1, 8;\n  st.global.u32 [%rd1], 1;\n  ret;\n}\n";
  Run r(with(bad, kernel("", "  call.uni bad, ();\n")), 32);
  CHECK_THAT(r.fault, Contains("in kernel 'k', function 'bad'") && Contains("st.global.u32"));
}

TEST_CASE("calls the emulated device cannot link are refused by name", "[emulator]") {
  SECTION("a function no module defines") {
    Run r(with(declare_twice_plus, kernel("", std::string(call_twice_plus) + store_r9)), 32);
    CHECK_THAT(r.fault, Contains("kernel 'k': 'k' calls 'twice_plus', which none of the program's 1 PTX module(s) defines"));
  }
  SECTION("a function of another module without .visible linkage") {
    std::string internal = twice_plus;
    internal.erase(internal.find(".visible "), 9);
    Run r({with(declare_twice_plus, kernel("", std::string(call_twice_plus) + store_r9)), module(internal)}, 32);
    CHECK_THAT(r.fault, Contains("calls 'twice_plus', which none of the program's 2 PTX module(s) defines"));
  }
  SECTION("a call with fewer arguments than the function takes") {
    std::string one_argument = call_twice_plus;
    one_argument.replace(one_argument.find("(param0, param1)"), 16, "(param0)");
    Run r({with(declare_twice_plus, kernel("", one_argument + store_r9)), module(twice_plus)}, 32);
    CHECK_THAT(r.fault, Contains("'k' calls 'twice_plus' with 1 argument(s) and 1 result(s); it takes 2 and returns 1"));
  }
  SECTION("recursion") {
    const std::string loop = ".func again()\n{\n  call.uni again, ();\n  ret;\n}\n";
    Run r(with(loop, kernel("", "  call.uni again, ();\n")), 32);
    CHECK_THAT(r.fault, Contains("a recursive call: 'again' -> 'again'"));
  }
  SECTION("an indirect call") {
    Run r(kernel("", "  {\n  .param .b32 param0;\n  call.uni %rd1, (param0), proto;\n  }\n"), 32);
    CHECK_THAT(r.fault, Contains("an indirect call"));
  }
}
