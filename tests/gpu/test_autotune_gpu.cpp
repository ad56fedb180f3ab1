// autotune on the GPU: candidates of clearly different cost are told apart by timing, a
// candidate whose launch fails is left out, the Hopper GEMM's tuned tile width computes the
// right product, and `cutejit-cache tune` answers a manifest's question for later processes.
#include <catch2/catch.hpp>

#include <cutejit/cutejit.hpp>
#include <cutejit/jit/autotune.hpp>

#include "gemm_bf16.hpp"
#include "unit/cache/cache_test_support.hpp"

using namespace cutejit;
using Catch::Contains;

namespace {
// Every thread runs a chain of `rounds` dependent sines: the cost grows with rounds, and no
// closed form lets the compiler shorten it (as it would a loop of increments).
Kernel tune_spin{"tune_spin", [](Tensor<f32> x, Int rounds) {
  Int i = block_idx().x * block_dim().x + thread_idx().x;
  if_(i < size(x), [&] {
    Var<float> v = F32(x(i));
    for_(0, rounds, [&](Int) { v = sin(F32(v)) * 0.999f + 0.25f; });
    x(i) = F32(v);
  });
}};
}  // namespace

TEST_CASE("autotune tells candidates apart by their GPU time and leaves out one that cannot launch", "[gpu][timing]") {
  cache_test::TempCache tmp;
  detail::forget_tune_decisions();
  Device gpu;
  const int n = 1 << 16;
  Buffer<float> x = gpu.alloc<float>(n);
  x.zero();
  // rounds: 4000 and 250 run; 0 stands for a launch of 2048 threads per block, which fails.
  auto prepare = [&](int rounds) {
    uint32_t block = rounds == 0 ? 2048 : 256;
    return tune_spin.prepare(gpu, Launch{.grid = uint32_t(n / 256), .block = block}, x, rounds);
  };
  Tuned<int> t = autotune(gpu, {"spin", {n}}, {4000, 250, 0}, prepare);
  CHECK(t.config == 250);
  CHECK_FALSE(t.from_record);
  REQUIRE(t.timings.size() == 3);
  CHECK(t.timings[0].error.empty());
  CHECK(t.timings[0].median_ms > 4 * t.timings[1].median_ms);  // 16x the work
  CHECK_THAT(t.timings[2].error, Contains("block of 2048 threads"));

  Tuned<int> again = autotune(gpu, {"spin", {n}}, {4000, 250, 0}, prepare);
  CHECK(again.config == 250);
  CHECK(again.from_record);
}

TEST_CASE("the Hopper GEMM with its tuned tile width computes A * B^T", "[gpu]") {
  cache_test::TempCache tmp;
  detail::forget_tune_decisions();
  Device gpu;
  // Each candidate is timed over many runs; the emulated device runs a smaller product.
  const bool small = gpu.is_emulated();
  const int64_t m = small ? 128 : 256, n = small ? 256 : 1024, k = small ? 128 : 512;
  auto ha = fixtures::random_bf16(size_t(m * k), 31), hb = fixtures::random_bf16(size_t(n * k), 32);
  auto a = gpu.upload(ha), b = gpu.upload(hb);
  auto c = gpu.upload(fixtures::gemm::poisoned_output(m, n));
  Tuned<int> t = fixtures::gemm_bf16_tune(gpu, a, b, c, m, n, k);
  REQUIRE(t.timings.size() == 3);
  for (const TuneTiming& timing : t.timings) {
    INFO(timing.name << ": " << timing.error);
    CHECK(timing.error.empty());
    CHECK(timing.median_ms > 0);
  }
  c.copy_from(gpu.upload(fixtures::gemm::poisoned_output(m, n)));  // the timing runs wrote C
  fixtures::gemm_bf16_tuned_prepare(gpu, a, b, c, m, n, k)();
  gpu.synchronize();
  CHECK(fixtures::gemm::error(fixtures::gemm::to_floats(c), fixtures::gemm::reference(ha, hb, m, n, k)) < 1e-2);
}

TEST_CASE("cutejit-cache tune answers a manifest's question, and a later process reads the answer", "[gpu][timing]") {
  using namespace cache_test;
  TempCache tmp;
  detail::forget_tune_decisions();
  std::filesystem::path manifest = tmp.path() / "manifest.jsonl";
  write_bytes(manifest, "{\"tune\": \"gemm_bf16\", \"values\": [128, 8192, 8192]}\n");
  std::string args = "tune --plugin " + plugin_path().string() + " --manifest " + manifest.string();
  Run first = cli(tmp, args);
  INFO(first.output);
  REQUIRE(first.exit_code == 0);
  CHECK_THAT(first.output, Contains("gemm_bf16 [128, 8192, 8192]: ") && Contains("(timed)") && Contains("1 answered, 0 failed"));
  Run second = cli(tmp, args);
  CHECK(second.exit_code == 0);
  CHECK_THAT(second.output, Contains("(already recorded)"));

  Device gpu;  // this process asks the same question: the CLI's record answers it
  auto a = gpu.alloc<bf16>(128 * 8192), b = gpu.alloc<bf16>(8192 * 8192), c = gpu.alloc<bf16>(128 * 8192);
  Tuned<int> t = fixtures::gemm_bf16_tune(gpu, a, b, c, 128, 8192, 8192);
  CHECK(t.from_record);
  CHECK_THAT(first.output, Contains(": " + t.name + " (timed)"));
}
