// Elementwise add in the style of CuTeDSL's elementwise_add example: a thread-value layout
// splits each 16x128 tile of the (M, N) row-major matrices over 128 threads, 16 values each,
// in rows of 4 consecutive floats, so every load and store is 128 bits. A coordinate tensor,
// partitioned exactly like the data, predicates the residue tiles.
#pragma once

#include "example.hpp"

namespace examples {
using namespace cutejit;

inline Kernel elementwise_add_tv{"elementwise_add_tv", [](Tensor<f32> a, Tensor<f32> b, Tensor<f32> c) {
  // 4x32 threads, row-major, each with 4x4 values, row-major: the tile is 16x128.
  TVLayout tv = make_layout_tv(make_ordered_layout({4, 32}, {1, 0}), make_ordered_layout({4, 4}, {1, 0}));
  Int tile = block_idx().x, thread = thread_idx().x;
  // This thread's 16 elements of the block's tile, for data and for coordinates alike.
  auto mine = [&](const auto& t) { return partition_tv(local_tile(t, tv.tiler, tile), tv.tv, thread); };
  CoordTensor coords = mine(make_identity_tensor(a.shape()));
  auto x = load_if(mine(a), coords, a.shape());
  auto y = load_if(mine(b), coords, b.shape());
  store_if(x + y, mine(c), coords, c.shape());
}};

inline Launch elementwise_add_tv_launch(int64_t m, int64_t n) {
  return Launch{.grid = ceil_div(m, 16) * ceil_div(n, 128), .block = 128};
}

inline Example elementwise_add_tv_example(int64_t m = 2051, int64_t n = 4100) {
  return {"elementwise_add_tv",
          [m, n](const Device& gpu) {
            auto ha = random_floats(m * n, 11), hb = random_floats(m * n, 12);
            auto a = gpu.upload(ha), b = gpu.upload(hb);
            auto c = gpu.upload(std::vector<float>(m * n, NAN));
            elementwise_add_tv(gpu, elementwise_add_tv_launch(m, n), a.view({m, n}), b.view({m, n}), c.view({m, n}));
            gpu.synchronize();
            std::vector<double> ref(m * n);
            for (int64_t i = 0; i < m * n; ++i) ref[i] = double(ha[i]) + hb[i];
            return relative_error(c.to_host(), ref);
          },
          [m, n](const Target& t) {
            auto v = DeviceTensor<f32>::make(0, std::array<int64_t, 2>{m, n}, std::array<int64_t, 2>{n, 1});
            return elementwise_add_tv.compile(t, v, v, v);
          },
          1e-7};
}

}  // namespace examples
