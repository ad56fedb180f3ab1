#include "safetensors.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>
#include <utility>

#include <nlohmann/json.hpp>

#include <cutejit/core/error.hpp>

namespace qwen3 {

namespace {

/// Hugging Face's readers refuse headers over 100 MB; so does this one.
constexpr uint64_t max_header_bytes = 100 << 20;
/// The header nests three deep (tensors, their fields, a shape); anything deeper is not one.
constexpr int max_header_depth = 4;

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& what) {
  throw cutejit::Error("error: " + path.string() + ": " + what);
}

int64_t as_int(const nlohmann::json& v, const std::filesystem::path& path, const std::string& what) {
  if (!v.is_number_integer() && !v.is_number_unsigned()) fail(path, what + " is not an integer");
  if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max())) fail(path, what + " is too large");
  const int64_t x = v.get<int64_t>();
  if (x < 0) fail(path, what + " is negative");
  return x;
}

}  // namespace

int dtype_bytes(const std::string& dtype) {
  static const std::map<std::string, int> sizes = {{"BOOL", 1},    {"U8", 1},      {"I8", 1},   {"F8_E4M3", 1}, {"F8_E5M2", 1},
                                                   {"I16", 2},     {"U16", 2},     {"F16", 2},  {"BF16", 2},    {"I32", 4},
                                                   {"U32", 4},     {"F32", 4},     {"I64", 8},  {"U64", 8},     {"F64", 8}};
  auto it = sizes.find(dtype);
  return it == sizes.end() ? 0 : it->second;
}

/// The file's bytes, mapped read-only for as long as a tensor view may point into them.
struct SafetensorsFile::Mapping {
  const std::byte* data = nullptr;
  size_t size = 0;
  ~Mapping() {
    if (data) munmap(const_cast<std::byte*>(data), size);
  }
};

SafetensorsFile::SafetensorsFile(const std::filesystem::path& path) : path_(path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(path, std::string("cannot open it: ") + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    fail(path, "not a regular file");
  }
  auto mapping = std::make_shared<Mapping>();
  mapping->size = size_t(st.st_size);
  if (mapping->size > 0) {
    void* p = mmap(nullptr, mapping->size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      close(fd);
      fail(path, std::string("cannot map it: ") + std::strerror(errno));
    }
    mapping->data = static_cast<const std::byte*>(p);
  }
  close(fd);
  mapping_ = mapping;

  // The header: its length, then that many bytes of JSON.
  if (mapping->size < 8) fail(path, "is " + std::to_string(mapping->size) + " bytes, too short for a safetensors header");
  uint64_t header_bytes = 0;
  for (int i = 7; i >= 0; --i) header_bytes = header_bytes << 8 | uint64_t(mapping->data[i]);
  if (header_bytes > max_header_bytes || header_bytes > mapping->size - 8)
    fail(path, "its header claims " + std::to_string(header_bytes) + " bytes; the file has " + std::to_string(mapping->size - 8) +
                   " after the length (and a header is at most " + std::to_string(max_header_bytes) + ")");
  const char* text = reinterpret_cast<const char*>(mapping->data + 8);
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(text, text + header_bytes, [](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
      if (depth > max_header_depth) throw std::length_error("nested deeper than a safetensors header");
      return true;
    });
  } catch (const std::exception& e) {
    fail(path, std::string("its header is not a safetensors header: ") + e.what());
  }
  if (!header.is_object()) fail(path, "its header is not a JSON object");

  // Each tensor: a known element type, a shape, a byte range of the data that holds exactly
  // the shape's elements.
  const std::byte* data = mapping->data + 8 + header_bytes;
  const uint64_t data_bytes = mapping->size - 8 - header_bytes;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) fail(path, "its __metadata__ is not an object of strings");
      for (const auto& [key, value] : entry.items()) {
        if (!value.is_string()) fail(path, "its __metadata__ entry '" + key + "' is not a string");
        metadata_[key] = value.get<std::string>();
      }
      continue;
    }
    const std::string what = "tensor '" + name + "'";
    if (!entry.is_object()) fail(path, what + " is not described by an object");
    for (const auto& [key, unused] : entry.items())
      if (key != "dtype" && key != "shape" && key != "data_offsets") fail(path, what + " has an unknown field '" + key + "'");
    if (!entry.contains("dtype") || !entry["dtype"].is_string()) fail(path, what + " has no dtype string");
    if (!entry.contains("shape") || !entry["shape"].is_array()) fail(path, what + " has no shape array");
    if (!entry.contains("data_offsets") || !entry["data_offsets"].is_array() || entry["data_offsets"].size() != 2)
      fail(path, what + " has no data_offsets pair");
    TensorView t;
    t.name = name;
    t.dtype = entry["dtype"].get<std::string>();
    const int element = dtype_bytes(t.dtype);
    if (element == 0) fail(path, what + " has element type '" + t.dtype + "', which safetensors does not define");
    uint64_t count = 1;
    for (const auto& d : entry["shape"]) {
      const int64_t extent = as_int(d, path, "a shape entry of " + what);
      t.shape.push_back(extent);
      if (extent != 0 && count > std::numeric_limits<uint64_t>::max() / uint64_t(extent)) fail(path, "the shape of " + what + " has more elements than 64 bits count");
      count *= uint64_t(extent);
    }
    const uint64_t begin = uint64_t(as_int(entry["data_offsets"][0], path, "the first offset of " + what));
    const uint64_t end = uint64_t(as_int(entry["data_offsets"][1], path, "the last offset of " + what));
    if (begin > end || end > data_bytes)
      fail(path, what + " lies at bytes " + std::to_string(begin) + " to " + std::to_string(end) + " of a data section of " +
                     std::to_string(data_bytes));
    if (count > std::numeric_limits<uint64_t>::max() / uint64_t(element) || count * uint64_t(element) != end - begin)
      fail(path, what + " holds " + std::to_string(end - begin) + " bytes, where its shape of " + std::to_string(count) + " " +
                     t.dtype + " elements needs " + std::to_string(count * uint64_t(element)));
    t.bytes = std::span<const std::byte>(data + begin, size_t(end - begin));
    ranges.emplace_back(begin, end);
    tensors_.emplace(name, std::move(t));
  }
  // The tensors tile the data section: no two share a byte, and none is left over.
  std::sort(ranges.begin(), ranges.end());
  uint64_t at = 0;
  for (const auto& [begin, end] : ranges) {
    if (begin < at) fail(path, "two tensors share bytes " + std::to_string(begin) + " to " + std::to_string(at));
    if (begin > at) fail(path, "bytes " + std::to_string(at) + " to " + std::to_string(begin) + " of its data are no tensor's");
    at = end;
  }
  if (at != data_bytes) fail(path, "bytes " + std::to_string(at) + " to " + std::to_string(data_bytes) + " of its data are no tensor's");
}

void write_safetensors(const std::filesystem::path& path, const std::vector<TensorToWrite>& tensors) {
  nlohmann::json header = nlohmann::json::object();
  uint64_t offset = 0;
  for (const TensorToWrite& t : tensors) {
    header[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.bytes.size()}}};
    offset += t.bytes.size();
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // the data starts 8-byte aligned, as writers pad it
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  char length[8];
  for (int i = 0; i < 8; ++i) length[i] = char((uint64_t(text.size()) >> (8 * i)) & 0xFF);
  out.write(length, 8);
  out.write(text.data(), std::streamsize(text.size()));
  for (const TensorToWrite& t : tensors) out.write(reinterpret_cast<const char*>(t.bytes.data()), std::streamsize(t.bytes.size()));
  if (!out) throw cutejit::Error("error: cannot write " + path.string());
}

}  // namespace qwen3
