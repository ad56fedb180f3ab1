/** \file
 * Every kernel the Qwen3 model launches for a workload, compiled for a target with no GPU: the
 * cache a deployment fills on a build machine for the GPUs it ships to (sm_100a and sm_120a
 * included), so that the model's first prefill and decode steps there compile nothing. A
 * kernel is specialized on its tensors' shapes up to their divisibility by 16, so the workload
 * names the passes themselves: each prefill's token count and prompts, each decode batch, and
 * the KV cache's geometry. The checking pass without a cache (Model::prefill(tokens)) is not
 * included.
 */
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include <cutejit/core/compiled.hpp>
#include <cutejit/core/target.hpp>

#include "checkpoint.hpp"

namespace qwen3 {

struct Workload {
  /// Prefills into the KV cache, each (tokens in all, prompts).
  std::vector<std::pair<int64_t, int64_t>> prefills;
  /// Decode steps' batch sizes (Model::decode and Model::decode_greedy).
  std::vector<int64_t> decode_batches;
  /// The KV cache, as KvCache's constructor takes it.
  int64_t sequences = 1, max_tokens = 1, page_size = 16, pages = 0;
};

/// The kernels of every pass of `workload`, compiled for `target` into the cache (CUTEJIT_CACHE_DIR),
/// one entry per specialization however many passes share it. Throws an Error naming the pass
/// and kernel that cannot be compiled for `target`.
std::vector<cutejit::CompiledKernel> compile_model(const Config& config, const cutejit::Target& target, const Workload& workload);

}  // namespace qwen3
