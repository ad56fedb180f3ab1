// Elementwise add in the style of CuTeDSL's elementwise_add example: a thread-value layout
// splits each 16x128 tile of the (M, N) row-major matrices over 128 threads, 16 values each,
// in rows of 4 consecutive floats, so every load and store is 128 bits. A coordinate tensor,
// partitioned exactly like the data, predicates the residue tiles.
#pragma once

#include "example.hpp"

namespace examples {
using namespace cutejit;

/// `ThreadRows` x 32 threads, row-major, each with 4x4 values, row-major: the tile is
/// (4 * ThreadRows) x 128.
template <int ThreadRows>
void elementwise_add_tv_body(const Tensor<f32>& a, const Tensor<f32>& b, const Tensor<f32>& c) {
  TVLayout tv = make_layout_tv(make_ordered_layout({ThreadRows, 32}, {1, 0}), make_ordered_layout({4, 4}, {1, 0}));
  // Block (x, y) takes tile (y, x): consecutive blocks walk along a band of rows, so the blocks
  // running at once read long runs of each row rather than one short piece of many rows.
  IntTuple tile{Int(block_idx().y), Int(block_idx().x)};
  Int thread = thread_idx().x;
  // This thread's 16 elements of the block's tile, for data and for coordinates alike.
  auto mine = [&](const auto& t) { return partition_tv(local_tile(t, tv.tiler, tile), tv.tv, thread); };
  CoordTensor coords = mine(make_identity_tensor(a.shape()));
  auto x = load_if(mine(a), coords, a.shape());
  auto y = load_if(mine(b), coords, b.shape());
  store_if(x + y, mine(c), coords, c.shape());
}

inline Kernel elementwise_add_tv{"elementwise_add_tv",
                                 [](Tensor<f32> a, Tensor<f32> b, Tensor<f32> c) { elementwise_add_tv_body<4>(a, b, c); }};
/// The same with 8 x 32 threads on 32 x 128 tiles; the benchmark measures both.
inline Kernel elementwise_add_tv_256{"elementwise_add_tv_256",
                                     [](Tensor<f32> a, Tensor<f32> b, Tensor<f32> c) { elementwise_add_tv_body<8>(a, b, c); }};

inline Launch elementwise_add_tv_launch(int64_t m, int64_t n, int thread_rows = 4) {
  return Launch{.grid = {ceil_div(n, 128), ceil_div(m, 4 * thread_rows)}, .block = uint32_t(32 * thread_rows)};
}

inline Example elementwise_add_tv_example(int64_t m = 2051, int64_t n = 4100, int thread_rows = 4) {
  // The two kernels have different types: pass the chosen one to `f`.
  auto with_kernel = [thread_rows](auto&& f) { return thread_rows == 8 ? f(elementwise_add_tv_256) : f(elementwise_add_tv); };
  return {thread_rows == 8 ? "elementwise_add_tv_256" : "elementwise_add_tv",
          [m, n, thread_rows, with_kernel](const Device& gpu) {
            auto ha = random_floats(m * n, 11), hb = random_floats(m * n, 12);
            auto a = gpu.upload(ha), b = gpu.upload(hb);
            auto c = gpu.upload(std::vector<float>(m * n, NAN));
            with_kernel([&](auto& k) {
              k(gpu, elementwise_add_tv_launch(m, n, thread_rows), a.view({m, n}), b.view({m, n}), c.view({m, n}));
              return 0;
            });
            gpu.synchronize();
            std::vector<double> ref(m * n);
            for (int64_t i = 0; i < m * n; ++i) ref[i] = double(ha[i]) + hb[i];
            return relative_error(c.to_host(), ref);
          },
          [m, n, with_kernel](const Target& t) {
            auto v = DeviceTensor<f32>::make(0, std::array<int64_t, 2>{m, n}, std::array<int64_t, 2>{n, 1});
            return with_kernel([&](auto& k) { return k.compile(t, v, v, v); });
          },
          1e-7};
}

}  // namespace examples
