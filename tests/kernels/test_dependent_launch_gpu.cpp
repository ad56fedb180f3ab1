// The kernel library's programmatic dependent launch: a few-row gemm and a decode attention
// asked for it start while the kernel before them runs, and must still read only what that
// kernel wrote. Before them, a slow kernel of this file's writes their input and lets them start
// at once (griddepcontrol_launch_dependents); a kernel that did not wait would read the NaNs it
// overwrites. Each result must equal, bit for bit, the same call launched after the slow kernel
// has finished (the kernels differ only by the wait). On a GPU the kernels overlap; the
// emulated device runs launches one after another, so there it checks the traced kernels and
// their launches, not the wait.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <vector>

#include <cutejit/cutejit.hpp>
#include <cutejit/kernels/attention.hpp>
#include <cutejit/kernels/gemm.hpp>

#include "kernel_test_values.hpp"
#include "support.hpp"

using namespace cutejit;
using test::contains;
using test::random_values;

namespace {

// dst = src, each element only after a long dependent chain of arithmetic, the kernel after it
// allowed to start as soon as every block of this one has.
Kernel slow_copy{"test_slow_copy_bf16", [](Tensor<bf16> src, Tensor<bf16> dst, Int rounds) {
  griddepcontrol_launch_dependents();
  Int i = block_idx().x * block_dim().x + thread_idx().x;
  Var<f32> x = cast<f32>(i);
  for_(0, rounds, [&](Int) { x = x * 1.0000001f + 1e-7f; });
  if_(i < src.shape(0), [&] { dst(i) = cast<bf16>(cast<f32>(src(i)) + (x - x)); });  // x - x is 0, once the chain is done
}};

/// The chain on a GPU (some milliseconds); the emulator interprets it, so a few rounds there.
int rounds_for(const Device& gpu) { return gpu.is_emulated() ? 4 : 20000; }

void slow_copy_into(const Device& gpu, const Buffer<bf16>& src, const Buffer<bf16>& dst) {
  const auto n = int64_t(src.size());
  slow_copy(gpu, Launch{.grid = ceil_div(n, 256), .block = 256}, src.view({n}), dst.view({n}), rounds_for(gpu));
}

bool same_bits(const std::vector<bf16>& a, const std::vector<bf16>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(bf16)) == 0;
}

}  // namespace

TEST_CASE("kernels::gemm launched dependent (few rows) reads what the kernel before it wrote, and the next one its C",
          "[gpu][kernels][sm100][sm120]") {
  Device gpu;
  INFO(gpu.target().name());
  // Two projections in a row, as a decode step's: C1 = A B1^T (with A's rows normed), then
  // C2 = C1 B2^T + C2 (the residual read in place): the FMA kernel (the norm is its alone), then
  // the tensor-core one (N a multiple of 16, K of 32).
  const int64_t m = 4, k = 1032, n1 = 512, n2 = 272;
  const auto source = gpu.upload(random_values<bf16>(size_t(m * k), 1));
  const auto b1 = gpu.upload(random_values<bf16>(size_t(n1 * k), 2, 0.05f)), b2 = gpu.upload(random_values<bf16>(size_t(n2 * n1), 3, 0.05f));
  const auto norm = gpu.upload(random_values<bf16>(size_t(k), 4));
  const std::vector<bf16> residual = random_values<bf16>(size_t(m * n2), 5);
  auto run = [&](bool dependent) {
    auto a = gpu.upload(std::vector<bf16>(size_t(m * k), bf16(NAN)));
    auto c1 = gpu.upload(std::vector<bf16>(size_t(m * n1), bf16(NAN)));
    auto c2 = gpu.upload(residual);
    gpu.synchronize();
    slow_copy_into(gpu, source, a);
    if (!dependent) gpu.synchronize();
    kernels::gemm(gpu, a.view({m, k}), b1.view({n1, k}), c1.view({m, n1}),
                  {.rmsnorm_a = kernels::RmsNorm{norm.view({k}), 1e-6f}, .programmatic_dependent_launch = dependent});
    kernels::gemm(gpu, c1.view({m, n1}), b2.view({n2, n1}), c2.view({m, n2}), {.beta = 1, .programmatic_dependent_launch = dependent});
    gpu.synchronize();
    return c2.to_host();
  };
  const std::vector<bf16> serial = run(false), dependent = run(true);
  REQUIRE(std::isfinite(float(serial[0])));
  CHECK(same_bits(dependent, serial));
}

TEST_CASE("kernels::attention_decode launched dependent reads the queries the kernel before it wrote, in one split and several",
          "[gpu][kernels][sm100][sm120]") {
  Device gpu;
  INFO(gpu.target().name());
  const int64_t batch = 2, heads = 8, kv_heads = 2, D = 128, P = 16, per_sequence = 8, pages = batch * per_sequence;
  const std::vector<int32_t> lengths{100, 37};
  std::vector<int32_t> table(size_t(batch * per_sequence));
  for (size_t i = 0; i < table.size(); ++i) table[i] = int32_t((i * 5) % table.size());  // pages out of order
  const auto source = gpu.upload(random_values<bf16>(size_t(batch * heads * D), 1));
  const auto k = gpu.upload(random_values<bf16>(size_t(pages * P * kv_heads * D), 2));
  const auto v = gpu.upload(random_values<bf16>(size_t(pages * P * kv_heads * D), 3));
  const auto dtable = gpu.upload(table), lens = gpu.upload(lengths);
  for (int64_t splits : {1, 3}) {
    INFO("splits " << splits);
    auto run = [&](bool dependent) {
      auto q = gpu.upload(std::vector<bf16>(size_t(batch * heads * D), bf16(NAN)));
      auto o = gpu.upload(std::vector<bf16>(size_t(batch * heads * D), bf16(NAN)));
      auto lse = gpu.upload(std::vector<float>(size_t(heads * batch), NAN));
      gpu.synchronize();
      slow_copy_into(gpu, source, q);
      if (!dependent) gpu.synchronize();
      kernels::attention_decode(gpu, q.view({batch, heads, D}), k.view({pages, P, kv_heads, D}), v.view({pages, P, kv_heads, D}),
                                dtable.view({batch, per_sequence}), lens.view({batch}), o.view({batch, heads, D}), lse.view({heads, batch}),
                                {.max_seqlen_k = per_sequence * P, .splits = splits, .programmatic_dependent_launch = dependent});
      gpu.synchronize();
      return o.to_host();
    };
    const std::vector<bf16> serial = run(false), dependent = run(true);
    REQUIRE(std::isfinite(float(serial[0])));
    CHECK(same_bits(dependent, serial));
  }
}

TEST_CASE("kernels::gemm and attention_decode trace the wait only where asked, on sm_90 and newer", "[unit][kernels]") {
  auto a = DeviceTensor<bf16>::for_compile({2, 512}), b = DeviceTensor<bf16>::for_compile({384, 512}), c = DeviceTensor<bf16>::for_compile({2, 384});
  auto q = DeviceTensor<bf16>::for_compile({1, 8, 128}), cache = DeviceTensor<bf16>::for_compile({16, 16, 2, 128});
  auto table = DeviceTensor<int32_t>::for_compile({1, 16}), lengths = DeviceTensor<int32_t>::for_compile({1});
  auto lse = DeviceTensor<f32>::for_compile({8, 1});
  auto waits = [](const CompiledKernel& k) { return contains(k.ptx, "griddepcontrol.wait"); };
  for (const char* t : {"sm_80", "sm_90a", "sm_100a", "sm_120a"}) {
    INFO(t);
    const Target target = Target::parse(t);
    const bool has = target.sm >= 90;
    for (const CompiledKernel& k : kernels::gemm_compile(target, a, b, c, {.programmatic_dependent_launch = true})) CHECK(waits(k) == has);
    for (const CompiledKernel& k : kernels::gemm_compile(target, a, b, c)) CHECK_FALSE(waits(k));
    // The decode's kernels: one split, and the split and combine kernels of each count.
    for (const CompiledKernel& k :
         kernels::attention_decode_compile(target, q, cache, cache, table, lengths, q, lse, {.programmatic_dependent_launch = true}))
      CHECK(waits(k) == has);
    for (const CompiledKernel& k : kernels::attention_decode_compile(target, q, cache, cache, table, lengths, q, lse)) CHECK_FALSE(waits(k));
  }
}
