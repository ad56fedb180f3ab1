#include "checkpoint.hpp"

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include <cutejit/core/error.hpp>

namespace qwen3 {

namespace {

[[noreturn]] void fail(const std::filesystem::path& where, const std::string& what) {
  throw cutejit::Error("error: " + where.string() + ": " + what);
}

/// config.json and the index are small: anything past this is not one.
constexpr std::uintmax_t max_json_bytes = 64 << 20;

nlohmann::json read_json(const std::filesystem::path& path) {
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) fail(path, "cannot read it: " + ec.message());
  if (size > max_json_bytes) fail(path, "is " + std::to_string(size) + " bytes, more than such a file ever is");
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  try {
    return nlohmann::json::parse(text.str(), [](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
      if (depth > 16) throw std::length_error("nested deeper than 16");
      return true;
    });
  } catch (const std::exception& e) {
    fail(path, std::string("is not valid JSON: ") + e.what());
  }
}

int64_t positive(const nlohmann::json& j, const char* key, const std::filesystem::path& path) {
  if (!j.contains(key) || !j[key].is_number_integer() || j[key].get<int64_t>() <= 0 || j[key].get<int64_t>() > (int64_t(1) << 31))
    fail(path, std::string("'") + key + "' is missing or not a positive integer below 2^31");
  return j[key].get<int64_t>();
}

double real(const nlohmann::json& j, const char* key, const std::filesystem::path& path) {
  if (!j.contains(key) || !j[key].is_number() || !(j[key].get<double>() > 0))
    fail(path, std::string("'") + key + "' is missing or not a positive number");
  return j[key].get<double>();
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace

Config Config::from_json_file(const std::filesystem::path& path) {
  const nlohmann::json j = read_json(path);
  if (!j.is_object()) fail(path, "is not a JSON object");
  if (j.value("model_type", std::string()) != "qwen3")
    fail(path, "'model_type' is '" + j.value("model_type", std::string()) + "'; this model reads Qwen3 dense checkpoints ('qwen3')");
  // What the model does not implement is refused here, not computed wrongly later.
  if (j.value("attention_bias", false)) fail(path, "'attention_bias' is true; Qwen3's projections have no bias, and this model none");
  if (j.contains("rope_scaling") && !j["rope_scaling"].is_null() &&
      !(j["rope_scaling"].is_object() && j["rope_scaling"].value("rope_type", std::string()) == "default"))
    fail(path, "'rope_scaling' asks for scaled RoPE; this model uses plain RoPE");
  if (j.value("use_sliding_window", false)) fail(path, "'use_sliding_window' is true; this model attends to the whole context");
  if (j.contains("hidden_act") && j["hidden_act"] != "silu") fail(path, "'hidden_act' is not 'silu'");
  Config c;
  c.hidden = positive(j, "hidden_size", path);
  c.layers = positive(j, "num_hidden_layers", path);
  c.heads = positive(j, "num_attention_heads", path);
  c.kv_heads = positive(j, "num_key_value_heads", path);
  c.head_dim = j.contains("head_dim") ? positive(j, "head_dim", path) : c.hidden / c.heads;
  c.intermediate = positive(j, "intermediate_size", path);
  c.vocab = positive(j, "vocab_size", path);
  // Newer configurations keep RoPE's settings in "rope_parameters"; only plain RoPE is modelled.
  if (j.contains("rope_parameters") && j["rope_parameters"].is_object()) {
    const nlohmann::json& rope = j["rope_parameters"];
    if (rope.value("rope_type", std::string("default")) != "default")
      fail(path, "'rope_parameters' has rope_type '" + rope.value("rope_type", std::string()) + "'; this model uses plain RoPE ('default')");
    c.rope_theta = real(rope, "rope_theta", path);
  } else {
    c.rope_theta = real(j, "rope_theta", path);
  }
  c.rms_norm_eps = real(j, "rms_norm_eps", path);
  c.tie_word_embeddings = j.value("tie_word_embeddings", false);
  if (c.heads % c.kv_heads) fail(path, "num_attention_heads (" + std::to_string(c.heads) + ") is not a multiple of num_key_value_heads (" +
                                           std::to_string(c.kv_heads) + ")");
  if (c.head_dim % 2) fail(path, "head_dim " + std::to_string(c.head_dim) + " is odd; RoPE rotates pairs");
  return c;
}

// The published configurations (the models' config.json on Hugging Face).
Config Config::qwen3_8b() { return {4096, 36, 32, 8, 128, 12288, 151936, 1e6, 1e-6, false}; }
Config Config::qwen3_1_7b() { return {2048, 28, 16, 8, 128, 6144, 151936, 1e6, 1e-6, true}; }
Config Config::qwen3_0_6b() { return {1024, 28, 16, 8, 128, 3072, 151936, 1e6, 1e-6, true}; }
Config Config::named(const std::string& name) {
  if (name == "8b") return qwen3_8b();
  if (name == "1.7b") return qwen3_1_7b();
  if (name == "0.6b") return qwen3_0_6b();
  if (name == "tiny") return {256, 2, 4, 2, 64, 512, 320, 1e6, 1e-6, false};
  throw std::invalid_argument("error: the model is 8b, 1.7b, 0.6b or tiny, not '" + name + "'");
}

int64_t Config::weight_bytes() const {
  int64_t elements = 0;
  for (const ExpectedTensor& t : expected_tensors(*this)) {
    int64_t n = 1;
    for (int64_t d : t.shape) n *= d;
    elements += n;
  }
  return 2 * elements;
}

std::vector<ExpectedTensor> expected_tensors(const Config& c) {
  const int64_t q = c.heads * c.head_dim, kv = c.kv_heads * c.head_dim;
  std::vector<ExpectedTensor> t{{"model.embed_tokens.weight", {c.vocab, c.hidden}}};
  for (int64_t i = 0; i < c.layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    t.push_back({p + "input_layernorm.weight", {c.hidden}});
    t.push_back({p + "self_attn.q_proj.weight", {q, c.hidden}});
    t.push_back({p + "self_attn.k_proj.weight", {kv, c.hidden}});
    t.push_back({p + "self_attn.v_proj.weight", {kv, c.hidden}});
    t.push_back({p + "self_attn.q_norm.weight", {c.head_dim}});
    t.push_back({p + "self_attn.k_norm.weight", {c.head_dim}});
    t.push_back({p + "self_attn.o_proj.weight", {c.hidden, q}});
    t.push_back({p + "post_attention_layernorm.weight", {c.hidden}});
    t.push_back({p + "mlp.gate_proj.weight", {c.intermediate, c.hidden}});
    t.push_back({p + "mlp.up_proj.weight", {c.intermediate, c.hidden}});
    t.push_back({p + "mlp.down_proj.weight", {c.hidden, c.intermediate}});
  }
  t.push_back({"model.norm.weight", {c.hidden}});
  if (!c.tie_word_embeddings) t.push_back({"lm_head.weight", {c.vocab, c.hidden}});
  return t;
}

Checkpoint::Checkpoint(const std::filesystem::path& directory) {
  config_ = Config::from_json_file(directory / "config.json");
  // The files, and which tensor each holds: one file, or the shards an index names.
  const std::filesystem::path index_path = directory / "model.safetensors.index.json";
  std::map<std::string, std::string> file_of;  // tensor -> the file the index puts it in
  std::set<std::string> file_names;
  if (std::filesystem::exists(index_path)) {
    const nlohmann::json index = read_json(index_path);
    if (!index.is_object() || !index.contains("weight_map") || !index["weight_map"].is_object())
      fail(index_path, "has no 'weight_map' object");
    for (const auto& [name, file] : index["weight_map"].items()) {
      if (!file.is_string()) fail(index_path, "the file of tensor '" + name + "' is not a string");
      const std::string f = file.get<std::string>();
      if (f.empty() || f.find('/') != std::string::npos || f == "." || f == "..")
        fail(index_path, "tensor '" + name + "' is in '" + f + "', which is not a file name in the checkpoint's directory");
      file_of[name] = f;
      file_names.insert(f);
    }
  } else {
    file_names.insert("model.safetensors");
  }
  files_.reserve(file_names.size());
  for (const std::string& f : file_names) files_.emplace_back(directory / f);

  std::map<std::string, const SafetensorsFile*> found_in;
  for (const SafetensorsFile& f : files_)
    for (const auto& [name, view] : f.tensors()) {
      if (auto [it, inserted] = found_in.emplace(name, &f); !inserted)
        fail(f.path(), "tensor '" + name + "' is also in " + it->second->path().string());
      tensors_[name] = &view;
    }
  // Every tensor the model reads, where the index says, in BF16 and its shape; nothing else.
  std::set<std::string> expected_names;
  for (const ExpectedTensor& e : expected_tensors(config_)) {
    expected_names.insert(e.name);
    auto it = tensors_.find(e.name);
    if (it == tensors_.end()) fail(directory, "tensor '" + e.name + "' of shape " + shape_string(e.shape) + " is missing");
    const SafetensorsFile& file = *found_in.at(e.name);
    if (!file_of.empty() && file.path().filename() != file_of.at(e.name))
      fail(file.path(), "tensor '" + e.name + "' is here, but the index puts it in " + file_of.at(e.name));
    if (it->second->dtype != "BF16") fail(file.path(), "tensor '" + e.name + "' is " + it->second->dtype + "; the model reads BF16 weights");
    if (it->second->shape != e.shape)
      fail(file.path(), "tensor '" + e.name + "' has shape " + shape_string(it->second->shape) + "; the configuration makes it " +
                            shape_string(e.shape));
  }
  for (const auto& [name, view] : tensors_)
    if (!expected_names.count(name))
      fail(found_in.at(name)->path(), "tensor '" + name + "' is not part of a Qwen3 model of this configuration" +
                                          (name == "lm_head.weight" ? " (tie_word_embeddings is true)" : ""));
  for (const auto& [name, file] : file_of)
    if (!expected_names.count(name)) fail(index_path, "the index names tensor '" + name + "', which is not part of the model");
}

const TensorView& Checkpoint::tensor(const std::string& name) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end()) throw cutejit::Error("error: the checkpoint has no tensor '" + name + "'");
  return *it->second;
}

void write_checkpoint(const std::filesystem::path& directory, const Config& c, const std::vector<TensorToWrite>& tensors, int shards) {
  std::filesystem::create_directories(directory);
  const nlohmann::json config = {{"architectures", {"Qwen3ForCausalLM"}},
                                 {"model_type", "qwen3"},
                                 {"hidden_size", c.hidden},
                                 {"num_hidden_layers", c.layers},
                                 {"num_attention_heads", c.heads},
                                 {"num_key_value_heads", c.kv_heads},
                                 {"head_dim", c.head_dim},
                                 {"intermediate_size", c.intermediate},
                                 {"vocab_size", c.vocab},
                                 {"rope_theta", c.rope_theta},
                                 {"rms_norm_eps", c.rms_norm_eps},
                                 {"tie_word_embeddings", c.tie_word_embeddings},
                                 {"hidden_act", "silu"},
                                 {"attention_bias", false},
                                 {"max_position_embeddings", 40960},
                                 {"torch_dtype", "bfloat16"}};
  std::ofstream(directory / "config.json") << config.dump(2) << "\n";
  if (shards <= 1) return write_safetensors(directory / "model.safetensors", tensors);
  // Shard i of n takes every n-th tensor, as a writer splitting by size would roughly.
  nlohmann::json weight_map = nlohmann::json::object();
  for (int s = 0; s < shards; ++s) {
    char name[64];
    std::snprintf(name, sizeof name, "model-%05d-of-%05d.safetensors", s + 1, shards);
    std::vector<TensorToWrite> part;
    for (size_t i = size_t(s); i < tensors.size(); i += size_t(shards)) {
      part.push_back(tensors[i]);
      weight_map[tensors[i].name] = name;
    }
    write_safetensors(directory / name, part);
  }
  std::ofstream(directory / "model.safetensors.index.json") << nlohmann::json{{"metadata", nlohmann::json::object()}, {"weight_map", weight_map}}.dump(2)
                                                             << "\n";
}

}  // namespace qwen3
