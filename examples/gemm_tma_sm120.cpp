// The GEMM of the sm_120 family (the GeForce and workstation Blackwell GPUs, whose tensor cores
// are mma.sync): C (M x N, bf16) = A B^T with A and B stored K-major, fed by TMA through a
// three-stage ring a producer warp fills while four warps multiply. The kernel is
// cutejit/kernels/gemm/sm120.hpp instantiated for the BF16 mma.sync atom; it also runs on sm_90a
// (a Hopper GPU), and on the emulated sm_120a with CUTEJIT_DEVICE=emulator:sm_120a.
#include <cutejit/kernels/gemm/sm120.hpp>

#include "example.hpp"

using namespace cutejit;
namespace gemm_sm120 = kernels::gemm_sm120;
using Atom = SM80_16x8x16_F32BF16BF16F32_TN;

Kernel gemm_tma{"gemm_tma_bf16_sm120", [](TmaDescriptor<bf16> a, TmaDescriptor<bf16> b, Tensor<bf16> c, Int m, Int n, Int k) {
  gemm_sm120::kernel<Atom, bf16>(a, b, c, m, n, k);
}};

int main() {
  const int64_t m = 200, n = 136, k = 520;  // partial tiles along M, N and K: TMA fills past the edges with zeros
  const auto ha = example::random_values<bf16>(size_t(m * k), 1), hb = example::random_values<bf16>(size_t(n * k), 2);
  return example::run(
      {"gemm_tma_sm120",
       [&](const Device& device) {
         gemm_sm120::check_shape(gemm_tma.name(), m, n, k, int(sizeof(bf16)));
         auto a = device.upload(ha), b = device.upload(hb);
         auto c = device.upload(std::vector<bf16>(size_t(m * n), bf16(NAN)));
         gemm_tma(device, gemm_sm120::launch(m, n, gemm_sm120::Resources<bf16>::shared_bytes), gemm_sm120::operand_map(a, m, k),
              gemm_sm120::operand_map(b, n, k), c.view({m, n}), int32_t(m), int32_t(n), int32_t(k));
         device.synchronize();
         std::vector<double> want(size_t(m * n));
         for (int64_t i = 0; i < m; ++i)
           for (int64_t j = 0; j < n; ++j)
             for (int64_t p = 0; p < k; ++p) want[size_t(i * n + j)] += double(float(ha[size_t(i * k + p)])) * double(float(hb[size_t(j * k + p)]));
         return example::relative_error(c.to_host(), want);
       },
       [&](const Target& target) {
         auto operand = gemm_sm120::operand_map_for_compile<bf16>();
         return std::vector{gemm_tma.compile(target, operand, operand, DeviceTensor<bf16>::for_compile({m, n}), int32_t(m), int32_t(n), int32_t(k))};
       },
       1e-2,  // a bf16 output
       {"sm_90a", "sm_120a"},
       [](const Target& t) { return t.arch_specific() && (t.sm == 90 || t.sm == 120 || t.sm == 121); }});
}
