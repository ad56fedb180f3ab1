// kernels::attention_forward: the problem read from the tensors and checked once, then the
// FlashAttention-3-style kernel on sm_90a (attention/sm90.hpp) or the FlashAttention-2 one
// elsewhere from sm_80 (attention/sm80.hpp), launched, prepared or compiled alike.
#include "cutejit/kernels/attention.hpp"

#include <cmath>
#include <string>
#include <tuple>

#include "cutejit/kernels/attention/sm80.hpp"
#include "cutejit/kernels/attention/sm90.hpp"
#include "kernels/attention/operands.hpp"
#include "kernels/checks.hpp"
#include "kernels/element_names.hpp"

namespace cutejit::kernels {

namespace {

using detail::require;
using detail::shape_of;

template <class T>
struct Call {
  FmhaProblem problem;
  bool dense = false;
  const DeviceTensor<T>&q, &k, &v, &o;
  const DeviceTensor<f32>& lse;
  DeviceTensor<int32_t> cu_q, cu_k;  // packed only
  StreamHandle stream;
  std::source_location where;

  float scale_log2() const { return problem.scale() * float(M_LOG2E); }
};

template <class T>
Call<T> make_call(const char* op, const DeviceTensor<T>& q, const DeviceTensor<T>& k, const DeviceTensor<T>& v, const DeviceTensor<T>& o,
                  const DeviceTensor<f32>& lse, const AttentionOptions& options, const std::source_location& where) {
  Call<T> c{.q = q, .k = k, .v = v, .o = o, .lse = lse, .stream = options.stream, .where = where};
  c.dense = q.rank == 4;
  require(q.rank == 3 || q.rank == 4, op, "q is a tensor of rank " + std::to_string(q.rank) +
                                              "; it takes (tokens, heads, head_dim) packed, or (batch, seqlen, heads, head_dim) dense", where);
  for (auto [t, name] : {std::pair{&k, "k"}, {&v, "v"}, {&o, "o"}})
    require(t->rank == q.rank, op, std::string(name) + " is a tensor of rank " + std::to_string(t->rank) + "; q's rank is " + std::to_string(q.rank),
            where);
  require(o.shape == q.shape, op, "o is " + shape_of(o) + "; it must have q's shape " + shape_of(q), where);
  require(v.shape == k.shape, op, "v is " + shape_of(v) + "; it must have k's shape " + shape_of(k), where);
  for (auto [t, name] : {std::pair{&q, "q"}, {&k, "k"}, {&v, "v"}, {&o, "o"}}) detail::require_heads(*t, name, op, where);
  FmhaProblem& p = c.problem;
  if (c.dense) {
    require(!options.cu_seqlens_q && !options.cu_seqlens_k, op, "dense (batch, seqlen, heads, head_dim) tensors take no cu_seqlens", where);
    p = FmhaProblem::dense(q.shape[0], q.shape[2], k.shape[2], q.shape[3], q.shape[1], k.shape[1]);
    require(k.shape[0] == q.shape[0] && k.shape[3] == q.shape[3], op,
            "k is " + shape_of(k) + "; for q " + shape_of(q) + " it must be (" + std::to_string(q.shape[0]) + ", seqlen_k, kv_heads, " +
                std::to_string(q.shape[3]) + ")",
            where);
    require(lse.rank == 3 && lse.shape[0] == p.batch && lse.shape[1] == p.heads && lse.shape[2] == p.max_seqlen_q, op,
            "lse is " + shape_of(lse) + "; it must be (batch, heads, seqlen_q) = (" + std::to_string(p.batch) + ", " + std::to_string(p.heads) +
                ", " + std::to_string(p.max_seqlen_q) + ")",
            where);
  } else {
    std::tie(c.cu_q, c.cu_k) = detail::require_offsets(options.cu_seqlens_q, options.cu_seqlens_k,
                                                       "packed (tokens, heads, head_dim) tensors need cu_seqlens_q and cu_seqlens_k", op, where);
    require(k.shape[2] == q.shape[2], op, "k is " + shape_of(k) + "; its head_dim must be q's, " + std::to_string(q.shape[2]), where);
    p = FmhaProblem{.batch = c.cu_q.shape[0] - 1, .heads = q.shape[1], .kv_heads = k.shape[1], .head_dim = q.shape[2], .total_q = q.shape[0],
                    .total_k = k.shape[0], .max_seqlen_q = options.max_seqlen_q > 0 ? options.max_seqlen_q : q.shape[0]};
    require(lse.rank == 2 && lse.shape[0] == p.heads && lse.shape[1] == p.total_q, op,
            "lse is " + shape_of(lse) + "; it must be (heads, total_q) = (" + std::to_string(p.heads) + ", " + std::to_string(p.total_q) + ")",
            where);
  }
  p.causal = options.causal;
  p.window_left = options.window_left;
  p.window_right = options.window_right;
  p.top_left = options.top_left;
  p.softmax_scale = options.softmax_scale;
  require(options.softmax_scale >= 0 && std::isfinite(options.softmax_scale), op, "softmax_scale must be finite and not negative (0: 1 / sqrt(head_dim))",
          where);
  return c;
}

/// `go(kernel, launch, arguments...)` on the kernel for `target` and the call: its result is a
/// PreparedLaunch or a CompiledKernel, and `maps` makes the TMA maps (encoded, or descriptions).
template <class T, class Maps, class Go>
auto dispatch(const Target& target, const Call<T>& c, const char* op, Maps&& maps, Go&& go) {
  const FmhaProblem& p = c.problem;
  const std::string type = detail::element_name<T>();
  if (target.sm == 90 && target.arch_specific()) {
    check_problem(p, {64, 128, 256}, /*windows=*/true, op, c.where);
    require(p.total_q >= 1 && p.total_k >= 1, op, "needs at least one query and one key token", c.where);
    if (c.dense) fmha_sm90::check_dense(p, c.q, c.k, c.v, c.o, c.lse, c.where);
    return fmha_sm90::with_config(p, [&]<fmha_sm90::Config C>() {
      constexpr uint32_t rows = fmha_sm90::Config::tile_m, keys = uint32_t(C.tile_n), cols = fmha_sm90::Config::box_cols;
      const fmha_sm90::MaskArguments mask = fmha_sm90::mask_arguments(p);
      Launch l{.grid = {uint32_t(ceil_div(std::max<int64_t>(p.max_seqlen_q, 1), int64_t(rows))), uint32_t(p.heads), uint32_t(p.batch)},
               .block = uint32_t(fmha_sm90::Config::threads), .shared_bytes = C.shared_bytes(), .stream = c.stream, .where = c.where};
      const int32_t group = int32_t(p.heads / p.kv_heads);
      if (c.dense) {
        static Kernel kernel{"cutejit_attention_" + C.name(type.c_str()) + "_dense",
                             [](TmaDescriptor<T> q, TmaDescriptor<T> k, TmaDescriptor<T> v, Tensor<T> o, Tensor<f32> lse, Int seqlen_k,
                                Int group, F32 scale_log2, Int window_left, Int window_right, Int top_left) {
                               fmha_sm90::forward<T, C>(q, k, v, o, lse, fmha_sm90::Dense{seqlen_k}, group, scale_log2, window_left,
                                                        window_right, top_left);
                             }};
        return go(kernel, l, maps(c.q, {1, rows, 1, cols}), maps(c.k, {1, keys, 1, cols}), maps(c.v, {1, keys, 1, cols}), c.o, c.lse,
                  int32_t(p.max_seqlen_k), group, c.scale_log2(), mask.left, mask.right, mask.top_left);
      }
      static Kernel kernel{"cutejit_attention_" + C.name(type.c_str()),
                           [](TmaDescriptor<T> q, TmaDescriptor<T> k, TmaDescriptor<T> v, Tensor<T> o, Tensor<f32> lse, Tensor<int32_t> cu_q,
                              Tensor<int32_t> cu_k, Int group, F32 scale_log2, Int window_left, Int window_right, Int top_left) {
                             fmha_sm90::forward<T, C>(q, k, v, o, lse, fmha_sm90::Packed{cu_q, cu_k}, group, scale_log2, window_left,
                                                      window_right, top_left);
                           }};
      return go(kernel, l, maps(c.q, {rows, 1, cols}), maps(c.k, {keys, 1, cols}), maps(c.v, {keys, 1, cols}), c.o, c.lse, c.cu_q, c.cu_k,
                group, c.scale_log2(), mask.left, mask.right, mask.top_left);
    });
  }
  require(target.sm >= 80, op, "no kernel for " + target.name() + "; attention_forward runs on sm_80 and newer", c.where);
  require(!c.dense, op,
          "dense (batch, seqlen, heads, head_dim) tensors take the sm_90a kernel; on " + target.name() +
              " give packed (tokens, heads, head_dim) tensors and cu_seqlens",
          c.where);
  check_problem(p, {64, 128}, /*windows=*/false, op, c.where);
  require(p.total_q >= 1 && p.total_k >= 1, op, "needs at least one query and one key token", c.where);
  auto run = [&]<fmha_sm80::Config C>() {
    static Kernel kernel{"cutejit_attention_" + C.name(type.c_str()),
                         [](Tensor<T> q, Tensor<T> k, Tensor<T> v, Tensor<T> o, Tensor<f32> lse, Tensor<int32_t> cu_q, Tensor<int32_t> cu_k,
                            F32 scale_log2) { fmha_sm80::forward<T, C>(q, k, v, o, lse, cu_q, cu_k, scale_log2); }};
    Launch l{.grid = {uint32_t(ceil_div(std::max<int64_t>(p.max_seqlen_q, 1), int64_t(C.tile_m))), uint32_t(p.heads), uint32_t(p.batch)},
             .block = uint32_t(C.threads()), .shared_bytes = C.template shared_bytes<T>(), .stream = c.stream, .where = c.where};
    return go(kernel, l, c.q, c.k, c.v, c.o, c.lse, c.cu_q, c.cu_k, c.scale_log2());
  };
  // hd 64: 128 queries x 64 keys per step; hd 128: 64 x 64, which keeps O, S and P in registers.
  if (p.head_dim == 64) return p.causal ? run.template operator()<fmha_sm80::hd64_causal>() : run.template operator()<fmha_sm80::hd64>();
  return p.causal ? run.template operator()<fmha_sm80::hd128_causal>() : run.template operator()<fmha_sm80::hd128>();
}

template <class T>
PreparedLaunch prepare_t(const char* op, const Device& device, const DeviceTensor<T>& q, const DeviceTensor<T>& k, const DeviceTensor<T>& v,
                         const DeviceTensor<T>& o, const DeviceTensor<f32>& lse, const AttentionOptions& options, std::source_location where) {
  const Call<T> c = make_call(op, q, k, v, o, lse, options, where);
  auto maps = [&](const DeviceTensor<T>& t, std::initializer_list<uint32_t> box) { return make_tensor_map(t, box, TmaSwizzle::bytes128, where); };
  return dispatch(device.target(), c, op, maps,
                  [&](auto& kernel, const Launch& l, const auto&... args) { return kernel.prepare(device, l, args...); });
}

template <class T>
CompiledKernel compile_t(const Target& target, const DeviceTensor<T>& q, const DeviceTensor<T>& k, const DeviceTensor<T>& v,
                         const DeviceTensor<T>& o, const DeviceTensor<f32>& lse, const AttentionOptions& options, std::source_location where) {
  const Call<T> c = make_call("attention_forward_compile", q, k, v, o, lse, options, where);
  auto maps = [&](const DeviceTensor<T>& t, std::initializer_list<uint32_t> box) {
    return TensorMap<T>::for_compile(t.rank, box, TmaSwizzle::bytes128, where);
  };
  return dispatch(target, c, "attention_forward_compile", maps,
                  [&](auto& kernel, const Launch&, const auto&... args) { return kernel.compile(target, args...); });
}

}  // namespace

#define CUTEJIT_ATTENTION_FOR(T)                                                                                                        \
  void attention_forward(const Device& device, const DeviceTensor<T>& q, const DeviceTensor<T>& k, const DeviceTensor<T>& v,          \
                         const DeviceTensor<T>& o, const DeviceTensor<f32>& lse, const AttentionOptions& options,                     \
                         std::source_location where) {                                                                                 \
    prepare_t<T>("attention_forward", device, q, k, v, o, lse, options, where)();                                                     \
  }                                                                                                                                    \
  PreparedLaunch attention_forward_prepare(const Device& device, const DeviceTensor<T>& q, const DeviceTensor<T>& k,                  \
                                           const DeviceTensor<T>& v, const DeviceTensor<T>& o, const DeviceTensor<f32>& lse,          \
                                           const AttentionOptions& options, std::source_location where) {                            \
    return prepare_t<T>("attention_forward_prepare", device, q, k, v, o, lse, options, where);                                        \
  }                                                                                                                                    \
  CompiledKernel attention_forward_compile(const Target& target, const DeviceTensor<T>& q, const DeviceTensor<T>& k,                  \
                                           const DeviceTensor<T>& v, const DeviceTensor<T>& o, const DeviceTensor<f32>& lse,          \
                                           const AttentionOptions& options, std::source_location where) {                            \
    return compile_t<T>(target, q, k, v, o, lse, options, where);                                                                      \
  }
CUTEJIT_ATTENTION_FOR(bf16)
CUTEJIT_ATTENTION_FOR(f16)
#undef CUTEJIT_ATTENTION_FOR

}  // namespace cutejit::kernels
