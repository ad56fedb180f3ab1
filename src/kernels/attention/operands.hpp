// What the attention operators check of their operands, forward and backward alike: the
// layout of q, k, v and their likes, and a packed batch's offsets.
#pragma once

#include <optional>
#include <source_location>
#include <string>
#include <utility>

#include "kernels/checks.hpp"

namespace cutejit::kernels::detail {

/// An attention operand, packed (tokens, heads, head_dim) or dense (batch, seqlen, heads,
/// head_dim), as the kernels read it: head_dim contiguous, the other strides and the start on
/// 16 bytes.
template <class T>
void require_heads(const DeviceTensor<T>& t, const char* name, const std::string& op, const std::source_location& where) {
  const int last = t.rank - 1;
  require(t.stride[size_t(last)] == 1, op,
          std::string(name) + "'s head_dim has stride " + std::to_string(t.stride[size_t(last)]) + "; it must be contiguous (stride 1)",
          where);
  for (int m = 0; m < last; ++m)
    require(t.stride[size_t(m)] * int64_t(sizeof(T)) % 16 == 0 || t.shape[size_t(m)] == 1, op,
            std::string(name) + "'s stride " + std::to_string(t.stride[size_t(m)]) + " (mode " + std::to_string(m) +
                ") must be a multiple of 16 bytes",
            where);
  require(t.ptr % 16 == 0, op, std::string(name) + " must start on 16 bytes", where);
}

/// A packed batch's offsets, both given, each batch + 1 contiguous int32 (at least 2), as many
/// of one as of the other; returns them.
inline std::pair<DeviceTensor<int32_t>, DeviceTensor<int32_t>> require_offsets(const std::optional<DeviceTensor<int32_t>>& cu_seqlens_q,
                                                                               const std::optional<DeviceTensor<int32_t>>& cu_seqlens_k,
                                                                               const std::string& needed, const std::string& op,
                                                                               const std::source_location& where) {
  require(cu_seqlens_q && cu_seqlens_k, op, needed + " (for one sequence of n tokens: {0, n})", where);
  for (auto [t, name] : {std::pair{&*cu_seqlens_q, "cu_seqlens_q"}, {&*cu_seqlens_k, "cu_seqlens_k"}})
    require(t->rank == 1 && t->stride[0] == 1 && t->shape[0] >= 2, op,
            std::string(name) + " is " + shape_of(*t) + "; it takes batch + 1 contiguous offsets (at least 2)", where);
  require(cu_seqlens_q->shape[0] == cu_seqlens_k->shape[0], op,
          "cu_seqlens_q has " + std::to_string(cu_seqlens_q->shape[0]) + " offsets and cu_seqlens_k " +
              std::to_string(cu_seqlens_k->shape[0]) + "; one batch has as many of each",
          where);
  return {*cu_seqlens_q, *cu_seqlens_k};
}

}  // namespace cutejit::kernels::detail
