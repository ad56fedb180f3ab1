// Named FlashAttention-3-style kernels of cutejit/kernels/attention/sm90.hpp and their launches
// on device buffers (packed sequences, or dense tensors of any strides).
#pragma once

#include "cutejit/kernels/attention/sm90.hpp"

#include "fmha_sm80.hpp"

namespace examples {
using namespace cutejit;

// The names of the kernel where the launches below use them.
namespace fmha90 {
using namespace cutejit::kernels::fmha_sm90;
}  // namespace fmha90

/// The forward kernel for one element type and Config.
template <Element T, fmha90::Config C>
inline auto fmha_forward_sm90 =
    Kernel{C.name(std::is_same_v<T, bf16> ? "bf16" : "f16"),
           [](TmaDescriptor<T> q, TmaDescriptor<T> k, TmaDescriptor<T> v, Tensor<T> o, Tensor<f32> lse, Tensor<int32_t> cu_seqlens_q,
              Tensor<int32_t> cu_seqlens_k, Int group, F32 scale_log2, Int window_left, Int window_right, Int top_left) {
             fmha90::forward<T, C>(q, k, v, o, lse, fmha90::Packed{cu_seqlens_q, cu_seqlens_k}, group, scale_log2, window_left,
                                   window_right, top_left);
           }};

/// The same on dense (batch, seqlen, heads, head_dim) tensors (fmha90::Dense).
template <Element T, fmha90::Config C>
inline auto fmha_forward_sm90_dense =
    Kernel{C.name(std::is_same_v<T, bf16> ? "bf16" : "f16") + "_dense",
           [](TmaDescriptor<T> q, TmaDescriptor<T> k, TmaDescriptor<T> v, Tensor<T> o, Tensor<f32> lse, Int seqlen_k, Int group,
              F32 scale_log2, Int window_left, Int window_right, Int top_left) {
             fmha90::forward<T, C>(q, k, v, o, lse, fmha90::Dense{seqlen_k}, group, scale_log2, window_left, window_right, top_left);
           }};

namespace fmha90 {
template <Element T, Config C>
PreparedLaunch prepare(const Device& gpu, const FmhaProblem& p, const Buffer<T>& q, const Buffer<T>& k, const Buffer<T>& v,
                       const Buffer<T>& o, const Buffer<f32>& lse, const Buffer<int32_t>& cu_q, const Buffer<int32_t>& cu_k) {
  const float scale = p.softmax_scale > 0 ? p.softmax_scale : 1.0f / std::sqrt(float(p.head_dim));
  constexpr uint32_t rows = Config::tile_m, keys = uint32_t(C.tile_n), cols = Config::box_cols;
  auto qm = make_tensor_map(q.view({p.total_q, p.heads, p.head_dim}), {rows, 1, cols}, TmaSwizzle::bytes128);
  auto km = make_tensor_map(k.view({p.total_k, p.kv_heads, p.head_dim}), {keys, 1, cols}, TmaSwizzle::bytes128);
  auto vm = make_tensor_map(v.view({p.total_k, p.kv_heads, p.head_dim}), {keys, 1, cols}, TmaSwizzle::bytes128);
  Launch l{.grid = {uint32_t(ceil_div(std::max<int64_t>(p.max_seqlen_q, 1), int64_t(rows))), uint32_t(p.heads), uint32_t(p.batch)},
           .block = uint32_t(Config::threads),
           .shared_bytes = C.shared_bytes()};
  const MaskArguments mask = mask_arguments(p);
  return fmha_forward_sm90<T, C>.prepare(gpu, l, qm, km, vm, o.view({p.total_q, p.heads, p.head_dim}), lse.view({p.heads, p.total_q}),
                                         cu_q.view({p.batch + 1}), cu_k.view({p.batch + 1}), int32_t(p.heads / p.kv_heads),
                                         scale * float(M_LOG2E), mask.left, mask.right, mask.top_left);
}

template <Element T, Config C>
PreparedLaunch prepare_dense(const Device& gpu, const FmhaProblem& p, const DeviceTensor<T>& q, const DeviceTensor<T>& k,
                             const DeviceTensor<T>& v, const DeviceTensor<T>& o, const DeviceTensor<f32>& lse, detail::Where w) {
  const float scale = p.softmax_scale > 0 ? p.softmax_scale : 1.0f / std::sqrt(float(p.head_dim));
  constexpr uint32_t rows = Config::tile_m, keys = uint32_t(C.tile_n), cols = Config::box_cols;
  auto qm = make_tensor_map(q, {1, rows, 1, cols}, TmaSwizzle::bytes128, w);
  auto km = make_tensor_map(k, {1, keys, 1, cols}, TmaSwizzle::bytes128, w);
  auto vm = make_tensor_map(v, {1, keys, 1, cols}, TmaSwizzle::bytes128, w);
  Launch l{.grid = {uint32_t(ceil_div(p.max_seqlen_q, int64_t(rows))), uint32_t(p.heads), uint32_t(p.batch)},
           .block = uint32_t(Config::threads),
           .shared_bytes = C.shared_bytes()};
  const MaskArguments mask = mask_arguments(p);
  return fmha_forward_sm90_dense<T, C>.prepare(gpu, l, qm, km, vm, o, lse, int32_t(p.max_seqlen_k), int32_t(p.heads / p.kv_heads),
                                               scale * float(M_LOG2E), mask.left, mask.right, mask.top_left);
}
}  // namespace fmha90

/// The launch of the Hopper forward on dense tensors of any strides: q, o (batch, seqlen_q,
/// heads, head_dim), k, v (batch, seqlen_k, kv_heads, head_dim), lse (batch, heads, seqlen_q),
/// each given in that order of modes (BSHD as it lies; BHSD, a fused QKV or padded rows as
/// views with their strides), for a problem made by FmhaProblem::dense; fmha90::check_dense
/// says what it refuses.
template <Element T>
  requires(std::is_same_v<T, bf16> || std::is_same_v<T, f16>)
PreparedLaunch fmha_forward_sm90_prepare(const Device& gpu, const FmhaProblem& p, const DeviceTensor<T>& q, const DeviceTensor<T>& k,
                                         const DeviceTensor<T>& v, const DeviceTensor<T>& o, const DeviceTensor<f32>& lse,
                                         detail::Where w = detail::Where::current()) {
  fmha90::check_dense(p, q, k, v, o, lse, w);
  return fmha90::with_config(p, [&]<fmha90::Config C>() { return fmha90::prepare_dense<T, C>(gpu, p, q, k, v, o, lse, w); });
}

/// The launch of the Hopper forward on device buffers, laid out as fmha_forward_prepare's, for
/// every problem fmha90::check accepts: head dims 64, 128 and 256; causal or windowed masks,
/// aligned bottom-right or top-left.
template <Element T>
  requires(std::is_same_v<T, bf16> || std::is_same_v<T, f16>)
PreparedLaunch fmha_forward_sm90_prepare(const Device& gpu, const FmhaProblem& p, const Buffer<T>& q, const Buffer<T>& k,
                                         const Buffer<T>& v, const Buffer<T>& o, const Buffer<f32>& lse, const Buffer<int32_t>& cu_seqlens_q,
                                         const Buffer<int32_t>& cu_seqlens_k, detail::Where w = detail::Where::current()) {
  fmha90::check(p, w);
  fmha80::check_buffers(p, q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k, w);
  return fmha90::with_config(p, [&]<fmha90::Config C>() { return fmha90::prepare<T, C>(gpu, p, q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k); });
}

/// Runs the Hopper forward on `in` with poisoned outputs; the error against the float64 reference.
template <Element T>
double fmha_sm90_check(const Device& gpu, const FmhaInputs<T>& in) {
  return fmha_check_with(gpu, in, [&](auto&&... buffers) { return fmha_forward_sm90_prepare(gpu, in.problem, buffers...); });
}

/// Cross-compiles the forward of `C` for target `t` (tensor descriptions, no memory).
template <Element T, fmha90::Config C>
CompiledKernel fmha_sm90_compile(const Target& t) {
  constexpr uint32_t rows = fmha90::Config::tile_m, keys = uint32_t(C.tile_n), cols = fmha90::Config::box_cols;
  auto qm = TensorMap<T>::for_compile(3, {rows, 1, cols}, TmaSwizzle::bytes128);
  auto kvm = TensorMap<T>::for_compile(3, {keys, 1, cols}, TmaSwizzle::bytes128);
  auto o = DeviceTensor<T>::make(256, std::array<int64_t, 3>{4096, 16, C.head_dim}, std::array<int64_t, 3>{16 * C.head_dim, C.head_dim, 1});
  auto lse = DeviceTensor<f32>::make(256, std::array<int64_t, 2>{16, 4096}, std::array<int64_t, 2>{4096, 1});
  auto cu = DeviceTensor<int32_t>::make(256, std::array<int64_t, 1>{5}, std::array<int64_t, 1>{1});
  return fmha_forward_sm90<T, C>.compile(t, qm, kvm, kvm, o, lse, cu, cu, int32_t(1), 1.0f, fmha90::unbounded, fmha90::unbounded, int32_t(0));
}

/// The same on dense tensors, O of the given strides (the tensor maps of Q, K and V carry theirs
/// in the descriptor, not in the specialization).
template <Element T, fmha90::Config C>
CompiledKernel fmha_sm90_dense_compile(const Target& t, std::array<int64_t, 4> o_stride) {
  constexpr uint32_t rows = fmha90::Config::tile_m, keys = uint32_t(C.tile_n), cols = fmha90::Config::box_cols;
  auto qm = TensorMap<T>::for_compile(4, {1, rows, 1, cols}, TmaSwizzle::bytes128);
  auto kvm = TensorMap<T>::for_compile(4, {1, keys, 1, cols}, TmaSwizzle::bytes128);
  auto o = DeviceTensor<T>::make(256, std::array<int64_t, 4>{2, 2048, 16, C.head_dim}, o_stride);
  auto lse = DeviceTensor<f32>::make(256, std::array<int64_t, 3>{2, 16, 2048}, std::array<int64_t, 3>{16 * 2048, 2048, 1});
  return fmha_forward_sm90_dense<T, C>.compile(t, qm, kvm, kvm, o, lse, int32_t(2048), int32_t(1), 1.0f, fmha90::unbounded,
                                              fmha90::unbounded, int32_t(0));
}

/// Four sequences of ragged lengths, BF16, head dim 128, GQA 4:2, causal (as the FA2 example).
inline Example fmha_forward_sm90_example() {
  return {"fmha90_fwd_bf16_hd128_causal_128x128_s2",
          [](const Device& gpu) { return fmha_sm90_check(gpu, fmha_inputs<bf16>({77, 200, 1, 150}, {77, 260, 33, 40}, 4, 2, 128, true, 31)); },
          [](const Target& t) { return fmha_sm90_compile<bf16, fmha90::hd128_causal>(t); },
          1e-2,
          {"sm_90a"}};
}

}  // namespace examples
