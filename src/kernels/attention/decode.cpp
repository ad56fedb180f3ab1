// kernels::attention_decode: the decode problem read from the tensors and checked, then the
// paged split kernel (attention/paged_decode.hpp) and, with more than one split, the combine.
#include <cmath>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cutejit/kernels/attention.hpp"
#include "cutejit/kernels/attention/paged_decode.hpp"
#include "kernels/checks.hpp"
#include "kernels/dependent_launch.hpp"
#include "kernels/element_names.hpp"

namespace cutejit::kernels {

PreparedDecode::PreparedDecode(PreparedLaunch split, PreparedLaunch combine, Buffer<float> workspace, int64_t splits)
    : split_(std::move(split)), combine_(std::move(combine)), workspace_(std::move(workspace)), splits_(splits) {}

void PreparedDecode::operator()() const {
  split_();
  if (splits_ > 1) combine_();
}

namespace {

using detail::require;
using detail::shape_of;

/// The split kernel: writing O itself (one split) or each split's partial O and lse.
template <class T, bool Partial>
auto& split_kernel() {
  static Kernel k{std::string("cutejit_attention_decode_") + detail::element_name<T>() + (Partial ? "_partial" : ""),
                  [](Tensor<T> q, Tensor<T> k_cache, Tensor<T> v_cache, Tensor<int32_t> block_table, Tensor<int32_t> seqlens_k,
                     paged_decode::SplitOut<T, Partial> o, Tensor<f32> lse, F32 scale_log2, Constexpr<int> head_dim, Constexpr<int> group,
                     Constexpr<int> q_len, Constexpr<int> kv_heads, Constexpr<int> page_size, Constexpr<int> causal, Constexpr<int> stages,
                     Constexpr<bool> dependent) {
                    paged_decode::Config c{.head_dim = head_dim, .group = group, .q_len = q_len, .kv_heads = kv_heads,
                                           .page_size = page_size, .causal = causal != 0, .stages = stages, .dependent = dependent};
                    paged_decode::split<T, Partial>(c, q, k_cache, v_cache, block_table, seqlens_k, o, lse, scale_log2);
                  }};
  return k;
}

/// The decode problem the tensors and options describe (checked by check_decode).
template <class T>
DecodeProblem problem_of(const DeviceTensor<T>& q, const DeviceTensor<T>& k_cache, const DeviceTensor<int32_t>& block_table,
                         const DecodeOptions& options) {
  return {.batch = block_table.shape[0], .heads = q.shape[1], .kv_heads = k_cache.shape[2], .head_dim = q.shape[2], .q_len = options.q_len,
          .pages = k_cache.shape[0], .page_size = k_cache.shape[1], .pages_per_sequence = block_table.shape[1],
          .max_seqlen_k = options.max_seqlen_k > 0 ? options.max_seqlen_k : block_table.shape[1] * k_cache.shape[1],
          .causal = options.causal, .softmax_scale = options.softmax_scale, .splits = options.splits};
}

int64_t splits_of(const DecodeProblem& p, const Device& device) {
  return p.splits > 0 ? p.splits : paged_decode::choose_splits(p, device.multiprocessors());
}

/// The f32 values the splits' partial O and lse take; none with one split.
int64_t workspace_floats(const DecodeProblem& p, int64_t splits) {
  return splits == 1 ? 0 : splits * p.total_q() * p.heads * (p.head_dim + 1);
}

/// The decode problem of these tensors, every one of them checked.
template <class T>
DecodeProblem checked_problem(const char* op, const DeviceTensor<T>& q, const DeviceTensor<T>& k_cache, const DeviceTensor<T>& v_cache,
                              const DeviceTensor<int32_t>& block_table, const DeviceTensor<int32_t>& seqlens_k, const DeviceTensor<T>& o,
                              const DeviceTensor<f32>& lse, const DecodeOptions& options, const std::source_location& where) {
  require(q.rank == 3 && o.shape == q.shape, op, "q is " + shape_of(q) + " and o " + shape_of(o) + "; both take (batch * q_len, heads, head_dim)",
          where);
  require(k_cache.rank == 4 && v_cache.shape == k_cache.shape, op,
          "k_cache is " + shape_of(k_cache) + " and v_cache " + shape_of(v_cache) + "; both take (pages, page_size, kv_heads, head_dim)", where);
  require(block_table.rank == 2 && seqlens_k.rank == 1 && seqlens_k.shape[0] == block_table.shape[0], op,
          "block_table is " + shape_of(block_table) + " and seqlens_k " + shape_of(seqlens_k) + "; they take (batch, pages per sequence) and (batch)",
          where);
  const int64_t batch = block_table.shape[0];
  require(options.q_len >= 1 && q.shape[0] == batch * options.q_len, op,
          "q has " + std::to_string(q.shape[0]) + " rows; a batch of " + std::to_string(batch) + " with q_len " + std::to_string(options.q_len) +
              " has " + std::to_string(batch * options.q_len),
          where);
  require(k_cache.shape[3] == q.shape[2], op, "the caches' head_dim " + std::to_string(k_cache.shape[3]) + " is not q's, " + std::to_string(q.shape[2]),
          where);
  require(lse.rank == 2 && lse.shape[0] == q.shape[1] && lse.shape[1] == q.shape[0], op,
          "lse is " + shape_of(lse) + "; it must be (heads, batch * q_len) = (" + std::to_string(q.shape[1]) + ", " + std::to_string(q.shape[0]) + ")",
          where);
  // The kernels address every tensor as compact (row-major) and 16 bytes aligned.
  auto compact = [&](const auto& t, const char* name) {
    int64_t stride = 1;
    for (int m = t.rank - 1; m >= 0; --m) {
      require(t.stride[size_t(m)] == stride || t.shape[size_t(m)] == 1, op, std::string(name) + " " + shape_of(t) + " must be compact (row-major)",
              where);
      stride *= t.shape[size_t(m)];
    }
    require(t.ptr % 16 == 0, op, std::string(name) + " must start on 16 bytes", where);
  };
  compact(q, "q"), compact(o, "o"), compact(k_cache, "k_cache"), compact(v_cache, "v_cache"), compact(block_table, "block_table");
  compact(seqlens_k, "seqlens_k"), compact(lse, "lse");
  const DecodeProblem p = problem_of(q, k_cache, block_table, options);
  check_decode(p, where);
  return p;
}

float scale_log2_of(const DecodeProblem& p) {
  return (p.softmax_scale > 0 ? p.softmax_scale : 1.0f / std::sqrt(float(p.head_dim))) * float(M_LOG2E);
}

/// The partial O and lse of `splits` splits, at `at` (a workspace or a description's null).
std::pair<DeviceTensor<f32>, DeviceTensor<f32>> partials(uint64_t at, int64_t splits, const DecodeProblem& p) {
  const int64_t H = p.heads, D = p.head_dim, tokens = p.total_q();
  return {DeviceTensor<f32>::make(at, std::array<int64_t, 4>{splits, tokens, H, D}, std::array<int64_t, 4>{tokens * H * D, H * D, D, 1}),
          DeviceTensor<f32>::make(at + uint64_t(splits * tokens * H * D) * sizeof(float), std::array<int64_t, 3>{splits, H, tokens},
                                  std::array<int64_t, 3>{H * tokens, tokens, 1})};
}

/// O and lse as the one-split kernel writes them: a split of one.
template <class T>
std::pair<DeviceTensor<T>, DeviceTensor<f32>> whole(const DeviceTensor<T>& o, const DeviceTensor<f32>& lse, const DecodeProblem& p) {
  const int64_t H = p.heads, D = p.head_dim, tokens = p.total_q();
  return {DeviceTensor<T>::make(o.ptr, std::array<int64_t, 4>{1, tokens, H, D}, std::array<int64_t, 4>{tokens * H * D, H * D, D, 1}),
          DeviceTensor<f32>::make(lse.ptr, std::array<int64_t, 3>{1, H, tokens}, std::array<int64_t, 3>{H * tokens, tokens, 1})};
}

template <class T>
auto& combine_kernel() {
  static Kernel combine{std::string("cutejit_attention_decode_combine_") + detail::element_name<T>(),
                        [](Tensor<f32> o_part, Tensor<f32> lse_part, Tensor<T> o, Tensor<f32> lse, Constexpr<int> head_dim,
                           Constexpr<bool> dependent) {
                          paged_decode::combine<T>(head_dim, o_part, lse_part, o, lse, dependent);
                        }};
  return combine;
}

/// The split kernel's arguments after the tensors, for config `c`.
auto split_constants(const DecodeProblem& p, const paged_decode::Config& c) {
  return std::tuple{scale_log2_of(p), Constexpr<int>{c.head_dim}, Constexpr<int>{c.group}, Constexpr<int>{c.q_len}, Constexpr<int>{c.kv_heads},
                    Constexpr<int>{c.page_size}, Constexpr<int>{c.causal}, Constexpr<int>{c.stages}, Constexpr<bool>{c.dependent}};
}

template <class T>
PreparedDecode prepare_t(const char* op, const Device& device, const DeviceTensor<T>& q, const DeviceTensor<T>& k_cache,
                         const DeviceTensor<T>& v_cache, const DeviceTensor<int32_t>& block_table, const DeviceTensor<int32_t>& seqlens_k,
                         const DeviceTensor<T>& o, const DeviceTensor<f32>& lse, const DecodeOptions& options, const std::source_location& where) {
  const DecodeProblem p = checked_problem(op, q, k_cache, v_cache, block_table, seqlens_k, o, lse, options, where);
  require(device.target().sm >= 80, op, "no kernel for " + device.target().name() + "; attention_decode runs on sm_80 and newer", where);
  paged_decode::Config c = paged_decode::config_for<T>(p, device.max_shared_per_block(), device.name(), where);
  c.dependent = detail::dependent_launch(device.target(), options.programmatic_dependent_launch);
  const int64_t splits = splits_of(p, device);
  const int64_t H = p.heads, tokens = p.total_q();
  const Launch split{.grid = {uint32_t(splits), uint32_t(p.kv_heads * c.tiles()), uint32_t(p.batch)},
                     .block = uint32_t(paged_decode::Config::threads()), .shared_bytes = c.shared_bytes<T>(), .stream = options.stream,
                     .programmatic_dependent_launch = c.dependent, .where = where};
  auto launch_split = [&]<bool Partial>(const auto& outputs) {
    return std::apply([&](const auto&... constants) {
      return split_kernel<T, Partial>().prepare(device, split, q, k_cache, v_cache, block_table, seqlens_k, outputs.first, outputs.second,
                                              constants...);
    }, split_constants(p, c));
  };
  if (splits == 1) return PreparedDecode(launch_split.template operator()<false>(whole(o, lse, p)), PreparedLaunch{}, Buffer<float>{}, 1);
  // The partial results: in the caller's workspace, or in buffers the prepared decode owns.
  Buffer<float> owned;
  uint64_t at = 0;
  if (options.workspace) {
    const DeviceTensor<f32>& w = *options.workspace;
    const int64_t need = workspace_floats(p, splits);
    require(w.rank == 1 && (w.stride[0] == 1 || w.shape[0] == 1) && w.ptr % 16 == 0, op,
            "the workspace is " + shape_of(w) + "; it takes a compact rank-1 f32 tensor starting on 16 bytes", where);
    require(w.shape[0] >= need, op,
            "the workspace has " + std::to_string(w.shape[0]) + " f32 values; these " + std::to_string(splits) + " splits need " +
                std::to_string(need) + " (attention_decode_workspace says how many)",
            where);
    at = w.ptr;
  } else {
    owned = device.alloc<float>(size_t(workspace_floats(p, splits)));
    at = owned.data();
  }
  const auto parts = partials(at, splits, p);
  PreparedLaunch s = launch_split.template operator()<true>(parts);
  const Launch combine{.grid = {uint32_t(tokens), uint32_t(H)}, .block = 32, .stream = options.stream,
                       .programmatic_dependent_launch = c.dependent, .where = where};
  PreparedLaunch m = combine_kernel<T>().prepare(device, combine, parts.first, parts.second, o, lse, Constexpr<int>{c.head_dim},
                                                 Constexpr<bool>{c.dependent});
  return PreparedDecode(std::move(s), std::move(m), std::move(owned), splits);
}

/// Every kernel attention_decode may launch on `target` for these tensors: the one-split kernel,
/// and the split and combine kernels of each split count it may choose (which depends on the
/// GPU's multiprocessors; a split count specializes them only by its divisibility, 1, 2, 4, 8
/// or 16 and more), or of options.splits alone.
template <class T>
std::vector<CompiledKernel> compile_t(const Target& target, const DeviceTensor<T>& q, const DeviceTensor<T>& k_cache,
                                      const DeviceTensor<T>& v_cache, const DeviceTensor<int32_t>& block_table,
                                      const DeviceTensor<int32_t>& seqlens_k, const DeviceTensor<T>& o, const DeviceTensor<f32>& lse,
                                      const DecodeOptions& options, const std::source_location& where) {
  const char* op = "attention_decode_compile";
  const DecodeProblem p = checked_problem(op, q, k_cache, v_cache, block_table, seqlens_k, o, lse, options, where);
  require(target.sm >= 80, op, "no kernel for " + target.name() + "; attention_decode runs on sm_80 and newer", where);
  paged_decode::Config c = paged_decode::config_for<T>(p, target.max_shared_per_block(), target.name(), where);
  c.dependent = detail::dependent_launch(target, options.programmatic_dependent_launch);
  auto compile_split = [&]<bool Partial>(const auto& outputs) {
    return std::apply([&](const auto&... constants) {
      return split_kernel<T, Partial>().compile(target, q, k_cache, v_cache, block_table, seqlens_k, outputs.first, outputs.second, constants...);
    }, split_constants(p, c));
  };
  std::vector<CompiledKernel> out;
  const std::vector<int64_t> counts = options.splits > 0 ? std::vector<int64_t>{options.splits} : std::vector<int64_t>{1, 2, 4, 8, 16};
  for (int64_t splits : counts) {
    if (splits == 1) {
      out.push_back(compile_split.template operator()<false>(whole(o, lse, p)));
      continue;
    }
    const auto parts = partials(0, splits, p);
    out.push_back(compile_split.template operator()<true>(parts));
    out.push_back(combine_kernel<T>().compile(target, parts.first, parts.second, o, lse, Constexpr<int>{c.head_dim}, Constexpr<bool>{c.dependent}));
  }
  return out;
}

}  // namespace

#define CUTEJIT_DECODE_FOR(T)                                                                                                              \
  void attention_decode(const Device& device, const DeviceTensor<T>& q, const DeviceTensor<T>& k_cache, const DeviceTensor<T>& v_cache,  \
                        const DeviceTensor<int32_t>& block_table, const DeviceTensor<int32_t>& seqlens_k, const DeviceTensor<T>& o,      \
                        const DeviceTensor<f32>& lse, const DecodeOptions& options, std::source_location where) {                        \
    prepare_t<T>("attention_decode", device, q, k_cache, v_cache, block_table, seqlens_k, o, lse, options, where)();                     \
  }                                                                                                                                       \
  PreparedDecode attention_decode_prepare(const Device& device, const DeviceTensor<T>& q, const DeviceTensor<T>& k_cache,                 \
                                          const DeviceTensor<T>& v_cache, const DeviceTensor<int32_t>& block_table,                       \
                                          const DeviceTensor<int32_t>& seqlens_k, const DeviceTensor<T>& o, const DeviceTensor<f32>& lse, \
                                          const DecodeOptions& options, std::source_location where) {                                    \
    return prepare_t<T>("attention_decode_prepare", device, q, k_cache, v_cache, block_table, seqlens_k, o, lse, options, where);         \
  }                                                                                                                                       \
  int64_t attention_decode_workspace(const Device& device, const DeviceTensor<T>& q, const DeviceTensor<T>& k_cache,                     \
                                     const DeviceTensor<int32_t>& block_table, const DecodeOptions& options, std::source_location where) { \
    require(q.rank == 3 && k_cache.rank == 4 && block_table.rank == 2, "attention_decode_workspace",                                      \
            "q is " + shape_of(q) + ", k_cache " + shape_of(k_cache) + " and block_table " + shape_of(block_table) +                       \
                "; they take (batch * q_len, heads, head_dim), (pages, page_size, kv_heads, head_dim) and (batch, pages per sequence)",   \
            where);                                                                                                                       \
    const DecodeProblem p = problem_of(q, k_cache, block_table, options);                                                                 \
    check_decode(p, where);                                                                                                               \
    return workspace_floats(p, splits_of(p, device));                                                                                     \
  }                                                                                                                                       \
  std::vector<CompiledKernel> attention_decode_compile(const Target& target, const DeviceTensor<T>& q, const DeviceTensor<T>& k_cache,   \
                                                       const DeviceTensor<T>& v_cache, const DeviceTensor<int32_t>& block_table,         \
                                                       const DeviceTensor<int32_t>& seqlens_k, const DeviceTensor<T>& o,                 \
                                                       const DeviceTensor<f32>& lse, const DecodeOptions& options, std::source_location where) { \
    return compile_t<T>(target, q, k_cache, v_cache, block_table, seqlens_k, o, lse, options, where);                                    \
  }
CUTEJIT_DECODE_FOR(bf16)
CUTEJIT_DECODE_FOR(f16)
#undef CUTEJIT_DECODE_FOR

}  // namespace cutejit::kernels
