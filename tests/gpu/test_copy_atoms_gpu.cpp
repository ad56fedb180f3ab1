// The copy atoms on the GPU: an AtomicAdd reduction of every block's fragments into one tile
// (split-K's shape) sums exactly, and a UniversalCopy<16> tiled copy moves a tile unchanged.
#include <catch2/catch.hpp>

#include <cutejit/cutejit.hpp>

#include <vector>

#include "support.hpp"

using namespace cutejit;

namespace {
// Each of the grid's blocks adds (block + 1) * (index + 1) into every element of `out`
// (128 x 16 f32, row-major), each thread its 1 x 16 row through an AtomicAdd tiled copy.
Kernel reduce_tiles{"reduce_tiles", [](Tensor<f32> out) {
  Tensor<f32> tile = make_tensor(out.data(), make_layout({128, 16}, LayoutRight{}));
  auto tiled = make_tiled_copy(AtomicAdd{}, make_layout({128, 1}), make_layout({1, 16}));
  auto thr = tiled.get_slice(thread_idx().x);
  Tensor<f32> dst = thr.partition_D(tile);
  Tensor<f32> frag = make_fragment_like(dst);
  for (int i = 0; i < 16; ++i) frag(i) = cast<float>((block_idx().x + 1) * (thread_idx().x * 16 + i + 1));
  copy(tiled, frag, dst);
}};

// 128 threads copy a 32 x 64 f32 tile global -> shared -> global with 16-byte accesses.
Kernel move_tile{"move_tile", [](Tensor<f32> in, Tensor<f32> out) {
  Tensor<f32> src = make_tensor(in.data(), make_layout({32, 64}, LayoutRight{}));
  Tensor<f32> dst = make_tensor(out.data(), make_layout({32, 64}, LayoutRight{}));
  Tensor<f32> smem = make_smem_tensor<f32>(make_layout(IntTuple{32, 64}, LayoutRight{}));
  auto tiled = make_tiled_copy(UniversalCopy<16>{}, make_ordered_layout({8, 16}, {1, 0}), make_layout({1, 4}));
  auto thr = tiled.get_slice(thread_idx().x);
  copy(tiled, thr.partition_S(src), thr.partition_D(smem));
  sync_threads();
  copy(tiled, thr.partition_S(smem), thr.partition_D(dst));
}};
}  // namespace

TEST_CASE("an AtomicAdd copy sums every block's fragment into one tile exactly", "[gpu]") {
  Device gpu;
  const int blocks = 6;
  std::vector<float> start(128 * 16);
  for (size_t i = 0; i < start.size(); ++i) start[i] = float(i % 7);
  auto out = gpu.upload(start);
  reduce_tiles(gpu, Launch{.grid = blocks, .block = 128}, out.view({128 * 16}));
  gpu.synchronize();
  std::vector<float> got = out.to_host();
  // Sums of small integers: exact in f32 whatever the order of the additions.
  int wrong = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    double want = double(start[i]) + double(blocks * (blocks + 1) / 2) * double(i + 1);
    if (double(got[i]) != want) ++wrong;
  }
  CHECK(wrong == 0);
}

TEST_CASE("a UniversalCopy<16> tiled copy moves a tile through shared memory unchanged", "[gpu]") {
  Device gpu;
  std::vector<float> in(32 * 64);
  for (size_t i = 0; i < in.size(); ++i) in[i] = float(i) * 0.5f - 100.0f;
  auto a = gpu.upload(in);
  auto b = gpu.upload(std::vector<float>(in.size(), NAN));
  move_tile(gpu, Launch{.grid = 1, .block = 128}, a.view({32 * 64}), b.view({32 * 64}));
  gpu.synchronize();
  CHECK(b.to_host() == in);
}
