// Hopper on the GPU: a TMA round trip through shared memory (each swizzle), and the BF16
// tensor-core GEMM against a float64 host reference on random data, output poisoned.
#include <catch2/catch.hpp>

#include "gemm_bf16.hpp"
#include "support.hpp"

using namespace cutejit;

namespace {
// Each block copies one box of `in` to the same place in `out` through shared memory.
Kernel tma_round_trip{"tma_round_trip", [](TmaDescriptor<i32> in, TmaDescriptor<i32> out) {
  Pointer<i32> tile = dynamic_shared_aligned<i32>(1024);
  Pointer<uint64_t> bar = dynamic_shared_aligned<uint64_t>(1024, in.box_bytes());
  Int row = block_idx().y * in.box(0), col = block_idx().x * in.box(1);
  if_(thread_idx().x == 0, [&] {
    mbarrier_init(bar, 1);
    fence_mbarrier_init();
    mbarrier_arrive_expect_tx(bar, in.box_bytes());
    in.load(tile, bar, {row, col});
    mbarrier_wait(bar, 0);
    out.store(tile, {row, col});
    tma_store_commit();
    tma_store_wait<0>();
  });
}};
}  // namespace

TEST_CASE("TMA load then store reproduces the tensor, for every swizzle", "[gpu]") {
  Device gpu;
  const int64_t rows = 256, cols = 128;
  std::vector<int32_t> host(rows * cols);
  for (size_t i = 0; i < host.size(); ++i) host[i] = int32_t(i * 2654435761u);
  auto in = gpu.upload(host);
  for (TmaSwizzle s : {TmaSwizzle::none, TmaSwizzle::bytes32, TmaSwizzle::bytes64, TmaSwizzle::bytes128}) {
    INFO("swizzle " << int(s));
    uint32_t box_cols = s == TmaSwizzle::none ? 32 : uint32_t(int(s) / 4);
    auto out = gpu.upload(std::vector<int32_t>(rows * cols, -1));
    auto tin = make_tensor_map(in.view({rows, cols}), {64, box_cols}, s);
    auto tout = make_tensor_map(out.view({rows, cols}), {64, box_cols}, s);
    uint32_t shared = 64 * box_cols * 4 + 8 + dynamic_shared_slack(1024);
    tma_round_trip(gpu, Launch{.grid = {uint32_t(cols / box_cols), uint32_t(rows / 64)}, .block = 32, .shared_bytes = shared},
                   tin, tout);
    gpu.synchronize();
    CHECK(out.to_host() == host);
  }
}

TEST_CASE("the BF16 GEMM matches its float64 host reference", "[gpu]") {
  Device gpu;
  // 2304 x 1920: 18 x 8 tiles of 128 x 256, more than one per CTA on a 132-SM H200 (the
  // persistent loop and the ring's phases across tiles), a short last group of tile rows and a
  // half-wide last column of tiles (N = 15 x 128), as in 256 x 384 and 128 x 128.
  for (const examples::Example& e : {examples::gemm_bf16_example(), examples::gemm_bf16_example(128, 128, 64),
                                     examples::gemm_bf16_example(512, 1024, 768), examples::gemm_bf16_example(2304, 1920, 128)}) {
    double err = e.check(gpu);
    INFO(e.name << ": relative error " << err << ", tolerance " << e.tolerance);
    CHECK(err <= e.tolerance);
  }
}

TEST_CASE("the BF16 GEMM refuses shapes its tile does not divide", "[gpu]") {
  Device gpu;
  auto a = gpu.alloc<bf16>(200 * 64), b = gpu.alloc<bf16>(128 * 64), c = gpu.alloc<bf16>(200 * 128);
  CHECK_THROWS_WITH(examples::gemm_bf16_run(gpu, a, b, c, 200, 128, 64),
                    Catch::Contains("gemm_bf16 needs M, N multiples of 128 and K a multiple of 64, not 200 x 128 x 64"));
}
