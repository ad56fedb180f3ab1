// The warp-level tensor-core path on the GPU (built for sm_90a, which keeps mma.sync, ldmatrix
// and cp.async): every mma.sync atom through TiledMma partitions, a 2 x 2-warp TiledMma over
// a K loop, ldmatrix plain and transposed, and cp.async with zero-fill. Inputs are small
// integers (random, from a seed) that every element type holds exactly, so each result is
// compared exactly with a float64 host product; outputs are poisoned first.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "mma_sync_kernels.hpp"
#include "support.hpp"

using namespace cutejit;

namespace {

template <class T>
T from_int(int v) {
  if constexpr (std::is_integral_v<T> || std::is_floating_point_v<T>) return T(v);
  else return T(float(v));
}
template <class T>
double to_double(T v) {
  if constexpr (std::is_integral_v<T> || std::is_floating_point_v<T>) return double(v);
  else return double(float(v));
}

/// Random integers in [lo, hi] as T.
template <class T>
std::vector<T> random_ints(size_t n, int lo, int hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(lo, hi);
  std::vector<T> v(n);
  for (T& x : v) x = from_int<T>(dist(rng));
  return v;
}

template <class Op>
void check_atom(const Device& gpu, unsigned seed) {
  using A = typename Op::ElementA;
  using B = typename Op::ElementB;
  using C = typename Op::ElementC;
  using D = typename Op::ElementD;
  constexpr int M = Op::m, N = Op::n, K = Op::k;
  // Unsigned operands in [0, 3], signed in [-3, 3]; sums of K such products stay exact in f16.
  int lo = std::is_unsigned_v<A> ? 0 : -3;
  auto ha = random_ints<A>(M * K, lo, 3, seed);
  auto hb = random_ints<B>(N * K, std::is_unsigned_v<B> ? 0 : -3, 3, seed + 1);
  auto hc = random_ints<C>(M * N, -8, 8, seed + 2);
  std::vector<D> poison(M * N);
  std::memset(poison.data(), 0x7f, poison.size() * sizeof(D));
  auto a = gpu.upload(ha), b = gpu.upload(hb);
  auto c = gpu.upload(hc), d = gpu.upload(poison);
  test::mma_atom_kernel<Op>(gpu, Launch{.grid = 1, .block = 32}, a, b, c, d);
  gpu.synchronize();
  std::vector<D> got = d.to_host();
  int wrong = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double ref = to_double(hc[size_t(i * N + j)]);
      for (int p = 0; p < K; ++p) ref += to_double(ha[size_t(i * K + p)]) * to_double(hb[size_t(j * K + p)]);
      if (to_double(got[size_t(i * N + j)]) != ref) ++wrong;
    }
  INFO(Op::name());
  CHECK(wrong == 0);
}

}  // namespace

TEST_CASE("every mma.sync atom computes D = A * B + C exactly", "[gpu]") {
  Device gpu;
  check_atom<SM80_16x8x16_F32BF16BF16F32_TN>(gpu, 1);
  check_atom<SM80_16x8x8_F32BF16BF16F32_TN>(gpu, 2);
  check_atom<SM80_16x8x16_F32F16F16F32_TN>(gpu, 3);
  check_atom<SM80_16x8x8_F32F16F16F32_TN>(gpu, 4);
  check_atom<SM80_16x8x16_F16F16F16F16_TN>(gpu, 5);
  check_atom<SM80_16x8x8_F16F16F16F16_TN>(gpu, 6);
  check_atom<SM80_16x8x8_F32TF32TF32F32_TN>(gpu, 7);
  check_atom<SM80_16x8x4_F32TF32TF32F32_TN>(gpu, 8);
  check_atom<SM80_16x8x32_S32S8S8S32_TN>(gpu, 9);
  check_atom<SM80_16x8x32_S32S8U8S32_TN>(gpu, 10);
  check_atom<SM80_16x8x32_S32U8S8S32_TN>(gpu, 11);
  check_atom<SM80_16x8x32_S32U8U8S32_TN>(gpu, 12);
  check_atom<SM80_16x8x16_S32S8S8S32_TN>(gpu, 13);
  check_atom<SM80_16x8x16_S32S8U8S32_TN>(gpu, 14);
  check_atom<SM80_16x8x16_S32U8S8S32_TN>(gpu, 15);
  check_atom<SM80_16x8x16_S32U8U8S32_TN>(gpu, 16);
  check_atom<SM89_16x8x32_F32E4M3E4M3F32_TN>(gpu, 17);
  check_atom<SM89_16x8x32_F32E4M3E5M2F32_TN>(gpu, 18);
  check_atom<SM89_16x8x32_F32E5M2E4M3F32_TN>(gpu, 19);
  check_atom<SM89_16x8x32_F32E5M2E5M2F32_TN>(gpu, 20);
  check_atom<SM80_8x8x4_F64F64F64F64_TN>(gpu, 21);
}

TEST_CASE("a 2 x 2-warp TiledMma over four K steps matches a float64 product", "[gpu]") {
  Device gpu;
  using test::tiled_k, test::tiled_m, test::tiled_n;
  auto ha = random_ints<bf16>(tiled_m * tiled_k, -3, 3, 31), hb = random_ints<bf16>(tiled_n * tiled_k, -3, 3, 32);
  auto a = gpu.upload(ha), b = gpu.upload(hb);
  auto d = gpu.upload(std::vector<float>(tiled_m * tiled_n, NAN));
  test::tiled_mma_bf16(gpu, Launch{.grid = 1, .block = 128}, a, b, d);
  gpu.synchronize();
  std::vector<float> got = d.to_host();
  int wrong = 0;
  for (int i = 0; i < tiled_m; ++i)
    for (int j = 0; j < tiled_n; ++j) {
      double ref = 0;
      for (int p = 0; p < tiled_k; ++p) ref += double(float(ha[size_t(i * tiled_k + p)])) * double(float(hb[size_t(j * tiled_k + p)]));
      if (double(got[size_t(i * tiled_n + j)]) != ref) ++wrong;
    }
  CHECK(wrong == 0);
}

TEST_CASE("ldmatrix.x4 gives each lane its rows of the four matrices, plain and transposed", "[gpu]") {
  Device gpu;
  std::vector<bf16> h(256);
  for (int i = 0; i < 256; ++i) h[size_t(i)].bits = uint16_t(i);  // element (r, c) holds 16 r + c
  auto in = gpu.upload(h);
  auto out = gpu.upload(std::vector<uint32_t>(128, 0xdeadbeef)), out_t = gpu.upload(std::vector<uint32_t>(128, 0xdeadbeef));
  test::ldmatrix_x4(gpu, Launch{.grid = 1, .block = 32}, in, out, out_t);
  gpu.synchronize();
  std::vector<uint32_t> plain = out.to_host(), transposed = out_t.to_host();
  int wrong = 0;
  for (int lane = 0; lane < 32; ++lane)
    for (int i = 0; i < 4; ++i) {
      int r0 = 8 * (i % 2), c0 = 8 * (i / 2);
      auto at = [&](int r, int c) { return uint32_t(16 * (r0 + r) + c0 + c); };
      // Register i: (row lane / 4, columns 2 (lane % 4) + {0, 1}) of matrix i, low half first;
      // transposed, the same positions of the matrix's transpose.
      uint32_t p = at(lane / 4, 2 * (lane % 4)) | at(lane / 4, 2 * (lane % 4) + 1) << 16;
      uint32_t t = at(2 * (lane % 4), lane / 4) | at(2 * (lane % 4) + 1, lane / 4) << 16;
      wrong += plain[size_t(lane * 4 + i)] != p;
      wrong += transposed[size_t(lane * 4 + i)] != t;
    }
  CHECK(wrong == 0);
}

TEST_CASE("a cp.async tiled copy moves a tile and zero-fills the rows past the tensor", "[gpu]") {
  Device gpu;
  const int64_t m = 30;
  std::vector<float> h(size_t(m * 64));
  for (size_t i = 0; i < h.size(); ++i) h[i] = float(i) + 0.5f;
  auto in = gpu.upload(h);
  auto out = gpu.upload(std::vector<float>(32 * 64, NAN));
  test::cp_async_tile(gpu, Launch{.grid = 1, .block = 128}, in.view({m, 64}), out.view({32 * 64}));
  gpu.synchronize();
  std::vector<float> got = out.to_host();
  int wrong = 0;
  for (int64_t i = 0; i < 32 * 64; ++i) wrong += got[size_t(i)] != (i < m * 64 ? h[size_t(i)] : 0.0f);
  CHECK(wrong == 0);
}
