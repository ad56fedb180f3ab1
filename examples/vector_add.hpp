// Vector add with 128-bit loads: each thread adds four consecutive floats; a scalar loop
// takes the ragged tail.
#pragma once

#include "example.hpp"

namespace examples {
using namespace cutejit;

inline Kernel vector_add{"vector_add", [](Tensor<f32> a, Tensor<f32> b, Tensor<f32> c) {
  Int n = size(a);
  Int i = (block_idx().x * block_dim().x + thread_idx().x) * 4;
  if_(i + 4 <= n, [&] {
    auto x = a.pointer_at({i}).load_vector<4>();
    auto y = b.pointer_at({i}).load_vector<4>();
    std::array<F32, 4> z;
    for (int k = 0; k < 4; ++k) z[k] = x[k] + y[k];  // a C++ loop: unrolled at trace time
    c.pointer_at({i}).store_vector<4>(z);
  }).else_([&] {
    for_(i, min(i + 4, n), [&](Int j) { c(j) = a(j) + b(j); });
  });
}};

inline Launch vector_add_launch(int64_t n) { return Launch{.grid = ceil_div(n, 4 * 256), .block = 256}; }

inline Example vector_add_example(int64_t n = (1 << 24) + 3) {
  return {"vector_add",
          [n](const Device& gpu) {
            auto ha = random_floats(n, 1), hb = random_floats(n, 2);
            auto a = gpu.upload(ha), b = gpu.upload(hb);
            auto c = gpu.upload(std::vector<float>(n, NAN));
            vector_add(gpu, vector_add_launch(n), a, b, c);
            gpu.synchronize();
            std::vector<double> ref(n);
            for (int64_t i = 0; i < n; ++i) ref[i] = double(ha[i]) + hb[i];
            return relative_error(c.to_host(), ref);
          },
          [n](const Target& t) {
            auto v = DeviceTensor<f32>::make(0, std::array<int64_t, 1>{n}, std::array<int64_t, 1>{1});
            return vector_add.compile(t, v, v, v);
          },
          1e-7};
}

}  // namespace examples
