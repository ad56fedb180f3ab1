// The Qwen3 checkpoint reader on checkpoints the test writes itself (a 2-layer model with
// hidden 64): one file and four shards open and hand back the bytes written; every way a
// checkpoint can be wrong (a tensor missing, misshapen, of another type, in another shard than
// the index says, extra; a safetensors header that lies about its bytes; a config the model
// does not implement) is an Error naming the tensor or field, never a wrong answer.
#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include <cutejit/core/error.hpp>

#include "qwen3/checkpoint.hpp"
#include "qwen3_test_weights.hpp"

using Catch::Contains;
using qwen3::Checkpoint;
using qwen3::Config;
using qwen3::TensorToWrite;
using qwen3_test::TempDir;

namespace {

Config tiny() { return {64, 2, 4, 2, 16, 128, 100, 1e6, 1e-6, false}; }

/// Every tensor of `c`'s model, each element a distinct bf16 pattern of its own (seeded).
std::vector<TensorToWrite> random_tensors(const Config& c, uint32_t seed = 7) {
  std::mt19937 rng(seed);
  std::vector<TensorToWrite> out;
  for (const qwen3::ExpectedTensor& e : qwen3::expected_tensors(c)) {
    int64_t n = 1;
    for (int64_t d : e.shape) n *= d;
    TensorToWrite t{e.name, "BF16", e.shape, std::vector<std::byte>(size_t(2 * n))};
    for (std::byte& b : t.bytes) b = std::byte(rng());
    out.push_back(std::move(t));
  }
  return out;
}

TensorToWrite& find(std::vector<TensorToWrite>& ts, const std::string& name) {
  for (auto& t : ts)
    if (t.name == name) return t;
  throw std::logic_error("no tensor " + name);
}

/// The error message of opening the checkpoint in `dir`.
std::string open_error(const std::filesystem::path& dir) {
  try {
    Checkpoint c(dir);
  } catch (const cutejit::Error& e) {
    return e.what();
  }
  return "(opened)";
}

/// Writes a safetensors file whose header is `header` and whose data is `data_bytes` zeros.
void write_raw(const std::filesystem::path& path, const std::string& header, size_t data_bytes, uint64_t claimed = 0) {
  std::ofstream out(path, std::ios::binary);
  const uint64_t n = claimed ? claimed : header.size();
  for (int i = 0; i < 8; ++i) out.put(char((n >> (8 * i)) & 0xFF));
  out << header << std::string(data_bytes, '\0');
}

}  // namespace

TEST_CASE("a Qwen3 checkpoint, in one file or four shards, opens and hands back the bytes written", "[unit][qwen3]") {
  for (int shards : {1, 4}) {
    INFO(shards << " file(s)");
    TempDir dir;
    const std::vector<TensorToWrite> written = random_tensors(tiny());
    qwen3::write_checkpoint(dir.path, tiny(), written, shards);
    Checkpoint ckpt(dir.path);
    CHECK(ckpt.config().hidden == 64);
    CHECK(ckpt.config().head_dim == 16);
    CHECK(ckpt.config().rope_theta == 1e6);
    if (shards == 1) {  // RoPE's settings where newer configurations keep them read the same
      nlohmann::json j = nlohmann::json::parse(std::ifstream(dir.path / "config.json"));
      j.erase("rope_theta");
      j["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", 5e5}};
      std::ofstream(dir.path / "config.json") << j.dump();
      CHECK(Checkpoint(dir.path).config().rope_theta == 5e5);
    }
    for (const TensorToWrite& t : written) {
      const qwen3::TensorView& v = ckpt.tensor(t.name);
      CHECK(v.shape == t.shape);
      REQUIRE(v.bytes.size() == t.bytes.size());
      CHECK(std::memcmp(v.bytes.data(), t.bytes.data(), t.bytes.size()) == 0);
    }
  }
  // The published sizes: Qwen3-8B's weights are 8.2 billion BF16 values (16.4 GB).
  CHECK(Config::qwen3_8b().weight_bytes() == 2 * int64_t(8190735360));
  CHECK(qwen3::expected_tensors(Config::qwen3_0_6b()).size() == 1 + 28 * 11 + 1);  // tied: no lm_head
}

TEST_CASE("a checkpoint the model cannot read is an error naming the tensor and what was expected", "[unit][qwen3]") {
  TempDir dir;
  auto tensors = random_tensors(tiny());
  SECTION("a tensor missing") {
    tensors.erase(tensors.begin() + 3);
    qwen3::write_checkpoint(dir.path, tiny(), tensors);
    CHECK_THAT(open_error(dir.path), Contains("tensor 'model.layers.0.self_attn.k_proj.weight' of shape [32, 64] is missing"));
  }
  SECTION("a tensor of another shape") {
    find(tensors, "model.layers.1.mlp.down_proj.weight").shape = {128, 64};
    qwen3::write_checkpoint(dir.path, tiny(), tensors);
    CHECK_THAT(open_error(dir.path),
               Contains("tensor 'model.layers.1.mlp.down_proj.weight' has shape [128, 64]; the configuration makes it [64, 128]"));
  }
  SECTION("a tensor of another type") {
    TensorToWrite& t = find(tensors, "model.norm.weight");
    t.dtype = "F16";
    qwen3::write_checkpoint(dir.path, tiny(), tensors);
    CHECK_THAT(open_error(dir.path), Contains("tensor 'model.norm.weight' is F16; the model reads BF16 weights"));
  }
  SECTION("a tensor the model does not have") {
    tensors.push_back({"model.layers.0.self_attn.q_proj.bias", "BF16", {64}, std::vector<std::byte>(128)});
    qwen3::write_checkpoint(dir.path, tiny(), tensors);
    CHECK_THAT(open_error(dir.path), Contains("tensor 'model.layers.0.self_attn.q_proj.bias' is not part of a Qwen3 model"));
  }
  SECTION("a tensor in another shard than the index says") {
    qwen3::write_checkpoint(dir.path, tiny(), tensors, 2);
    const std::filesystem::path index = dir.path / "model.safetensors.index.json";
    nlohmann::json j = nlohmann::json::parse(std::ifstream(index));
    j["weight_map"]["model.norm.weight"] = j["weight_map"]["model.norm.weight"] == "model-00001-of-00002.safetensors"
                                               ? "model-00002-of-00002.safetensors"
                                               : "model-00001-of-00002.safetensors";
    std::ofstream(index) << j.dump();
    CHECK_THAT(open_error(dir.path), Contains("tensor 'model.norm.weight' is here, but the index puts it in"));
  }
  SECTION("an index naming a file outside the directory") {
    qwen3::write_checkpoint(dir.path, tiny(), tensors, 2);
    const std::filesystem::path index = dir.path / "model.safetensors.index.json";
    nlohmann::json j = nlohmann::json::parse(std::ifstream(index));
    j["weight_map"]["model.norm.weight"] = "../elsewhere.safetensors";
    std::ofstream(index) << j.dump();
    CHECK_THAT(open_error(dir.path), Contains("which is not a file name in the checkpoint's directory"));
  }
  SECTION("a configuration the model does not implement") {
    qwen3::write_checkpoint(dir.path, tiny(), tensors);
    nlohmann::json j = nlohmann::json::parse(std::ifstream(dir.path / "config.json"));
    SECTION("attention bias") { j["attention_bias"] = true; }
    SECTION("another model type") { j["model_type"] = "llama"; }
    SECTION("a field missing") { j.erase("num_key_value_heads"); }
    SECTION("heads not a multiple of the KV heads") { j["num_key_value_heads"] = 3; }
    SECTION("scaled RoPE") { j["rope_parameters"] = {{"rope_type", "yarn"}, {"rope_theta", 1e6}, {"factor", 4.0}}; }
    std::ofstream(dir.path / "config.json") << j.dump();
    const std::string e = open_error(dir.path);
    CHECK_THAT(e, Contains("config.json: ") && !Contains("(opened)"));
    CHECK_THAT(e, Contains("attention_bias") || Contains("model_type") || Contains("num_key_value_heads") || Contains("rope_type 'yarn'"));
  }
}

TEST_CASE("a safetensors header that lies about its bytes is refused before a byte is read", "[unit][qwen3]") {
  TempDir dir;
  const std::filesystem::path f = dir.path / "x.safetensors";
  auto error = [&] {
    try {
      qwen3::SafetensorsFile file(f);
    } catch (const cutejit::Error& e) {
      return std::string(e.what());
    }
    return std::string("(opened)");
  };
  const std::string entry = R"("t":{"dtype":"BF16","shape":[2,3],"data_offsets":[0,12]})";
  write_raw(f, "{" + entry + "}", 12);
  CHECK(error() == "(opened)");
  write_raw(f, "{" + entry + "}", 12, uint64_t(1) << 40);
  CHECK_THAT(error(), Contains("its header claims 1099511627776 bytes"));
  write_raw(f, "{" + entry + "}", 8);
  CHECK_THAT(error(), Contains("tensor 't' lies at bytes 0 to 12 of a data section of 8"));
  write_raw(f, R"({"t":{"dtype":"BF16","shape":[2,4],"data_offsets":[0,12]}})", 12);
  CHECK_THAT(error(), Contains("tensor 't' holds 12 bytes, where its shape of 8 BF16 elements needs 16"));
  write_raw(f, R"({"t":{"dtype":"BF17","shape":[2,3],"data_offsets":[0,12]}})", 12);
  CHECK_THAT(error(), Contains("element type 'BF17'"));
  write_raw(f, R"({"t":{"dtype":"BF16","shape":[2,3],"data_offsets":[0,12]},"u":{"dtype":"BF16","shape":[3],"data_offsets":[8,14]}})", 14);
  CHECK_THAT(error(), Contains("two tensors share bytes 8 to 12"));
  write_raw(f, "{" + entry + "}", 20);
  CHECK_THAT(error(), Contains("bytes 12 to 20 of its data are no tensor's"));
  write_raw(f, R"({"t":{"dtype":"BF16","shape":[4294967296,4294967296],"data_offsets":[0,12]}})", 12);
  CHECK_THAT(error(), Contains("the shape of tensor 't' has more elements than 64 bits count"));
  write_raw(f, R"({"t":{"dtype":"BF16","shape":[2,-3],"data_offsets":[0,12]}})", 12);
  CHECK_THAT(error(), Contains("a shape entry of tensor 't' is negative"));
  write_raw(f, std::string(100000, '[') + std::string(100000, ']'), 0);
  CHECK_THAT(error(), Contains("nested deeper than a safetensors header"));
  write_raw(f, "{", 0, 0);
  CHECK_THAT(error(), Contains("its header is not a safetensors header"));
  std::ofstream(f, std::ios::trunc) << "abc";
  CHECK_THAT(error(), Contains("too short for a safetensors header"));
}
