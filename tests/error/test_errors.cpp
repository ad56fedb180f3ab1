// Bad input gets a cutejit::Error with a precise message, never an abort or a wrong kernel.
// Each case asserts the message a user would read.
#include <catch2/catch.hpp>

#include <cstdlib>

#include "support.hpp"

using namespace cutejit;
using Catch::Contains;

namespace {
const Target sm90a = Target::parse("sm_90a");
}

TEST_CASE("an op the target lacks is a trace-time error naming the op, the target and the line", "[error]") {
  Kernel wgmma{"uses_wgmma", [](Tensor<f32> a) { wgmma_fence(); }};
  auto v = test::vector_arg<float>();
  CHECK_THROWS_WITH(wgmma.compile(Target::parse("sm_80"), v),
                    Contains("test_errors.cpp") && Contains("in kernel 'uses_wgmma' (sm_80)") &&
                        Contains("wgmma.fence is not available on sm_80; it needs sm_90a only"));
  CHECK_THROWS_WITH(wgmma.compile(Target::parse("sm_120a"), v), Contains("wgmma.fence is not available on sm_120a"));

  Kernel tcgen05{"uses_tcgen05", [](Tensor<f32> a) { tcgen05_fence_before_thread_sync(); }};
  CHECK_THROWS_WITH(tcgen05.compile(sm90a, v),
                    Contains("tcgen05.fence::before_thread_sync is not available on sm_90a; it needs sm_100a, sm_100f, sm_103a, sm_103f, "
                             "sm_110a or sm_110f"));
  for (const char* t : {"sm_100", "sm_103", "sm_120a", "sm_121f"})
    CHECK_THROWS_WITH(tcgen05.compile(Target::parse(t), v), Contains(std::string("is not available on ") + t));

  // The MLIR verifier does not check setmaxnreg on non-"a" targets and LLVM would abort: we refuse.
  Kernel setmax{"uses_setmaxnreg", [](Tensor<f32> a) { increase_max_registers(232); }};
  CHECK_THROWS_WITH(setmax.compile(Target::parse("sm_90"), v),
                    Contains("setmaxnreg is not available on sm_90; it needs sm_90a and the Blackwell a and f targets"));
  for (const char* t : {"sm_100", "sm_110", "sm_120", "sm_121"})
    CHECK_THROWS_WITH(setmax.compile(Target::parse(t), v), Contains(std::string("setmaxnreg is not available on ") + t));

  Kernel elect{"uses_elect", [](Tensor<f32> a) { elect_one(); }};
  CHECK_THROWS_WITH(elect.compile(Target::parse("sm_86"), v), Contains("elect_one (elect.sync) is not available on sm_86"));
}

TEST_CASE("a traced value used outside any kernel", "[error]") {
  CHECK_THROWS_WITH(Int(3), Contains("test_errors.cpp") && Contains("a traced value was used outside any kernel"));
}

TEST_CASE("a value from another kernel's trace", "[error]") {
  static Int leaked;
  Kernel first{"first", [](Tensor<i32> a) { leaked = thread_idx().x; }};
  Kernel second{"second", [](Tensor<i32> a) { a(0) = leaked + 1; }};
  auto v = test::vector_arg<int32_t>();
  first.compile(sm90a, v);
  CHECK_THROWS_WITH(second.compile(sm90a, v),
                    Contains("in kernel 'second'") && Contains("this value belongs to another trace"));
}

TEST_CASE("indexing a tensor with the wrong number of coordinates", "[error]") {
  Kernel k{"rank_mismatch", [](Tensor<f32> a) { a(0, 1) = 1.0f; }};
  CHECK_THROWS_WITH(k.compile(sm90a, test::vector_arg<float>()),
                    Contains("test_errors.cpp") && Contains("a rank-1 tensor is indexed with 2 coordinate(s); give one per mode"));
}

TEST_CASE("an unprovable vector access names the alignment it could prove", "[error]") {
  Kernel k{"unaligned_vector", [](Tensor<f32> a) {
    Int i = thread_idx().x * 2;
    a.pointer_at({i}).load_vector<4>();
  }};
  CHECK_THROWS_WITH(k.compile(sm90a, test::vector_arg<float>()),
                    Contains("cannot prove that this 16-byte vector access is aligned: the address is known to be 8-byte aligned") &&
                        Contains("assume_divisible(i, 4)"));
  Kernel fixed{"assumed_vector", [](Tensor<f32> a, Int i) {
    a.pointer_at({assume_divisible(i, 4)}).store_vector<4>({F32(1.0f), F32(2.0f), F32(3.0f), F32(4.0f)});
  }};
  CHECK(test::contains(fixed.compile(sm90a, test::vector_arg<float>(), 0).ptx, "st.global.v4"));
}

TEST_CASE("a Var promised divisible keeps its divisibility through a loop, and a broken promise names the assignment", "[error]") {
  // k steps by 4 floats (16 bytes) from a multiple of 4: every read of k is provably aligned.
  Kernel stepped{"var_divisible", [](Tensor<f32> a, Int start, Int count) {
    Var<int32_t> k(start * 4, divisible_by(4));
    for_(0, count, [&](Int) {
      a.pointer_at({Int(k)}).store_vector<4>({F32(1.0f), F32(2.0f), F32(3.0f), F32(4.0f)});
      k += 4;
    });
  }};
  CHECK(test::contains(stepped.compile(sm90a, test::vector_arg<float>(), 0, 1).ptx, "st.global.v4"));
  // Without the promise the same loop cannot be proven aligned.
  Kernel forgetful{"var_forgets", [](Tensor<f32> a, Int start, Int count) {
    Var<int32_t> k(start * 4);
    for_(0, count, [&](Int) {
      a.pointer_at({Int(k)}).store_vector<4>({F32(1.0f), F32(2.0f), F32(3.0f), F32(4.0f)});
      k += 4;
    });
  }};
  CHECK_THROWS_WITH(forgetful.compile(sm90a, test::vector_arg<float>(), 0, 1), Contains("cannot prove that this 16-byte vector access is aligned"));
  Kernel broken{"var_broken_promise", [](Tensor<f32> a, Int start) {
    Var<int32_t> k(start * 4, divisible_by(4));
    k += 2;
    a(Int(k)) = 1.0f;
  }};
  CHECK_THROWS_WITH(broken.compile(sm90a, test::vector_arg<float>(), 0),
                    Contains("test_errors.cpp:" + std::to_string(__LINE__ - 4) + ": error: in kernel 'var_broken_promise' (sm_90a): this value is not "
                             "known to be a multiple of 4 (the tracer proves 2), which the Var declared at ") &&
                        Contains("declared at " + std::string(__FILE__) + ":" + std::to_string(__LINE__ - 7)) && Contains("assume_divisible(value, 4)"));
  Kernel bad_divisor{"var_bad_divisor", [](Tensor<f32> a) { Var<int32_t> k(0, divisible_by(12)); }};
  CHECK_THROWS_WITH(bad_divisor.compile(sm90a, test::vector_arg<float>()), Contains("divisible_by needs a power of two between 1 and 2^30, not 12"));
}

TEST_CASE("a tensor argument of rank 5 is refused at the caller's line, by the one rank rule", "[error]") {
  std::array<int64_t, 5> shape{2, 2, 2, 2, 2}, stride{16, 8, 4, 2, 1};
  const int line = __LINE__ + 1;
  CHECK_THROWS_WITH(DeviceTensor<float>::make(0, shape, stride),
                    Contains("test_errors.cpp:" + std::to_string(line) + ": error: a kernel's tensor argument has 1 to 4 modes, not 5") &&
                        Contains("inside a kernel, tensors of any rank"));
  CHECK(max_tensor_rank == 4);
  CHECK(detail::TensorFacts::max_rank == max_tensor_rank);
  // Inside a kernel a rank-5 tensor is an ordinary layout.
  Kernel inner{"rank5_inside", [](Tensor<f32> a) {
    Tensor<f32> t = make_tensor(a.data(), make_layout({2, 2, 2, 2, 2}));
    t(IntTuple{1, 1, 1, 1, 1}) = 1.0f;
  }};
  CHECK_NOTHROW(inner.compile(sm90a, test::vector_arg<float>()));
}

TEST_CASE("register array index out of range", "[error]") {
  Kernel k{"out_of_range", [](Tensor<f32> a) {
    RegisterArray<f32, 4> r(0.0f);
    a(0) = r[4];
  }};
  CHECK_THROWS_WITH(k.compile(sm90a, test::vector_arg<float>()),
                    Contains("index 4 is out of range for a register array of 4 elements (valid: 0..3)"));
}

TEST_CASE("static shared memory over the 48 KB a block may declare", "[error]") {
  Kernel k{"too_much_shared", [](Tensor<f32> a) {
    Pointer<f32> s = shared_array<f32>(8192);
    Pointer<f32> t = shared_array<f32>(8192);
    s[0] = t[0];
  }};
  CHECK_THROWS_WITH(k.compile(sm90a, test::vector_arg<float>()),
                    Contains("static shared memory would reach 65536 bytes, over the 48 KB") && Contains("dynamic_shared<T>()"));
}

TEST_CASE("invalid kernel names and targets", "[error]") {
  CHECK_THROWS_WITH((Kernel{"9lives", [](Tensor<f32>) {}}), Contains("kernel name '9lives' is not a valid symbol"));
  CHECK_THROWS_WITH(Target::parse("sm_75"), Contains("unknown target 'sm_75'; valid targets: sm_80"));
}

TEST_CASE("argument checks before a launch: null and misaligned pointers", "[error]") {
  using P = detail::KernelParam<Tensor<f32>>;
  CHECK_THROWS_WITH(P::check(test::vector_arg<float>(16, 0), "k", 2), "error: argument 2 of kernel 'k' is a null pointer");
  CHECK_THROWS_WITH(P::check(test::vector_arg<float>(16, 0x1002), "k", 0),
                    "error: argument 0 of kernel 'k' is not aligned to its element size (4 bytes)");
}

TEST_CASE("tensor views outside 32-bit indexing or outside their buffer", "[error]") {
  CHECK_THROWS_WITH(test::vector_arg<float>(int64_t(1) << 32), Contains("past the 32-bit indexing limit"));
  CHECK_THROWS_WITH(Buffer<float>(0x1000, 100, nullptr).view({10, 11}), Contains("reaches element 109 but the buffer holds 100"));
}

TEST_CASE("no GPU: creating a Device says so; cross-compiling still works", "[error]") {
  if (Device::count() > 0) {
    SUCCEED("a GPU is present: the no-GPU message cannot be provoked here");
    return;
  }
  CHECK_THROWS_WITH(Device(), Contains("CUDA driver") && (Contains("could not be loaded") || Contains("no usable GPU")));
  CHECK_NOTHROW(Kernel{"still_compiles", [](Tensor<f32> a) { a(0) = 1.0f; }}.compile(sm90a, test::vector_arg<float>()));
}

TEST_CASE("no nvJitLink and no ptxas: the error says where it looked", "[error]") {
  setenv("CUTEJIT_CUDA_HOME", "/nonexistent-cuda", 1);
  Kernel k{"no_assembler", [](Tensor<f32> a) { a(0) = 1.0f; }};
  // It names the folders it searched, and only those: the pinned toolkit, nothing else.
  CHECK_THROWS_WITH(k.compile(sm90a, test::vector_arg<float>()),
                    Contains("cannot turn PTX into a cubin: neither libnvJitLink.so") &&
                        Contains("looked only in /nonexistent-cuda/lib64, /nonexistent-cuda/bin (/nonexistent-cuda does not exist)") &&
                        Contains("because CUTEJIT_CUDA_HOME is set") && !Contains("/usr/local/cuda/"));
  unsetenv("CUTEJIT_CUDA_HOME");
  setenv("CUTEJIT_ASSEMBLER", "ptxas", 1);
  CompiledKernel with_ptxas = k.compile(sm90a, test::vector_arg<float>());
  unsetenv("CUTEJIT_ASSEMBLER");
  CHECK(with_ptxas.assembler == "ptxas");
  CHECK(test::cubin_contains(with_ptxas.cubin, "sm_90a"));
}

TEST_CASE("a Constexpr argument its type cannot hold is an error, not a narrowed value", "[error]") {
  const Target sm90a = Target::parse("sm_90a");
  Kernel small{"constexpr_int8", [](Tensor<f32> a, Constexpr<int8_t> s) { a(0) = float(int(s)); }};
  // 300 used to become 44.
  CHECK_THROWS_WITH(small.compile(sm90a, test::vector_arg<float>(1024, 256), 300),
                    Contains("argument 1 of kernel 'constexpr_int8' is 300, which its Constexpr's type does not hold (integers from -128 to 127)"));
  CHECK_THROWS_WITH(small.compile(sm90a, test::vector_arg<float>(1024, 256), -129), Contains("is -129"));
  CHECK_NOTHROW(small.compile(sm90a, test::vector_arg<float>(1024, 256), -128));
  Kernel whole{"constexpr_int", [](Tensor<f32> a, Constexpr<int> s) { a(0) = float(int(s)); }};
  CHECK_THROWS_WITH(whole.compile(sm90a, test::vector_arg<float>(1024, 256), 2.5), Contains("is 2.500000, which its Constexpr's type does not hold"));
  CHECK_NOTHROW(whole.compile(sm90a, test::vector_arg<float>(1024, 256), 3.0));
}

TEST_CASE("an Error's message without its location and prefix, for another error's context", "[error]") {
  CHECK(Error("error: no such kernel").message() == "no such kernel");
  CHECK(Error("no such kernel").message() == "no such kernel");
  Error located("a bad shape", std::source_location::current());
  CHECK(located.located());
  CHECK_THAT(located.what(), Contains("test_errors.cpp:") && Contains(": error: a bad shape"));
  CHECK(located.message() == "a bad shape");
  // A message that itself starts with a word and a colon is not mistaken for a location.
  CHECK(Error("error: kernel 'k': argument 2").message() == "kernel 'k': argument 2");
}
