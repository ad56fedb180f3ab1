// saxpy: y = alpha * x + y, with a scalar argument and a grid-stride loop.
#pragma once

#include "example.hpp"

namespace examples {
using namespace cutejit;

inline Kernel saxpy{"saxpy", [](F32 alpha, Tensor<f32> x, Tensor<f32> y) {
  Int start = block_idx().x * block_dim().x + thread_idx().x;
  Int stride = grid_dim().x * block_dim().x;
  for_(start, size(x), stride, [&](Int i) { y(i) = fma(alpha, x(i), y(i)); });
}};

inline Example saxpy_example(int64_t n = 10'000'019) {
  return {"saxpy",
          [n](const Device& gpu) {
            const float alpha = 2.5f;
            auto hx = random_floats(n, 3), hy = random_floats(n, 4);
            auto x = gpu.upload(hx), y = gpu.upload(hy);
            saxpy(gpu, Launch{.grid = uint32_t(gpu.multiprocessors() * 8), .block = 256}, alpha, x, y);
            gpu.synchronize();
            std::vector<double> ref(n);
            for (int64_t i = 0; i < n; ++i) ref[i] = double(alpha) * hx[i] + hy[i];
            return relative_error(y.to_host(), ref);
          },
          [n](const Target& t) {
            auto v = DeviceTensor<f32>::make(0, std::array<int64_t, 1>{n}, std::array<int64_t, 1>{1});
            return saxpy.compile(t, 1.0f, v, v);
          },
          1e-6};
}

}  // namespace examples
