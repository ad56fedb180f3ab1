// The pipeline and tile scheduler pieces, traced on the CPU: they compile to mbarrier and TMA
// PTX, and the pipeline's trace-time checks turn would-be hangs into errors at the user's line.
#include <catch2/catch.hpp>

#include <cutejit/pipeline/pipeline.hpp>
#include <cutejit/pipeline/tile_scheduler.hpp>

#include "streaming_pipeline.hpp"
#include "support.hpp"

using namespace cutejit;
using Catch::Contains;
using test::contains;

namespace {
using test::streaming_kernel;

CompiledKernel compile_streaming(bool extra_load, bool acquire_twice) {
  auto k = streaming_kernel(extra_load, acquire_twice);
  auto map = TensorMap<f32>::for_compile(2, {8, 32}, TmaSwizzle::none);
  return k.compile(Target::parse("sm_90a"), map, test::vector_arg<float>(4096), int32_t(16));
}
}  // namespace

TEST_CASE("a TMA pipeline compiles to mbarrier waits, expect-tx arrivals and TMA loads", "[unit]") {
  std::string ptx = compile_streaming(false, false).ptx;
  CHECK(contains(ptx, "mbarrier.init.shared"));
  CHECK(contains(ptx, "mbarrier.arrive.expect_tx"));
  CHECK(contains(ptx, "mbarrier.try_wait.parity"));
  CHECK(contains(ptx, "cp.async.bulk.tensor.2d"));
  CHECK(contains(ptx, "mbarrier.arrive.shared"));
}

TEST_CASE("pipeline misuse is a trace-time error naming the user's line", "[unit]") {
  CHECK_THROWS_WITH(compile_streaming(true, false),
                    Contains("streaming_pipeline.hpp:34") && Contains("bring 2048 bytes but the stage expects 1024") &&
                        Contains("would never complete"));
  CHECK_THROWS_WITH(compile_streaming(false, true), Contains("streaming_pipeline.hpp:31") && Contains("was not committed"));
  auto map = TensorMap<f32>::for_compile(2, {8, 32}, TmaSwizzle::none);
  Kernel no_acquire{"no_acquire", [](TmaDescriptor<f32> in) {
    Pointer<int8_t> smem = dynamic_shared_aligned<int8_t>(128);
    PipelineTmaAsync pipe(Pointer<uint64_t>((smem + 1024).id()), 1, 1, 1024);
    PipelineState s = PipelineState::at(Int(0), 1);
    pipe.load(in, Pointer<f32>(smem.id()), s, {0, 0});
  }};
  CHECK_THROWS_WITH(no_acquire.compile(Target::parse("sm_90a"), map), Contains("test_pipeline.cpp") && Contains("was not acquired"));
  Kernel too_many{"too_many", [](TmaDescriptor<f32>) {
    PipelineTmaAsync pipe(Pointer<uint64_t>(dynamic_shared_aligned<int8_t>(128).id()), 40, 1, 1024);
  }};
  CHECK_THROWS_WITH(too_many.compile(Target::parse("sm_90a"), map), Contains("1 to 32 stages, not 40"));
}

TEST_CASE("PipelineAsync and PipelineTmaStore compile to arrivals, waits and bulk-group waits", "[unit]") {
  Kernel k{"thread_pipes", [](TmaDescriptor<f32> out, Tensor<i32> sink) {
    Pointer<int8_t> smem = dynamic_shared_aligned<int8_t>(128);
    PipelineAsync pipe(Pointer<uint64_t>((smem + 1024).id()), 2, 32, 1);
    pipe.init();
    PipelineState s = PipelineState::at(thread_idx().x, 2);
    pipe.producer_acquire(s);
    pipe.producer_commit(s);
    pipe.consumer_wait(s);
    sink(0) = 1;
    pipe.consumer_release(s);
    PipelineTmaStore stores(3);
    stores.producer_acquire();
    out.store(Pointer<f32>(smem.id()), {0, 0});
    stores.producer_commit();
    stores.tail();
  }};
  auto map = TensorMap<f32>::for_compile(2, {8, 32}, TmaSwizzle::none);
  std::string ptx = k.compile(Target::parse("sm_90a"), map, test::vector_arg<int32_t>()).ptx;
  CHECK(contains(ptx, "mbarrier.init.shared"));
  CHECK(contains(ptx, "mbarrier.arrive.shared"));
  CHECK(contains(ptx, "mbarrier.try_wait.parity"));
  CHECK(contains(ptx, "cp.async.bulk.wait_group.read \t2;"));
  CHECK(contains(ptx, "cp.async.bulk.commit_group"));
  CHECK(contains(ptx, "cp.async.bulk.wait_group \t0;"));
  Kernel bad{"bad_store_ring", [](TmaDescriptor<f32>) { PipelineTmaStore stores(0); }};
  CHECK_THROWS_WITH(bad.compile(Target::parse("sm_90a"), map), Contains("test_pipeline.cpp") && Contains("1 to 32 stages, not 0"));
}

TEST_CASE("PipelineCpAsync commits with cp.async.mbarrier.arrive.noinc, on every cp.async target", "[unit]") {
  auto in = cutejit::DeviceTensor<float>::make(256, std::array<int64_t, 2>{395, 32}, std::array<int64_t, 2>{32, 1});
  for (const char* t : {"sm_80", "sm_86", "sm_89", "sm_90a", "sm_100a", "sm_120a"}) {
    INFO(t);
    std::string ptx = test::cp_async_streaming.compile(Target::parse(t), in, test::vector_arg<float>(), 50).ptx;
    CHECK(contains(ptx, "cp.async.mbarrier.arrive.noinc.shared"));
    CHECK(contains(ptx, "cp.async.cg.shared.global"));
    // try_wait from sm_90; before it, the test_wait probe.
    const bool hopper_or_newer = Target::parse(t).sm >= 90;
    CHECK(contains(ptx, hopper_or_newer ? "mbarrier.try_wait.parity" : "mbarrier.test_wait.parity.shared.b64"));
    CHECK_FALSE(contains(ptx, "cp.async.wait_group"));
  }
}

TEST_CASE("the tile scheduler's grid size is one CTA per multiprocessor, or per tile", "[unit]") {
  CHECK(StaticTileScheduler::grid_size(1000, 132) == 132);
  CHECK(StaticTileScheduler::grid_size(12, 132) == 12);
  CHECK(StaticTileScheduler::grid_size(0, 132) == 1);
}
