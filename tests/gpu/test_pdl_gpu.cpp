// Programmatic dependent launch on the GPU: a kernel launched with it, waiting on
// griddepcontrol_wait(), reads everything the kernel before it in the stream wrote.
#include <catch2/catch.hpp>

#include <vector>

#include "support.hpp"

using namespace cutejit;

namespace {
// Slow on purpose (a dependent chain per element), so that the next kernel, allowed to start
// early by launch_dependents, would read unwritten values if the wait did not hold it back.
Kernel slow_fill{"slow_fill", [](Tensor<f32> out, Int rounds) {
  Int i = block_idx().x * block_dim().x + thread_idx().x;
  griddepcontrol_launch_dependents();
  Var<f32> x = cast<f32>(i);
  for_(0, rounds, [&](Int) { x = x * 1.0000001f + 1e-7f; });
  out(i) = cast<f32>(i) + (x - x);  // x - x is 0, but only once the chain is done
}};
Kernel doubled{"doubled", [](Tensor<f32> in, Tensor<f32> out) {
  Int i = block_idx().x * block_dim().x + thread_idx().x;
  griddepcontrol_wait();
  out(i) = in(i) * 2.0f;
}};
}  // namespace

TEST_CASE("a programmatic dependent launch sees every write of the kernel before it", "[gpu]") {
  Device gpu;
  const int n = 132 * 4 * 256;
  auto a = gpu.upload(std::vector<float>(n, -1.0f));
  auto b = gpu.upload(std::vector<float>(n, -1.0f));
  Launch first{.grid = uint32_t(n / 256), .block = 256};
  Launch second = first;
  second.programmatic_dependent_launch = true;
  // The emulator runs launches one after another, so the chain only has to be long on a GPU;
  // there it would cost minutes of interpreted arithmetic and prove nothing more.
  const int rounds = gpu.is_emulated() ? 8 : 20000;
  for (int repeat = 0; repeat < 3; ++repeat) {
    slow_fill(gpu, first, a, rounds);
    doubled(gpu, second, a, b);
  }
  gpu.synchronize();
  std::vector<float> out = b.to_host();
  int wrong = 0;
  for (int i = 0; i < n; ++i) wrong += out[i] != 2.0f * float(i);
  CHECK(wrong == 0);
}
