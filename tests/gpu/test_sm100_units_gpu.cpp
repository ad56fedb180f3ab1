// The sm_100 pieces that tests/unit/test_sm100.cpp, test_sm100_tmem_a.cpp and test_pipeline.cpp
// only compile, executed on a Blackwell datacenter GPU or the emulated sm_100a: tcgen05.mma of
// kind::tf32, kind::i8 and kind::f8f6f4 with mixed FP8 / FP6 / FP4 operands, the MMA with A in
// TMEM, TMEM stores and loads of every shape, PipelineAsyncUmma, a cluster-launch-control
// work-stealing loop, and the TMA, thread, TMA-store and cp.async pipelines. Inputs are random
// (fixed seeds), outputs poisoned, and every reference is computed on the host from the ISA's
// definitions: the formats decoded by hand, the TMEM shapes' cells written out, the products in
// float64 or exact integers.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <type_traits>
#include <vector>

#include "block_scaled_reference.hpp"
#include "cutejit/atom/sm100/tmem.hpp"
#include "cutejit/atom/sm100/umma.hpp"
#include "cutejit/atom/sm100/umma_tmem_a.hpp"
#include "cutejit/pipeline/clc_tile_scheduler.hpp"
#include "cutejit/pipeline/pipeline.hpp"
#include "cutejit/pipeline/pipeline_umma.hpp"
#include "streaming_pipeline.hpp"
#include "support.hpp"

using namespace cutejit;
namespace bs = test::block_scaled;

namespace {

bool is_sm100_family(const Target& t) { return t.sm == 100 || t.sm == 103 || t.sm == 110; }

#define SKIP_UNLESS_SM100(dev)                                                                                                             \
  if (!is_sm100_family(dev.target())) {                                                                                                    \
    WARN("skipped: the device is " << dev.target().name() << ", not an sm_100-family target (run with CUTEJIT_DEVICE=emulator:sm_100a)"); \
    return;                                                                                                                                \
  }

/// A K tile of 128 bytes a row, rows x (128 / sizeof(T)), with the 128-byte swizzle, as a TMA
/// box of CU_TENSOR_MAP_SWIZZLE_128B leaves it and tcgen05.mma reads it.
template <class T>
Tensor<T> swizzled_tile(const Pointer<T>& p, int rows) {
  constexpr int base = sizeof(T) == 4 ? 2 : sizeof(T) == 2 ? 3 : 4;  // log2 of the elements in 16 bytes
  return make_tensor(p, composition(Swizzle(3, base, 3), make_layout({rows, 128 / int(sizeof(T))}, LayoutRight{})));
}

/// Thread t's row of the M = 128 accumulator at `d` (N columns) to row t of C: f32 as it is,
/// s32 (kind::i8) from the cells' bits.
template <class Out>
void store_accumulator_row(const Value<uint32_t>& d, int n, const Tensor<Out>& C, const Int& t) {
  Tensor<float> row = TmemAccumulator{d, n}.load_row<64>(t / 32, 0);
  for (int j = 0; j < n; ++j) {
    if constexpr (std::is_same_v<Out, float>)
      C(t, j) = F32(row(j));
    else
      C(t, j) = bitcast<int32_t>(F32(row(j)));
  }
}

/// C (128 x 64) = A (128 x K) B (64 x K)^T on one SS atom, K in `k_tiles` tiles of 128 bytes a
/// row: the four warps copy a K tile into the swizzled tiles, thread 0 multiplies it, and every
/// thread waits for the MMAs' commit before the tiles are overwritten (and, at the end, before
/// the accumulator is read).
template <class Atom, class Out>
void umma_ss(const Tensor<typename Atom::element_type>& a, const Tensor<typename Atom::element_type>& b, const Tensor<Out>& c,
             int k_tiles) {
  using T = typename Atom::element_type;
  constexpr int row = 128 / int(sizeof(T)), n = Atom::n;
  static_assert(n == 64);
  launch_bounds(128);
  Int t = thread_idx().x;
  Tensor<T> sA = swizzled_tile(dynamic_shared_aligned<T>(1024), 128), sB = swizzled_tile(dynamic_shared_aligned<T>(1024, 128 * 128), n);
  Pointer<uint64_t> done = make_smem_tensor<uint64_t>(make_layout(1)).data();
  TmemAllocation tmem(make_smem_tensor<uint32_t>(make_layout(1)).data(), 64);
  if_(t == 0, [&] {
    mbarrier_init(done, 1);
    fence_mbarrier_init();
  });
  if_(t / 32 == 0, [&] { tmem.allocate(); });
  tcgen05_fence_before_thread_sync();
  sync_threads();
  tcgen05_fence_after_thread_sync();
  Value<uint32_t> d = tmem.address();
  Tensor<T> gA = make_tensor(a.data(), make_layout({128, row * k_tiles}, LayoutRight{}));
  Tensor<T> gB = make_tensor(b.data(), make_layout({n, row * k_tiles}, LayoutRight{}));
  for (int kt = 0; kt < k_tiles; ++kt) {
    copy(local_tile(gA, IntTuple{128, row}, IntTuple{0, kt})(t, _), sA(t, _));
    if_(t < n, [&] { copy(local_tile(gB, IntTuple{n, row}, IntTuple{0, kt})(t, _), sB(t, _)); });
    fence_proxy_async_shared();  // the stores, for the tensor core's reads
    sync_threads();
    tcgen05_fence_after_thread_sync();
    if_(t == 0, [&] {
      auto [A, B] = make_umma_operands(Atom{}, sA, sB);
      cutejit::gemm(Atom{}, d, A, B, Bool(kt > 0));
      tcgen05_commit(done);
    });
    mbarrier_wait(done, kt % 2);
    tcgen05_fence_after_thread_sync();
  }
  store_accumulator_row(d, n, make_tensor(c.data(), make_layout({128, n}, LayoutRight{})), t);
  tcgen05_fence_before_thread_sync();
  sync_threads();
  if_(t / 32 == 0, [&] { tmem.free(d); });
}

/// C (128 x 64) = A (128 x K) B (64 x K)^T with A in TMEM (the TS form), K one 128-byte tile:
/// each thread stores its row of A with tcgen05.st, the warps copy B to shared memory, thread 0
/// issues the four MMAs.
template <class T, class Out>
void umma_ts(const Tensor<T>& a, const Tensor<T>& b, const Tensor<Out>& c) {
  using Atom = Tcgen05MmaTS<T, 128, 64>;
  constexpr int k = 128 / int(sizeof(T));
  launch_bounds(128);
  Int t = thread_idx().x, warp = t / 32;
  Tensor<T> sB = swizzled_tile(dynamic_shared_aligned<T>(1024), 64);
  Pointer<uint64_t> done = make_smem_tensor<uint64_t>(make_layout(1)).data();
  TmemAllocation tmem(make_smem_tensor<uint32_t>(make_layout(1)).data(), 128);  // D's 64 columns, then A's 32
  if_(t == 0, [&] {
    mbarrier_init(done, 1);
    fence_mbarrier_init();
  });
  if_(warp == 0, [&] { tmem.allocate(); });
  Tensor<T> gA = make_tensor(a.data(), make_layout({128, k}, LayoutRight{}));
  Tensor<T> gB = make_tensor(b.data(), make_layout({64, k}, LayoutRight{}));
  if_(t < 64, [&] { copy(gB(t, _), sB(t, _)); });
  Tensor<T> row = make_rmem_tensor<T>(IntTuple{k});
  copy(gA(t, _), row);
  fence_proxy_async_shared();
  tcgen05_fence_before_thread_sync();
  sync_threads();
  tcgen05_fence_after_thread_sync();
  Value<uint32_t> d = tmem.address();
  TmemOperandA<T> A{d + 64u, k};
  A.template store_rows<32>(warp, row);
  tmem_wait_store();
  tcgen05_fence_before_thread_sync();
  sync_threads();
  tcgen05_fence_after_thread_sync();
  if_(t == 0, [&] {
    gemm(Atom{}, d, A, UmmaOperand<T>(sB, 64, "B"), Bool(false));
    tcgen05_commit(done);
  });
  mbarrier_wait(done, 0);
  tcgen05_fence_after_thread_sync();
  store_accumulator_row(d, 64, make_tensor(c.data(), make_layout({128, 64}, LayoutRight{})), t);
  tcgen05_fence_before_thread_sync();
  sync_threads();
  if_(warp == 0, [&] { tmem.free(d); });
}

/// `n` random floats of TF32 precision (the low 13 mantissa bits clear), so that the MMA's
/// reading of f32 as TF32 loses nothing and the reference is the product of the inputs.
std::vector<float> random_tf32(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) {
    uint32_t bits;
    float f = dist(rng);
    std::memcpy(&bits, &f, 4);
    bits &= ~0x1FFFu;
    std::memcpy(&x, &bits, 4);
  }
  return v;
}

/// `n` random bf16 (a bf16's value is its top 16 float bits).
std::vector<bf16> random_bf16(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<bf16> v(n);
  for (bf16& x : v) x = bf16(dist(rng));
  return v;
}

template <class T>
std::vector<T> random_int8(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<T> v(n);
  for (T& x : v) x = T(rng());
  return v;
}

/// C (rows x cols, row-major) = A B^T of values `a` (rows x k) and `b` (cols x k), row-major.
std::vector<double> product(const std::vector<double>& a, const std::vector<double>& b, int64_t rows, int64_t cols, int64_t k) {
  std::vector<double> c(size_t(rows * cols));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      double s = 0;
      for (int64_t q = 0; q < k; ++q) s += a[size_t(i * k + q)] * b[size_t(j * k + q)];
      c[size_t(i * cols + j)] = s;
    }
  return c;
}

template <class T>
std::vector<double> values(const std::vector<T>& v) {
  std::vector<double> d;
  for (const T& x : v) d.push_back(double(float(x)));
  return d;
}

/// f32 accumulation of exact products: within 1e-5 of the largest output, no NaN.
void compare(const std::vector<float>& got, const std::vector<double>& ref, int64_t cols) {
  double worst = 0, scale = 0;
  size_t at = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    scale = std::max(scale, std::abs(ref[i]));
    const double e = std::isnan(got[i]) ? INFINITY : std::abs(double(got[i]) - ref[i]);
    if (e > worst) worst = e, at = i;
  }
  INFO("worst at (" << at / size_t(cols) << ", " << at % size_t(cols) << "): " << got[at] << " against " << ref[at]
                    << ", the largest magnitude " << scale);
  CHECK(worst / scale < 1e-5);
}

/// Integer products are exact: every s32 output equals the sum.
template <class T>
void check_integer_product(const std::vector<int32_t>& got, const std::vector<T>& a, const std::vector<T>& b, int64_t k) {
  int wrong = 0;
  for (int64_t i = 0; i < 128; ++i)
    for (int64_t j = 0; j < 64; ++j) {
      int64_t s = 0;
      for (int64_t q = 0; q < k; ++q) s += int64_t(a[size_t(i * k + q)]) * int64_t(b[size_t(j * k + q)]);
      if (got[size_t(i * 64 + j)] != s && wrong++ < 5) FAIL_CHECK("C(" << i << ", " << j << ") = " << got[size_t(i * 64 + j)] << ", not " << s);
    }
  CHECK(wrong == 0);
}

constexpr uint32_t umma_shared_bytes = 128 * 128 + 64 * 128 + dynamic_shared_slack(1024);

/// kind::f8f6f4 with A of format `fa` and B of `fb`: K = 256 values (two tiles of 128), FP6
/// and FP4 in the padded rows of 16 the instruction reads from shared memory.
template <MxType TA, MxType TB>
void run_f8f6f4(const Device& dev, const char* name, const bs::Format& fa, const bs::Format& fb) {
  using Atom = Tcgen05MmaF8F6F4SS<TA, TB, 128, 64>;
  Kernel k{name, [](Tensor<u8> a, Tensor<u8> b, Tensor<f32> c) { umma_ss<Atom, float>(a, b, c, 2); }};
  const int64_t kk = 256;
  auto a = bs::random_codes(fa, size_t(128 * kk), 31), b = bs::random_codes(fb, size_t(64 * kk), 32);
  auto da = dev.upload(bs::padded_rows(fa, a)), db = dev.upload(bs::padded_rows(fb, b));
  auto dc = dev.upload(std::vector<float>(128 * 64, std::nanf("")));
  k(dev, Launch{.grid = 1, .block = 128, .shared_bytes = umma_shared_bytes}, da, db, dc);
  dev.synchronize();
  std::vector<double> av, bv;
  for (uint8_t x : a) av.push_back(fa.decode(x));
  for (uint8_t x : b) bv.push_back(fb.decode(x));
  compare(dc.to_host(), product(av, bv, 128, 64, kk), 64);
}

}  // namespace

TEST_CASE("tcgen05.mma kind::tf32, kind::i8 and kind::f8f6f4 with mixed FP8, FP6 and FP4 match a product of the decoded operands",
          "[gpu][sm100]") {
  Device dev;
  SKIP_UNLESS_SM100(dev)
  // 128 x 64 outputs over two K tiles of 128 bytes (eight MMAs accumulating, one commit a tile).
  SECTION("kind::tf32, K = 64") {
    Kernel k{"umma_tf32_run", [](Tensor<f32> a, Tensor<f32> b, Tensor<f32> c) { umma_ss<SM100_MMA_TF32_SS<128, 64>, float>(a, b, c, 2); }};
    auto a = random_tf32(128 * 64, 1), b = random_tf32(64 * 64, 2);
    auto da = dev.upload(a), db = dev.upload(b);
    auto dc = dev.upload(std::vector<float>(128 * 64, std::nanf("")));
    k(dev, Launch{.grid = 1, .block = 128, .shared_bytes = umma_shared_bytes}, da, db, dc);
    dev.synchronize();
    compare(dc.to_host(), product(values(a), values(b), 128, 64, 64), 64);
  }
  SECTION("kind::i8, s8 x s8, K = 256") {
    Kernel k{"umma_s8_run", [](Tensor<i8> a, Tensor<i8> b, Tensor<i32> c) { umma_ss<SM100_MMA_S8_SS<int8_t, 128, 64>, int32_t>(a, b, c, 2); }};
    auto a = random_int8<int8_t>(128 * 256, 3), b = random_int8<int8_t>(64 * 256, 4);
    auto da = dev.upload(a), db = dev.upload(b);
    auto dc = dev.upload(std::vector<int32_t>(128 * 64, -1));
    k(dev, Launch{.grid = 1, .block = 128, .shared_bytes = umma_shared_bytes}, da, db, dc);
    dev.synchronize();
    check_integer_product(dc.to_host(), a, b, 256);
  }
  SECTION("kind::i8, u8 x u8, K = 256") {
    Kernel k{"umma_u8_run", [](Tensor<u8> a, Tensor<u8> b, Tensor<i32> c) { umma_ss<SM100_MMA_S8_SS<uint8_t, 128, 64>, int32_t>(a, b, c, 2); }};
    auto a = random_int8<uint8_t>(128 * 256, 5), b = random_int8<uint8_t>(64 * 256, 6);
    auto da = dev.upload(a), db = dev.upload(b);
    auto dc = dev.upload(std::vector<int32_t>(128 * 64, -1));
    k(dev, Launch{.grid = 1, .block = 128, .shared_bytes = umma_shared_bytes}, da, db, dc);
    dev.synchronize();
    check_integer_product(dc.to_host(), a, b, 256);
  }
  SECTION("kind::f8f6f4, E2M1 x E4M3") {
    run_f8f6f4<MxType::e2m1, MxType::e4m3>(dev, "umma_e2m1_e4m3_run", bs::e2m1_format, bs::e4m3_format);
  }
  SECTION("kind::f8f6f4, E3M2 x E2M3") {
    run_f8f6f4<MxType::e3m2, MxType::e2m3>(dev, "umma_e3m2_e2m3_run", bs::e3m2_format, bs::e2m3_format);
  }
  SECTION("kind::f8f6f4, E5M2 x E2M1") {
    run_f8f6f4<MxType::e5m2, MxType::e2m1>(dev, "umma_e5m2_e2m1_run", bs::e5m2_format, bs::e2m1_format);
  }
}

TEST_CASE("tcgen05.mma with A in TMEM (the TS form) of kind::f16, tf32, f8f6f4 and i8 matches a product of the operands", "[gpu][sm100]") {
  Device dev;
  SKIP_UNLESS_SM100(dev)
  const uint32_t shared = 64 * 128 + dynamic_shared_slack(1024);
  const Launch launch{.grid = 1, .block = 128, .shared_bytes = shared};
  SECTION("bf16, K = 64") {
    Kernel k{"umma_ts_bf16_run", [](Tensor<bf16> a, Tensor<bf16> b, Tensor<f32> c) { umma_ts<bf16, float>(a, b, c); }};
    auto a = random_bf16(128 * 64, 7), b = random_bf16(64 * 64, 8);
    auto da = dev.upload(a), db = dev.upload(b);
    auto dc = dev.upload(std::vector<float>(128 * 64, std::nanf("")));
    k(dev, launch, da, db, dc);
    dev.synchronize();
    compare(dc.to_host(), product(values(a), values(b), 128, 64, 64), 64);
  }
  SECTION("tf32, K = 32") {
    Kernel k{"umma_ts_tf32_run", [](Tensor<f32> a, Tensor<f32> b, Tensor<f32> c) { umma_ts<float, float>(a, b, c); }};
    auto a = random_tf32(128 * 32, 9), b = random_tf32(64 * 32, 10);
    auto da = dev.upload(a), db = dev.upload(b);
    auto dc = dev.upload(std::vector<float>(128 * 64, std::nanf("")));
    k(dev, launch, da, db, dc);
    dev.synchronize();
    compare(dc.to_host(), product(values(a), values(b), 128, 64, 32), 64);
  }
  SECTION("E4M3, K = 128") {
    Kernel k{"umma_ts_e4m3_run", [](Tensor<f8e4m3> a, Tensor<f8e4m3> b, Tensor<f32> c) { umma_ts<f8e4m3, float>(a, b, c); }};
    auto codes_a = bs::random_codes(bs::e4m3_format, 128 * 128, 11), codes_b = bs::random_codes(bs::e4m3_format, 64 * 128, 12);
    std::vector<f8e4m3> a(codes_a.size()), b(codes_b.size());
    std::vector<double> av, bv;
    for (size_t i = 0; i < a.size(); ++i) a[i].bits = codes_a[i], av.push_back(bs::e4m3(codes_a[i]));
    for (size_t i = 0; i < b.size(); ++i) b[i].bits = codes_b[i], bv.push_back(bs::e4m3(codes_b[i]));
    auto da = dev.upload(a), db = dev.upload(b);
    auto dc = dev.upload(std::vector<float>(128 * 64, std::nanf("")));
    k(dev, launch, da, db, dc);
    dev.synchronize();
    compare(dc.to_host(), product(av, bv, 128, 64, 128), 64);
  }
  SECTION("s8, K = 128") {
    Kernel k{"umma_ts_s8_run", [](Tensor<i8> a, Tensor<i8> b, Tensor<i32> c) { umma_ts<int8_t, int32_t>(a, b, c); }};
    auto a = random_int8<int8_t>(128 * 128, 13), b = random_int8<int8_t>(64 * 128, 14);
    auto da = dev.upload(a), db = dev.upload(b);
    auto dc = dev.upload(std::vector<int32_t>(128 * 64, -1));
    k(dev, launch, da, db, dc);
    dev.synchronize();
    check_integer_product(dc.to_host(), a, b, 128);
  }
}

namespace {

/// The TMEM shapes in the test's order, each in columns 8 s ... 8 s + 7: 32x32b.x8, 16x64b.x4,
/// 16x128b.x2, 16x256b.x1 and 16x32bx2.x4 (its second half 4 columns on); the 16-lane shapes
/// store twice, at lanes 0 and 16 of the warp's quarter.
constexpr int tmem_shapes = 5, tmem_registers = 8;
constexpr int registers_of(int s) { return s == 0 ? 8 : 4; }

/// The cell (lane, column) the ISA puts register r of thread t (of the warp) in, relative to the
/// address, for shape s: the PTX ISA's "Matrix fragments" figures for tcgen05.ld / st, written out.
std::pair<int, int> isa_cell(int s, int t, int r) {
  const int q = t / 4, p = t % 4;
  switch (s) {
    case 0: return {t, r};                                          // 32x32b: a lane a thread
    case 1: return {q + 8 * (t % 2), (t / 2) % 2 + 2 * r};          // 16x64b
    case 2: return {q + 8 * (r % 2), p + 4 * (r / 2)};              // 16x128b
    case 3: return {q + 8 * ((r / 2) % 2), 2 * p + r % 2 + 8 * (r / 4)};  // 16x256b: mma.sync's C tile
    default: return {t % 16, r + 4 * (t / 16)};                    // 16x32bx2, halves 4 columns apart
  }
}

/// in, back: (register, half, thread, shape), 8 x 2 x 128 x 5; cells: (TMEM lane, column), 128 x 40.
template <TmemShape S, int Num>
void tmem_round_trip(const Value<uint32_t>& base, int s, const Tensor<float>& in, const Tensor<float>& back, bool store, const Int& t) {
  const int halves = S == TmemShape::s32x32b ? 1 : 2, regs = registers_of(s);
  for (int h = 0; h < halves; ++h) {
    const Value<uint32_t> address = tmem_address(base, (t / 32) * 32 + 16 * h, 8 * s);
    if (store) {
      Tensor<float> v = make_rmem_tensor<float>(IntTuple{regs});
      for (int r = 0; r < regs; ++r) v(r) = F32(in(r, h, t, s));
      tmem_store<S, Num>(address, v);
    } else {
      Tensor<float> v = tmem_load<S, Num>(address);
      for (int r = 0; r < regs; ++r) back(r, h, t, s) = F32(v(r));
    }
  }
}

Kernel tmem_shapes_kernel{"tmem_shapes_run", [](Tensor<f32> in_flat, Tensor<f32> cells_flat, Tensor<f32> back_flat) {
  launch_bounds(128);
  Int t = thread_idx().x;
  const Layout io = make_layout({tmem_registers, 2, 128, tmem_shapes});
  Tensor<float> in = make_tensor(in_flat.data(), io), back = make_tensor(back_flat.data(), io);
  Tensor<float> cells = make_tensor(cells_flat.data(), make_layout({128, 8 * tmem_shapes}, LayoutRight{}));
  TmemAllocation tmem(make_smem_tensor<uint32_t>(make_layout(1)).data(), 64);
  if_(t / 32 == 0, [&] { tmem.allocate(); });
  tcgen05_fence_before_thread_sync();
  sync_threads();
  tcgen05_fence_after_thread_sync();
  Value<uint32_t> base = tmem.address();
  for (bool store : {true, false}) {
    tmem_round_trip<TmemShape::s32x32b, 8>(base, 0, in, back, store, t);
    tmem_round_trip<TmemShape::s16x64b, 4>(base, 1, in, back, store, t);
    tmem_round_trip<TmemShape::s16x128b, 2>(base, 2, in, back, store, t);
    tmem_round_trip<TmemShape::s16x256b, 1>(base, 3, in, back, store, t);
    tmem_round_trip<TmemShape::s16x32bx2, 4>(base, 4, in, back, store, t);
    if (store) tmem_wait_store();
  }
  // Every cell as 32x32b reads it: lane 32 w + t % 32 of the warp's quarter, 8 columns a shape.
  for (int s = 0; s < tmem_shapes; ++s) {
    Tensor<float> v = tmem_load_32x32b<8>(tmem_address(base, (t / 32) * 32, 8 * s));
    for (int c = 0; c < 8; ++c) cells(t, 8 * s + c) = F32(v(c));
  }
  tcgen05_fence_before_thread_sync();
  sync_threads();
  if_(t / 32 == 0, [&] { tmem.free(base); });
}};

}  // namespace

TEST_CASE("TMEM stores of each shape put every register in the ISA's cell, and loads of the shape read it back", "[gpu][sm100]") {
  Device dev;
  SKIP_UNLESS_SM100(dev)
  const size_t io = size_t(tmem_registers * 2 * 128 * tmem_shapes);
  std::vector<float> in(io);
  std::mt19937 rng(41);
  std::uniform_real_distribution<float> dist(-100.0f, 100.0f);
  for (float& x : in) x = dist(rng);
  auto din = dev.upload(in);
  auto dcells = dev.upload(std::vector<float>(size_t(128 * 8 * tmem_shapes), std::nanf("")));
  auto dback = dev.upload(std::vector<float>(io, std::nanf("")));
  tmem_shapes_kernel(dev, Launch{.grid = 1, .block = 128}, din, dcells, dback);
  dev.synchronize();
  std::vector<float> cells = dcells.to_host(), back = dback.to_host();
  const char* names[] = {"32x32b.x8", "16x64b.x4", "16x128b.x2", "16x256b.x1", "16x32bx2.x4"};
  for (int s = 0; s < tmem_shapes; ++s) {
    int misplaced = 0, lost = 0;
    for (int w = 0; w < 4; ++w)
      for (int h = 0; h < (s == 0 ? 1 : 2); ++h)
        for (int lane = 0; lane < 32; ++lane)
          for (int r = 0; r < registers_of(s); ++r) {
            const size_t i = size_t(r + tmem_registers * (h + 2 * (32 * w + lane + 128 * s)));
            const auto [l, c] = isa_cell(s, lane, r);
            misplaced += cells[size_t((32 * w + 16 * h + l) * 8 * tmem_shapes + 8 * s + c)] != in[i];
            lost += back[i] != in[i];
          }
    INFO(names[s]);
    CHECK(misplaced == 0);
    CHECK(lost == 0);
  }
}

namespace {
/// PipelineAsyncUmma: four warps copy each K tile of A (128 x 64 bf16) and B (64 x 64) into a
/// two-stage ring with ordinary stores; thread 128 multiplies each stage and frees it by the
/// MMAs' commit; the four warps then read the accumulator.
Kernel async_umma{"async_umma_run", [](Tensor<bf16> a, Tensor<bf16> b, Tensor<f32> c, Int k_tiles) {
  using Atom = SM100_MMA_F16BF16_SS<bf16, 128, 64>;
  constexpr int stages = 2, producers = 128;
  launch_bounds(producers + 32);
  auto stage = [&](int64_t offset, const Int& s, int rows) {
    return swizzled_tile(dynamic_shared_aligned<bf16>(1024, offset) + s * (rows * 64), rows);
  };
  const int64_t b_offset = stages * 128 * 128;
  PipelineAsyncUmma ring(make_smem_tensor<uint64_t>(make_layout(PipelineAsyncUmma::barrier_bytes(stages) / 8)).data(), stages, producers);
  Pointer<uint64_t> done = make_smem_tensor<uint64_t>(make_layout(1)).data();
  TmemAllocation tmem(make_smem_tensor<uint32_t>(make_layout(1)).data(), 64);
  Int t = thread_idx().x;
  if_(t == 0, [&] {
    ring.init();
    mbarrier_init(done, 1);
    fence_mbarrier_init();
  });
  if_(t / 32 == 4, [&] { tmem.allocate(); });
  tcgen05_fence_before_thread_sync();
  sync_threads();
  tcgen05_fence_after_thread_sync();
  Value<uint32_t> d = tmem.address();
  Tensor<bf16> A = make_tensor(a.data(), make_layout({128, k_tiles * 64}, LayoutRight{}));
  Tensor<bf16> B = make_tensor(b.data(), make_layout({64, k_tiles * 64}, LayoutRight{}));
  if_(t < producers, [&] {
    for_(0, k_tiles, [&](Int kt) {
      PipelineState s = PipelineState::at(kt, stages);
      ring.producer_acquire(s);
      copy(local_tile(A, IntTuple{128, 64}, IntTuple{0, kt})(t, _), stage(0, s.index, 128)(t, _));
      if_(t < 64, [&] { copy(local_tile(B, IntTuple{64, 64}, IntTuple{0, kt})(t, _), stage(b_offset, s.index, 64)(t, _)); });
      ring.producer_commit(s);
    });
  });
  if_(t == producers, [&] {
    for_(0, k_tiles, [&](Int kt) {
      PipelineState s = PipelineState::at(kt, stages);
      ring.consumer_wait(s);
      tcgen05_fence_after_thread_sync();
      auto [sA, sB] = make_umma_operands(Atom{}, stage(0, s.index, 128), stage(b_offset, s.index, 64));
      cutejit::gemm(Atom{}, d, sA, sB, kt > 0);
      ring.consumer_release(s);
    });
    tcgen05_commit(done);
  });
  if_(t < producers, [&] {
    mbarrier_wait(done, 0);
    tcgen05_fence_after_thread_sync();
    store_accumulator_row(d, 64, make_tensor(c.data(), make_layout({128, 64}, LayoutRight{})), t);
  });
  tcgen05_fence_before_thread_sync();
  sync_threads();
  if_(t / 32 == 4, [&] { tmem.free(d); });
}};
}  // namespace

TEST_CASE("PipelineAsyncUmma carries 6 K tiles from four storing warps to tcgen05.mma through 2 stages; the product matches", "[gpu][sm100]") {
  Device dev;
  SKIP_UNLESS_SM100(dev)
  const int k_tiles = 6, k = 64 * k_tiles;
  auto a = random_bf16(size_t(128 * k), 15), b = random_bf16(size_t(64 * k), 16);
  auto da = dev.upload(a), db = dev.upload(b);
  auto dc = dev.upload(std::vector<float>(128 * 64, std::nanf("")));
  const uint32_t shared = 2 * (128 + 64) * 128 + dynamic_shared_slack(1024);
  async_umma(dev, Launch{.grid = 1, .block = 160, .shared_bytes = shared}, da, db, dc, k_tiles);
  dev.synchronize();
  compare(dc.to_host(), product(values(a), values(b), 128, 64, k), 64);
}

namespace {
/// Cluster launch control: each CTA doubles its block of 64 floats and counts the tile, then does
/// the same for the tile of every CTA it cancels; `owner` records which CTA did each tile.
Kernel clc_steal{"clc_steal_run", [](Tensor<f32> x, Tensor<i32> count, Tensor<i32> owner) {
  // The response is 16 bytes, 16-byte aligned.
  ClcTileScheduler clc(dynamic_shared_aligned<uint32_t>(16), dynamic_shared_aligned<uint64_t>(16, 16));
  Int t = thread_idx().x;
  if_(t == 0, [&] {
    clc.init();
    fence_mbarrier_init();
  });
  sync_threads();
  Var<int32_t> tile = clc.first_tile(), asks = 0, more = 1;
  while_([&] { return Int(more) != 0; }, [&] {
    if_(t == 0, [&] { clc.request(); });
    Int i = Int(tile) * 64 + t;
    x(i) = F32(x(i)) * 2.0f;
    if_(t == 0, [&] {
      atomic_add(count(Int(tile)), 1);
      owner(Int(tile)) = block_idx().x;
    });
    auto [got, next] = clc.answer(asks);
    sync_threads();
    more = select(got, Int(1), Int(0));
    tile = next;
    asks += 1;
  });
}};
}  // namespace

TEST_CASE("cluster launch control: a work-stealing loop processes every tile exactly once", "[gpu][sm100]") {
  Device dev;
  SKIP_UNLESS_SM100(dev)
  const int tiles = 48;
  std::vector<float> x(size_t(tiles * 64));
  std::mt19937 rng(51);
  std::uniform_real_distribution<float> dist(-8.0f, 8.0f);
  for (float& v : x) v = dist(rng);
  auto dx = dev.upload(x);
  auto dcount = dev.upload(std::vector<int32_t>(tiles, 0));
  auto downer = dev.upload(std::vector<int32_t>(tiles, -1));
  clc_steal(dev, Launch{.grid = tiles, .block = 64, .shared_bytes = 32}, dx, dcount, downer);
  dev.synchronize();
  CHECK(dcount.to_host() == std::vector<int32_t>(tiles, 1));
  std::vector<float> doubled = x;
  for (float& v : doubled) v *= 2.0f;
  CHECK(dx.to_host() == doubled);
  // A GPU may launch every CTA at once and cancel none; the emulator runs two clusters at a time,
  // so the first CTAs must take the tiles of those not yet started.
  int stolen = 0;
  std::vector<int32_t> owner = downer.to_host();
  for (int i = 0; i < tiles; ++i) stolen += owner[size_t(i)] != i;
  INFO(stolen << " of " << tiles << " tiles done by a CTA that cancelled their own");
  if (dev.is_emulated()) CHECK(stolen > 0);
}

namespace {
/// PipelineAsync: warp 0 copies each 32-value tile of `in` into a stage with ordinary stores,
/// warp 1 copies it out; 3 stages.
Kernel thread_ring{"thread_ring_run", [](Tensor<i32> in, Tensor<i32> out, Int tiles) {
  constexpr int stages = 3;
  Tensor<int32_t> ring = make_smem_tensor<int32_t>(make_layout({32, stages}));
  PipelineAsync pipe(make_smem_tensor<uint64_t>(make_layout(PipelineAsync::barrier_bytes(stages) / 8)).data(), stages, 32, 1);
  Int t = thread_idx().x, lane = t % 32;
  if_(t == 0, [&] {
    pipe.init();
    fence_mbarrier_init();
  });
  sync_threads();
  if_(t < 32, [&] {
    for_(0, tiles, [&](Int k) {
      PipelineState s = PipelineState::at(k, stages);
      pipe.producer_acquire(s);
      ring(lane, s.index) = Int(in(k * 32 + lane));
      pipe.producer_commit(s);
    });
  }).else_([&] {
    for_(0, tiles, [&](Int k) {
      PipelineState s = PipelineState::at(k, stages);
      pipe.consumer_wait(s);
      out(k * 32 + lane) = Int(ring(lane, s.index));
      sync_warp();
      if_(lane == 0, [&] { pipe.consumer_release(s); });
    });
  });
}};

/// PipelineTmaStore: warp 0 fills each 8 x 32 tile of a two-buffer ring from `in` and one thread
/// TMA-stores it; a buffer is refilled only once the store that read it has read it.
Kernel tma_store_ring{"tma_store_ring_run", [](Tensor<f32> in, TmaDescriptor<f32> out, Int tiles) {
  Tensor<float> buffers = make_tensor(dynamic_shared_aligned<f32>(128), make_layout({256, 2}));
  PipelineTmaStore stores(2);
  Int lane = thread_idx().x;
  for_(0, tiles, [&](Int k) {
    Int b = k % 2;
    if_(lane == 0, [&] { stores.producer_acquire(); });
    sync_warp();
    for (int i = 0; i < 8; ++i) buffers(i * 32 + lane, b) = F32(in(k * 256 + i * 32 + lane));
    fence_proxy_async_shared();
    sync_warp();
    if_(lane == 0, [&] {
      out.store(buffers(_, b).data(), {k * 8, 0});
      stores.producer_commit();
    });
  });
  if_(lane == 0, [&] { stores.tail(); });
}};
}  // namespace

TEST_CASE("the TMA, thread, TMA-store and cp.async pipelines carry many tiles through their stages on sm_100", "[gpu][sm100]") {
  Device dev;
  SKIP_UNLESS_SM100(dev)
  std::mt19937 rng(61);
  std::uniform_real_distribution<float> dist(-1000.0f, 1000.0f);
  SECTION("PipelineTmaAsync: 24 tiles through 2 stages") {
    const int tiles = 24, rows = 8 * tiles, cols = 32;
    std::vector<float> host(size_t(rows * cols));
    for (float& v : host) v = dist(rng);
    auto in = dev.upload(host);
    auto out = dev.upload(std::vector<float>(host.size(), std::nanf("")));
    auto map = make_tensor_map(in.view({rows, cols}), {8, 32}, TmaSwizzle::none);
    const uint32_t shared = test::streaming_stages * test::streaming_tile_bytes + PipelineTmaAsync::barrier_bytes(test::streaming_stages) +
                            dynamic_shared_slack(128);
    auto streaming = test::streaming_kernel(false, false);
    streaming(dev, Launch{.grid = 1, .block = 64, .shared_bytes = shared}, map, out, tiles);
    dev.synchronize();
    CHECK(out.to_host() == host);
  }
  SECTION("PipelineAsync: 20 tiles through 3 stages") {
    const int tiles = 20;
    std::vector<int32_t> host(size_t(tiles * 32));
    for (int32_t& v : host) v = int32_t(rng());
    auto in = dev.upload(host);
    auto out = dev.upload(std::vector<int32_t>(host.size(), -1));
    thread_ring(dev, Launch{.grid = 1, .block = 64}, in, out, tiles);
    dev.synchronize();
    CHECK(out.to_host() == host);
  }
  SECTION("PipelineTmaStore: 12 tiles out of 2 buffers") {
    const int tiles = 12, rows = 8 * tiles, cols = 32;
    std::vector<float> host(size_t(rows * cols));
    for (float& v : host) v = dist(rng);
    auto in = dev.upload(host);
    auto out = dev.upload(std::vector<float>(host.size(), std::nanf("")));
    auto map = make_tensor_map(out.view({rows, cols}), {8, 32}, TmaSwizzle::none);
    tma_store_ring(dev, Launch{.grid = 1, .block = 32, .shared_bytes = 2 * 256 * 4 + dynamic_shared_slack(128)}, in, map, tiles);
    dev.synchronize();
    CHECK(out.to_host() == host);
  }
  SECTION("PipelineCpAsync: 20 tiles through 3 stages, the last one zero-filled past the end") {
    const int tiles = 20, rows = 8 * tiles - 5, cols = 32;
    std::vector<float> host(size_t(rows * cols));
    for (float& v : host) v = dist(rng);
    auto in = dev.upload(host);
    auto out = dev.upload(std::vector<float>(size_t(tiles * 8 * cols), std::nanf("")));
    test::cp_async_streaming(dev, Launch{.grid = 1, .block = 64}, in.view({rows, cols}), out, tiles);
    dev.synchronize();
    std::vector<float> expected = host;
    expected.resize(size_t(tiles * 8 * cols), 0.0f);
    CHECK(out.to_host() == expected);
  }
}
