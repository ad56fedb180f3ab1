// kernels::attention_backward: the problem read from the tensors and checked once, then
// rowsum(dO * O), the dK/dV kernel and the dQ kernel: on wgmma on sm_90a
// (attention/backward_sm90.hpp), on mma.sync elsewhere from sm_80 (attention/backward_sm80.hpp).
// The rowsum kernel is the mma.sync backward's on every target.
#include <cmath>
#include <string>
#include <tuple>

#include "cutejit/kernels/attention.hpp"
#include "cutejit/kernels/attention/backward_sm80.hpp"
#include "cutejit/kernels/attention/backward_sm90.hpp"
#include "kernels/attention/operands.hpp"
#include "kernels/checks.hpp"
#include "kernels/element_names.hpp"

namespace cutejit::kernels {

PreparedBackward::PreparedBackward(PreparedLaunch dot, PreparedLaunch dkdv, PreparedLaunch dq, Buffer<float> workspace)
    : dot_(std::move(dot)), dkdv_(std::move(dkdv)), dq_(std::move(dq)), workspace_(std::move(workspace)) {}

void PreparedBackward::operator()() const {
  dot_();
  dkdv_();
  dq_();
}

namespace {

using detail::require;
using detail::shape_of;

template <class T>
struct Call {
  FmhaProblem problem;
  const DeviceTensor<T>&q, &k, &v, &o, &d_o, &d_q, &d_k, &d_v;
  const DeviceTensor<f32>& lse;
  DeviceTensor<int32_t> cu_q, cu_k;
  DeviceTensor<f32> delta;  // rowsum(dO * O), (heads, total_q): set by the caller
  StreamHandle stream;
  std::source_location where;
};

template <class T>
Call<T> make_call(const char* op, const DeviceTensor<T>& q, const DeviceTensor<T>& k, const DeviceTensor<T>& v, const DeviceTensor<T>& o,
                  const DeviceTensor<T>& d_o, const DeviceTensor<f32>& lse, const DeviceTensor<T>& d_q, const DeviceTensor<T>& d_k,
                  const DeviceTensor<T>& d_v, const AttentionBackwardOptions& options, const std::source_location& where) {
  Call<T> c{.q = q, .k = k, .v = v, .o = o, .d_o = d_o, .d_q = d_q, .d_k = d_k, .d_v = d_v, .lse = lse, .stream = options.stream, .where = where};
  for (auto [t, name] : {std::pair{&q, "q"}, {&k, "k"}, {&v, "v"}, {&o, "o"}, {&d_o, "d_o"}, {&d_q, "d_q"}, {&d_k, "d_k"}, {&d_v, "d_v"}}) {
    require(t->rank == 3, op, std::string(name) + " is a tensor of rank " + std::to_string(t->rank) + "; it takes (tokens, heads, head_dim)",
            where);
    detail::require_heads(*t, name, op, where);
  }
  for (auto [t, name] : {std::pair{&o, "o"}, {&d_o, "d_o"}, {&d_q, "d_q"}})
    require(t->shape == q.shape, op, std::string(name) + " is " + shape_of(*t) + "; it must have q's shape " + shape_of(q), where);
  for (auto [t, name] : {std::pair{&v, "v"}, {&d_k, "d_k"}, {&d_v, "d_v"}})
    require(t->shape == k.shape, op, std::string(name) + " is " + shape_of(*t) + "; it must have k's shape " + shape_of(k), where);
  require(k.shape[2] == q.shape[2], op, "k is " + shape_of(k) + "; its head_dim must be q's, " + std::to_string(q.shape[2]), where);
  std::tie(c.cu_q, c.cu_k) = detail::require_offsets(
      options.cu_seqlens_q, options.cu_seqlens_k,
      "the backward takes packed (tokens, heads, head_dim) tensors and needs cu_seqlens_q and cu_seqlens_k", op, where);
  FmhaProblem& p = c.problem;
  p = FmhaProblem{.batch = c.cu_q.shape[0] - 1, .heads = q.shape[1], .kv_heads = k.shape[1], .head_dim = q.shape[2], .total_q = q.shape[0],
                  .total_k = k.shape[0], .max_seqlen_q = options.max_seqlen_q > 0 ? options.max_seqlen_q : q.shape[0]};
  p.max_seqlen_k = options.max_seqlen_k > 0 ? options.max_seqlen_k : k.shape[0];
  require(lse.rank == 2 && lse.shape[0] == p.heads && lse.shape[1] == p.total_q, op,
          "lse is " + shape_of(lse) + "; it must be the forward's (heads, total_q) = (" + std::to_string(p.heads) + ", " +
              std::to_string(p.total_q) + ")",
          where);
  require(p.total_q >= 1 && p.total_k >= 1, op, "needs at least one query and one key token", where);
  p.causal = options.causal;
  p.window_left = options.window_left;
  p.window_right = options.window_right;
  p.top_left = options.top_left;
  p.softmax_scale = options.softmax_scale;
  require(options.softmax_scale >= 0 && std::isfinite(options.softmax_scale), op,
          "softmax_scale must be finite and not negative (0: 1 / sqrt(head_dim))", where);
  return c;
}

/// `go(kernel, launch, arguments...)` on the three kernels for `target` and the call, in launch
/// order: their results (PreparedLaunch or CompiledKernel). `maps` makes the TMA maps.
template <class T, class Maps, class Go>
auto dispatch(const Target& target, const Call<T>& c, const char* op, Maps&& maps, Go&& go) {
  const FmhaProblem& p = c.problem;
  const std::string type = detail::element_name<T>();
  const int64_t H = p.heads, Hk = p.kv_heads;
  const float scale = p.scale(), scale_log2 = scale * float(M_LOG2E);
  static Kernel dot{"cutejit_attention_bwd_dot_" + type, [](Tensor<T> o, Tensor<T> d_o, Tensor<f32> delta, Constexpr<int> head_dim) {
                      fmha_backward_sm80::dot<T>(head_dim, o, d_o, delta);
                    }};
  Launch dot_launch{.grid = {uint32_t(ceil_div(p.total_q, int64_t(4))), uint32_t(H)}, .block = 128, .stream = c.stream, .where = c.where};
  std::vector results{go(dot, dot_launch, c.o, c.d_o, c.delta, Constexpr<int>{int(p.head_dim)})};

  if (target.sm == 90 && target.arch_specific()) {
    check_problem(p, {64, 128}, /*windows=*/true, op, c.where);
    auto run = [&]<fmha_backward_sm90::Config C>() {
      using Config = fmha_backward_sm90::Config;
      static Kernel dkdv{"cutejit_attention_" + C.name("dkdv", type.c_str()),
                         [](TmaDescriptor<T> q, TmaDescriptor<T> k, TmaDescriptor<T> v, TmaDescriptor<T> d_o, Tensor<f32> lse, Tensor<f32> delta,
                            Tensor<T> d_k, Tensor<T> d_v, Tensor<int32_t> cu_q, Tensor<int32_t> cu_k, Int group, F32 scale_log2, F32 scale,
                            Int window_left, Int window_right, Int top_left) {
                           fmha_backward_sm90::dkdv<T, C>(q, k, v, d_o, lse, delta, d_k, d_v, cu_q, cu_k, group, scale_log2, scale, window_left,
                                                          window_right, top_left);
                         }};
      static Kernel dq{"cutejit_attention_" + C.name("dq", type.c_str()),
                       [](TmaDescriptor<T> q, TmaDescriptor<T> k, TmaDescriptor<T> v, TmaDescriptor<T> d_o, Tensor<f32> lse, Tensor<f32> delta,
                          Tensor<T> d_q, Tensor<int32_t> cu_q, Tensor<int32_t> cu_k, Int group, F32 scale_log2, F32 scale, Int window_left,
                          Int window_right, Int top_left) {
                         fmha_backward_sm90::dq<T, C>(q, k, v, d_o, lse, delta, d_q, cu_q, cu_k, group, scale_log2, scale, window_left,
                                                      window_right, top_left);
                       }};
      constexpr uint32_t tile = Config::tile, dkdv_step = uint32_t(C.dkdv_step()), dq_step = uint32_t(C.dq_step()), cols = Config::box_cols;
      const fmha_sm90::MaskArguments mask = fmha_sm90::mask_arguments(p);
      const int32_t group = int32_t(H / Hk);
      Launch l_dkdv{.grid = {uint32_t(ceil_div(p.max_seqlen_k, int64_t(tile))), uint32_t(Hk), uint32_t(p.batch)},
                    .block = uint32_t(Config::threads), .shared_bytes = C.shared_bytes(C.dkdv_step()), .stream = c.stream, .where = c.where};
      results.push_back(go(dkdv, l_dkdv, maps(c.q, dkdv_step, cols), maps(c.k, tile, cols), maps(c.v, tile, cols), maps(c.d_o, dkdv_step, cols),
                           c.lse, c.delta, c.d_k, c.d_v, c.cu_q, c.cu_k, group, scale_log2, scale, mask.left, mask.right, mask.top_left));
      Launch l_dq{.grid = {uint32_t(ceil_div(p.max_seqlen_q, int64_t(tile))), uint32_t(H), uint32_t(p.batch)},
                  .block = uint32_t(Config::threads), .shared_bytes = C.shared_bytes(C.dq_step()), .stream = c.stream, .where = c.where};
      results.push_back(go(dq, l_dq, maps(c.q, tile, cols), maps(c.k, dq_step, cols), maps(c.v, dq_step, cols), maps(c.d_o, tile, cols), c.lse,
                           c.delta, c.d_q, c.cu_q, c.cu_k, group, scale_log2, scale, mask.left, mask.right, mask.top_left));
    };
    auto pick = [&]<int D>() {
      const fmha_sm90::Mask mask = fmha_sm90::mask_of(p);
      if (mask == fmha_sm90::Mask::none) run.template operator()<fmha_backward_sm90::config_for(D, fmha_sm90::Mask::none)>();
      else if (mask == fmha_sm90::Mask::causal) run.template operator()<fmha_backward_sm90::config_for(D, fmha_sm90::Mask::causal)>();
      else run.template operator()<fmha_backward_sm90::config_for(D, fmha_sm90::Mask::window)>();
    };
    p.head_dim == 64 ? pick.template operator()<64>() : pick.template operator()<128>();
    return results;
  }

  require(target.sm >= 80, op, "no kernel for " + target.name() + "; attention_backward runs on sm_80 and newer", c.where);
  check_problem(p, {64, 128}, /*windows=*/false, op, c.where);
  using Config = fmha_backward_sm80::Config;
  static Kernel dkdv{"cutejit_attention_bwd_dkdv_" + type,
                     [](Tensor<T> q, Tensor<T> k, Tensor<T> v, Tensor<T> d_o, Tensor<f32> lse, Tensor<f32> delta, Tensor<T> d_k, Tensor<T> d_v,
                        Tensor<int32_t> cu_q, Tensor<int32_t> cu_k, F32 scale_log2, F32 scale, Constexpr<int> head_dim, Constexpr<int> causal) {
                       fmha_backward_sm80::dkdv<T>({.head_dim = head_dim, .causal = causal != 0}, q, k, v, d_o, lse, delta, d_k, d_v, cu_q, cu_k,
                                                   scale_log2, scale);
                     }};
  static Kernel dq{"cutejit_attention_bwd_dq_" + type,
                   [](Tensor<T> q, Tensor<T> k, Tensor<T> v, Tensor<T> d_o, Tensor<f32> lse, Tensor<f32> delta, Tensor<T> d_q, Tensor<int32_t> cu_q,
                      Tensor<int32_t> cu_k, F32 scale_log2, F32 scale, Constexpr<int> head_dim, Constexpr<int> causal) {
                     fmha_backward_sm80::dq<T>({.head_dim = head_dim, .causal = causal != 0}, q, k, v, d_o, lse, delta, d_q, cu_q, cu_k, scale_log2,
                                               scale);
                   }};
  const Config config{.head_dim = int(p.head_dim), .causal = p.causal};
  const Constexpr<int> head_dim{config.head_dim}, causal{config.causal};
  Launch l_dkdv{.grid = {uint32_t(ceil_div(p.max_seqlen_k, int64_t(Config::tile))), uint32_t(Hk), uint32_t(p.batch)},
                .block = uint32_t(Config::threads), .shared_bytes = config.shared_bytes<T>(config.dkdv_step()), .stream = c.stream, .where = c.where};
  results.push_back(go(dkdv, l_dkdv, c.q, c.k, c.v, c.d_o, c.lse, c.delta, c.d_k, c.d_v, c.cu_q, c.cu_k, scale_log2, scale, head_dim, causal));
  Launch l_dq{.grid = {uint32_t(ceil_div(p.max_seqlen_q, int64_t(Config::tile))), uint32_t(H), uint32_t(p.batch)},
              .block = uint32_t(Config::threads), .shared_bytes = config.shared_bytes<T>(config.dq_step()), .stream = c.stream, .where = c.where};
  results.push_back(go(dq, l_dq, c.q, c.k, c.v, c.d_o, c.lse, c.delta, c.d_q, c.cu_q, c.cu_k, scale_log2, scale, head_dim, causal));
  return results;
}

template <class T>
PreparedBackward prepare_t(const char* op, const Device& device, const DeviceTensor<T>& q, const DeviceTensor<T>& k, const DeviceTensor<T>& v,
                           const DeviceTensor<T>& o, const DeviceTensor<T>& d_o, const DeviceTensor<f32>& lse, const DeviceTensor<T>& d_q,
                           const DeviceTensor<T>& d_k, const DeviceTensor<T>& d_v, const AttentionBackwardOptions& options,
                           const std::source_location& where) {
  Call<T> c = make_call(op, q, k, v, o, d_o, lse, d_q, d_k, d_v, options, where);
  const int64_t rows = c.problem.heads * c.problem.total_q;
  Buffer<float> owned;
  if (options.workspace) {
    const DeviceTensor<f32>& w = *options.workspace;
    require(w.rank == 1 && w.stride[0] == 1 && w.shape[0] >= rows, op,
            "workspace is " + shape_of(w) + "; it takes at least heads * total_q = " + std::to_string(rows) + " contiguous f32", where);
    c.delta = DeviceTensor<f32>::make(w.ptr, std::array<int64_t, 2>{c.problem.heads, c.problem.total_q},
                                      std::array<int64_t, 2>{c.problem.total_q, 1});
  } else {
    owned = device.alloc<float>(size_t(rows));
    c.delta = owned.view({c.problem.heads, c.problem.total_q});
  }
  auto maps = [&](const DeviceTensor<T>& t, uint32_t rows, uint32_t cols) { return make_tensor_map(t, {rows, 1, cols}, TmaSwizzle::bytes128, where); };
  auto launches = dispatch(device.target(), c, op, maps,
                           [&](auto& kernel, const Launch& l, const auto&... args) { return kernel.prepare(device, l, args...); });
  return PreparedBackward(std::move(launches[0]), std::move(launches[1]), std::move(launches[2]), std::move(owned));
}

template <class T>
std::vector<CompiledKernel> compile_t(const Target& target, const DeviceTensor<T>& q, const DeviceTensor<T>& k, const DeviceTensor<T>& v,
                                      const DeviceTensor<T>& o, const DeviceTensor<T>& d_o, const DeviceTensor<f32>& lse,
                                      const DeviceTensor<T>& d_q, const DeviceTensor<T>& d_k, const DeviceTensor<T>& d_v,
                                      const AttentionBackwardOptions& options, const std::source_location& where) {
  const char* op = "attention_backward_compile";
  Call<T> c = make_call(op, q, k, v, o, d_o, lse, d_q, d_k, d_v, options, where);
  c.delta = DeviceTensor<f32>::for_compile({c.problem.heads, c.problem.total_q}, where);
  auto maps = [&](const DeviceTensor<T>&, uint32_t rows, uint32_t cols) { return TensorMap<T>::for_compile(3, {rows, 1, cols}, TmaSwizzle::bytes128, where); };
  return dispatch(target, c, op, maps, [&](auto& kernel, const Launch&, const auto&... args) { return kernel.compile(target, args...); });
}

}  // namespace

#define CUTEJIT_ATTENTION_BACKWARD_FOR(T)                                                                                                \
  void attention_backward(const Device& device, const DeviceTensor<T>& q, const DeviceTensor<T>& k, const DeviceTensor<T>& v,         \
                          const DeviceTensor<T>& o, const DeviceTensor<T>& d_o, const DeviceTensor<f32>& lse, const DeviceTensor<T>& d_q, \
                          const DeviceTensor<T>& d_k, const DeviceTensor<T>& d_v, const AttentionBackwardOptions& options,             \
                          std::source_location where) {                                                                                \
    prepare_t<T>("attention_backward", device, q, k, v, o, d_o, lse, d_q, d_k, d_v, options, where)();                              \
  }                                                                                                                                     \
  PreparedBackward attention_backward_prepare(const Device& device, const DeviceTensor<T>& q, const DeviceTensor<T>& k,                \
                                              const DeviceTensor<T>& v, const DeviceTensor<T>& o, const DeviceTensor<T>& d_o,         \
                                              const DeviceTensor<f32>& lse, const DeviceTensor<T>& d_q, const DeviceTensor<T>& d_k,    \
                                              const DeviceTensor<T>& d_v, const AttentionBackwardOptions& options,                    \
                                              std::source_location where) {                                                           \
    return prepare_t<T>("attention_backward_prepare", device, q, k, v, o, d_o, lse, d_q, d_k, d_v, options, where);                \
  }                                                                                                                                     \
  std::vector<CompiledKernel> attention_backward_compile(const Target& target, const DeviceTensor<T>& q, const DeviceTensor<T>& k,    \
                                                         const DeviceTensor<T>& v, const DeviceTensor<T>& o, const DeviceTensor<T>& d_o, \
                                                         const DeviceTensor<f32>& lse, const DeviceTensor<T>& d_q,                    \
                                                         const DeviceTensor<T>& d_k, const DeviceTensor<T>& d_v,                      \
                                                         const AttentionBackwardOptions& options, std::source_location where) {      \
    return compile_t<T>(target, q, k, v, o, d_o, lse, d_q, d_k, d_v, options, where);                                                 \
  }
CUTEJIT_ATTENTION_BACKWARD_FOR(bf16)
CUTEJIT_ATTENTION_BACKWARD_FOR(f16)
#undef CUTEJIT_ATTENTION_BACKWARD_FOR

}  // namespace cutejit::kernels
