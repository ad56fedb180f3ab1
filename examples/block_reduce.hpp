// Sum of an array: each thread accumulates a strided slice, warps reduce with shuffles,
// warp leaders meet in shared memory, and one atomic per block adds to the result.
#pragma once

#include "example.hpp"

namespace examples {
using namespace cutejit;

inline Kernel block_reduce{"block_reduce", [](Tensor<f32> x, Tensor<f32> total, Constexpr<int> block) {
  Int tid = thread_idx().x;
  Var<f32> sum = 0.0f;
  for_(block_idx().x * block + tid, size(x), grid_dim().x * block, [&](Int i) { sum += x(i); });

  auto warp_sum = [](F32 v) {
    for (int offset = 16; offset > 0; offset /= 2) v = v + shuffle_xor(v, offset);
    return v;
  };
  F32 v = warp_sum(sum);
  Pointer<f32> partial = shared_array<f32>(block / 32);
  Int warp = tid / 32, lane = tid % 32;
  if_(lane == 0, [&] { partial[warp] = v; });
  sync_threads();
  if_(warp == 0, [&] {
    // Only the lanes that have a partial sum read one: `select` would load partial[lane] on
    // every lane, past the array's end, and LLVM may assume an in-bounds index and drop the
    // condition, adding whatever another kernel left in shared memory.
    Var<f32> mine = 0.0f;
    if_(lane < block / 32, [&] { mine = F32(partial[lane]); });
    F32 w = warp_sum(mine);
    if_(lane == 0, [&] { atomic_add(total(0), w); });
  });
}};

inline Example block_reduce_example(int64_t n = 3'000'017) {
  return {"block_reduce",
          [n](const Device& gpu) {
            auto hx = random_floats(n, 5);
            auto x = gpu.upload(hx);
            auto total = gpu.upload(std::vector<float>{0.0f});
            block_reduce(gpu, Launch{.grid = uint32_t(gpu.multiprocessors() * 4), .block = 256}, x, total, 256);
            gpu.synchronize();
            double ref = 0;
            for (float v : hx) ref += v;
            return relative_error(total.to_host(), {ref});
          },
          [n](const Target& t) {
            auto v = DeviceTensor<f32>::make(0, std::array<int64_t, 1>{n}, std::array<int64_t, 1>{1});
            return block_reduce.compile(t, v, v, 256);
          },
          1e-4};
}

}  // namespace examples
