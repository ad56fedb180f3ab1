// Cluster building blocks on the CPU: a TMA multicast load and an arrival on another CTA's
// mbarrier reach their PTX on sm_90a, and are trace-time errors before sm_90.
#include <catch2/catch.hpp>

#include "support.hpp"

using namespace cutejit;
using Catch::Contains;
using test::contains;

namespace {
Kernel cluster_ops{"cluster_ops", [](TmaDescriptor<f32> in) {
  Pointer<f32> tile = dynamic_shared_aligned<f32>(128);
  Pointer<uint64_t> bar = dynamic_shared_aligned<uint64_t>(128, 1024);
  in.load_multicast(tile, bar, {0, 0}, 0b11);
  mbarrier_arrive_cluster(bar, cluster_cta_rank() ^ 1);
}};
}  // namespace

TEST_CASE("a TMA multicast load and a remote mbarrier arrival compile to their PTX", "[unit]") {
  auto map = TensorMap<f32>::for_compile(2, {8, 32}, TmaSwizzle::none);
  std::string ptx = cluster_ops.compile(Target::parse("sm_90a"), map).ptx;
  CHECK(contains(ptx, ".multicast::cluster"));
  CHECK(contains(ptx, "mapa.shared::cluster"));
  CHECK(contains(ptx, "mbarrier.arrive.shared::cluster.b64"));
  Kernel old{"old_cluster", [](Tensor<f32> x) {
    Pointer<uint64_t> bar = shared_array<uint64_t>(1);
    mbarrier_arrive_cluster(bar, 1);
    x(0) = 1.0f;
  }};
  CHECK_THROWS_WITH(old.compile(Target::parse("sm_80"), test::vector_arg<float>()),
                    Contains("test_cluster.cpp") && Contains("mbarrier_arrive_cluster") && Contains("not available on sm_80"));
}
