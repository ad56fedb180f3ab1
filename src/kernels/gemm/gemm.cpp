// kernels::gemm: the checks every architecture's kernel shares, and the choice among them.
#include "cutejit/kernels/gemm.hpp"

#include <cmath>
#include <cstddef>
#include <tuple>
#include <type_traits>

#include "kernels/checks.hpp"
#include "kernels/gemm/gemm_problem.hpp"

namespace cutejit::kernels {

namespace detail {

AnyTensor checked_bias(const char* op, DType out, int64_t n, uint64_t c_ptr, const GemmOptions& options, const std::source_location& where) {
  if (out == DType::f8e4m3)
    require(options.beta == 0.0f && !options.bias, op,
            "an FP8 c takes no beta and no bias (its 3 mantissa bits would round a residual or bias added to it); write "
            "a bf16 c for those",
            where);
  require(int(options.activation) >= 0 && int(options.activation) <= int(Activation::gelu_tanh), op,
          "the activation " + std::to_string(int(options.activation)) + " is none of none, relu, silu, gelu_tanh", where);
  if (!options.bias) return AnyTensor::make(c_ptr, std::array<int64_t, 1>{n}, std::array<int64_t, 1>{1}, where);
  const GemmBias& bias = *options.bias;
  require(bias.element == out, op, "the bias holds " + std::string(name(bias.element)) + "; it takes C's type, " + std::string(name(out)),
          where);
  require(bias.rank == 1 && bias.shape[0] == n && bias.stride[0] == 1, op,
          "the bias is " + shape_of(bias) + "; it takes (" + std::to_string(n) + ") contiguous, one value per column of c", where);
  return AnyTensor::make(bias.ptr, std::span(bias.shape.data(), 1), std::span(bias.stride.data(), 1), where);
}

namespace {

/// The unit-stride mode of an operand (rows, K): K when its rows are contiguous, else its rows'
/// mode; either way the other stride must keep rows 16 bytes apart.
template <class T>
Major major_of(const DeviceTensor<T>& x, const char* name, const char* rows, const std::string& op, const std::source_location& where) {
  const bool k_unit = x.stride[1] == 1 || x.shape[1] == 1, rows_unit = x.stride[0] == 1 || x.shape[0] == 1;
  require(k_unit || rows_unit, op,
          std::string(name) + " " + shape_of(x) + " has strides (" + std::to_string(x.stride[0]) + ", " + std::to_string(x.stride[1]) +
              "); one of them must be 1 (K-major: stride 1 along K; " + rows + "-major: stride 1 along " + rows + ")",
          where);
  const Major major = k_unit ? Major::k : Major::mn;
  const int mode = major == Major::k ? 1 : 0;  // the contiguous mode
  const int64_t extent = x.shape[size_t(mode)], lead = x.stride[size_t(1 - mode)], granule = 16 / int64_t(sizeof(T));
  require(extent % granule == 0 && (x.shape[size_t(1 - mode)] == 1 || lead % granule == 0), op,
          std::string(name) + " " + shape_of(x) + " is " + (major == Major::k ? "K" : rows) + "-major, so its " +
              (major == Major::k ? "K" : rows) + " (" + std::to_string(extent) + ") and its other stride (" + std::to_string(lead) +
              ") must be multiples of " + std::to_string(granule) + ": the kernels move rows of whole 16 bytes",
          where);
  return major;
}

/// The checks every kernel shares, and the call as the kernels take it; `op` names the
/// operator in errors.
template <class TA, class TC>
GemmProblem make_problem(const char* op, const DeviceTensor<TA>& a, const DeviceTensor<TA>& b, const DeviceTensor<TC>& c,
                         const GemmOptions& options, const std::source_location& where) {
  for (auto [rank, name] : {std::pair{a.rank, "a"}, {b.rank, "b"}, {c.rank, "c"}})
    require(rank == 2, op, std::string(name) + " is a tensor of rank " + std::to_string(rank) + "; gemm takes a (M, K), b (N, K), c (M, N)",
            where);
  // With glu, B's rows are two halves [W; V] and C has one column for each row of W.
  const bool glu = options.glu.has_value();
  require(!glu || b.shape[0] % 2 == 0, op,
          "glu takes b " + shape_of(b) + " as two halves [W; V] of N / 2 rows each, so its N must be even", where);
  GemmProblem p{.m = a.shape[0], .n = glu ? b.shape[0] / 2 : b.shape[0], .k = a.shape[1], .ab = dtype_of<TA>::value,
                .out = dtype_of<TC>::value, .a = typed<std::byte>(a), .b = typed<std::byte>(b), .c = typed<std::byte>(c)};
  require(b.shape[1] == p.k, op, "a is " + shape_of(a) + " and b is " + shape_of(b) + ": they must agree on K, their second mode (b is (N, K))",
          where);
  require(c.shape[0] == p.m && c.shape[1] == p.n, op,
          "c is " + shape_of(c) + "; for a " + shape_of(a) + " and b " + shape_of(b) + " it must be (" + std::to_string(p.m) + ", " +
              std::to_string(p.n) + ")" + (glu ? ", half of b's rows with glu" : ""),
          where);
  require(p.k >= 1, op, "K is 0; gemm takes K from 1", where);
  constexpr int64_t limit = (int64_t(1) << 31) - 256;  // the kernels' tile coordinates are 32-bit
  require(p.m < limit && b.shape[0] < limit && p.k < limit, op, "M, N and K must be below 2^31 - 256, not " + shape_of(c) + " x " + std::to_string(p.k),
          where);
  p.a_major = major_of(a, "a", "M", op, where);
  p.b_major = major_of(b, "b", "N", op, where);
  if constexpr (std::is_same_v<TA, f8e4m3>)
    require(p.a_major == Major::k && p.b_major == Major::k, op,
            std::string("FP8 operands are read along K only (a row-major a (M, K) and b (N, K)), not a ") + shape_of(a) + " " +
                (p.a_major == Major::k ? "K" : "M") + "-major and b " + shape_of(b) + " " + (p.b_major == Major::k ? "K" : "N") + "-major",
            where);
  const int64_t c_granule = 16 / int64_t(sizeof(TC));
  require(c.stride[1] == 1 && c.shape[1] % c_granule == 0 && (p.m == 1 || c.stride[0] % c_granule == 0), op,
          "c " + shape_of(c) + " must be row-major (stride 1 along N) with N and its row stride multiples of " + std::to_string(c_granule) +
              ", not strides (" + std::to_string(c.stride[0]) + ", " + std::to_string(c.stride[1]) + ")",
          where);
  for (auto [ptr, name] : {std::pair{a.ptr, "a"}, {b.ptr, "b"}, {c.ptr, "c"}})
    require(ptr % 16 == 0, op, std::string(name) + " must start on 16 bytes", where);
  p.bias = checked_bias(op, p.out, p.n, c.ptr, options, where);
  if (options.scales) {
    require(!glu, op, "scales and glu do not combine: glu multiplies two products, which a scale of B's rows cannot tell apart", where);
    for (auto [t, which, count, rows] : {std::tuple{&options.scales->a, "a", p.m, "M, one per row of a"},
                                         std::tuple{&options.scales->b, "b", p.n, "N, one per row of b"}})
      require(t->rank == 1 && (t->shape[0] == 1 || t->shape[0] == count) && (t->shape[0] == 1 || t->stride[0] == 1) && t->ptr % 4 == 0, op,
              std::string("scales.") + which + " is " + shape_of(*t) + "; it takes (1), one value for the tensor, or (" +
                  std::to_string(count) + ") contiguous values (" + rows + ")",
              where);
    p.scale_a = options.scales->a;
    p.scale_b = options.scales->b;
  } else {
    p.scale_a = p.scale_b = DeviceTensor<f32>::make(c.ptr, std::array<int64_t, 1>{1}, std::array<int64_t, 1>{1}, where);
  }
  require(std::is_same_v<TA, bf16> || (!options.rmsnorm_a && !glu), op,
          "rmsnorm_a and glu are fused for bf16 operands only, not " + std::string(name(dtype_of<TA>::value)) +
              ": run kernels::rmsnorm or kernels::silu_mul beside a plain gemm",
          where);
  if (options.rmsnorm_a) {
    const DeviceTensor<bf16>& w = options.rmsnorm_a->weight;
    require(w.rank == 1 && w.shape[0] == p.k && w.stride[0] == 1 && w.ptr % 16 == 0, op,
            "rmsnorm_a's weight is " + shape_of(w) + "; it takes (" + std::to_string(p.k) +
                ") contiguous, one value per column of a, starting on 16 bytes",
            where);
    require(options.rmsnorm_a->eps >= 0.0f && std::isfinite(options.rmsnorm_a->eps), op,
            "rmsnorm_a's eps is " + std::to_string(options.rmsnorm_a->eps) + "; it takes a finite value from 0", where);
    p.norm_weight = w;
    p.eps = options.rmsnorm_a->eps;
  } else {
    p.norm_weight = DeviceTensor<bf16>::make(a.ptr, std::array<int64_t, 1>{p.k}, std::array<int64_t, 1>{1}, where);
  }
  if (glu)
    require(int(*options.glu) >= 0 && int(*options.glu) <= int(Activation::gelu_tanh), op,
            "glu's activation " + std::to_string(int(*options.glu)) + " is none of none, relu, silu, gelu_tanh", where);
  p.alpha = options.alpha;
  p.beta = options.beta;
  p.epilogue = epilogue_code(options);
  p.fusion = fusion_code(options);
  p.tune = options.tune;
  p.hook = options.hook;
  p.stream = options.stream;
  p.programmatic_dependent_launch = options.programmatic_dependent_launch;
  p.where = where;
  return p;
}

}  // namespace

}  // namespace detail

namespace {

enum class Family { small_m, sm90, sm100, sm80 };

/// The kernel for the target and problem: for up to gemm_few_rows_max_m rows of K-major
/// operands the bandwidth-bound few-row kernels on every target from sm_80 (small_m.cpp says
/// which); else wgmma on sm_90a, tcgen05 on the sm_100 family (K-major operands), mma.sync on
/// the rest from sm_80.
Family family_for(const Target& t, const detail::GemmProblem& p, const char* op) {
  detail::require(t.sm >= 80, op, "no kernel for " + t.name() + "; gemm runs on sm_80 and newer", p.where);
  detail::require(p.ab != DType::f8e4m3 || t.sm >= 89, op,
                  "no FP8 kernel for " + t.name() + ": the tensor cores multiply f8e4m3 from sm_89 on; bf16 and f16 run here", p.where);
  if (detail::gemm_small_m_fits(p)) return Family::small_m;
  const bool sm90 = t.sm == 90 && t.arch_specific();
  const bool k_major = p.a_major == Major::k && p.b_major == Major::k;
  detail::require(!(p.fusion & detail::fusion_norm), op,
                  "rmsnorm_a is fused only for M up to " + std::to_string(gemm_fusion_max_m) +
                      " with a and b K-major and K a multiple of 8 (the few-row kernel), not a " + detail::shape_of(p.a) +
                      (p.a_major == Major::k ? "" : " M-major") + " a and " + (p.b_major == Major::k ? "" : "N-major ") + "b " +
                      detail::shape_of(p.b) + ": run kernels::rmsnorm before a plain gemm",
                  p.where);
  detail::require(!(p.fusion & detail::fusion_glu) || (sm90 && k_major), op,
                  "glu is fused for M up to " + std::to_string(gemm_few_rows_max_m) +
                      " (the few-row kernels; past " + std::to_string(gemm_fusion_max_m) +
                      " rows K a multiple of 32), and for any M on sm_90a, with a and b K-major; not for a " + detail::shape_of(p.a) +
                      (p.a_major == Major::k ? "" : " M-major") + " a and " + (p.b_major == Major::k ? "" : "N-major ") + "b " +
                      detail::shape_of(p.b) + " on " + t.name() + ": run kernels::silu_mul after a plain gemm",
                  p.where);
  if (sm90) return Family::sm90;
  if ((t.sm == 100 || t.sm == 103) && t.variant != Target::Variant::portable && p.a_major == Major::k && p.b_major == Major::k) return Family::sm100;
  return Family::sm80;
}

PreparedLaunch prepare(const Device& device, const detail::GemmProblem& p, const char* op) {
  detail::HookScope hook(p.hook.get());
  switch (family_for(device.target(), p, op)) {
    case Family::small_m: return detail::gemm_small_m_prepare(device, p);
    case Family::sm90: return detail::gemm_sm90_prepare(device, p);
    case Family::sm100: return detail::gemm_sm100_prepare(device, p);
    case Family::sm80: break;
  }
  return detail::gemm_sm80_prepare(device, p);
}

template <class TA, class TC>
void run(const Device& device, const DeviceTensor<TA>& a, const DeviceTensor<TA>& b, const DeviceTensor<TC>& c, const GemmOptions& options,
         const std::source_location& where) {
  detail::GemmProblem p = detail::make_problem("gemm", a, b, c, options, where);
  if (p.m == 0 || p.n == 0) return;
  prepare(device, p, "gemm")();
}

template <class TA, class TC>
PreparedLaunch prepare_for(const Device& device, const DeviceTensor<TA>& a, const DeviceTensor<TA>& b, const DeviceTensor<TC>& c,
                           const GemmOptions& options, const std::source_location& where) {
  detail::GemmProblem p = detail::make_problem("gemm_prepare", a, b, c, options, where);
  detail::require(p.m > 0 && p.n > 0, "gemm_prepare", "c " + detail::shape_of(c) + " is empty: there is nothing to launch", where);
  return prepare(device, p, "gemm_prepare");
}

template <class TA, class TC>
std::vector<CompiledKernel> compile_for(const Target& target, const DeviceTensor<TA>& a, const DeviceTensor<TA>& b, const DeviceTensor<TC>& c,
                                        const GemmOptions& options, const std::source_location& where) {
  detail::GemmProblem p = detail::make_problem("gemm_compile", a, b, c, options, where);
  detail::require(p.m > 0 && p.n > 0, "gemm_compile", "c " + detail::shape_of(c) + " is empty: gemm launches nothing for it", where);
  detail::HookScope hook(p.hook.get());
  switch (family_for(target, p, "gemm_compile")) {
    case Family::small_m: return detail::gemm_small_m_compile(target, p);
    case Family::sm90: return detail::gemm_sm90_compile(target, p);
    case Family::sm100: return detail::gemm_sm100_compile(target, p);
    case Family::sm80: break;
  }
  return detail::gemm_sm80_compile(target, p);
}

}  // namespace

bool gemm_fuses_glu(const Target& target, int64_t m) { return m <= gemm_few_rows_max_m || (target.sm == 90 && target.arch_specific()); }

// The overloads of gemm.hpp, one per element types.
#define CUTEJIT_GEMM_OVERLOADS(TA, TC)                                                                                                   \
  void gemm(const Device& device, const DeviceTensor<TA>& a, const DeviceTensor<TA>& b, const DeviceTensor<TC>& c,                       \
            const GemmOptions& options, std::source_location where) {                                                               \
    run(device, a, b, c, options, where);                                                                                                \
  }                                                                                                                                      \
  PreparedLaunch gemm_prepare(const Device& device, const DeviceTensor<TA>& a, const DeviceTensor<TA>& b, const DeviceTensor<TC>& c,     \
                              const GemmOptions& options, std::source_location where) {                                             \
    return prepare_for(device, a, b, c, options, where);                                                                                 \
  }                                                                                                                                      \
  std::vector<CompiledKernel> gemm_compile(const Target& target, const DeviceTensor<TA>& a, const DeviceTensor<TA>& b,                  \
                                           const DeviceTensor<TC>& c, const GemmOptions& options, std::source_location where) {    \
    return compile_for(target, a, b, c, options, where);                                                                                 \
  }
CUTEJIT_GEMM_OVERLOADS(bf16, bf16)
CUTEJIT_GEMM_OVERLOADS(f16, f16)
CUTEJIT_GEMM_OVERLOADS(f8e4m3, bf16)
CUTEJIT_GEMM_OVERLOADS(f8e4m3, f8e4m3)
#undef CUTEJIT_GEMM_OVERLOADS

}  // namespace cutejit::kernels
