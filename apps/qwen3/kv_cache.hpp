/** \file
 * The paged KV cache of a batch of sequences, in the layout kernels::attention_decode reads
 * (vLLM's and FlashInfer's): per layer, K and V as (pages, page_size, kv_heads, head_dim), and
 * a block table whose row b lists sequence b's pages in order. Pages come from one pool shared
 * by the sequences as they grow and go back to it when a sequence is reset, so sequences of
 * different lengths share the memory. The host keeps the table and the lengths; the device's
 * copies are brought up to date by `upload`, which the model calls before each step.
 */
#pragma once

#include <cstdint>
#include <vector>

#include <cutejit/runtime/buffer.hpp>
#include <cutejit/runtime/device.hpp>
#include <cutejit/runtime/stream.hpp>

#include "checkpoint.hpp"

namespace qwen3 {

class KvCache {
 public:
  /// A cache for `sequences` sequences of up to `max_tokens` tokens each, with pages of
  /// `page_size` tokens (a multiple of 16); `pages` in the pool, 0: enough for every sequence
  /// at its longest.
  KvCache(const cutejit::Device& device, const Config& config, int64_t sequences, int64_t max_tokens, int64_t page_size = 16,
          int64_t pages = 0);

  /// The pool's pages and each sequence's row of the block table for those arguments, checked
  /// as the constructor checks them: what a cache's tensors' shapes are, with no device.
  struct Geometry {
    int64_t pages = 0, pages_per_sequence = 0;
  };
  static Geometry geometry(int64_t sequences, int64_t max_tokens, int64_t page_size = 16, int64_t pages = 0);

  int64_t sequences() const { return int64_t(lengths_.size()); }
  int64_t length(int64_t sequence) const;
  int64_t max_tokens() const { return pages_per_sequence_ * page_size_; }
  int64_t page_size() const { return page_size_; }
  int64_t layers() const { return int64_t(keys_.size()); }
  int64_t kv_heads() const { return kv_heads_; }
  int64_t head_dim() const { return head_dim_; }

  /// Grows sequence b by tokens[b], for b below tokens.size(), taking pages from the pool as
  /// needed, and returns each new token's slot (its row in the cache viewed as (pages x
  /// page_size, ...)), sequence by sequence. An Error, with nothing changed, when a sequence
  /// would pass max_tokens or the pool has too few pages.
  std::vector<int32_t> append(const std::vector<int64_t>& tokens);
  /// Empties `sequence`, its pages back in the pool.
  void reset(int64_t sequence);
  /// Copies the block table and the lengths to the device (after appends, before a step),
  /// queued on `stream`.
  void upload(cutejit::StreamHandle stream = nullptr);
  /// A number no other cache of this process has: what the model's decode graphs are kept by.
  uint64_t id() const { return id_; }

  /// Layer `layer`'s keys or values, (pages, page_size, kv_heads, head_dim).
  cutejit::DeviceTensor<cutejit::bf16> keys(int64_t layer) const;
  cutejit::DeviceTensor<cutejit::bf16> values(int64_t layer) const;
  /// The same memory as (pages x page_size, kv_heads x head_dim): one row a slot.
  cutejit::DeviceTensor<cutejit::bf16> key_rows(int64_t layer) const;
  cutejit::DeviceTensor<cutejit::bf16> value_rows(int64_t layer) const;
  /// The first `batch` rows of the block table, (batch, pages per sequence), and their lengths.
  cutejit::DeviceTensor<int32_t> block_table(int64_t batch) const;
  cutejit::DeviceTensor<int32_t> lengths(int64_t batch) const;

 private:
  uint64_t id_;
  int64_t kv_heads_, head_dim_, page_size_, pages_, pages_per_sequence_;
  std::vector<cutejit::Buffer<cutejit::bf16>> keys_, values_;  // one of each a layer
  std::vector<int32_t> table_, lengths_, free_pages_;
  cutejit::Buffer<int32_t> device_table_, device_lengths_;
};

}  // namespace qwen3
