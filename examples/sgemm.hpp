// Naive fp32 SIMT GEMM, C = A * B (row-major, M x K times K x N): one thread per element of C,
// a dynamic loop over K with an unroll hint. The tensor-core GEMMs come later; this is the
// reference point.
#pragma once

#include "example.hpp"

namespace examples {
using namespace cutejit;

inline Kernel sgemm{"sgemm", [](Tensor<f32> a, Tensor<f32> b, Tensor<f32> c) {
  Int m = a.shape(0), k = a.shape(1), n = b.shape(1);
  Int row = block_idx().y * block_dim().y + thread_idx().y;
  Int col = block_idx().x * block_dim().x + thread_idx().x;
  if_(row < m && col < n, [&] {
    Var<f32> acc = 0.0f;
    for_(0, k, 1, [&](Int i) { acc = fma(F32(a(row, i)), b(i, col), acc); }, Unroll{4});
    c(row, col) = acc;
  });
}};

inline Example sgemm_example(int64_t m = 513, int64_t n = 771, int64_t k = 260) {
  return {"sgemm",
          [m, n, k](const Device& gpu) {
            auto ha = random_floats(m * k, 8), hb = random_floats(k * n, 9);
            auto a = gpu.upload(ha), b = gpu.upload(hb);
            auto c = gpu.upload(std::vector<float>(m * n, NAN));
            sgemm(gpu, Launch{.grid = {ceil_div(n, 16), ceil_div(m, 16)}, .block = {16, 16}}, a.view({m, k}), b.view({k, n}),
                  c.view({m, n}));
            gpu.synchronize();
            std::vector<double> ref(m * n, 0.0);
            for (int64_t i = 0; i < m; ++i)
              for (int64_t p = 0; p < k; ++p)
                for (int64_t j = 0; j < n; ++j) ref[i * n + j] += double(ha[i * k + p]) * hb[p * n + j];
            return relative_error(c.to_host(), ref);
          },
          [m, n, k](const Target& t) {
            auto a = DeviceTensor<f32>::make(0, std::array<int64_t, 2>{m, k}, std::array<int64_t, 2>{k, 1});
            auto b = DeviceTensor<f32>::make(0, std::array<int64_t, 2>{k, n}, std::array<int64_t, 2>{n, 1});
            auto c = DeviceTensor<f32>::make(0, std::array<int64_t, 2>{m, n}, std::array<int64_t, 2>{n, 1});
            return sgemm.compile(t, a, b, c);
          },
          1e-5};
}

}  // namespace examples
