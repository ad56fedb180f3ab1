// A block-scaled GEMM on sm_100a tensor cores (tcgen05, the datacenter Blackwell GPUs), in NVFP4
// (nvfp4.hpp): C (M x N, bf16) = (A * SFA)(B * SFB)^T. TMA brings A, B and the scales (in the
// 128x4 blocked layout the MMA reads, which blocked_scales writes) into shared memory; the
// accumulator lives in tensor memory. The kernel is cutejit/kernels/gemm/sm100.hpp's persistent
// GEMM on its NVFP4 main loop. No GPU here is an sm_100a: run it on the emulated one with
// CUTEJIT_DEVICE=emulator:sm_100a.
#include <cutejit/kernels/gemm/sm100_block_scaled.hpp>

#include "example.hpp"
#include "nvfp4.hpp"

using namespace cutejit;
namespace gemm_sm100 = kernels::gemm_sm100;
using Mainloop = gemm_sm100::Nvfp4;

Kernel gemm_nvfp4{"gemm_nvfp4_sm100", [](TmaDescriptor<uint8_t> a, TmaDescriptor<uint8_t> b, TmaDescriptor<uint8_t> sfa,
                                         TmaDescriptor<uint8_t> sfb, TmaDescriptor<bf16> c, Int m, Int n, Int k) {
  gemm_sm100::kernel(Mainloop{a, b, sfa, sfb}, c, m, n, k);
}};

int main() {
  const int64_t m = 200, n = 136, k = 512, blocks = k / 16;  // partial tiles along M and N
  const example::nvfp4::Operand a(m, k, 1), b(n, k, 2);
  return example::run(
      {"gemm_nvfp4_sm100",
       [&](const Device& device) {
         gemm_sm100::check_shape<Mainloop>(m, n, k);
         auto da = device.upload(a.bytes), db = device.upload(b.bytes);
         auto sfa = device.upload(blocked_scales(a.scales, m, blocks)), sfb = device.upload(blocked_scales(b.scales, n, blocks));
         auto c = device.upload(std::vector<bf16>(size_t(m * n), bf16(NAN)));
         gemm_nvfp4(device, gemm_sm100::launch_config<Mainloop>(device.multiprocessors(), m, n),
                    gemm_sm100::operand_tensor_map(da, m, k / 2), gemm_sm100::operand_tensor_map(db, n, k / 2),
                    gemm_sm100::scale_tensor_map(sfa, m, blocks, gemm_sm100::tile_m, Mainloop::half_chunks),
                    gemm_sm100::scale_tensor_map(sfb, n, blocks, Mainloop::tile_n, Mainloop::half_chunks), gemm_sm100::c_tensor_map(c, m, n),
                    int32_t(m), int32_t(n), int32_t(k));
         device.synchronize();
         return example::relative_error(c.to_host(), example::nvfp4::product(a, b));
       },
       [&](const Target& target) {
         auto operand = gemm_sm100::operand_tensor_map_for_compile<uint8_t>();
         auto sfa = gemm_sm100::scale_tensor_map_for_compile(gemm_sm100::tile_m, Mainloop::half_chunks);
         auto sfb = gemm_sm100::scale_tensor_map_for_compile(Mainloop::tile_n, Mainloop::half_chunks);
         return std::vector{gemm_nvfp4.compile(target, operand, operand, sfa, sfb, gemm_sm100::c_tensor_map_for_compile(), int32_t(m),
                                               int32_t(n), int32_t(k))};
       },
       1e-2,  // a bf16 output
       {"sm_100a"},
       [](const Target& t) { return (t.sm == 100 || t.sm == 103 || t.sm == 110) && t.arch_specific(); }});
}
