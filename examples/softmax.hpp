// Row softmax: one warp per row. Three passes over the row (max, sum of exponentials,
// normalise), each reduced across the warp with shuffles; exp uses the fast ex2 instruction.
#pragma once

#include "example.hpp"

namespace examples {
using namespace cutejit;

inline F32 warp_all_reduce(F32 v, bool is_max) {
  for (int offset = 16; offset > 0; offset /= 2) {
    F32 other = shuffle_xor(v, offset);
    v = is_max ? max(v, other) : v + other;
  }
  return v;
}

inline Kernel softmax{"softmax", [](Tensor<f32> x, Tensor<f32> y) {
  Int rows = x.shape(0), cols = x.shape(1);
  Int row = block_idx().x * (block_dim().x / 32) + thread_idx().x / 32;
  Int lane = lane_idx();
  if_(row < rows, [&] {
    Var<f32> m = -INFINITY;
    for_(lane, cols, 32, [&](Int c) { m = max(F32(m), x(row, c)); });
    F32 row_max = warp_all_reduce(m, true);
    Var<f32> s = 0.0f;
    for_(lane, cols, 32, [&](Int c) { s += fast::exp(F32(x(row, c)) - row_max); });
    F32 inv = 1.0f / warp_all_reduce(s, false);
    for_(lane, cols, 32, [&](Int c) { y(row, c) = fast::exp(F32(x(row, c)) - row_max) * inv; });
  });
}};

inline Example softmax_example(int64_t rows = 1027, int64_t cols = 1000) {
  return {"softmax",
          [rows, cols](const Device& gpu) {
            auto h = random_floats(rows * cols, 7);
            for (float& v : h) v *= 8;
            auto x = gpu.upload(h);
            auto y = gpu.upload(std::vector<float>(rows * cols, NAN));
            softmax(gpu, Launch{.grid = ceil_div(rows, 8), .block = 256}, x.view({rows, cols}), y.view({rows, cols}));
            gpu.synchronize();
            std::vector<double> ref(rows * cols);
            for (int64_t r = 0; r < rows; ++r) {
              double m = -INFINITY, s = 0;
              for (int64_t c = 0; c < cols; ++c) m = std::max(m, double(h[r * cols + c]));
              for (int64_t c = 0; c < cols; ++c) s += std::exp(h[r * cols + c] - m);
              for (int64_t c = 0; c < cols; ++c) ref[r * cols + c] = std::exp(h[r * cols + c] - m) / s;
            }
            return relative_error(y.to_host(), ref);
          },
          [rows, cols](const Target& t) {
            auto v = DeviceTensor<f32>::make(0, std::array<int64_t, 2>{rows, cols}, std::array<int64_t, 2>{cols, 1});
            return softmax.compile(t, v, v);
          },
          1e-5};
}

}  // namespace examples
