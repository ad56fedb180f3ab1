// Tensors on the GPU: the tensor examples against host references (aligned sizes, residue
// tiles, rows too odd to vectorise), and dynamic layouts evaluated by a kernel whose shapes
// are launch arguments, compared with the same layouts computed statically on the host.
#include <catch2/catch.hpp>

#include <cstdio>

#include "elementwise_add_tv.hpp"
#include "check_all.hpp"
#include "transpose_swizzle.hpp"

using namespace cutejit;

TEST_CASE("tensor examples match their host references on the GPU", "[gpu]") {
  Device gpu;
  // The emulated device (interpreting every thread) leaves out the gpu_only sizes, millions of
  // elements each; 128 x 256 is aligned, and the others are as ragged.
  using test::gpu_only;
  test::check_all(gpu, {
      gpu_only(fixtures::elementwise_add_tv_check()), gpu_only(fixtures::elementwise_add_tv_check(4096, 4096)),
      fixtures::elementwise_add_tv_check(128, 256), fixtures::elementwise_add_tv_check(33, 4099),
      fixtures::elementwise_add_tv_check(7, 12), gpu_only(fixtures::elementwise_add_tv_check(2051, 4100, 8)),
      fixtures::elementwise_add_tv_check(33, 4099, 8), gpu_only(fixtures::transpose_swizzle_check()),
      fixtures::transpose_swizzle_check(64, 96), fixtures::transpose_swizzle_check(5, 3)
  });
}

TEST_CASE("dynamic layouts evaluated on the GPU equal the static layouts", "[gpu]") {
  Device gpu;
  // Thread i writes, for the tile (bm, bn) of an (M,N) row-major matrix tiled 16x32, the offset of
  // its element i of that tile, and of its element i under local_partition by 4x8 threads.
  Kernel offsets{"dynamic_offsets", [](Tensor<i32> out, Int m, Int n, Int bm, Int bn) {
    Layout mn(IntTuple{m, n}, IntTuple{n, 1});
    Int i = thread_idx().x;
    SlicedLayout tile = detail::local_tile_map(mn, make_tile(16, 32), make_coord(bm, bn));
    out(i) = (tile.offset + tile.layout(IntTuple(i))).read(detail::Where::current());
    SlicedLayout part = detail::local_partition_map(tile.layout, make_layout(IntTuple{4, 8}, LayoutRight{}), i % 32);
    out(i + 512) = (tile.offset + part.offset + part.layout(IntTuple(i / 32))).read(detail::Where::current());
  }};
  for (auto [m, n, bm, bn] : {std::array{64, 96, 1, 2}, std::array{100, 70, 6, 1}, std::array{37, 33, 2, 0}}) {
    INFO("M=" << m << " N=" << n << " tile (" << bm << "," << bn << ")");
    auto out = gpu.upload(std::vector<int32_t>(1024, -1));
    offsets(gpu, Launch{.grid = 1, .block = 512}, out, m, n, bm, bn);
    gpu.synchronize();
    auto got = out.to_host();
    Layout mn = make_layout(IntTuple{m, n}, LayoutRight{});
    SlicedLayout tile = detail::local_tile_map(mn, make_tile(16, 32), make_coord(bm, bn));
    int wrong = 0;
    for (int i = 0; i < 512; ++i) {
      wrong += got[size_t(i)] != (tile.offset + tile.layout(i)).value();
      SlicedLayout part = detail::local_partition_map(tile.layout, make_layout(IntTuple{4, 8}, LayoutRight{}), i % 32);
      wrong += got[size_t(i) + 512] != (tile.offset + part.offset + part.layout(i / 32)).value();
    }
    CHECK(wrong == 0);
  }
}
