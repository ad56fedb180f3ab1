// The Blackwell byte ldmatrix forms executed, which tests/unit/atom/test_ldmatrix_unpacked.cpp
// and test_ldmatrix_transposed.cpp only compile: the unpacking ldmatrix.m8n16 (.b8x16.b4x16_p64
// and .b6x16_p32) and the transposing ldmatrix.m16n16 (.b8, and unpacking FP4 and FP6) feeding
// kind::f8f6f4 mma.sync, on an sm_120/sm_121 GPU or the emulated sm_120a. Shared memory is filled
// from a global input one K block at a time (two blocks, so the barriers between the fill and
// the loads matter); the host packs the operands as the ISA defines those sources and decodes
// them by the formats' definitions, independently of cutejit's atoms.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <vector>

#include "block_scaled_reference.hpp"
#include "cutejit/atom/sm120/mma_block_scaled.hpp"
#include "cutejit/atom/sm80/copy.hpp"
#include "cutejit/atom/sm80/mma.hpp"
#include "support.hpp"

using namespace cutejit;
namespace bs = test::block_scaled;

namespace {

bool is_sm120_family(const Target& t) { return t.sm == 120 || t.sm == 121; }

constexpr int k_blocks = 2;  // K blocks of 32 values, loaded one after the other

/// A warp's 16 x 8 x 64 kind::f8f6f4 product with A (16 x 64 values) and B (8 x 64) read by the
/// unpacking ldmatrix: each K block is copied from global memory to shared memory, one padded
/// 16-byte row (16 values) after another, as (rows, 32) byte tiles, then loaded and multiplied.
template <class Op, LdMatrixSource Source>
void unpacked_mma(const Tensor<uint8_t>& a, const Tensor<uint8_t>& b, const Tensor<float>& out) {
  auto tiled = make_tiled_mma(Op{}, make_layout({1, 1, 1}));
  Int t = thread_idx().x;
  auto thr = tiled.get_slice(t);
  Tensor<uint8_t> gA = make_tensor(a.data(), make_layout({16, 32 * k_blocks}, LayoutRight{}));
  Tensor<uint8_t> gB = make_tensor(b.data(), make_layout({8, 32 * k_blocks}, LayoutRight{}));
  Tensor<uint8_t> sA = make_smem_tensor<uint8_t>(make_layout({16, 32}, LayoutRight{}));
  Tensor<uint8_t> sB = make_smem_tensor<uint8_t>(make_layout({8, 32}, LayoutRight{}));
  auto ldsm_a = make_tiled_copy_A(LdMatrix<4, false, Source>{}, tiled);
  auto ldsm_b = make_tiled_copy_B(LdMatrix<2, false, Source>{}, tiled);
  auto acc = thr.partition_fragment_C({16, 8});
  fill(acc, 0.0f);
  for (int kb = 0; kb < k_blocks; ++kb) {
    // Threads 0-15 copy A's rows, 16-23 B's; the loads below read every thread's bytes.
    if_(t < 16, [&] { copy(local_tile(gA, IntTuple{16, 32}, IntTuple{0, kb})(t, _), sA(t, _)); });
    if_(t >= 16 && t < 24, [&] { copy(local_tile(gB, IntTuple{8, 32}, IntTuple{0, kb})(t - 16, _), sB(t - 16, _)); });
    sync_threads();
    auto fa = thr.partition_fragment_A({16, 32});
    auto fb = thr.partition_fragment_B({8, 32});
    copy(ldsm_a, ldsm_a.get_slice(t).partition_S(sA), fa);
    copy(ldsm_b, ldsm_b.get_slice(t).partition_S(sB), fb);
    sync_threads();  // every load is done before the next block overwrites the tiles
    gemm(tiled, acc, fa, fb);
  }
  copy(acc, thr.partition_C(make_tensor(out.data(), make_layout({16, 8}))));
}

/// A warp's 16 x 16 x 64 product (two n8 atoms) with A stored M-major and B N-major, (16, 32)
/// column-major tiles of T a K block (a K row of 16 M or N values in 16 bytes), both read by
/// the transposing ldmatrix.
template <class Op, class Load, Element T>
void transposed_mma(const Tensor<T>& a, const Tensor<T>& b, const Tensor<float>& out) {
  auto tiled = make_tiled_mma(Op{}, make_layout({1, 1, 1}));
  Int t = thread_idx().x;
  auto thr = tiled.get_slice(t);
  Tensor<T> gA = make_tensor(a.data(), make_layout({16, 32 * k_blocks}));
  Tensor<T> gB = make_tensor(b.data(), make_layout({16, 32 * k_blocks}));
  Tensor<T> sA = make_smem_tensor<T>(make_layout({16, 32}));
  Tensor<T> sB = make_smem_tensor<T>(make_layout({16, 32}));
  auto ldsm_a = make_tiled_copy_A(Load{}, tiled);
  auto ldsm_b = make_tiled_copy_B(Load{}, tiled);
  auto acc = thr.partition_fragment_C({16, 16});
  fill(acc, 0.0f);
  for (int kb = 0; kb < k_blocks; ++kb) {
    // Thread t copies K row t of each operand: 16 bytes.
    copy(local_tile(gA, IntTuple{16, 32}, IntTuple{0, kb})(_, t), sA(_, t));
    copy(local_tile(gB, IntTuple{16, 32}, IntTuple{0, kb})(_, t), sB(_, t));
    sync_threads();
    auto fa = thr.partition_fragment_A({16, 32});
    auto fb = thr.partition_fragment_B({16, 32});
    copy(ldsm_a, ldsm_a.get_slice(t).partition_S(sA), fa);
    copy(ldsm_b, ldsm_b.get_slice(t).partition_S(sB), fb);
    sync_threads();
    gemm(tiled, acc, fa, fb);
  }
  copy(acc, thr.partition_C(make_tensor(out.data(), make_layout({16, 16}))));
}

using bs::Format;
const Format& fp4 = bs::e2m1_format;
const Format& e3m2 = bs::e3m2_format;
const Format& e2m3 = bs::e2m3_format;
const Format& e4m3 = bs::e4m3_format;

/// D (rows x cols, column-major, as the kernels store it) = A B^T of the decoded codes, A rows
/// x k and B cols x k, row-major codes.
std::vector<double> product(const Format& fa, const std::vector<uint8_t>& a, const Format& fb, const std::vector<uint8_t>& b,
                            int64_t rows, int64_t cols, int64_t k) {
  std::vector<double> d(size_t(rows * cols));
  for (int64_t m = 0; m < rows; ++m)
    for (int64_t n = 0; n < cols; ++n) {
      double s = 0;
      for (int64_t q = 0; q < k; ++q) s += fa.decode(a[size_t(m * k + q)]) * fb.decode(b[size_t(n * k + q)]);
      d[size_t(m + rows * n)] = s;
    }
  return d;
}

/// The codes of a rows x k matrix stored K row by K row (its transpose, row-major): what an
/// M- or N-major operand's K rows hold.
std::vector<uint8_t> transpose(const std::vector<uint8_t>& codes, int64_t rows, int64_t k) {
  std::vector<uint8_t> t(codes.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t q = 0; q < k; ++q) t[size_t(q * rows + r)] = codes[size_t(r * k + q)];
  return t;
}

/// Every output against the reference: f32 sums of exact products, relative to the largest.
void compare(const std::vector<float>& got, const std::vector<double>& ref) {
  double worst = 0, scale = 0;
  size_t at = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    scale = std::max(scale, std::abs(ref[i]));
    const double e = std::isnan(got[i]) ? INFINITY : std::abs(double(got[i]) - ref[i]);
    if (e > worst) worst = e, at = i;
  }
  INFO("worst at " << at << ": " << got[at] << " against " << ref[at] << ", the largest magnitude " << scale);
  CHECK(worst / scale < 1e-5);
}

template <class Op, LdMatrixSource Source>
void run_unpacked(const Device& dev, const char* name, const Format& fa, const Format& fb) {
  Kernel k{name, [](Tensor<u8> a, Tensor<u8> b, Tensor<f32> out) { unpacked_mma<Op, Source>(a, b, out); }};
  const int64_t kk = 32 * k_blocks;
  auto a = bs::random_codes(fa, 16 * kk, 11), b = bs::random_codes(fb, 8 * kk, 12);
  auto da = dev.upload(bs::padded_rows(fa, a)), db = dev.upload(bs::padded_rows(fb, b));
  auto out = dev.upload(std::vector<float>(16 * 8, std::nanf("")));
  k(dev, Launch{.grid = 1, .block = 32}, da, db, out);
  dev.synchronize();
  compare(out.to_host(), product(fa, a, fb, b, 16, 8, kk));
}

template <class Op, class Load, class T>
void run_transposed(const Device& dev, const char* name, const Format& fa, const Format& fb) {
  Kernel k{name, [](Tensor<T> a, Tensor<T> b, Tensor<f32> out) { transposed_mma<Op, Load, T>(a, b, out); }};
  const int64_t kk = 32 * k_blocks;
  auto a = bs::random_codes(fa, 16 * kk, 21), b = bs::random_codes(fb, 16 * kk, 22);
  // Stored M- (N-) major: K row q holds the 16 values of column q, one padded 16-byte row.
  auto bytes = [&](const Format& f, const std::vector<uint8_t>& codes) {
    std::vector<T> v(codes.size());
    std::vector<uint8_t> rows = bs::padded_rows(f, transpose(codes, 16, kk));
    for (size_t i = 0; i < v.size(); ++i) std::memcpy(&v[i], &rows[i], 1);
    return v;
  };
  auto da = dev.upload(bytes(fa, a)), db = dev.upload(bytes(fb, b));
  auto out = dev.upload(std::vector<float>(16 * 16, std::nanf("")));
  k(dev, Launch{.grid = 1, .block = 32}, da, db, out);
  dev.synchronize();
  compare(out.to_host(), product(fa, a, fb, b, 16, 16, kk));
}

}  // namespace

TEST_CASE("the unpacking ldmatrix.m8n16 feeds kind::f8f6f4 mma.sync FP4 and FP6 operands that match a product of the decoded values",
          "[gpu][sm120]") {
  Device dev;
  if (!is_sm120_family(dev.target())) {
    WARN("skipped: the device is " << dev.target().name() << ", not an sm_120/sm_121 target (run with CUTEJIT_DEVICE=emulator:sm_120a)");
    return;
  }
  SECTION("E2M1 x E2M1 from .b4x16_p64") {
    run_unpacked<SM120_16x8x32_F32E2M1E2M1F32_TN, LdMatrixSource::b4x16_p64>(dev, "ldsm_unpacked_fp4_run", fp4, fp4);
  }
  SECTION("E3M2 x E2M3 from .b6x16_p32") {
    run_unpacked<SM120_16x8x32_F32E3M2E2M3F32_TN, LdMatrixSource::b6x16_p32>(dev, "ldsm_unpacked_fp6_run", e3m2, e2m3);
  }
}

TEST_CASE("ldmatrix.m16n16.trans loads M- and N-major FP8, FP6 and FP4 operands for kind::f8f6f4 mma.sync, matching a product",
          "[gpu][sm120]") {
  Device dev;
  if (!is_sm120_family(dev.target())) {
    WARN("skipped: the device is " << dev.target().name() << ", not an sm_120/sm_121 target (run with CUTEJIT_DEVICE=emulator:sm_120a)");
    return;
  }
  SECTION("E4M3, .b8") {
    run_transposed<SM89_16x8x32_F32E4M3E4M3F32_TN, SM100_U8x16_LDSM_T, f8e4m3>(dev, "ldsm_t_fp8_run", e4m3, e4m3);
  }
  SECTION("E3M2 x E2M3, .b8x16.b6x16_p32") {
    run_transposed<SM120_16x8x32_F32E3M2E2M3F32_TN, SM100_SU6_DU8x16_LDSM_T<2>, uint8_t>(dev, "ldsm_t_fp6_run", e3m2, e2m3);
  }
  SECTION("E2M1, .b8x16.b4x16_p64") {
    run_transposed<SM120_16x8x32_F32E2M1E2M1F32_TN, SM100_SU4_DU8x16_LDSM_T<2>, uint8_t>(dev, "ldsm_t_fp4_run", fp4, fp4);
  }
}
