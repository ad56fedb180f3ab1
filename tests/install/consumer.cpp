// Cross-compiles one kernel through an installed libcutejit (no GPU needed).
#include <cutejit/cutejit.hpp>

#include <cstdio>

using namespace cutejit;

Kernel scale{"scale", [](Tensor<f32> x, F32 factor) {
  Int i = block_idx().x * block_dim().x + thread_idx().x;
  if_(i < size(x), [&] { x(i) = x(i) * factor; });
}};

int main() {
  auto x = DeviceTensor<f32>::make(0, std::array<int64_t, 1>{1024}, std::array<int64_t, 1>{1});
  CompiledKernel k = scale.compile(Target::parse("sm_90a"), x, 2.0f);
  std::printf("consumer: compiled '%s' for %s, cubin %zu bytes\n", k.name.c_str(), k.target.name().c_str(), k.cubin.size());
  return k.cubin.empty() ? 1 : 0;
}
