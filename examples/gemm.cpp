// The kernel library's GEMM from a program, with no kernel written: a linear layer with its bias
// and GELU fused, C = GELU(A W^T + bias), A (tokens x in) and W (out x in) as a framework stores a
// weight. kernels::gemm picks the kernel for the device: wgmma on sm_90a, tcgen05 on the sm_100
// family, mma.sync on the rest from sm_80. Run it on an emulated Blackwell GPU with
// CUTEJIT_DEVICE=emulator:sm_100a.
#include <cutejit/kernels/gemm.hpp>

#include "example.hpp"

using namespace cutejit;

int main() {
  const int64_t tokens = 200, in = 512, out = 384;
  const kernels::Activation gelu = kernels::Activation::gelu_tanh;
  return example::run(
      {"gemm",
       [&](const Device& device) {
         auto ha = example::random_values<bf16>(size_t(tokens * in), 1), hw = example::random_values<bf16>(size_t(out * in), 2);
         auto hbias = example::random_values<bf16>(size_t(out), 3);
         auto a = device.upload(ha), w = device.upload(hw), bias = device.upload(hbias);
         auto c = device.upload(std::vector<bf16>(size_t(tokens * out), bf16(NAN)));
         kernels::gemm(device, a.view({tokens, in}), w.view({out, in}), c.view({tokens, out}), {.bias = bias.view({out}), .activation = gelu});
         device.synchronize();
         std::vector<double> want(size_t(tokens * out));
         for (int64_t i = 0; i < tokens; ++i)
           for (int64_t j = 0; j < out; ++j) {
             double x = float(hbias[size_t(j)]);
             for (int64_t p = 0; p < in; ++p) x += double(float(ha[size_t(i * in + p)])) * double(float(hw[size_t(j * in + p)]));
             want[size_t(i * out + j)] = 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
           }
         return example::relative_error(c.to_host(), want);
       },
       [&](const Target& target) {
         auto a = DeviceTensor<bf16>::for_compile({tokens, in}), w = DeviceTensor<bf16>::for_compile({out, in});
         auto c = DeviceTensor<bf16>::for_compile({tokens, out}), bias = DeviceTensor<bf16>::for_compile({out});
         return kernels::gemm_compile(target, a, w, c, {.bias = bias, .activation = gelu});
       },
       1e-2});  // a bf16 output: about 2^-9 relative per element
}
