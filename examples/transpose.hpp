// Matrix transpose through a 32x32 shared-memory tile: reads and writes of global memory are
// both coalesced; the tile's rows are padded to 33 floats so its columns hit 32 different banks.
#pragma once

#include "example.hpp"

namespace examples {
using namespace cutejit;

constexpr int tile = 32, rows_per_pass = 8;

inline Kernel transpose{"transpose", [](Tensor<f32> in, Tensor<f32> out) {
  Int rows = in.shape(0), cols = in.shape(1);
  Tensor<f32> smem(shared_array<f32>(tile * (tile + 1)), {tile, tile}, {tile + 1, 1});
  Int tx = thread_idx().x, ty = thread_idx().y;
  Int r0 = block_idx().y * tile, c0 = block_idx().x * tile;
  for (int k = 0; k < tile; k += rows_per_pass) {  // unrolled at trace time
    Int r = r0 + ty + k, c = c0 + tx;
    if_(r < rows && c < cols, [&] { smem(ty + k, tx) = in(r, c); });
  }
  sync_threads();
  for (int k = 0; k < tile; k += rows_per_pass) {
    Int r = c0 + ty + k, c = r0 + tx;  // row and column in the output
    if_(r < cols && c < rows, [&] { out(r, c) = smem(tx, ty + k); });
  }
}};

inline Example transpose_example(int64_t rows = 4099, int64_t cols = 2050) {
  return {"transpose",
          [rows, cols](const Device& gpu) {
            auto h = random_floats(rows * cols, 6);
            auto in = gpu.upload(h);
            auto out = gpu.upload(std::vector<float>(rows * cols, NAN));
            transpose(gpu, Launch{.grid = {ceil_div(cols, tile), ceil_div(rows, tile)}, .block = {tile, rows_per_pass}},
                      in.view({rows, cols}), out.view({cols, rows}));
            gpu.synchronize();
            return relative_error(out.to_host(), transposed(h, rows, cols));
          },
          [rows, cols](const Target& t) {
            auto in = DeviceTensor<f32>::make(0, std::array<int64_t, 2>{rows, cols}, std::array<int64_t, 2>{cols, 1});
            auto out = DeviceTensor<f32>::make(0, std::array<int64_t, 2>{cols, rows}, std::array<int64_t, 2>{rows, 1});
            return transpose.compile(t, in, out);
          },
          0.0};
}

}  // namespace examples
