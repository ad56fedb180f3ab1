// cutejit_differential: the same kernels, on the same inputs, on the GPU and on the emulated
// device of the GPU's target, in one process; prints how far their outputs agree, as the
// Markdown table of docs/emulator.md. Needs a GPU.
//
// Each case says what the PTX ISA promises. "bit for bit" cases (integer work, data movement,
// conversions, IEEE-rounded float arithmetic in a fixed order) must agree in every bit, and the
// program exits non-zero when one does not. Tensor-core products, whose accumulation order and
// internal precision the ISA leaves open, and the approximate functions, which the emulator
// computes accurately, report their largest difference; it must stay within each case's bound.
//
//   cutejit_differential [substring of a case name]
#include <cutejit/cutejit.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "fmha_sm80.hpp"
#include "fmha_sm90.hpp"
#include "gemm_bf16.hpp"
#include "gemm_fp8.hpp"
#include "gemm_sm80.hpp"
#include "gemm_tma_tensorop.hpp"
#include "sgemm.hpp"
#include "softmax.hpp"

using namespace cutejit;

namespace {

/// One output of a case, as floats (an integer output is stored in their bits, compared as bits).
struct Output {
  std::vector<float> values;
  bool integer = false;
  /// Values of a narrower float type (bf16: 16 bits) count their difference in that type's units.
  int mantissa_bits = 23;
};

/// A case: runs its kernels on a device, fresh inputs from a fixed seed each time, outputs poisoned.
struct Case {
  std::string name;
  bool bit_exact;
  /// For the others: the bound on the largest |gpu - emulator| / max |gpu| over the case's outputs.
  double bound;
  std::string why;
  std::function<std::vector<Output>(const Device&)> run;
};

std::vector<float> random_floats(size_t n, unsigned seed, float lo = -1, float hi = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

/// Floats of every scale, with the special values among them.
std::vector<float> floats_of_all_scales(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> mantissa(-2.0f, 2.0f);
  std::uniform_int_distribution<int> exponent(-140, 127);
  std::vector<float> v = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-45f, -1e-45f, 65504.0f, 65520.0f, 448.0f, 464.0f, 57344.0f,
                          3.3895314e38f, 2147483648.0f, -2147483904.0f, 0.5f, 1.5f, 2.5f, -0.5f, -2.5f};
  while (v.size() < n) v.push_back(std::ldexp(mantissa(rng), exponent(rng)));
  return v;
}

template <class T>
std::vector<float> as_floats(const Buffer<T>& b) {
  std::vector<float> out;
  for (T x : b.to_host()) out.push_back(float(x));
  return out;
}

template <class T>
Output bits_of(const Buffer<T>& b) {
  static_assert(sizeof(T) <= 4);
  std::vector<T> host = b.to_host();
  Output o{.integer = true};
  for (T x : host) {
    uint32_t bits = 0;
    std::memcpy(&bits, &x, sizeof(T));
    float f;
    std::memcpy(&f, &bits, 4);
    o.values.push_back(f);
  }
  return o;
}

Launch one_thread_each(int64_t n) { return Launch{.grid = uint32_t((n + 255) / 256), .block = 256}; }

// ---- kernels of the scalar cases ------------------------------------------------------------

Kernel integer_mix{"differential_integers", [](Tensor<i32> a, Tensor<i32> b, Tensor<i32> s, Tensor<i32> out) {
  Int i = block_idx().x * block_dim().x + thread_idx().x;
  if_(i < size(a), [&] {
    Int x = a(i), y = b(i), n = s(i);
    UInt ux = cast<uint32_t>(x), uy = cast<uint32_t>(y), un = cast<uint32_t>(n);
    Int64 wide = cast<int64_t>(x) * cast<int64_t>(y);
    Int m = size(a);  // the outputs are planes of size(a)
    out(i + 0 * m) = x + y;
    out(i + 1 * m) = x * y;
    out(i + 2 * m) = cast<int32_t>(wide >> 32);
    out(i + 3 * m) = x / y;  // y is 0 in some lanes, INT_MIN / -1 in one: the documented results
    out(i + 4 * m) = x % y;
    out(i + 5 * m) = cast<int32_t>(ux / uy);
    out(i + 6 * m) = cast<int32_t>(ux % uy);
    out(i + 7 * m) = x << n;  // n covers -3 .. 40: outside 0 .. 31 the documented clamp
    out(i + 8 * m) = x >> n;
    out(i + 9 * m) = cast<int32_t>(ux >> un);
    out(i + 10 * m) = min(x, y) ^ (max(x, y) & (x | ~y));
  });
}};

Kernel conversions{"differential_conversions", [](Tensor<f32> x, Tensor<bf16> to_bf16, Tensor<f16> to_f16, Tensor<f8e4m3> to_e4m3,
                                                  Tensor<f8e5m2> to_e5m2, Tensor<i32> to_int, Tensor<f32> from_int, Tensor<f32> back) {
  Int i = block_idx().x * block_dim().x + thread_idx().x;
  if_(i < size(x), [&] {
    F32 v = x(i);
    BF16 h = cast<bf16>(v);
    to_bf16(i) = h;
    to_f16(i) = cast<f16>(v);
    to_e4m3(i) = cast<f8e4m3>(v);
    to_e5m2(i) = cast<f8e5m2>(v);
    Int n = cast<int32_t>(v);
    to_int(i) = n;
    from_int(i) = cast<float>(n * 7 + 3);
    back(i) = cast<float>(h) + cast<float>(Value<f8e4m3>(to_e4m3(i)));
  });
}};

Kernel float_arithmetic{"differential_float_arithmetic", [](Tensor<f32> x, Tensor<f32> y, Tensor<f32> out) {
  Int i = block_idx().x * block_dim().x + thread_idx().x;
  Int n = size(x);
  if_(i < n, [&] {
    F32 a = x(i), b = y(i);
    out(i) = a + b;
    out(i + n) = a * b;
    out(i + 2 * n) = a / b;
    out(i + 3 * n) = fma(a, b, F32(-1.25f));
    out(i + 4 * n) = sqrt(abs(a));
    out(i + 5 * n) = min(a, b) - max(a, b);
  });
}};

Kernel accurate_math{"differential_accurate_math", [](Tensor<f32> x, Tensor<f32> out) {
  Int i = block_idx().x * block_dim().x + thread_idx().x;
  Int n = size(x);
  if_(i < n, [&] {
    F32 v = x(i);
    out(i) = exp(v);
    out(i + n) = log(abs(v) + 1e-3f);
    out(i + 2 * n) = sin(v);
    out(i + 3 * n) = cos(v);
    out(i + 4 * n) = tanh(v);
    out(i + 5 * n) = rsqrt(abs(v) + 1e-3f);
  });
}};

/// One kernel per approximate function, so that each one's difference is reported alone.
template <int Which>
Kernel approximate{"differential_approx_" + std::to_string(Which), [](Tensor<f32> x, Tensor<f32> out) {
  Int i = block_idx().x * block_dim().x + thread_idx().x;
  if_(i < size(x), [&] {
    F32 v = x(i);
    if constexpr (Which == 0) out(i) = fast::exp2(v);
    if constexpr (Which == 1) out(i) = fast::log2(abs(v) + 1e-3f);
    if constexpr (Which == 2) out(i) = fast::sin(v);
    if constexpr (Which == 3) out(i) = fast::cos(v);
    if constexpr (Which == 4) out(i) = fast::tanh(v);
    if constexpr (Which == 5) out(i) = fast::rsqrt(abs(v) + 1e-3f);
    if constexpr (Which == 6) out(i) = fast::reciprocal(v);
    if constexpr (Which == 7) out(i) = fast::sqrt(abs(v));
  });
}};
const char* approximate_names[] = {"ex2.approx", "lg2.approx", "sin.approx", "cos.approx", "tanh.approx", "rsqrt.approx", "rcp.approx", "sqrt.approx"};

Kernel warp_reductions{"differential_warp_reduce", [](Tensor<f32> x, Tensor<f32> sums, Tensor<f32> maxima, Tensor<i32> block_sums) {
  Int i = block_idx().x * block_dim().x + thread_idx().x;
  F32 v = x(i);
  sums(i) = warp_reduce(v, Reduce::sum, 32);
  maxima(i) = warp_reduce(v, Reduce::max, 8);
  Int b = block_reduce(cast<int32_t>(v * 1000.0f), 256, Reduce::sum);
  if_(thread_idx().x == 0, [&] { block_sums(block_idx().x) = b; });
}};

template <int Which>
std::vector<Output> run_approximate(const Device& d) {
  const int64_t n = 1 << 16;
  // Each function over the range it is used on: exp2 of softmax's scaled logits, the others on [-8, 8].
  auto hx = Which == 0 ? random_floats(n, 70, -40, 2) : random_floats(n, 70 + Which, -8, 8);
  auto x = d.upload(hx);
  auto out = d.upload(std::vector<float>(n, NAN));
  approximate<Which>(d, one_thread_each(n), x, out);
  d.synchronize();
  return {{out.to_host()}};
}

template <class Op, Element Out>
std::vector<Output> run_tma_tensorop(const Device& d) {
  const int64_t m = 300, n = 200, k = 520;
  auto a = d.upload(fixtures::gemm::random_operand<bf16>(size_t(m * k), 5));
  auto b = d.upload(fixtures::gemm::random_operand<bf16>(size_t(n * k), 6));
  auto c = d.upload(fixtures::gemm::poisoned<Out>(m, n));
  fixtures::gemm_tma_tensorop_prepare<Op, Out>(d, a, b, c, m, n, k)();
  d.synchronize();
  return {{as_floats(c), false, 7}};
}

std::vector<Case> cases() {
  using namespace fixtures;
  std::vector<Case> list;
  list.push_back({"integer arithmetic, division and shifts (i32, u32; zero divisors, INT_MIN / -1, shift counts -3..40)", true, 0,
                  "fixed by the ISA and docs/dsl.md", [](const Device& d) {
                    const int64_t n = 1 << 14;
                    std::mt19937 rng(1);
                    std::vector<int32_t> ha(n), hb(n), hs(n);
                    for (int64_t i = 0; i < n; ++i) {
                      ha[i] = int32_t(rng());
                      hb[i] = i % 97 == 0 ? 0 : i % 5 == 0 ? int32_t(rng() % 17) - 8 : int32_t(rng());
                      hs[i] = int32_t(rng() % 44) - 3;
                    }
                    ha[1] = INT32_MIN;
                    hb[1] = -1;
                    auto a = d.upload(ha), b = d.upload(hb), s = d.upload(hs);
                    auto out = d.upload(std::vector<int32_t>(size_t(11 * n), 0x7eadbeef));
                    integer_mix(d, one_thread_each(n), a, b, s, out);
                    d.synchronize();
                    return std::vector<Output>{bits_of(out)};
                  }});
  list.push_back({"conversions f32 -> bf16, f16, e4m3, e5m2, i32 and back, on floats of every scale and the special values", true, 0,
                  "cvt's rounding and saturation are fixed by the ISA", [](const Device& d) {
                    const int64_t n = 1 << 14;
                    auto x = d.upload(floats_of_all_scales(n, 2));
                    auto b16 = d.alloc<bf16>(n);
                    auto h16 = d.alloc<f16>(n);
                    auto e4 = d.alloc<f8e4m3>(n);
                    auto e5 = d.alloc<f8e5m2>(n);
                    auto ints = d.alloc<int32_t>(n);
                    auto from = d.upload(std::vector<float>(n, NAN)), back = d.upload(std::vector<float>(n, NAN));
                    conversions(d, one_thread_each(n), x, b16, h16, e4, e5, ints, from, back);
                    d.synchronize();
                    return std::vector<Output>{bits_of(b16), bits_of(h16), bits_of(e4), bits_of(e5), bits_of(ints), bits_of(from), bits_of(back)};
                  }});
  list.push_back({"f32 add, mul, div, fma, sqrt, min/max (IEEE round to nearest)", true, 0, "IEEE-rounded, one instruction each",
                  [](const Device& d) {
                    const int64_t n = 1 << 14;
                    auto x = d.upload(floats_of_all_scales(n, 3)), y = d.upload(floats_of_all_scales(n, 4));
                    auto out = d.upload(std::vector<float>(size_t(6 * n), NAN));
                    float_arithmetic(d, one_thread_each(n), x, y, out);
                    d.synchronize();
                    return std::vector<Output>{bits_of(out)};
                  }});
  list.push_back({"accurate math: exp, log, sin, cos, tanh, rsqrt (libdevice)", false, 4e-7,
                  "libdevice's code is the same on both; where it uses an approximate instruction (ex2.approx in exp) the "
                  "emulator's is exact", [](const Device& d) {
                    const int64_t n = 1 << 14;
                    auto x = d.upload(random_floats(n, 5, -10, 10));
                    auto out = d.upload(std::vector<float>(size_t(6 * n), NAN));
                    accurate_math(d, one_thread_each(n), x, out);
                    d.synchronize();
                    return std::vector<Output>{{out.to_host()}};
                  }});
  auto approx = [&](int which, double bound, std::function<std::vector<Output>(const Device&)> run) {
    list.push_back({std::string("fast math: ") + approximate_names[which], false, bound,
                    "the hardware's approximation against the emulator's exact value", std::move(run)});
  };
  approx(0, 1e-6, run_approximate<0>);
  approx(1, 1e-6, run_approximate<1>);
  approx(2, 1e-5, run_approximate<2>);
  approx(3, 1e-5, run_approximate<3>);
  approx(4, 1e-3, run_approximate<4>);
  approx(5, 1e-6, run_approximate<5>);
  approx(6, 1e-6, run_approximate<6>);
  approx(7, 1e-6, run_approximate<7>);
  list.push_back({"warp_reduce (shfl.sync, sum and max) and block_reduce (i32 sum through shared memory)", true, 0,
                  "the shuffle tree fixes the order of the additions", [](const Device& d) {
                    const int64_t n = 1 << 14;
                    auto x = d.upload(random_floats(n, 6));
                    auto sums = d.upload(std::vector<float>(n, NAN)), maxima = d.upload(std::vector<float>(n, NAN));
                    auto blocks = d.upload(std::vector<int32_t>(n / 256, -1));
                    warp_reductions(d, one_thread_each(n), x, sums, maxima, blocks);
                    d.synchronize();
                    return std::vector<Output>{bits_of(sums), bits_of(maxima), bits_of(blocks)};
                  }});
  list.push_back({"SGEMM 129 x 200 x 260 (f32 fma, one thread an element)", true, 0, "fma is IEEE-rounded and the loop fixes its order",
                  [](const Device& d) {
                    const int64_t m = 129, n = 200, k = 260;
                    auto a = d.upload(random_floats(m * k, 8)), b = d.upload(random_floats(k * n, 9));
                    auto c = d.upload(std::vector<float>(m * n, NAN));
                    sgemm(d, Launch{.grid = {uint32_t(ceil_div(n, 16)), uint32_t(ceil_div(m, 16))}, .block = {16, 16}}, a.view({m, k}),
                          b.view({k, n}), c.view({m, n}));
                    d.synchronize();
                    return std::vector<Output>{bits_of(c)};
                  }});
  list.push_back({"row softmax 67 x 1000 (the example: exp through ex2.approx)", false, 1e-6,
                  "ex2.approx's error on the GPU; the reductions' order is fixed", [](const Device& d) {
                    const int64_t rows = 67, cols = 1000;
                    auto x = d.upload(random_floats(rows * cols, 10, -5, 5));
                    auto y = d.upload(std::vector<float>(rows * cols, NAN));
                    softmax(d, Launch{.grid = uint32_t(ceil_div(rows, 8)), .block = 256}, x.view({rows, cols}), y.view({rows, cols}));
                    d.synchronize();
                    return std::vector<Output>{{y.to_host()}};
                  }});
  list.push_back({"mma.sync BF16 GEMM, multistage cp.async (sm_80 kernel) 300 x 200 x 520, bf16 out", false, 8e-3,
                  "mma.sync's accumulation order and internal precision are the hardware's", [](const Device& d) {
                    const int64_t m = 300, n = 200, k = 520;
                    auto a = d.upload(gemm::random_operand<bf16>(size_t(m * k), 11));
                    auto b = d.upload(gemm::random_operand<bf16>(size_t(n * k), 12));
                    auto c = d.upload(gemm::poisoned<bf16>(m, n));
                    gemm_tensorop_bf16_prepare(d, a, b, c, m, n, k)();
                    d.synchronize();
                    return std::vector<Output>{{as_floats(c), false, 7}};
                  }});
  list.push_back({"mma.sync BF16 GEMM fed by TMA (the sm_120 family's kernel) 300 x 200 x 520", false, 8e-3,
                  "as above", run_tma_tensorop<SM80_16x8x16_F32BF16BF16F32_TN, bf16>});
  list.push_back({"wgmma BF16 GEMM 256 x 384 x 512 (tile 128 x 256), bf16 out", false, 8e-3,
                  "wgmma's accumulation order and internal precision are the hardware's", [](const Device& d) {
                    const int64_t m = 256, n = 384, k = 512;
                    auto a = d.upload(random_bf16(size_t(m * k), 13)), b = d.upload(random_bf16(size_t(n * k), 14));
                    auto c = d.upload(gemm::poisoned_output(m, n));
                    gemm_bf16_prepare_tile(d, 256, a, b, c, m, n, k)();
                    d.synchronize();
                    return std::vector<Output>{{as_floats(c), false, 7}};
                  }});
  list.push_back({"wgmma FP8 (e4m3) GEMM 256 x 384 x 512, bf16 out", false, 8e-3, "as above", [](const Device& d) {
                    const int64_t m = 256, n = 384, k = 512;
                    auto a = d.upload(random_e4m3(size_t(m * k), 15)), b = d.upload(random_e4m3(size_t(n * k), 16));
                    auto c = d.upload(gemm::poisoned_output(m, n));
                    gemm_fp8_prepare(d, a, b, c, 0.5f, 0.25f, m, n, k)();
                    d.synchronize();
                    return std::vector<Output>{{as_floats(c), false, 7}};
                  }});
  auto attention = [](auto prepare) {
    return [prepare](const Device& d) {
      auto in = fmha_inputs<bf16>({77, 200, 1, 150}, {77, 260, 33, 40}, 4, 2, 128, true, 31);
      const FmhaProblem& p = in.problem;
      auto q = d.upload(in.q), k = d.upload(in.k), v = d.upload(in.v);
      auto cu_q = d.upload(in.cu_seqlens_q), cu_k = d.upload(in.cu_seqlens_k);
      auto o = d.upload(std::vector<bf16>(size_t(p.total_q * p.heads * p.head_dim), bf16(NAN)));
      auto lse = d.upload(std::vector<float>(size_t(p.heads * p.total_q), NAN));
      prepare(d, p, q, k, v, o, lse, cu_q, cu_k)();
      d.synchronize();
      return std::vector<Output>{{as_floats(o), false, 7}, {lse.to_host()}};
    };
  };
  list.push_back({"FA2 attention forward (mma.sync), 4 ragged sequences, GQA 4:2, hd 128, causal", false, 8e-3,
                  "mma.sync's order, and ex2.approx in the softmax",
                  attention([](const Device& d, const FmhaProblem& p, auto&... b) { return fmha_forward_prepare(d, p, b...); })});
  list.push_back({"Hopper attention forward (wgmma, TMA, warp-specialized), the same problem", false, 8e-3,
                  "wgmma's order, and ex2.approx in the softmax",
                  attention([](const Device& d, const FmhaProblem& p, auto&... b) { return fmha_forward_sm90_prepare(d, p, b...); })});
  return list;
}

/// How far the two devices' outputs agree: identical elements, and the largest difference
/// relative to the GPU output's largest magnitude, and in units of the last place.
struct Agreement {
  size_t total = 0, identical = 0;
  double worst_relative = 0;
  double worst_ulps = 0;
  std::string first_difference;
};

double ulps(float a, float b, int mantissa_bits) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : INFINITY;
  if (a == b) return 0;
  int e;
  std::frexp(std::max(std::abs(a), std::abs(b)), &e);
  return std::abs(double(a) - double(b)) / std::ldexp(1.0, e - 1 - mantissa_bits);
}

Agreement compare(const std::vector<Output>& gpu, const std::vector<Output>& emu) {
  Agreement r;
  for (size_t o = 0; o < gpu.size(); ++o) {
    const Output &g = gpu[o], &e = emu[o];
    double scale = 0;
    if (!g.integer)
      for (float x : g.values)
        if (std::isfinite(x)) scale = std::max(scale, double(std::abs(x)));
    for (size_t i = 0; i < g.values.size(); ++i) {
      float a = g.values[i], b = e.values[i];
      ++r.total;
      bool same = std::memcmp(&a, &b, 4) == 0 || (!g.integer && std::isnan(a) && std::isnan(b));
      if (same) {
        ++r.identical;
        continue;
      }
      if (r.first_difference.empty()) {
        char text[160];
        uint32_t ga, eb;
        std::memcpy(&ga, &a, 4);
        std::memcpy(&eb, &b, 4);
        std::snprintf(text, sizeof text, "output %zu element %zu: GPU %.9g (0x%08x), emulator %.9g (0x%08x)", o, i, a, ga, b, eb);
        r.first_difference = text;
      }
      if (g.integer) {
        r.worst_relative = INFINITY;
        continue;
      }
      r.worst_relative = std::max(r.worst_relative, std::abs(double(a) - double(b)) / (scale > 0 ? scale : 1));
      if (std::isnan(a - b)) r.worst_relative = INFINITY;
      r.worst_ulps = std::max(r.worst_ulps, ulps(a, b, g.mantissa_bits));
    }
  }
  return r;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (Device::count() == 0 || std::getenv("CUTEJIT_DEVICE")) {
      std::fprintf(stderr, "cutejit_differential compares a GPU with its emulated device: it needs a GPU (and CUTEJIT_DEVICE unset)\n");
      return 2;
    }
    Device gpu;
    Device emulated = Device::emulated(gpu.target());
    std::string filter = argc > 1 ? argv[1] : "";
    std::printf("%s (%s) against emulator:%s\n\n", gpu.name().c_str(), gpu.target().name().c_str(), gpu.target().name().c_str());
    std::printf("| case | values | agreement | bound | GPU s | emulator s |\n|---|---|---|---|---|---|\n");
    int failures = 0;
    for (const Case& c : cases()) {
      if (c.name.find(filter) == std::string::npos) continue;
      std::string agreement;
      bool ok = false;
      double gpu_s = 0, emu_s = 0;
      try {
        gpu.synchronize();
        auto t0 = std::chrono::steady_clock::now();
        std::vector<Output> g = c.run(gpu);
        gpu_s = seconds_since(t0);
        auto t1 = std::chrono::steady_clock::now();
        std::vector<Output> e = c.run(emulated);
        emu_s = seconds_since(t1);
        Agreement a = compare(g, e);
        char text[256];
        if (a.identical == a.total) {
          std::snprintf(text, sizeof text, "bit for bit");
          ok = true;
        } else if (c.bit_exact) {
          std::snprintf(text, sizeof text, "**%zu differ** (%s)", a.total - a.identical, a.first_difference.c_str());
        } else {
          std::snprintf(text, sizeof text, "%.2f%% identical; max \\|Δ\\| %.2g of max \\|out\\| (%.3g ulp)", 100.0 * a.identical / a.total,
                        a.worst_relative, a.worst_ulps);
          ok = a.worst_relative <= c.bound;
          if (!ok) agreement = std::string("**over the bound** ") + a.first_difference + "; ";
        }
        agreement += text;
        if (!ok) ++failures;
        char bound[32];
        std::snprintf(bound, sizeof bound, c.bit_exact ? "exact" : "%.0e", c.bound);
        std::printf("| %s | %zu | %s | %s | %.3f | %.2f |\n", c.name.c_str(), a.total, agreement.c_str(), bound, gpu_s, emu_s);
      } catch (const std::exception& e) {
        ++failures;
        std::printf("| %s | | **error**: %s | | | |\n", c.name.c_str(), e.what());
      }
      std::fflush(stdout);
    }
    std::printf("\n%d case(s) outside their agreement\n", failures);
    return failures == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
