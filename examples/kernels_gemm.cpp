// The kernel library's GEMM from a program, with no kernel written: a linear layer with its
// bias and GELU fused, C = GELU(A W^T + bias), A (tokens x in), W (out x in) as a framework
// stores a weight. kernels::gemm picks the kernel for the GPU (wgmma on Hopper, tcgen05 on
// Blackwell, mma.sync from sm_80); with no GPU the program compiles them for three targets.
#include <cutejit/kernels/gemm.hpp>

#include <cmath>

#include "example.hpp"

using namespace cutejit;

int main() {
  const int64_t tokens = 200, in = 512, out = 384;
  examples::Example linear{
      "kernels_gemm",
      [&](const Device& gpu) {
        auto ha = examples::random_values<bf16>(size_t(tokens * in), 1), hw = examples::random_values<bf16>(size_t(out * in), 2);
        auto hbias = examples::random_values<bf16>(size_t(out), 3);
        auto a = gpu.upload(ha), w = gpu.upload(hw), bias = gpu.upload(hbias);
        auto c = gpu.upload(std::vector<bf16>(size_t(tokens * out), bf16(NAN)));
        kernels::gemm(gpu, a.view({tokens, in}), w.view({out, in}), c.view({tokens, out}),
                      {.bias = bias.view({out}), .activation = kernels::Activation::gelu_tanh});
        gpu.synchronize();
        std::vector<double> want(size_t(tokens * out));
        for (int64_t i = 0; i < tokens; ++i)
          for (int64_t j = 0; j < out; ++j) {
            double x = float(hbias[size_t(j)]);
            for (int64_t p = 0; p < in; ++p) x += double(float(ha[size_t(i * in + p)])) * double(float(hw[size_t(j * in + p)]));
            want[size_t(i * out + j)] = 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
          }
        std::vector<float> got;
        for (bf16 v : c.to_host()) got.push_back(float(v));
        return examples::relative_error(got, want);
      },
      [&](const Target& target) {
        auto a = DeviceTensor<bf16>::for_compile({tokens, in}), w = DeviceTensor<bf16>::for_compile({out, in});
        auto c = DeviceTensor<bf16>::for_compile({tokens, out}), bias = DeviceTensor<bf16>::for_compile({out});
        return kernels::gemm_compile(target, a, w, c, {.bias = bias, .activation = kernels::Activation::gelu_tanh}).at(0);
      },
      1e-2};  // bf16 output: about 2^-9 relative per element
  return examples::run(linear);
}
