/** \file
 * A Qwen3 dense checkpoint as Hugging Face writes it: a directory with config.json and its
 * weights in one safetensors file (model.safetensors) or in shards that
 * model.safetensors.index.json maps tensor by tensor. Opening it checks everything before a
 * byte is used: the configuration's fields, every tensor the model needs (name, shape, BF16)
 * present in the file the index names, and nothing else in the files. What is wrong is an
 * Error naming the tensor (or field) and what was expected; a checkpoint that opens is one the
 * model can run.
 */
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "safetensors.hpp"

namespace qwen3 {

/// The architecture's numbers (config.json's names in the comments).
struct Config {
  int64_t hidden = 0;            ///< hidden_size
  int64_t layers = 0;            ///< num_hidden_layers
  int64_t heads = 0;             ///< num_attention_heads
  int64_t kv_heads = 0;          ///< num_key_value_heads
  int64_t head_dim = 0;          ///< head_dim
  int64_t intermediate = 0;      ///< intermediate_size
  int64_t vocab = 0;             ///< vocab_size
  double rope_theta = 0;         ///< rope_theta
  double rms_norm_eps = 0;       ///< rms_norm_eps
  bool tie_word_embeddings = false;  ///< the LM head is the embedding (no lm_head.weight)

  /// Reads and checks config.json (a Qwen3ForCausalLM's); throws naming the field.
  static Config from_json_file(const std::filesystem::path& path);
  /// The published configurations, for benchmarks on random weights.
  static Config qwen3_8b();
  static Config qwen3_1_7b();
  static Config qwen3_0_6b();
  /// One of those by name: "8b", "1.7b", "0.6b", or "tiny" (the tests' 2 layers of hidden 256);
  /// else std::invalid_argument.
  static Config named(const std::string& name);
  /// Bytes of the weights in BF16.
  int64_t weight_bytes() const;
};

/// A tensor the model reads: its checkpoint name and shape (all BF16).
struct ExpectedTensor {
  std::string name;
  std::vector<int64_t> shape;
};
/// Every tensor of `config`'s model, in the order the model reads them.
std::vector<ExpectedTensor> expected_tensors(const Config& config);

class Checkpoint {
 public:
  /// Opens and checks the checkpoint in `directory`.
  explicit Checkpoint(const std::filesystem::path& directory);
  // The tensor table points into the files' own tables: moved, never copied.
  Checkpoint(const Checkpoint&) = delete;
  Checkpoint& operator=(const Checkpoint&) = delete;
  Checkpoint(Checkpoint&&) = default;
  Checkpoint& operator=(Checkpoint&&) = default;

  const Config& config() const { return config_; }
  /// The tensor named `name` (one of expected_tensors(config())).
  const TensorView& tensor(const std::string& name) const;

 private:
  Config config_;
  std::vector<SafetensorsFile> files_;
  std::map<std::string, const TensorView*> tensors_;
};

/// Writes `tensors` as a checkpoint of `config` into `directory`: config.json, and one
/// safetensors file, or `shards` files with an index. For tests and benchmark weights.
void write_checkpoint(const std::filesystem::path& directory, const Config& config, const std::vector<TensorToWrite>& tensors,
                      int shards = 1);

}  // namespace qwen3
