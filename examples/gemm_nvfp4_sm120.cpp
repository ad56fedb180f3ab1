// A block-scaled GEMM on sm_120a tensor cores (the GeForce and workstation Blackwell GPUs), in
// NVFP4 (nvfp4.hpp): C (M x N, f32) = (A * SFA)(B * SFB)^T, with the scales row-major. The kernel
// is cutejit/kernels/gemm/sm120_block_scaled.hpp instantiated for the NVFP4 mma.sync atom. No GPU
// here is an sm_120a: run it on the emulated one with CUTEJIT_DEVICE=emulator:sm_120a.
#include <cutejit/kernels/gemm/sm120_block_scaled.hpp>

#include "example.hpp"
#include "nvfp4.hpp"

using namespace cutejit;
namespace gemm_sm120 = kernels::gemm_sm120_block_scaled;

Kernel gemm_nvfp4{"gemm_nvfp4_sm120", [](Tensor<u8> a, Tensor<u8> b, Tensor<u8> sfa, Tensor<u8> sfb, Tensor<f32> c, Int m, Int n, Int k) {
  gemm_sm120::kernel<SM120_16x8x64_F32E2M1E2M1F32_UE4M3_TN>(a, b, sfa, sfb, c, m, n, k);
}};

int main() {
  const int64_t m = 200, n = 136, k = 256;  // partial tiles on both edges; K a multiple of 64
  const example::nvfp4::Operand a(m, k, 1), b(n, k, 2);
  return example::run(
      {"gemm_nvfp4_sm120",
       [&](const Device& device) {
         gemm_sm120::check_shape(gemm_nvfp4.name().c_str(), m, n, k);
         auto da = device.upload(a.bytes), db = device.upload(b.bytes), sfa = device.upload(a.scales), sfb = device.upload(b.scales);
         auto c = device.upload(std::vector<float>(size_t(m * n), NAN));
         gemm_nvfp4(device, gemm_sm120::launch_config(m, n), da, db, sfa, sfb, c, int32_t(m), int32_t(n), int32_t(k));
         device.synchronize();
         return example::relative_error(c.to_host(), example::nvfp4::product(a, b));
       },
       [&](const Target& target) {
         auto bytes = [](size_t count) { return DeviceTensor<uint8_t>::for_compile({int64_t(count)}); };
         return std::vector{gemm_nvfp4.compile(target, bytes(a.bytes.size()), bytes(b.bytes.size()), bytes(a.scales.size()),
                                               bytes(b.scales.size()), DeviceTensor<f32>::for_compile({m * n}), int32_t(m), int32_t(n),
                                               int32_t(k))};
       },
       1e-6,  // exact products of the decoded values, summed in f32
       {"sm_120a"},
       [](const Target& t) { return (t.sm == 120 || t.sm == 121) && t.arch_specific(); }});
}
