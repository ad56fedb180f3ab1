// Matrix transpose through a swizzled 32x32 shared-memory tile, written with tensors: each
// block copies its tile of the input into shared memory row by row, and copies it out column
// by column. Without padding, a column of a row-major 32x32 float tile sits in one bank; the
// swizzle Sw<5,0,5> stores element (r, c) at r*32 + (c ^ r), so both a row and a column hit
// all 32 banks. A coordinate tensor predicates the ragged edge tiles.
#pragma once

#include "example.hpp"

namespace examples {
using namespace cutejit;

inline Kernel transpose_swizzle{"transpose_swizzle", [](Tensor<f32> in, Tensor<f32> out) {
  Swizzle banks(5, 0, 5);
  Tensor<f32> tile = make_smem_tensor<f32>(composition(banks, make_layout({32, 32}, LayoutRight{})));
  // The same shared memory seen transposed: element (c, r) of this view is tile(r, c).
  Tensor<f32> tile_t = make_tensor(tile.data(), composition(banks, make_layout({32, 32}, LayoutLeft{})));
  Layout threads = make_layout({8, 32}, LayoutRight{});  // 8 rows of 32 threads; a warp spans a row
  Int tid = thread_idx().x + thread_idx().y * 32;
  IntTuple block_in = make_coord(block_idx().y, block_idx().x), block_out = make_coord(block_idx().x, block_idx().y);

  auto in_coords = local_partition(local_tile(make_identity_tensor(in.shape()), {32, 32}, block_in), threads, tid);
  copy_if(in_coords, in.shape(), local_partition(local_tile(in, {32, 32}, block_in), threads, tid),
          local_partition(tile, threads, tid));
  sync_threads();
  auto out_coords = local_partition(local_tile(make_identity_tensor(out.shape()), {32, 32}, block_out), threads, tid);
  copy_if(out_coords, out.shape(), local_partition(tile_t, threads, tid),
          local_partition(local_tile(out, {32, 32}, block_out), threads, tid));
}};

inline Example transpose_swizzle_example(int64_t rows = 4099, int64_t cols = 2050) {
  return {"transpose_swizzle",
          [rows, cols](const Device& gpu) {
            auto h = random_floats(rows * cols, 13);
            auto in = gpu.upload(h);
            auto out = gpu.upload(std::vector<float>(rows * cols, NAN));
            transpose_swizzle(gpu, Launch{.grid = {ceil_div(cols, 32), ceil_div(rows, 32)}, .block = {32, 8}},
                              in.view({rows, cols}), out.view({cols, rows}));
            gpu.synchronize();
            return relative_error(out.to_host(), transposed(h, rows, cols));
          },
          [rows, cols](const Target& t) {
            auto in = DeviceTensor<f32>::make(0, std::array<int64_t, 2>{rows, cols}, std::array<int64_t, 2>{cols, 1});
            auto out = DeviceTensor<f32>::make(0, std::array<int64_t, 2>{cols, rows}, std::array<int64_t, 2>{rows, 1});
            return transpose_swizzle.compile(t, in, out);
          },
          0.0};
}

}  // namespace examples
