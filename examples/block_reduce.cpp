// The sum of a float array: each thread accumulates a strided slice, each warp reduces with
// shuffles, warp leaders meet in shared memory, and one atomic per block adds to the result.
#include "example.hpp"

using namespace cutejit;

F32 warp_sum(F32 v) {
  for (int offset = 16; offset > 0; offset /= 2) v = v + shuffle_xor(v, offset);
  return v;
}

Kernel array_sum{"array_sum", [](Tensor<f32> x, Tensor<f32> total, Constexpr<int> block) {
  Int tid = thread_idx().x;
  Var<f32> sum = 0.0f;
  for_(block_idx().x * block + tid, size(x), grid_dim().x * block, [&](Int i) { sum += x(i); });

  F32 v = warp_sum(sum);
  Pointer<f32> partial = shared_array<f32>(block / 32);
  Int warp = tid / 32, lane = tid % 32;
  if_(lane == 0, [&] { partial[warp] = v; });
  sync_threads();
  if_(warp == 0, [&] {
    // Only the lanes that have a partial sum read one: shared memory past the array holds
    // whatever an earlier kernel left there.
    Var<f32> mine = 0.0f;
    if_(lane < block / 32, [&] { mine = F32(partial[lane]); });
    F32 w = warp_sum(mine);
    if_(lane == 0, [&] { atomic_add(total(0), w); });
  });
}};

int main() {
  const int64_t n = 3'000'017;
  const int block = 256;
  return example::run({"block_reduce",
                       [&](const Device& device) {
                         auto hx = example::random_floats(n, 5);
                         auto x = device.upload(hx);
                         auto total = device.upload(std::vector<float>{0.0f});
                         array_sum(device, Launch{.grid = uint32_t(device.multiprocessors() * 4), .block = block}, x, total, block);
                         device.synchronize();
                         double want = 0;
                         for (float v : hx) want += v;
                         return example::relative_error(total.to_host(), {want});
                       },
                       [&](const Target& target) {
                         auto v = DeviceTensor<f32>::for_compile({n});
                         return std::vector{array_sum.compile(target, v, v, block)};
                       },
                       1e-4});
}
