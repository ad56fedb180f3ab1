// The DSL's operations reach the PTX as the instructions they promise. Each kernel here is
// cross-compiled for sm_90a (no GPU needed) and its PTX searched.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "support.hpp"

#include <cutejit/tensor/print_tensor.hpp>

using namespace cutejit;
using test::contains;

namespace {
std::string ptx_of(auto& kernel, auto... args) { return kernel.compile(Target::parse("sm_90a"), args...).ptx; }
}  // namespace

TEST_CASE("integer and float arithmetic, comparisons, select and casts", "[unit]") {
  Kernel k{"arith", [](Tensor<i32> a, Tensor<u32> b, Tensor<f32> c, Tensor<f64> d) {
    Int i = thread_idx().x;
    Int x = a(i);
    UInt y = b(i);
    Int p = a(0);
    UInt e = b(0);
    a(i) = (x / p) % p + (x << 2) - (x >> 1) ^ ~x;  // divisors unknown at compile time: real div/rem
    b(i) = (y / e) + (y >> 3u);                       // unsigned: div.u32, shr.u32
    F32 f = c(i);
    c(i) = select(f > 0.0f, f * 2.0f, -f) + cast<f32>(x) + cast<f32>(cast<f16>(f));
    d(i) = cast<f64>(f) / 3.0;
  }};
  auto ptx = ptx_of(k, test::vector_arg<int32_t>(), test::vector_arg<uint32_t>(), test::vector_arg<float>(),
                    test::vector_arg<double>());
  CHECK(contains(ptx, "div.u32"));
  CHECK(contains(ptx, "shr.u32"));
  CHECK(contains(ptx, "shr.s32"));
  CHECK(contains(ptx, "rem.s32"));
  CHECK(contains(ptx, "cvt.rn.f32.s32"));
  CHECK(contains(ptx, "cvt.rn.f16.f32"));
  CHECK(contains(ptx, "cvt.f64.f32"));
  CHECK(contains(ptx, "div.rn.f64"));
  CHECK(contains(ptx, "selp.f32"));
}

TEST_CASE("accurate math links libdevice; fast math uses the approximate instructions", "[unit]") {
  Kernel accurate{"accurate", [](Tensor<f32> a) {
    Int i = thread_idx().x;
    F32 x = a(i);
    a(i) = exp(x) + log(x) + sin(x) + tanh(x) + sqrt(x) + rsqrt(x);
  }};
  auto ptx = ptx_of(accurate, test::vector_arg<float>());
  CHECK_FALSE(contains(ptx, "__nv_"));  // every libdevice call was linked and inlined
  CHECK(contains(ptx, "sqrt.rn.f32"));  // IEEE-rounded, not sqrt.approx

  Kernel fast_math{"fast_math", [](Tensor<f32> a) {
    Int i = thread_idx().x;
    F32 x = a(i);
    a(i) = fast::exp(x) + fast::log2(x) + fast::sin(x) + fast::cos(x) + fast::tanh(x) + fast::rsqrt(x) +
           fast::reciprocal(x);
  }};
  ptx = ptx_of(fast_math, test::vector_arg<float>());
  for (const char* i : {"ex2.approx.ftz.f32", "lg2.approx.ftz.f32", "sin.approx.ftz.f32", "cos.approx.ftz.f32",
                        "tanh.approx.f32", "rsqrt.approx.ftz.f32", "rcp.approx.ftz.f32"}) {
    INFO(i);
    CHECK(contains(ptx, i));
  }
}

TEST_CASE("control flow: if/else, for with unroll hints, while", "[unit]") {
  Kernel k{"control", [](Tensor<i32> a, Int n) {
    Int i = thread_idx().x;
    Var<i32> acc = 0;
    if_(i < n, [&] { acc = 1; }).else_([&] { acc = 2; });
    for_(0, n, 1, [&](Int j) { a(j) = acc + j; }, Unroll{1});  // a store keeps the loop a loop
    Var<i32> x = n;
    while_([&] { return Int(x) > 1; }, [&] { x = x / 2; });
    a(i) = acc + x;
  }};
  auto ptx = ptx_of(k, test::vector_arg<int32_t>(), 5);
  CHECK(contains(ptx, ".pragma \"nounroll\""));  // Unroll{1} reached LLVM's loop metadata
  CHECK(contains(ptx, "bra"));
  CHECK_FALSE(contains(ptx, ".local"));  // Vars were promoted to registers
}

TEST_CASE("register arrays: static indices stay in registers, dynamic ones use local memory", "[unit]") {
  Kernel statically{"static_index", [](Tensor<f32> a) {
    RegisterArray<f32, 4> r(0.0f);
    for (int k = 0; k < 4; ++k) r[k] = a(thread_idx().x + k);
    a(thread_idx().x) = r[0] + r[3];
  }};
  CHECK_FALSE(contains(ptx_of(statically, test::vector_arg<float>()), ".local"));
  Kernel dynamically{"dynamic_index", [](Tensor<f32> a, Int j) {
    RegisterArray<f32, 8> r(1.0f);
    r[j] = 5.0f;
    a(thread_idx().x) = r[thread_idx().x % 8];
  }};
  CHECK(contains(ptx_of(dynamically, test::vector_arg<float>(), 3), ".local"));
}

TEST_CASE("warp shuffles, votes, atomics, shared memory, printf and trap", "[unit]") {
  Kernel k{"warp_ops", [](Tensor<i32> a, Tensor<f32> f) {
    Int i = thread_idx().x;
    Int v = a(i);
    Int s = shuffle_idx(v, 0) + shuffle_up(v, 1) + shuffle_down(v, 2) + shuffle_xor(v, 4);
    UInt mask = ballot(v > 0);
    Bool any = vote_any(v > 3), all = vote_all(v > 3);
    atomic_add(a(0), s);
    atomic_min(a(1), v);
    atomic_max(a(2), v);
    atomic_exchange(a(3), v);
    atomic_cas(a(4), 0, v);
    atomic_add(f(0), 1.0f);
    Pointer<i32> smem = shared_array<i32>(64);
    smem[i % 64] = cast<i32>(mask);
    Pointer<f32> dyn = dynamic_shared<f32>(256);
    dyn[i] = 1.0f;
    sync_threads();
    if_(any && all, [&] { device_printf("lane %d value %d\n", lane_idx(), Int(smem[0])); });
    device_assert(v != 12345, "v must not be 12345");
  }};
  auto ptx = ptx_of(k, test::vector_arg<int32_t>(), test::vector_arg<float>());
  for (const char* i : {"shfl.sync.idx.b32", "shfl.sync.up.b32", "shfl.sync.down.b32", "shfl.sync.bfly.b32",
                        "vote.sync.ballot.b32", "vote.sync.any.pred", "vote.sync.all.pred", "atom.global.add.u32",
                        "atom.global.min.s32", "atom.global.max.s32", "atom.global.exch.b32", "global.cas.b32",
                        "atom.global.add.f32", ".shared .align 16", ".extern .shared", "vprintf", "trap;"}) {
    INFO(i);
    CHECK(contains(ptx, i));
  }
}

TEST_CASE("target-specific instructions compile where the target has them", "[unit]") {
  Kernel k{"hopper_ops", [](Tensor<i32> a) {
    Bool leader = elect_one();
    if_(leader, [&] { a(0) = cluster_cta_rank(); });
    cluster_arrive();
    cluster_wait();
    wgmma_fence();
    wgmma_commit_group();
    wgmma_wait_group(0);
  }};
  auto ptx = ptx_of(k, test::vector_arg<int32_t>());
  for (const char* i : {"elect.sync", "%cluster_ctarank", "barrier.cluster.arrive", "barrier.cluster.wait",
                        "wgmma.fence.sync.aligned", "wgmma.commit_group.sync.aligned", "wgmma.wait_group.sync.aligned \t0;"}) {
    INFO(i);
    CHECK(contains(ptx, i));
  }
  Kernel setmax{"setmax", [](Tensor<i32> a) { increase_max_registers(240); }};
  CHECK(contains(ptx_of(setmax, test::vector_arg<int32_t>()), "setmaxnreg.inc.sync.aligned.u32 \t240;"));
  Kernel tc{"tcgen05", [](Tensor<i32> a) { tcgen05_fence_before_thread_sync(); }};
  CHECK(contains(tc.compile(Target::parse("sm_100a"), test::vector_arg<int32_t>()).ptx, "tcgen05.fence::before_thread_sync"));
}

TEST_CASE("targets parse and print by name", "[unit]") {
  CHECK(Target::parse("sm_90a") == Target{90, Target::Variant::arch_specific});
  CHECK(Target::parse("sm_80").name() == "sm_80");
  std::string names;
  for (const Target& t : Target::all()) names += t.name() + " ";
  CHECK(names ==
        "sm_80 sm_86 sm_89 sm_90 sm_90a sm_100 sm_100f sm_100a sm_103 sm_103f sm_103a sm_110 sm_110f sm_110a "
        "sm_120 sm_120f sm_120a sm_121 sm_121f sm_121a ");
  for (const Target& t : Target::all()) CHECK(Target::parse(t.name()) == t);
  CHECK_THROWS_WITH(Target::parse("sm_89a"), Catch::Contains("unknown target 'sm_89a'"));
  CHECK_THROWS_WITH(Target::parse("sm_90f"), Catch::Contains("unknown target 'sm_90f'"));
}

TEST_CASE("a GPU's compute capability picks its target", "[unit]") {
  // The richest target that runs there: the arch-specific one where the architecture has one.
  const std::pair<std::pair<int, int>, const char*> expected[] = {
      {{8, 0}, "sm_80"},    {{8, 6}, "sm_86"},    {{8, 9}, "sm_89"},    {{9, 0}, "sm_90a"},   {{10, 0}, "sm_100a"},
      {{10, 3}, "sm_103a"}, {{11, 0}, "sm_110a"}, {{12, 0}, "sm_120a"}, {{12, 1}, "sm_121a"},
  };
  for (const auto& [cc, name] : expected) {
    INFO(cc.first << "." << cc.second);
    CHECK(Target::for_compute_capability(cc.first, cc.second).name() == name);
  }
  CHECK_THROWS_WITH(Target::for_compute_capability(7, 5), Catch::Contains("compute capability 7.5 is not one cutejit targets"));
  CHECK_THROWS_WITH(Target::for_compute_capability(10, 1), Catch::Contains("supported: 8.0, 8.6, 8.9, 9.0, 10.0, 10.3, 11.0, 12.0, 12.1"));
}

TEST_CASE("known divisors carry through bit operations and constant shifts", "[unit]") {
  // What the tracer proves about a value's low zero bits decides whether a vector access or a
  // stmatrix row is aligned (a swizzled address is offset ^ ((offset & yyy) >> s)).
  std::map<std::string, int64_t> known;
  Kernel k{"divisors", [&](Tensor<i32> a) {
    Int x = a(0), y = a(1);
    Int x16 = x * 16, y32 = y * 32;
    auto note = [&](const char* what, const Int& v) {
      known[what] = detail::known_divisor(v.id());
      a(2) = v;
    };
    note("x16 & -64", x16 & -64);         // the zeros of either
    note("x16 & y", x16 & y);
    note("x16 | y32", x16 | y32);         // the zeros of both
    note("x16 ^ y32", x16 ^ y32);
    note("(x * 64) >> 3", (x * 64) >> 3);  // arithmetic: -64 >> 3 = -8
    note("x16 << 4", x16 << 4);
    note("x16 >> y", x16 >> y);           // unknown amount: nothing
    note("x16 << y", x16 << y);           // unknown amount (clamped as PTX's shl): nothing
  }};
  k.compile(Target::parse("sm_90a"), test::vector_arg<int32_t>());
  CHECK(known["x16 & -64"] == 64);
  CHECK(known["x16 & y"] == 16);
  CHECK(known["x16 | y32"] == 16);
  CHECK(known["x16 ^ y32"] == 16);
  CHECK(known["(x * 64) >> 3"] == 8);
  CHECK(known["x16 << 4"] == 256);
  CHECK(known["x16 >> y"] == 1);
  CHECK(known["x16 << y"] == 1);
}

TEST_CASE("tensor elements and Vars are accepted wherever a value is: cast, bitcast, math, shuffles", "[unit]") {
  Kernel k{"references", [](Tensor<bf16> g, Tensor<f32> o, Tensor<u16> bits) {
    Int i = thread_idx().x;
    Var<float> v(cast<float>(g(i)));  // a tensor element (Ref<bf16>) cast without reading it first
    F32 x = exp(o(i)) + sqrt(v) + fast::exp2(v) + abs(o(i)) + shuffle_xor(o(i), 1) + shuffle_down(v, 2) + cast<float>(v) +
            fma(o(i), 2.0f, 1.0f);
    o(i) = x;
    bits(i) = bitcast<uint16_t>(g(i));
  }};
  auto ptx = ptx_of(k, test::vector_arg<bf16>(), test::vector_arg<float>(), test::vector_arg<uint16_t>());
  CHECK(contains(ptx, "cvt.f32.bf16"));
  CHECK(contains(ptx, "shfl.sync.bfly.b32"));
  CHECK(contains(ptx, "shfl.sync.down.b32"));
  CHECK(contains(ptx, "ex2.approx"));
  CHECK(contains(ptx, "sqrt.rn.f32"));
  CHECK(contains(ptx, "abs.f32"));
  CHECK(contains(ptx, "fma.rn.f32"));
}

TEST_CASE("warp_reduce and block_reduce: butterfly shuffles, one shared array, the bad sizes refused", "[unit]") {
  Kernel k{"reductions", [](Tensor<f32> x, Tensor<i32> n) {
    Int i = thread_idx().x;
    x(i) = warp_reduce(x(i), Reduce::max) + warp_reduce(F32(x(i)), Reduce::sum, 8);
    n(i) = block_reduce(n(i), 256);
  }};
  auto ptx = ptx_of(k, test::vector_arg<float>(), test::vector_arg<int32_t>());
  CHECK(test::count(ptx, "shfl.sync.bfly.b32") == 5 + 3 + 2 * 5);
  CHECK(contains(ptx, "max.f32"));
  CHECK(contains(ptx, ".shared .align 16 .b8"));
  CHECK(test::count(ptx, "bar.sync") == 2);
  Kernel bad{"bad_block_reduce", [](Tensor<f32> x) { x(0) = block_reduce(x(0), 100); }};
  CHECK_THROWS_WITH(bad.compile(Target::parse("sm_90a"), test::vector_arg<float>()),
                    Catch::Contains("test_dsl_ops.cpp") &&
                        Catch::Contains("block_reduce needs the block's size, a multiple of 32 from 32 to 1024 threads, not 100"));
  Kernel width{"bad_warp_reduce", [](Tensor<f32> x) { x(0) = warp_reduce(x(0), Reduce::sum, 12); }};
  CHECK_THROWS_WITH(width.compile(Target::parse("sm_90a"), test::vector_arg<float>()),
                    Catch::Contains("warp_reduce reduces over a power-of-two number of lanes up to 32, not 12"));
}

TEST_CASE("print_tensor: one printf per line of a static tile, and a clear error for a dynamic shape", "[unit]") {
  Kernel k{"print_tile", [](Tensor<f32> a) { print_tensor(make_tensor(a.data(), make_layout(IntTuple{2, 3}))); }};
  std::string ptx = ptx_of(k, test::vector_arg<float>());
  CHECK(test::count(ptx, "call.uni") + test::count(ptx, "call ") >= 3);  // the header and two lines
  CHECK(contains(ptx, "vprintf"));
  Kernel dynamic{"print_whole", [](Tensor<f32> a) { print_tensor(a); }};
  CHECK_THROWS_WITH(ptx_of(dynamic, test::vector_arg<float>()),
                    Catch::Contains("print_tensor prints a tensor of static shape") && Catch::Contains("test_dsl_ops.cpp"));
}
