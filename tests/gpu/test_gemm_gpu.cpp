// Hopper on the GPU: a TMA round trip through shared memory (each swizzle), FP8 conversions
// against the host's, and the BF16 (every operand layout), FP8 and fused bias+GELU tensor-core
// GEMMs against float64 host references on random data, output poisoned.
#include <catch2/catch.hpp>

#include "gemm_bf16.hpp"
#include "gemm_bf16_bias_gelu.hpp"
#include "gemm_bf16_nn.hpp"
#include "gemm_fp8.hpp"
#include "gemm_fp8_e4m3_out.hpp"
#include "gemm_sm80.hpp"
#include "gemm_tma_tensorop.hpp"
#include "check_all.hpp"
#include "support.hpp"

using namespace cutejit;

namespace {
// Each block copies one box of `in` to the same place in `out` through shared memory.
Kernel tma_round_trip{"tma_round_trip", [](TmaDescriptor<i32> in, TmaDescriptor<i32> out) {
  Pointer<i32> tile = dynamic_shared_aligned<i32>(1024);
  Pointer<uint64_t> bar = dynamic_shared_aligned<uint64_t>(1024, in.box_bytes());
  Int row = block_idx().y * in.box(0), col = block_idx().x * in.box(1);
  if_(thread_idx().x == 0, [&] {
    mbarrier_init(bar, 1);
    fence_mbarrier_init();
    mbarrier_arrive_expect_tx(bar, in.box_bytes());
    in.load(tile, bar, {row, col});
    mbarrier_wait(bar, 0);
    out.store(tile, {row, col});
    tma_store_commit();
    tma_store_wait<0>();
  });
}};

// Thread i: out[i] = float(codes[i]) and back[i] = the e4m3 / e5m2 of floats[i], on the GPU.
Kernel fp8_convert{"fp8_convert", [](Tensor<f8e4m3> e4, Tensor<f8e5m2> e5, Tensor<f32> floats, Tensor<f32> out4, Tensor<f32> out5,
                                      Tensor<f8e4m3> back4, Tensor<f8e5m2> back5) {
  Int i = block_idx().x * block_dim().x + thread_idx().x;
  if_(i < 256, [&] {
    out4(i) = cast<float>(Value<f8e4m3>(e4(i)));
    out5(i) = cast<float>(Value<f8e5m2>(e5(i)));
  });
  back4(i) = cast<f8e4m3>(F32(floats(i)));
  back5(i) = cast<f8e5m2>(F32(floats(i)));
}};
}  // namespace

TEST_CASE("FP8 conversions on the GPU (cvt) agree with the host's, bit for bit", "[gpu]") {
  Device gpu;
  std::vector<f8e4m3> c4(256);
  std::vector<f8e5m2> c5(256);
  for (int b = 0; b < 256; ++b) c4[size_t(b)].bits = c5[size_t(b)].bits = uint8_t(b);
  // Every code's neighbourhood: the codes' values, the midpoints between neighbours (ties) and
  // points just off them, out-of-range values, infinities and NaN; then random floats of all scales.
  std::vector<float> floats;
  for (int b = 0; b < 256; ++b)
    for (float v : {float(c4[size_t(b)]), float(c5[size_t(b)])}) {
      floats.push_back(v);
      floats.push_back(std::nextafter(v, 0.0f));
      floats.push_back(std::nextafter(v, INFINITY));
    }
  for (int b = 0; b + 1 < 127; ++b) {
    floats.push_back(0.5f * (float(c4[size_t(b)]) + float(c4[size_t(b + 1)])));
    floats.push_back(-0.5f * (float(c5[size_t(b)]) + float(c5[size_t(b + 1)])));
  }
  for (float v : {464.0f, 500.0f, 60000.0f, 1e30f, INFINITY, -INFINITY, NAN, 0.0f, -0.0f, 1e-30f}) floats.push_back(v);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> mantissa(-2.0f, 2.0f);
  std::uniform_int_distribution<int> exponent(-24, 20);
  while (floats.size() % 256 != 0 || floats.size() < 8192) floats.push_back(std::ldexp(mantissa(rng), exponent(rng)));
  int64_t n = int64_t(floats.size());
  auto e4 = gpu.upload(c4);
  auto e5 = gpu.upload(c5);
  auto f = gpu.upload(floats);
  auto out4 = gpu.alloc<float>(256), out5 = gpu.alloc<float>(256);
  auto back4 = gpu.alloc<f8e4m3>(n);
  auto back5 = gpu.alloc<f8e5m2>(n);
  fp8_convert(gpu, Launch{.grid = uint32_t(n / 256), .block = 256}, e4, e5, f, out4, out5, back4, back5);
  gpu.synchronize();
  std::vector<float> h4 = out4.to_host(), h5 = out5.to_host();
  for (int b = 0; b < 256; ++b) {
    INFO("code " << b);
    float x4 = float(c4[size_t(b)]), x5 = float(c5[size_t(b)]);
    CHECK((std::isnan(x4) ? std::isnan(h4[size_t(b)]) : h4[size_t(b)] == x4));
    CHECK((std::isnan(x5) ? std::isnan(h5[size_t(b)]) : h5[size_t(b)] == x5));
  }
  std::vector<f8e4m3> g4 = back4.to_host();
  std::vector<f8e5m2> g5 = back5.to_host();
  int mismatches = 0;
  for (size_t i = 0; i < floats.size(); ++i) {
    if (g4[i].bits == f8e4m3(floats[i]).bits && g5[i].bits == f8e5m2(floats[i]).bits) continue;
    if (++mismatches <= 10)
      UNSCOPED_INFO("float " << floats[i] << ": GPU e4m3 0x" << std::hex << int(g4[i].bits) << " host 0x" << int(f8e4m3(floats[i]).bits)
                             << ", GPU e5m2 0x" << int(g5[i].bits) << " host 0x" << int(f8e5m2(floats[i]).bits) << std::dec);
  }
  CHECK(mismatches == 0);
}

TEST_CASE("TMA load then store reproduces the tensor, for every swizzle", "[gpu]") {
  Device gpu;
  const int64_t rows = 256, cols = 128;
  std::vector<int32_t> host(rows * cols);
  for (size_t i = 0; i < host.size(); ++i) host[i] = int32_t(i * 2654435761u);
  auto in = gpu.upload(host);
  for (TmaSwizzle s : {TmaSwizzle::none, TmaSwizzle::bytes32, TmaSwizzle::bytes64, TmaSwizzle::bytes128}) {
    INFO("swizzle " << int(s));
    uint32_t box_cols = s == TmaSwizzle::none ? 32 : uint32_t(int(s) / 4);
    auto out = gpu.upload(std::vector<int32_t>(rows * cols, -1));
    auto tin = make_tensor_map(in.view({rows, cols}), {64, box_cols}, s);
    auto tout = make_tensor_map(out.view({rows, cols}), {64, box_cols}, s);
    uint32_t shared = 64 * box_cols * 4 + 8 + dynamic_shared_slack(1024);
    tma_round_trip(gpu, Launch{.grid = {uint32_t(cols / box_cols), uint32_t(rows / 64)}, .block = 32, .shared_bytes = shared},
                   tin, tout);
    gpu.synchronize();
    CHECK(out.to_host() == host);
  }
}

TEST_CASE("the BF16 GEMM matches its float64 host reference", "[gpu]") {
  Device gpu;
  // 2304 x 1920: 18 x 8 tiles of 128 x 256, more than one per CTA on a 132-SM H200 (the
  // persistent loop and the ring's phases across tiles), a short last group of tile rows and a
  // last column of tiles that overhangs N by half a tile (N = 15 x 128), as in 256 x 384 and
  // 128 x 128. Then shapes the tile does not divide: smaller than one tile in every dimension
  // (1 x 8 x 8, 100 x 200 x 72), and ragged in all three with many tiles (1000 x 1000 x 1000,
  // 2344 x 1944 x 136). Those with fewer 256-wide tiles than multiprocessors run the narrower
  // kernels: 64 wide for 128 x 2048 (and the one-tile shapes) and 128 x 14720 (230 tiles, so
  // some CTAs take two: chunk buffers and the 8-stage ring carry over from tile to tile), 128
  // wide for 1024 x 2048 x 200 and 1280 x 2816 (220 tiles). The emulated device leaves out the
  // gpu_only shapes: 2344 x 1944 x 136 (152 tiles, ragged), 128 x 14720 and 1280 x 2816 reach
  // their paths.
  using test::gpu_only;
  test::check_all(gpu, {
      fixtures::gemm_bf16_check(), fixtures::gemm_bf16_check(128, 128, 64), gpu_only(fixtures::gemm_bf16_check(512, 1024, 768)),
      gpu_only(fixtures::gemm_bf16_check(2304, 1920, 128)), fixtures::gemm_bf16_check(1, 8, 8),
      fixtures::gemm_bf16_check(100, 200, 72), gpu_only(fixtures::gemm_bf16_check(1000, 1000, 1000)),
      fixtures::gemm_bf16_check(2344, 1944, 136), fixtures::gemm_bf16_check(128, 2048, 256),
      gpu_only(fixtures::gemm_bf16_check(1024, 2048, 200)), fixtures::gemm_bf16_check(128, 14720, 256),
      fixtures::gemm_bf16_check(1280, 2816, 136)
  });
}

TEST_CASE("the BF16 GEMM refuses shapes TMA cannot address", "[gpu]") {
  Device gpu;
  auto a = gpu.alloc<bf16>(200 * 64), b = gpu.alloc<bf16>(128 * 64), c = gpu.alloc<bf16>(200 * 128);
  const char* need = "gemm_bf16 needs M, N and K from 1 to 2^31 - 256 with N a multiple of 8 and K a multiple of 8 (TMA reads and "
                     "writes rows that start 16-byte multiples apart), not ";
  CHECK_THROWS_WITH(fixtures::gemm_bf16_run(gpu, a, b, c, 200, 100, 64), Catch::Contains(std::string(need) + "200 x 100 x 64"));
  CHECK_THROWS_WITH(fixtures::gemm_bf16_run(gpu, a, b, c, 200, 128, 60), Catch::Contains(std::string(need) + "200 x 128 x 60"));
  CHECK_THROWS_WITH(fixtures::gemm_bf16_run(gpu, a, b, c, 0, 128, 64), Catch::Contains(std::string(need) + "0 x 128 x 64"));
}

TEST_CASE("the FP8 (e4m3) GEMM matches its float64 host reference", "[gpu]") {
  Device gpu;
  // As for BF16: one tile, several tiles with a last column that overhangs N by half (384 = 3 x
  // 128), a non-square shape, 2304 x 1920 (more tiles than CTAs, a short last group of tile
  // rows), shapes the tile does not divide (K ragged by 16 elements), and the narrower kernels
  // (64 wide for 128 x 2048 and 128 x 14720, 128 wide for 1000 x 2048 and 1280 x 2816; the
  // second of each with more tiles than CTAs). The emulated device leaves out the gpu_only
  // shapes: 100 x 200 x 144 is ragged too, and the second of each width reaches its paths.
  using test::gpu_only;
  test::check_all(gpu, {
      fixtures::gemm_fp8_check(), fixtures::gemm_fp8_check(128, 128, 128), gpu_only(fixtures::gemm_fp8_check(512, 1024, 768)),
      fixtures::gemm_fp8_check(2304, 1920, 256), fixtures::gemm_fp8_check(100, 200, 144),
      gpu_only(fixtures::gemm_fp8_check(1000, 1000, 1008)), fixtures::gemm_fp8_check(128, 2048, 256),
      gpu_only(fixtures::gemm_fp8_check(1000, 2048, 272)), fixtures::gemm_fp8_check(128, 14720, 256),
      fixtures::gemm_fp8_check(1280, 2816, 144)
  });
}

TEST_CASE("the FP8 GEMM with an e4m3 result matches its float64 host reference", "[gpu]") {
  Device gpu;
  // One tile, several tiles per CTA (2304 x 1920), and shapes the tile does not divide (C's
  // rows a multiple of 16 bytes); the emulated device leaves out 1000 x 1008 x 1008, as ragged
  // as 100 x 208 x 144.
  test::check_all(gpu, {
      fixtures::gemm_fp8_e4m3_out_check(), fixtures::gemm_fp8_e4m3_out_check(128, 128, 128),
      fixtures::gemm_fp8_e4m3_out_check(2304, 1920, 256), fixtures::gemm_fp8_e4m3_out_check(100, 208, 144),
      test::gpu_only(fixtures::gemm_fp8_e4m3_out_check(1000, 1008, 1008))
  });
  auto a = gpu.alloc<f8e4m3>(256 * 64), b = gpu.alloc<f8e4m3>(128 * 64);
  auto c = gpu.alloc<f8e4m3>(256 * 128);
  CHECK_THROWS_WITH(fixtures::gemm_fp8_e4m3_out_prepare(gpu, a, b, c, 1.0f, 1.0f, 1.0f, 256, 120, 64),
                    Catch::Contains("gemm_fp8_e4m3_out needs M, N and K from 1 to 2^31 - 256 with N a multiple of 16 and K a "
                                    "multiple of 16 (TMA reads and writes rows that start 16-byte multiples apart), not 256 x 120 x 64"));
}

TEST_CASE("the FP8 GEMM refuses shapes TMA cannot address", "[gpu]") {
  Device gpu;
  auto a = gpu.alloc<f8e4m3>(256 * 64), b = gpu.alloc<f8e4m3>(128 * 64);
  auto c = gpu.alloc<bf16>(256 * 128);
  CHECK_THROWS_WITH(fixtures::gemm_fp8_run(gpu, a, b, c, 1.0f, 1.0f, 256, 128, 40),
                    Catch::Contains("gemm_fp8 needs M, N and K from 1 to 2^31 - 256 with N a multiple of 8 and K a multiple of 16 (TMA "
                                    "reads and writes rows that start 16-byte multiples apart), not 256 x 128 x 40"));
}

TEST_CASE("the fused bias + GELU GEMM matches its float64 host reference", "[gpu]") {
  Device gpu;
  // 100 x 200 x 72 and 1000 x 1000 x 1000: the overhang's values reach the epilogue with their
  // column clamped, so the bias (exactly N values) is never read past its end. A read past it
  // would not change any stored value, so this test cannot see one; scripts/run_gpu.sh runs it
  // under compute-sanitizer's memcheck, which can. The emulated device leaves out the gpu_only
  // shapes (100 x 200 x 72 overhangs too).
  using test::gpu_only;
  test::check_all(gpu, {
      fixtures::gemm_bf16_bias_gelu_check(), gpu_only(fixtures::gemm_bf16_bias_gelu_check(512, 1024, 768)),
      fixtures::gemm_bf16_bias_gelu_check(2304, 1920, 128), fixtures::gemm_bf16_bias_gelu_check(100, 200, 72),
      gpu_only(fixtures::gemm_bf16_bias_gelu_check(1000, 1000, 1000))
  });
}

TEST_CASE("the row-major BF16 GEMM (C = A * B, B stored K x N) matches its float64 host reference", "[gpu]") {
  Device gpu;
  // The shapes of the TN test (one tile; a last tile column that overhangs N by half; 144
  // tiles, more than one per CTA), a non-square one with M > N and a short K, one with N an odd
  // multiple of 128 and several tiles per CTA, and ragged ones (B's MN-major boxes then
  // overhang N and K). The emulated device leaves out the gpu_only shapes (1024 x 384 x 64 and
  // 100 x 200 x 72 stand for them).
  using test::gpu_only;
  test::check_all(gpu, {
      fixtures::gemm_bf16_nn_check(), fixtures::gemm_bf16_nn_check(128, 128, 64),
      gpu_only(fixtures::gemm_bf16_nn_check(512, 1024, 768)), fixtures::gemm_bf16_nn_check(2304, 1920, 128),
      fixtures::gemm_bf16_nn_check(1024, 384, 64), fixtures::gemm_bf16_nn_check(384, 2944, 320),
      fixtures::gemm_bf16_nn_check(100, 200, 72), gpu_only(fixtures::gemm_bf16_nn_check(1000, 1000, 1000))
  });
}

TEST_CASE("the BF16 GEMMs with A stored K x M (tn: B stored K x N, tt: B stored N x K) match float64 references", "[gpu]") {
  Device gpu;
  using fixtures::gemm_bf16_layout_check;
  using test::gpu_only;
  // One tile's worth, many tiles, and ragged shapes in both layouts; the emulated device leaves
  // out the gpu_only ones (200 x 136 x 72 is the tt layout's ragged shape there).
  test::check_all(gpu, {
      gemm_bf16_layout_check<WgmmaMajor::mn, WgmmaMajor::mn>(256, 384, 512),
      gemm_bf16_layout_check<WgmmaMajor::mn, WgmmaMajor::mn>(2304, 1920, 128),
      gemm_bf16_layout_check<WgmmaMajor::mn, WgmmaMajor::k>(256, 384, 512),
      gpu_only(gemm_bf16_layout_check<WgmmaMajor::mn, WgmmaMajor::k>(512, 1024, 768)),
      gemm_bf16_layout_check<WgmmaMajor::mn, WgmmaMajor::mn>(104, 200, 72),
      gemm_bf16_layout_check<WgmmaMajor::mn, WgmmaMajor::k>(200, 136, 72),
      gpu_only(gemm_bf16_layout_check<WgmmaMajor::mn, WgmmaMajor::k>(1000, 1000, 1000))
  });
}

TEST_CASE("the row-major BF16 GEMMs refuse shapes TMA cannot address", "[gpu]") {
  Device gpu;
  auto a = gpu.alloc<bf16>(256 * 96), b = gpu.alloc<bf16>(96 * 128), c = gpu.alloc<bf16>(256 * 128);
  CHECK_THROWS_WITH(fixtures::gemm_bf16_nn_run(gpu, a, b, c, 256, 100, 96),
                    Catch::Contains("gemm_bf16_nn needs M, N and K from 1 to 2^31 - 256 with N a multiple of 8 and K a multiple of 8 "
                                    "(TMA reads and writes rows that start 16-byte multiples apart), not 256 x 100 x 96"));
  // With A stored K x M, A's rows are M long: M must be a multiple of 8, and K need not be.
  auto tn = fixtures::gemm_bf16_layout_prepare<WgmmaMajor::mn, WgmmaMajor::mn>;
  CHECK_THROWS_WITH(tn(gpu, a, b, c, 100, 128, 96),
                    Catch::Contains("gemm_bf16_tn needs M, N and K from 1 to 2^31 - 256 with M a multiple of 8 and N a multiple of 8 "
                                    "(TMA reads and writes rows that start 16-byte multiples apart), not 100 x 128 x 96"));
}

TEST_CASE("the BF16 GEMM in clusters of two with B multicast matches its float64 host reference", "[gpu]") {
  Device gpu;
  // 2304 x 1920: 9 pairs of tile rows x 8 tile columns (more than one pair of tiles per
  // cluster on 66 clusters, a last column that overhangs N by half); 256 x 128 and 512 x 384:
  // one and few tiles.
  // 300 x 200 x 72: three tile rows, so the last pair's second CTA lies wholly past M, loads
  // zeros and stores nothing; 1000 x 1000 x 1000: ragged in all three dimensions. The emulated
  // device leaves out the gpu_only shapes (300 x 200 x 72 is ragged in all three too).
  using test::gpu_only;
  test::check_all(gpu, {
      fixtures::gemm_bf16_cluster_check(), fixtures::gemm_bf16_cluster_check(256, 128, 64),
      fixtures::gemm_bf16_cluster_check(2304, 1920, 128), gpu_only(fixtures::gemm_bf16_cluster_check(1024, 2048, 1024)),
      fixtures::gemm_bf16_cluster_check(300, 200, 72), gpu_only(fixtures::gemm_bf16_cluster_check(1000, 1000, 1000))
  });
}

TEST_CASE("the multistage mma.sync GEMM matches a float64 product on every shape", "[gpu]") {
  Device gpu;
  // One tile and less (1 x 2 x 8, 100 x 200 x 72), ragged in all three with K tiles fewer than
  // the stages (300 x 200 x 520 has 9, 64 x 64 x 64 has 1), several CTAs per multiprocessor's
  // worth (2304 x 1920 x 256), and a K of 8 that is not a multiple of the 64-wide k tile. The
  // emulated device leaves out the gpu_only shapes: the others are ragged too, and the
  // kernel's CTAs (not persistent) do not depend on how many there are.
  using test::gpu_only;
  test::check_all(gpu, {
      fixtures::gemm_tensorop_bf16_check(), fixtures::gemm_tensorop_bf16_check(64, 64, 64),
      fixtures::gemm_tensorop_bf16_check(1, 2, 8), fixtures::gemm_tensorop_bf16_check(100, 200, 72),
      gpu_only(fixtures::gemm_tensorop_bf16_check(1000, 1000, 1000)), gpu_only(fixtures::gemm_tensorop_bf16_check(2304, 1920, 256)),
      fixtures::gemm_tensorop_bf16_check(130, 258, 8)
  });
  auto a = gpu.alloc<bf16>(1 << 16), b = gpu.alloc<bf16>(1 << 16), c = gpu.alloc<bf16>(1 << 16);
  CHECK_THROWS_WITH(fixtures::gemm_tensorop_bf16_run(gpu, a, b, c, 64, 64, 60),
                    Catch::Contains("test_gemm_gpu.cpp") &&
                        Catch::Contains("gemm_tensorop_bf16_bf16_128x128_s3 needs M, N and K from 1 to 2^31 - 256, N a multiple of 2, "
                                        "and A's K and B's K (their contiguous indices) multiples of 8, not 64 x 64 x 60"));
}

TEST_CASE("the multistage mma.sync GEMM in FP16, TF32, INT8 and FP8, and with row- and column-major operands", "[gpu]") {
  Device gpu;
  using fixtures::gemm_sm80::Major;
  using fixtures::gemm_tensorop_check;
  // Ragged in M and N, K several tiles with a residue; INT8 is compared exactly.
  test::check_all(gpu, {
      gemm_tensorop_check<SM80_16x8x16_F32F16F16F32_TN, f16>(300, 200, 520),
      gemm_tensorop_check<SM80_16x8x8_F32TF32TF32F32_TN, float>(300, 200, 260),
      gemm_tensorop_check<SM80_16x8x32_S32S8S8S32_TN, int32_t>(300, 200, 528),
      gemm_tensorop_check<SM80_16x8x32_S32U8S8S32_TN, int32_t>(130, 66, 272),
      gemm_tensorop_check<SM89_16x8x32_F32E4M3E4M3F32_TN, bf16>(300, 200, 528),
      // A column-major (M-major), B row-major K x N (N-major), and both: ldmatrix.trans.
      gemm_tensorop_check<SM80_16x8x16_F32BF16BF16F32_TN, bf16>(296, 200, 520, Major::mn, Major::k),
      gemm_tensorop_check<SM80_16x8x16_F32BF16BF16F32_TN, bf16>(300, 264, 520, Major::k, Major::mn),
      gemm_tensorop_check<SM80_16x8x16_F32BF16BF16F32_TN, bf16>(296, 264, 100, Major::mn, Major::mn),
      test::gpu_only(gemm_tensorop_check<SM80_16x8x16_F32F16F16F32_TN, f16>(1024, 1024, 1024, Major::mn, Major::mn)),
  });
}

TEST_CASE("the TMA-fed mma.sync GEMM (the sm_120 family's) matches a float64 product, ragged shapes zero-filled by the copy engine",
          "[gpu][sm120]") {
  Device gpu;
  using fixtures::gemm_tma_tensorop_check;
  // Less than a tile (1 x 2 x 8), ragged in M, N and K with fewer K tiles than stages (100 x
  // 200 x 72: 2), many K tiles (300 x 200 x 520: 9), several CTAs per multiprocessor's worth
  // (on a GPU; the emulated device runs the ragged shapes only).
  test::check_all(gpu, {
      gemm_tma_tensorop_check<SM80_16x8x16_F32BF16BF16F32_TN, bf16>(300, 200, 520),
      gemm_tma_tensorop_check<SM80_16x8x16_F32BF16BF16F32_TN, bf16>(1, 2, 8),
      gemm_tma_tensorop_check<SM80_16x8x16_F32BF16BF16F32_TN, bf16>(100, 200, 72),
      gemm_tma_tensorop_check<SM80_16x8x16_F32F16F16F32_TN, f16>(256, 384, 512),
      gemm_tma_tensorop_check<SM89_16x8x32_F32E4M3E4M3F32_TN, bf16>(300, 200, 528),
      // The epilogue hook: relu(A B^T + bias), ragged (its column clamp keeps the bias read in bounds).
      fixtures::gemm_tma_tensorop_bias_relu_check(300, 200, 520),
  });
  if (!gpu.is_emulated())
    test::check_all(gpu, {
        gemm_tma_tensorop_check<SM80_16x8x16_F32BF16BF16F32_TN, bf16>(2304, 1920, 1024),
        fixtures::gemm_tma_tensorop_bias_relu_check(1000, 1000, 1000),
    });
}
