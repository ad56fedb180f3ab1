// CUDA C++ functions called from traced kernels (NVRTC + nvJitLink), and inline PTX: compiled
// for sm_90a and read back as PTX and SASS, with no GPU. The [gpu] tests run them.
#include <catch2/catch.hpp>

#include <string>

#include "cutejit/dsl/cuda_function.hpp"
#include "cutejit/dsl/inline_ptx.hpp"
#include "unit/cache/cache_test_support.hpp"
#include "sass.hpp"
#include "support.hpp"

using namespace cutejit;
using Catch::Contains;
using test::contains;

namespace {
const Target hopper = Target::parse("sm_90a");

const auto softplus = cuda_function<float(float)>("softplus", R"(
  __device__ float softplus(float x) { return x > 20.f ? x : log1pf(__expf(x)); }
)");
}  // namespace

TEST_CASE("cuda_function: NVRTC compiles the source, nvJitLink links it, the kernel calls it", "[unit]") {
  Kernel k{"calls_softplus", [](Tensor<f32> y, Tensor<f32> x) {
    Int i = thread_idx().x;
    y(i) = softplus(x(i));
  }};
  CompiledKernel c = k.compile(hopper, test::vector_arg<float>(), test::vector_arg<float>());
  // The kernel's PTX declares the wrapper and calls it; its body comes from NVRTC.
  CHECK(contains(c.ptx, ".extern .func"));
  CHECK(contains(c.ptx, "cutejit_cuda_call_0"));
  std::string sass = test::disassemble(c.cubin, "-sass");
  CHECK(contains(sass, "cutejit_cuda_call_0"));
  CHECK(contains(sass, "MUFU.EX2"));  // __expf, compiled by NVRTC into the same cubin
}

TEST_CASE("cuda_function: NVRTC's PTX is kept with the kernel and comes back from the disk cache", "[unit][cache]") {
  cache_test::TempCache tmp;
  Kernel k{"keeps_softplus", [](Tensor<f32> y, Tensor<f32> x) {
    Int i = thread_idx().x;
    y(i) = softplus(x(i));
  }};
  CompiledKernel first = k.compile(hopper, test::vector_arg<float>(), test::vector_arg<float>());
  CHECK_FALSE(first.from_cache);
  // One CUDA program, one module: the definition of the wrapper the kernel's PTX declares.
  REQUIRE(first.linked_ptx.size() == 1);
  CHECK(contains(first.linked_ptx[0], ".visible .func"));
  CHECK(contains(first.linked_ptx[0], "cutejit_cuda_call_0("));
  CHECK_FALSE(contains(first.ptx, ".visible .func"));
  CompiledKernel again = k.compile(hopper, test::vector_arg<float>(), test::vector_arg<float>());
  CHECK(again.from_cache);
  CHECK(again.ptx == first.ptx);
  CHECK(again.linked_ptx == first.linked_ptx);
}

TEST_CASE("cuda_function: every element type crosses the call, narrow ones widened", "[unit]") {
  const auto mix = cuda_function<bf16(f16, bf16, int8_t, uint16_t, bool, double, int64_t, uint32_t)>("ns::mix<int>", R"(
    #include <cuda_fp16.h>
    #include <cuda_bf16.h>
    namespace ns {
    template <class I>
    __device__ __nv_bfloat16 mix(__half a, __nv_bfloat16 b, signed char c, unsigned short d, bool e, double f, long long g, unsigned h) {
      return __float2bfloat16(__half2float(a) + __bfloat162float(b) + c + d + e + float(f) + float(g) + float(h) + I(0));
    }
    }
  )");
  Kernel k{"calls_mix", [&](Tensor<bf16> out) {
    Int i = thread_idx().x;
    out(i) = mix(cast<f16>(cast<float>(i)), out(i), int8_t(-3), uint16_t(7), i > 2, 1.5, int64_t(1) << 40, 9u);
  }};
  CompiledKernel c = k.compile(hopper, test::vector_arg<bf16>());
  CHECK(contains(c.ptx, ".extern .func  (.param .b32 func_retval0) cutejit_cuda_call_0"));
  // Every parameter is a 32- or 64-bit integer: eight of them, double and int64 the 64-bit ones.
  std::string decl = c.ptx.substr(c.ptx.find("cutejit_cuda_call_0"));
  decl = decl.substr(0, decl.find(';'));
  CHECK(test::count(decl, ".param .b32") == 6);
  CHECK(test::count(decl, ".param .b64") == 2);
}

TEST_CASE("cuda_function: calls of one function share a wrapper, functions of one source a program", "[unit]") {
  const std::string source = R"(
    __device__ float twice(float x) { return 2.f * x; }
    __device__ int twice(int x) { return 2 * x; }
  )";
  const auto twice_f = cuda_function<float(float)>("twice", source);
  const auto twice_i = cuda_function<int32_t(int32_t)>("twice", source);
  Kernel k{"calls_twice", [&](Tensor<f32> y, Tensor<i32> z) {
    Int i = thread_idx().x;
    y(i) = twice_f(twice_f(y(i)));
    z(i) = twice_i(z(i));
  }};
  CompiledKernel c = k.compile(hopper, test::vector_arg<float>(), test::vector_arg<int32_t>());
  CHECK(test::count(c.ptx, ".extern .func") == 2);
  CHECK(contains(c.ptx, "cutejit_cuda_call_1"));
  CHECK_FALSE(contains(c.ptx, "cutejit_cuda_call_2"));
}

TEST_CASE("cuda_function: NVRTC's errors are shown on the user's line, at the declaration", "[unit][error]") {
  const auto broken = cuda_function<float(float)>("broken", "__device__ float broken(float x) {\n  return x + y;\n}\n");
  const int declared = __LINE__ - 1;
  Kernel k{"calls_broken", [&](Tensor<f32> y) { y(0) = broken(y(0)); }};
  CHECK_THROWS_WITH(k.compile(hopper, test::vector_arg<float>()),
                    Contains("test_cuda_function.cpp:" + std::to_string(declared)) && Contains("NVRTC could not compile") &&
                        Contains("\"broken\"") && Contains("line 2: error: identifier \"y\" is undefined") &&
                        Contains("|   return x + y;"));

  // A name the source does not define fails in the generated call, which the message shows.
  const auto missing = cuda_function<float(float)>("nowhere", "__device__ float somewhere(float x) { return x; }");
  Kernel m{"calls_missing", [&](Tensor<f32> y) { y(0) = missing(y(0)); }};
  CHECK_THROWS_WITH(m.compile(hopper, test::vector_arg<float>()),
                    Contains("in the call cutejit generates") && Contains("nowhere") && Contains("cutejit_cuda_call_0"));

  const auto nameless = cuda_function<float(float)>("a; b", "__device__ float f(float x) { return x; }");
  Kernel n{"calls_nameless", [&](Tensor<f32> y) { y(0) = nameless(y(0)); }};
  CHECK_THROWS_WITH(n.compile(hopper, test::vector_arg<float>()), Contains("is not a C++ name") && Contains("test_cuda_function.cpp"));
}

TEST_CASE("cuda_function: one source with two sets of options in one kernel is refused", "[unit][error]") {
  const std::string source = "__device__ float f(float x) { return x * 3.f; }";
  const auto plain = cuda_function<float(float)>("f", source), fast = cuda_function<float(float)>("f", source, {"-use_fast_math"});
  Kernel k{"calls_both", [&](Tensor<f32> y) { y(0) = plain(y(0)) + fast(y(1)); }};
  CHECK_THROWS_WITH(k.compile(hopper, test::vector_arg<float>()), Contains("with other NVRTC options") && Contains("test_cuda_function.cpp"));
}

TEST_CASE("cuda_function: the source and the options are part of the cache key", "[unit]") {
  cache_test::TempCache cache;
  const auto v1 = cuda_function<float(float)>("f", "__device__ float f(float x) { return x + 1.f; }");
  const auto v2 = cuda_function<float(float)>("f", "__device__ float f(float x) { return x + 2.f; }");
  const auto v3 = cuda_function<float(float)>("f", "__device__ float f(float x) { return x + 2.f; }", {"-use_fast_math"});
  auto key = [](const auto& f) {
    Kernel k{"calls_f", [&](Tensor<f32> y) { y(0) = f(y(0)); }};
    return k.compile(hopper, test::vector_arg<float>()).cache_key;
  };
  CHECK(key(v1) != key(v2));
  CHECK(key(v2) != key(v3));
  CHECK(key(v1) == key(v1));
}

TEST_CASE("inline_ptx: results, operands and pointers reach the PTX as written", "[unit]") {
  Kernel k{"inline", [](Tensor<f32> y, Tensor<u32> lanes) {
    Int i = thread_idx().x;
    Value<uint32_t> lane = inline_ptx<uint32_t>("mov.u32 $0, %laneid;", "=r");
    Value<float> s = inline_ptx<float>("add.rn.ftz.f32 $0, $1, $2;", "=f,f,f", y(i), 1.0f);
    inline_ptx("st.global.cs.f32 [$0], $1;", "l,f", y.pointer_at({i}), s);
    Value<f16> h = inline_ptx<f16>("neg.f16 $0, $1;", "=h,h", cast<f16>(s));
    lanes(i) = lane + cast<uint32_t>(cast<float>(h));
  }};
  std::string ptx = k.compile(hopper, test::vector_arg<float>(), test::vector_arg<uint32_t>()).ptx;
  CHECK(contains(ptx, "%laneid"));
  CHECK(contains(ptx, "add.rn.ftz.f32"));
  CHECK(contains(ptx, "st.global.cs.f32"));
  CHECK(contains(ptx, "neg.f16"));
}

TEST_CASE("inline_ptx: constraints are checked against the operands before LLVM sees them", "[unit][error]") {
  auto compile = [](auto body) {
    Kernel k{"bad_inline", body};
    return k.compile(hopper, test::vector_arg<float>());
  };
  CHECK_THROWS_WITH(compile([](Tensor<f32> y) { y(0) = inline_ptx<float>("mov.f32 $0, $1;", "=f", y(0)); }),
                    Contains("has 1 constraint(s) for a result and 1 operand(s)") && Contains("test_cuda_function.cpp"));
  CHECK_THROWS_WITH(compile([](Tensor<f32> y) { y(0) = inline_ptx<float>("mov.f32 $0, $1;", "=f,r", y(0)); }),
                    Contains("operand 1 ($1) is a f32, so its constraint is \"f\", not \"r\""));
  CHECK_THROWS_WITH(compile([](Tensor<f32> y) { y(0) = inline_ptx<float>("mov.f32 $0, $1;", "=r,f", y(0)); }),
                    Contains("the result is f32, so its constraint is \"=f\""));
  CHECK_THROWS_WITH(compile([](Tensor<f32> y) { y(0) = inline_ptx<float>("mov.f32 $0, $2;", "=f,f", y(0)); }),
                    Contains("$2 names no operand; this statement has 2 ($0 to $1)"));
  CHECK_THROWS_WITH(compile([](Tensor<f32> y) { inline_ptx("bra $L;", "f", y(0)); }), Contains("write $0, $1, ... for the operands"));
  CHECK_THROWS_WITH(compile([](Tensor<f32> y) { inline_ptx("  ", ""); }), Contains("the PTX text is empty"));
  CHECK_THROWS_WITH(compile([](Tensor<f32> y) { y(0) = inline_ptx<float>("mov.f32 $0, $1;", "=f,x", y(0)); }),
                    Contains("an operand's is one of h (16-bit)"));
  // Text ptxas rejects is the assembler's error, with its message.
  CHECK_THROWS_WITH(compile([](Tensor<f32> y) { inline_ptx("not.an.instruction;", ""); }), Contains("rejected the PTX"));
}
