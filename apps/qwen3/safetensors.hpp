/** \file
 * A safetensors file (Hugging Face's weight format), memory-mapped and checked before anything
 * is read from it: an 8-byte little-endian header length, a JSON header naming each tensor's
 * element type, shape and byte range, then the bytes. A tensor is a view of the mapping; nothing
 * is copied until the model uploads it. Anything the header says that the file cannot hold (a
 * range past its end or overlapping another, a byte count that is not the shape's, an unknown
 * element type, a header deeper or longer than any checkpoint's) is an Error naming the file and
 * the tensor.
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace qwen3 {

/// One tensor of a file: its element type as the header spells it ("BF16", "F32", ...), shape,
/// and bytes (a view of the file's mapping, alive as long as the file).
struct TensorView {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  std::span<const std::byte> bytes;
};

class SafetensorsFile {
 public:
  /// Maps `path` and checks its header; throws cutejit::Error naming the file and what is wrong.
  explicit SafetensorsFile(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return path_; }
  /// Every tensor of the file, by name.
  const std::map<std::string, TensorView>& tensors() const { return tensors_; }
  /// The header's "__metadata__" strings (empty when it has none).
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

 private:
  struct Mapping;
  std::filesystem::path path_;
  std::shared_ptr<const Mapping> mapping_;
  std::map<std::string, TensorView> tensors_;
  std::map<std::string, std::string> metadata_;
};

/// The bytes of one element of a safetensors dtype ("BF16" 2, "F32" 4, ...), 0 for an unknown one.
int dtype_bytes(const std::string& dtype);

/// Writes tensors (name, dtype, shape, bytes) as one safetensors file, as a checkpoint writer
/// does: for tests and for the benchmarks' random checkpoints.
struct TensorToWrite {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<std::byte> bytes;
};
void write_safetensors(const std::filesystem::path& path, const std::vector<TensorToWrite>& tensors);

}  // namespace qwen3
