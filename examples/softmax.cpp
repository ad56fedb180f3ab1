// Row softmax, one warp per row: three passes over the row (its maximum, the sum of the
// exponentials, the normalised values), each reduced across the warp with shuffles.
#include "example.hpp"

using namespace cutejit;

F32 warp_reduce(F32 v, bool is_max) {
  for (int offset = 16; offset > 0; offset /= 2) {
    F32 other = shuffle_xor(v, offset);
    v = is_max ? max(v, other) : v + other;
  }
  return v;
}

Kernel softmax{"softmax", [](Tensor<f32> x, Tensor<f32> y) {
  Int rows = x.shape(0), cols = x.shape(1);
  Int row = block_idx().x * (block_dim().x / 32) + thread_idx().x / 32;
  Int lane = lane_idx();
  if_(row < rows, [&] {
    Var<f32> m = -INFINITY;
    for_(lane, cols, 32, [&](Int c) { m = max(F32(m), x(row, c)); });
    F32 row_max = warp_reduce(m, true);
    Var<f32> s = 0.0f;
    for_(lane, cols, 32, [&](Int c) { s += fast::exp(F32(x(row, c)) - row_max); });
    F32 inv = 1.0f / warp_reduce(s, false);
    for_(lane, cols, 32, [&](Int c) { y(row, c) = fast::exp(F32(x(row, c)) - row_max) * inv; });
  });
}};

int main() {
  const int64_t rows = 257, cols = 1000;
  return example::run({"softmax",
                       [&](const Device& device) {
                         auto h = example::random_floats(size_t(rows * cols), 7);
                         for (float& v : h) v *= 8;
                         auto x = device.upload(h);
                         auto y = device.upload(std::vector<float>(size_t(rows * cols), NAN));
                         softmax(device, Launch{.grid = ceil_div(rows, 8), .block = 256}, x.view({rows, cols}), y.view({rows, cols}));
                         device.synchronize();
                         std::vector<double> want(size_t(rows * cols));
                         for (int64_t r = 0; r < rows; ++r) {
                           const float* row = &h[size_t(r * cols)];
                           double m = -INFINITY, s = 0;
                           for (int64_t c = 0; c < cols; ++c) m = std::max(m, double(row[c]));
                           for (int64_t c = 0; c < cols; ++c) s += std::exp(row[c] - m);
                           for (int64_t c = 0; c < cols; ++c) want[size_t(r * cols + c)] = std::exp(row[c] - m) / s;
                         }
                         return example::relative_error(y.to_host(), want);
                       },
                       [&](const Target& target) {
                         auto v = DeviceTensor<f32>::for_compile({rows, cols});
                         return std::vector{softmax.compile(target, v, v)};
                       },
                       1e-5});
}
