// Cross-compiles through an installed libcutejit, with no GPU: a kernel of its own, and the
// kernel library's GEMM for Hopper and Blackwell from the installed kernels/gemm.hpp.
#include <cutejit/cutejit.hpp>
#include <cutejit/kernels/gemm.hpp>

#include <cstdio>

using namespace cutejit;

Kernel scale{"scale", [](Tensor<f32> x, F32 factor) {
  Int i = block_idx().x * block_dim().x + thread_idx().x;
  if_(i < size(x), [&] { x(i) = x(i) * factor; });
}};

int main() {
  auto a = DeviceTensor<bf16>::for_compile({256, 512}), b = DeviceTensor<bf16>::for_compile({1024, 512});
  auto c = DeviceTensor<bf16>::for_compile({256, 1024});
  for (const char* target : {"sm_90a", "sm_100a"}) {
    std::vector<CompiledKernel> gemm = kernels::gemm_compile(Target::parse(target), a, b, c, {.beta = 1});
    std::printf("consumer: kernels::gemm compiled %zu kernel(s) for %s, the first '%s'\n", gemm.size(), target, gemm.at(0).name.c_str());
  }
  auto x = DeviceTensor<f32>::make(0, std::array<int64_t, 1>{1024}, std::array<int64_t, 1>{1});
  CompiledKernel k = scale.compile(Target::parse("sm_90a"), x, 2.0f);
  std::printf("consumer: compiled '%s' for %s, cubin %zu bytes\n", k.name.c_str(), k.target.name().c_str(), k.cubin.size());
  return k.cubin.empty() ? 1 : 0;
}
