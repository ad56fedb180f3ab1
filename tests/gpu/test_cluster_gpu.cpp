// Clusters on the GPU: a TMA multicast load issued by one CTA lands in both CTAs of a 2-CTA
// cluster, completing on each one's own mbarrier, and an arrival on the other CTA's mbarrier
// (mapa) completes its phase; a kernel that declares its cluster shape runs in it.
#include <catch2/catch.hpp>

#include <vector>

#include "support.hpp"

using namespace cutejit;

namespace {
Kernel multicast{"multicast", [](TmaDescriptor<f32> in, Tensor<f32> out) {
  Pointer<f32> tile = dynamic_shared_aligned<f32>(128);
  Pointer<uint64_t> full = dynamic_shared_aligned<uint64_t>(128, 8 * 32 * 4);
  Pointer<uint64_t> from_peer = full + 1;
  Int rank = cluster_cta_rank(), tid = thread_idx().x;
  Int cluster = block_idx().x / 2;
  if_(tid == 0, [&] {
    mbarrier_init(full, 1);
    mbarrier_init(from_peer, 1);
    fence_mbarrier_init();
  });
  // Both CTAs' barriers exist before any multicast or remote arrival reaches them.
  cluster_arrive();
  cluster_wait();
  if_(tid == 0, [&] {
    mbarrier_arrive_expect_tx(full, in.box_bytes());  // each CTA expects the box on its own barrier
    if_(rank == 0, [&] { in.load_multicast(tile, full, {cluster * 8, 0}, 0b11); });
    mbarrier_wait(full, 0);
    mbarrier_arrive_cluster(from_peer, rank ^ 1);
    mbarrier_wait(from_peer, 0);
  });
  sync_threads();
  for_(tid, 256, 32, [&](Int i) { out(block_idx().x * 256 + i) = F32(tile[i]); });
  // No CTA exits while the other may still reach into its shared memory.
  cluster_arrive();
  cluster_wait();
}};

// Each block writes its rank in its cluster: 0, 1, 0, 1, ... only if the launch made clusters
// of 2 (a block outside any cluster is rank 0).
Kernel declared{"declared_cluster", [](Tensor<u32> out) {
  cluster_shape(2);
  cluster_arrive();
  cluster_wait();
  if_(thread_idx().x == 0, [&] { out(block_idx().x) = cast<uint32_t>(cluster_cta_rank()); });
}};
}  // namespace

TEST_CASE("a kernel that declares cluster_shape(2) runs in clusters of 2 without the launch naming them; another shape is an error",
          "[gpu]") {
  Device gpu;
  auto out = gpu.upload(std::vector<uint32_t>(8, 99u));
  declared(gpu, Launch{.grid = 8, .block = 32}, out);
  gpu.synchronize();
  CHECK(out.to_host() == std::vector<uint32_t>{0, 1, 0, 1, 0, 1, 0, 1});
  // Naming the same shape is fine; another, or a grid the pairs do not divide, is refused.
  declared(gpu, Launch{.grid = 8, .block = 32, .cluster = {2}}, out);
  gpu.synchronize();
  CHECK_THROWS_WITH(declared(gpu, Launch{.grid = 8, .block = 32, .cluster = {4}}, out),
                    Catch::Contains("the kernel declares clusters of (2, 1, 1) (cluster_shape) but the launch asks for (4, 1, 1)"));
  CHECK_THROWS_WITH(declared(gpu, Launch{.grid = 7, .block = 32}, out),
                    Catch::Contains("the grid (7, 1, 1) is not a multiple of the kernel's cluster shape (2, 1, 1)"));
}

TEST_CASE("a TMA multicast load fills both CTAs of a cluster; a remote arrival completes the peer's barrier", "[gpu]") {
  Device gpu;
  const int clusters = 4, rows = 8 * clusters, cols = 32;
  std::vector<float> host(rows * cols);
  for (size_t i = 0; i < host.size(); ++i) host[i] = float(i) + 0.5f;
  auto in = gpu.upload(host);
  auto out = gpu.upload(std::vector<float>(2 * clusters * 256, -1.0f));
  auto map = make_tensor_map(in.view({rows, cols}), {8, 32}, TmaSwizzle::none);
  uint32_t shared = 8 * 32 * 4 + 16 + dynamic_shared_slack(128);
  multicast(gpu, Launch{.grid = 2 * clusters, .block = 32, .shared_bytes = shared, .cluster = {2}}, map, out);
  gpu.synchronize();
  std::vector<float> expected(2 * clusters * 256);
  for (int b = 0; b < 2 * clusters; ++b)
    for (int i = 0; i < 256; ++i) expected[size_t(b * 256 + i)] = host[size_t((b / 2) * 256 + i)];
  CHECK(out.to_host() == expected);
}
