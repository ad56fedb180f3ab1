#include "kv_cache.hpp"

#include <atomic>
#include <string>

#include <cutejit/core/error.hpp>

namespace qwen3 {

using namespace cutejit;

namespace {
uint64_t next_id() {
  static std::atomic<uint64_t> next{1};
  return next++;
}
}  // namespace

KvCache::Geometry KvCache::geometry(int64_t sequences, int64_t max_tokens, int64_t page_size, int64_t pages) {
  if (sequences < 1 || max_tokens < 1)
    throw Error("error: qwen3: a KV cache holds at least one sequence of at least one token, not " + std::to_string(sequences) +
                " of " + std::to_string(max_tokens));
  if (page_size < 16 || page_size % 16 != 0)
    throw Error("error: qwen3: KV cache pages hold a multiple of 16 tokens (the decode reads 16 keys from one page), not " +
                std::to_string(page_size));
  Geometry g{.pages_per_sequence = (max_tokens + page_size - 1) / page_size};
  g.pages = pages > 0 ? pages : sequences * g.pages_per_sequence;
  if (g.pages * page_size > INT32_MAX)
    throw Error("error: qwen3: a KV cache of " + std::to_string(g.pages) + " pages of " + std::to_string(page_size) +
                " tokens has more slots than int32 indexes");
  return g;
}

KvCache::KvCache(const Device& device, const Config& config, int64_t sequences, int64_t max_tokens, int64_t page_size, int64_t pages)
    : id_(next_id()), kv_heads_(config.kv_heads), head_dim_(config.head_dim), page_size_(page_size) {
  const Geometry g = geometry(sequences, max_tokens, page_size, pages);
  pages_ = g.pages, pages_per_sequence_ = g.pages_per_sequence;
  for (int64_t l = 0; l < config.layers; ++l) {
    keys_.push_back(device.alloc<bf16>(size_t(pages_ * page_size_ * kv_heads_ * head_dim_)));
    values_.push_back(device.alloc<bf16>(size_t(pages_ * page_size_ * kv_heads_ * head_dim_)));
  }
  table_.assign(size_t(sequences * pages_per_sequence_), 0);  // unused entries name page 0, never read past a length
  lengths_.assign(size_t(sequences), 0);
  for (int64_t p = pages_ - 1; p >= 0; --p) free_pages_.push_back(int32_t(p));
  device_table_ = device.alloc<int32_t>(table_.size());
  device_lengths_ = device.alloc<int32_t>(lengths_.size());
  upload();
}

int64_t KvCache::length(int64_t sequence) const {
  if (sequence < 0 || sequence >= sequences())
    throw Error("error: qwen3: the KV cache has sequences 0 to " + std::to_string(sequences() - 1) + ", not " + std::to_string(sequence));
  return lengths_[size_t(sequence)];
}

std::vector<int32_t> KvCache::append(const std::vector<int64_t>& tokens) {
  if (int64_t(tokens.size()) > sequences())
    throw Error("error: qwen3: " + std::to_string(tokens.size()) + " sequences grow, but the KV cache holds " + std::to_string(sequences()));
  // Everything is checked before anything changes.
  auto pages_for = [&](int64_t length) { return (length + page_size_ - 1) / page_size_; };
  int64_t new_pages = 0;
  for (size_t b = 0; b < tokens.size(); ++b) {
    const int64_t old = lengths_[b];
    if (tokens[b] < 0 || old + tokens[b] > max_tokens())
      throw Error("error: qwen3: sequence " + std::to_string(b) + " of the KV cache holds " + std::to_string(old) + " tokens; " +
                  std::to_string(tokens[b]) + " more would pass its " + std::to_string(max_tokens()));
    new_pages += pages_for(old + tokens[b]) - pages_for(old);
  }
  if (new_pages > int64_t(free_pages_.size()))
    throw Error("error: qwen3: the KV cache's pool has " + std::to_string(free_pages_.size()) + " free pages; the step needs " +
                std::to_string(new_pages) + " (reset finished sequences, or make the pool larger)");
  std::vector<int32_t> slots;
  for (size_t b = 0; b < tokens.size(); ++b) {
    const int64_t old = lengths_[b], now = old + tokens[b];
    int32_t* row = table_.data() + int64_t(b) * pages_per_sequence_;
    for (int64_t p = pages_for(old); p < pages_for(now); ++p) {
      row[p] = free_pages_.back();
      free_pages_.pop_back();
    }
    for (int64_t j = old; j < now; ++j) slots.push_back(int32_t(row[j / page_size_] * page_size_ + j % page_size_));
    lengths_[b] = int32_t(now);
  }
  return slots;
}

void KvCache::reset(int64_t sequence) {
  const int64_t used = (length(sequence) + page_size_ - 1) / page_size_;
  for (int64_t p = used - 1; p >= 0; --p) free_pages_.push_back(table_[size_t(sequence * pages_per_sequence_ + p)]);
  lengths_[size_t(sequence)] = 0;
}

void KvCache::upload(StreamHandle stream) {
  device_table_.upload_async(table_, stream);
  device_lengths_.upload_async(lengths_, stream);
}

DeviceTensor<bf16> KvCache::keys(int64_t layer) const { return keys_.at(size_t(layer)).view({pages_, page_size_, kv_heads_, head_dim_}); }
DeviceTensor<bf16> KvCache::values(int64_t layer) const { return values_.at(size_t(layer)).view({pages_, page_size_, kv_heads_, head_dim_}); }
DeviceTensor<bf16> KvCache::key_rows(int64_t layer) const { return keys_.at(size_t(layer)).view({pages_ * page_size_, kv_heads_ * head_dim_}); }
DeviceTensor<bf16> KvCache::value_rows(int64_t layer) const {
  return values_.at(size_t(layer)).view({pages_ * page_size_, kv_heads_ * head_dim_});
}
DeviceTensor<int32_t> KvCache::block_table(int64_t batch) const { return device_table_.view({batch, pages_per_sequence_}); }
DeviceTensor<int32_t> KvCache::lengths(int64_t batch) const { return device_lengths_.view({batch}); }

}  // namespace qwen3
