// warp_reduce and block_reduce on the GPU: sums of integers (exact), maxima and minima of
// floats, over segments of a warp and over blocks of 64 to 1024 threads, called twice in a row.
#include <catch2/catch.hpp>

#include <cutejit/cutejit.hpp>

#include <algorithm>
#include <vector>

#include "support.hpp"

using namespace cutejit;

namespace {
// Each thread of block b gets x[b * threads + t]; out[b * threads + t] = the block's sum, then
// max, then the warp segment's (8 lanes) min, for every thread.
Kernel reductions{"reductions_gpu", [](Tensor<i32> x, Tensor<i32> sums, Tensor<f32> f, Tensor<f32> maxes, Tensor<f32> mins,
                                       Constexpr<int> threads) {
  Int i = block_idx().x * threads + thread_idx().x;
  sums(i) = block_reduce(x(i), threads);
  maxes(i) = block_reduce(f(i), threads, Reduce::max);
  mins(i) = warp_reduce(f(i), Reduce::min, 8);
}};
}  // namespace

TEST_CASE("block_reduce and warp_reduce give every thread its block's or segment's result", "[gpu]") {
  Device gpu;
  for (int threads : {64, 256, 1024}) {
    INFO(threads << " threads per block");
    const int blocks = 5, n = blocks * threads;
    std::vector<int32_t> hx(static_cast<size_t>(n));
    std::vector<float> hf(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) hx[size_t(i)] = (i * 7919) % 2001 - 1000, hf[size_t(i)] = float((i * 104729) % 4099) * 0.25f - 300.0f;
    auto x = gpu.upload(hx), sums = gpu.upload(std::vector<int32_t>(size_t(n), 0));
    auto f = gpu.upload(hf), maxes = gpu.upload(std::vector<float>(size_t(n), NAN)), mins = gpu.upload(std::vector<float>(size_t(n), NAN));
    reductions(gpu, Launch{.grid = uint32_t(blocks), .block = uint32_t(threads)}, x.view({n}), sums.view({n}), f.view({n}), maxes.view({n}),
               mins.view({n}), threads);
    gpu.synchronize();
    std::vector<int32_t> s = sums.to_host();
    std::vector<float> mx = maxes.to_host(), mn = mins.to_host();
    int wrong = 0;
    for (int b = 0; b < blocks; ++b) {
      int64_t sum = 0;
      float best = -INFINITY;
      for (int t = 0; t < threads; ++t) sum += hx[size_t(b * threads + t)], best = std::max(best, hf[size_t(b * threads + t)]);
      for (int t = 0; t < threads; ++t) {
        int i = b * threads + t, seg = i / 8 * 8;
        float least = *std::min_element(hf.begin() + seg, hf.begin() + seg + 8);
        wrong += s[size_t(i)] != sum || mx[size_t(i)] != best || mn[size_t(i)] != least;
      }
    }
    CHECK(wrong == 0);
  }
}
