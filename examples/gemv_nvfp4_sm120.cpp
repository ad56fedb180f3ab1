// A decode step's projection on sm_120a in NVFP4 (nvfp4.hpp): Y (tokens x N, f32) = X W^T for a
// few tokens, W (N x K) the weight, with the block-scaled mma.sync atom. With 1 to 8 tokens a
// GEMM's tiles would be mostly empty; this kernel puts 16 weight rows in the atom's M and the
// tokens in its N, so each warp streams its share of W once (cutejit/kernels/gemm/
// sm120_gemv_block_scaled.hpp). Run it on the emulated sm_120a with CUTEJIT_DEVICE=emulator:sm_120a.
#include <cutejit/kernels/gemm/sm120_gemv_block_scaled.hpp>

#include "example.hpp"
#include "nvfp4.hpp"

using namespace cutejit;
namespace gemv_sm120 = kernels::gemv_sm120;

Kernel gemv_nvfp4{"gemv_nvfp4_sm120", [](Tensor<u8> w, Tensor<u8> x, Tensor<u8> sfw, Tensor<u8> sfx, Tensor<f32> y, Int n, Int tokens, Int k) {
  gemv_sm120::kernel<SM120_16x8x64_F32E2M1E2M1F32_UE4M3_TN>(w, x, sfw, sfx, y, n, tokens, k);
}};

int main() {
  const int64_t n = 256, tokens = 3, k = 512;  // N a multiple of 16, K of 64, 1 to 8 tokens
  const example::nvfp4::Operand w(n, k, 1), x(tokens, k, 2);
  auto bytes = [](size_t count) { return DeviceTensor<uint8_t>::for_compile({int64_t(count)}); };
  return example::run(
      {"gemv_nvfp4_sm120",
       [&](const Device& device) {
         gemv_sm120::check_shape(gemv_nvfp4.name().c_str(), n, tokens, k);
         auto dw = device.upload(w.bytes), dx = device.upload(x.bytes), sfw = device.upload(w.scales), sfx = device.upload(x.scales);
         auto y = device.upload(std::vector<float>(size_t(tokens * n), NAN));
         gemv_nvfp4(device, gemv_sm120::launch_config(n), dw, dx, sfw, sfx, y, int32_t(n), int32_t(tokens), int32_t(k));
         device.synchronize();
         return example::relative_error(y.to_host(), example::nvfp4::product(x, w));
       },
       [&](const Target& target) {
         return std::vector{gemv_nvfp4.compile(target, bytes(w.bytes.size()), bytes(x.bytes.size()), bytes(w.scales.size()),
                                               bytes(x.scales.size()), DeviceTensor<f32>::for_compile({tokens * n}), int32_t(n),
                                               int32_t(tokens), int32_t(k))};
       },
       1e-6,  // exact products of the decoded values, summed in f32
       {"sm_120a"},
       [](const Target& t) { return (t.sm == 120 || t.sm == 121) && t.arch_specific(); }});
}
