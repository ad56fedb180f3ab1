// wgmma with A from registers on the GPU: one warpgroup computes a 64 x 64 x 32 product, A
// loaded from global memory into the RS atom's register fragment (partition_A), B through TMA
// into a 32-byte swizzled tile, C stored through partition_C; the result matches a float64
// host product, which checks the atom's A and C layouts on the hardware.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include <cutejit/atom/sm90/wgmma.hpp>
#include <cutejit/pipeline/shared_storage.hpp>

#include "support.hpp"

using namespace cutejit;

namespace {
constexpr int M = 64, N = 64, K = 32;

// out (M x N, f32) = A (M x K, row-major) * B^T, B stored N x K; two k16 steps.
Kernel register_a{"register_a", [](Tensor<bf16> a, TmaDescriptor<bf16> b, Tensor<f32> out) {  // a: M x K, out: M x N
  Pointer<bf16> tile = dynamic_shared_aligned<bf16>(1024);  // N rows of 32 bytes: one k16 slice
  Pointer<uint64_t> bar = dynamic_shared_aligned<uint64_t>(1024, N * 16 * 2);
  Int t = thread_idx().x;
  auto thr = make_tiled_mma(SM90_64xNx16_F32BF16BF16_RS<N>{}).get_slice(t);
  Tensor<float> acc = thr.partition_fragment_C({M, N});
  clear(acc);
  Tensor<bf16> fa = thr.partition_fragment_A({M, K});  // (8, 1, K / 16)
  copy(thr.partition_A(make_tensor(a.data(), make_layout({M, K}, LayoutRight{}))), fa);
  if_(t == 0, [&] {
    mbarrier_init(bar, 1);
    fence_mbarrier_init();
  });
  sync_threads();
  for (int k = 0; k < K / 16; ++k) {
    if_(t == 0, [&] {
      mbarrier_arrive_expect_tx(bar, b.box_bytes());
      b.load(tile, bar, {0, 16 * k});
    });
    mbarrier_wait(bar, k % 2);
    WgmmaOperand<bf16> B(tile, TmaSwizzle::bytes32);
    wgmma_fence();
    wgmma(acc, fa(_, 0, k), B.slice(0, 0));
    wgmma_commit_group();
    wgmma_wait_group(0);
    sync_threads();  // every thread is done with the tile before the next load overwrites it
  }
  wgmma_fence_operands(acc);
  // Each value goes where the atom's C layout says it is: a wrong layout puts it elsewhere.
  copy(acc, thr.partition_C(make_tensor(out.data(), make_layout({M, N}, LayoutRight{}))));
}};
}  // namespace

TEST_CASE("wgmma with A from registers matches a float64 product", "[gpu]") {
  Device gpu;
  std::vector<bf16> ha(M * K), hb(N * K);
  for (int i = 0; i < M * K; ++i) ha[size_t(i)] = bf16(float((i * 37) % 17 - 8) / 8.0f);
  for (int i = 0; i < N * K; ++i) hb[size_t(i)] = bf16(float((i * 53) % 13 - 6) / 4.0f);
  auto a = gpu.upload(ha), b = gpu.upload(hb);
  auto out = gpu.upload(std::vector<float>(M * N, NAN));
  auto map = make_tensor_map(b.view({N, K}), {uint32_t(N), 16}, TmaSwizzle::bytes32);
  register_a(gpu, Launch{.grid = 1, .block = 128, .shared_bytes = N * 16 * 2 + 8 + dynamic_shared_slack(1024)}, a.view({M, K}), map,
             out.view({M, N}));
  gpu.synchronize();
  std::vector<float> got = out.to_host();
  double worst = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double ref = 0;
      for (int p = 0; p < K; ++p) ref += double(float(ha[size_t(i * K + p)])) * double(float(hb[size_t(j * K + p)]));
      worst = std::max(worst, std::fabs(double(got[size_t(i * N + j)]) - ref));
    }
  // The inputs are multiples of 1/8 and 1/4 that bf16 holds exactly; f32 sums of 32 such
  // products are exact too.
  CHECK(worst == 0.0);
}
