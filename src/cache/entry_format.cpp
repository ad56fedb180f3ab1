#include "cache/entry_format.hpp"

#include <cstring>

#include <nlohmann/json.hpp>

#include "cache/cubin_check.hpp"
#include "cache/key.hpp"
#include "cutejit/core/error.hpp"
#include "support/bounded_json.hpp"

namespace cutejit::detail {

namespace {

constexpr char magic[8] = {'C', 'U', 'T', 'E', 'J', 'I', 'T', 'K'};

/// Little-endian on disk; every machine cutejit runs on is little-endian, so the header is
/// copied as is.
struct Header {
  char magic[8];
  uint32_t format;
  uint32_t metadata_bytes;
  uint64_t ptx_bytes;
  uint64_t cubin_bytes;
  unsigned char checksum[16];  ///< XXH3-128 of everything after the header
};
static_assert(sizeof(Header) == 48);

void put_checksum(Header& h, std::string_view body) {
  std::array<unsigned char, 16> sum = xxh3_128(body);
  std::memcpy(h.checksum, sum.data(), sum.size());
}

/// Metadata is about 600 bytes; a bound on it bounds what `show` and `list --json` print.
constexpr uint32_t max_metadata_bytes = 64 << 10;
/// Metadata nests three levels; more is not metadata this cutejit wrote.
constexpr size_t max_metadata_depth = 16;

}  // namespace

std::string entry_file_name(std::string_view key) { return std::string(key) + ".entry"; }

std::string encode_entry(std::string_view key, const CompiledKernel& k, int64_t created_unix) {
  const ToolchainVersions v = toolchain_versions();
  const StageTimes& t = k.times;
  // The PTX section holds the kernel's PTX, then each module linked with it.
  std::string ptx = k.ptx;
  nlohmann::json linked = nlohmann::json::array();
  for (const std::string& l : k.linked_ptx) ptx += l, linked.push_back(l.size());
  nlohmann::json meta = {
      {"format", entry_format_version},
      {"key", key},
      {"kernel", k.name},
      {"target", k.target.name()},
      {"assembler", k.assembler},
      {"versions", {{"cutejit", v.cutejit}, {"llvm", v.llvm}, {"assembler", v.assembler}}},
      {"ptx_bytes", ptx.size()},
      {"linked_ptx_bytes", linked},
      {"cubin_bytes", k.cubin.size()},
      {"cubin_xxh3_128", xxh3_128_hex(std::string_view(k.cubin.data(), k.cubin.size()))},
      {"compile_ms",
       {{"trace", t.trace_ms}, {"verify", t.verify_ms}, {"lower", t.lower_ms}, {"codegen", t.codegen_ms}, {"assemble", t.assemble_ms}}},
      {"created", created_unix},
  };
  std::string json = meta.dump(1);
  std::string body = json + ptx + std::string(k.cubin.data(), k.cubin.size());
  Header h{};
  std::memcpy(h.magic, magic, sizeof magic);
  h.format = entry_format_version;
  h.metadata_bytes = uint32_t(json.size());
  h.ptx_bytes = ptx.size();
  h.cubin_bytes = k.cubin.size();
  put_checksum(h, body);
  return std::string(reinterpret_cast<const char*>(&h), sizeof h) + body;
}

DecodedEntry decode_entry(std::string_view bytes, std::string_view key, bool same_toolchain) {
  DecodedEntry out;
  auto bad = [&](std::string why) {
    out.problem = std::move(why);
    return out;
  };
  if (bytes.empty()) return bad("empty file");
  Header h;
  if (bytes.size() < sizeof h) return bad("truncated header (" + std::to_string(bytes.size()) + " bytes)");
  std::memcpy(&h, bytes.data(), sizeof h);
  if (std::memcmp(h.magic, magic, sizeof magic) != 0) return bad("not a cutejit cache entry");
  if (h.format != entry_format_version)
    return bad("entry format " + std::to_string(h.format) + ", this cutejit reads format " + std::to_string(entry_format_version));
  uint64_t expected = sizeof h + uint64_t(h.metadata_bytes) + h.ptx_bytes + h.cubin_bytes;
  if (h.ptx_bytes > bytes.size() || h.cubin_bytes > bytes.size() || expected != bytes.size())
    return bad("size " + std::to_string(bytes.size()) + " bytes, header says " + std::to_string(expected));
  std::string_view body = bytes.substr(sizeof h);
  Header check{};
  put_checksum(check, body);
  if (std::memcmp(check.checksum, h.checksum, sizeof h.checksum) != 0) return bad("checksum mismatch");

  if (h.metadata_bytes > max_metadata_bytes)
    return bad("the metadata is " + std::to_string(h.metadata_bytes) + " bytes, more than the " + std::to_string(max_metadata_bytes) +
               " allowed");
  out.metadata_json = std::string(body.substr(0, h.metadata_bytes));
  std::string json_problem;
  nlohmann::json meta = parse_bounded_json(out.metadata_json, max_metadata_depth, json_problem);
  if (meta.is_discarded()) return bad("the metadata is unusable: " + json_problem);
  if (!meta.is_object()) return bad("metadata is not JSON");
  try {
    if (meta.at("key").get<std::string>() != key) return bad("stored under key " + std::string(key) + " but made for " + meta.at("key").get<std::string>());
    if (same_toolchain) {
      const ToolchainVersions v = toolchain_versions();
      const nlohmann::json& versions = meta.at("versions");
      for (auto [name, mine] : {std::pair{"cutejit", &v.cutejit}, {"llvm", &v.llvm}, {"assembler", &v.assembler}})
        if (versions.at(name).get<std::string>() != *mine)
          return bad(std::string("written with ") + name + " " + versions.at(name).get<std::string>() + ", this is " + *mine);
    }
    out.kernel.name = meta.at("kernel").get<std::string>();
    out.kernel.target = Target::parse(meta.at("target").get<std::string>());
    out.kernel.assembler = meta.at("assembler").get<std::string>();
    out.created = meta.at("created").get<int64_t>();
  } catch (const std::exception& e) {  // a missing or mistyped field, or an unknown target
    return bad(std::string("metadata is incomplete: ") + e.what());
  }
  std::string_view ptx_section = body.substr(h.metadata_bytes, h.ptx_bytes);
  std::string_view cubin = body.substr(h.metadata_bytes + h.ptx_bytes);
  out.kernel.cubin.assign(cubin.begin(), cubin.end());
  if (std::string problem = cubin_problem(cubin, out.kernel.target, out.kernel.name); !problem.empty()) return bad(problem);
  // The checksum proves the bytes are as written, not that the metadata describes them: an
  // entry edited and re-summed must still agree with itself.
  try {
    if (meta.at("format").get<uint32_t>() != h.format) return bad("the metadata's format differs from the header's");
    if (meta.at("ptx_bytes").get<uint64_t>() != h.ptx_bytes || meta.at("cubin_bytes").get<uint64_t>() != h.cubin_bytes)
      return bad("the metadata's sizes differ from the header's");
    if (meta.at("cubin_xxh3_128").get<std::string>() != xxh3_128_hex(cubin)) return bad("the cubin's hash differs from the metadata's");
    // The PTX linked with the kernel (NVRTC's) ends the section; an entry written before it was
    // kept has none, and its kernel key differs (pipeline.cpp), so no kernel that needs it finds it.
    uint64_t linked_total = 0;
    std::vector<uint64_t> linked;
    if (meta.contains("linked_ptx_bytes")) {
      if (!meta.at("linked_ptx_bytes").is_array()) return bad("the metadata's linked_ptx_bytes is not a list");
      for (const nlohmann::json& n : meta.at("linked_ptx_bytes")) {
        linked.push_back(n.get<uint64_t>());
        if (linked.back() > ptx_section.size() - linked_total) return bad("the metadata's linked PTX is larger than the PTX section");
        linked_total += linked.back();
      }
    }
    out.kernel.ptx = std::string(ptx_section.substr(0, ptx_section.size() - linked_total));
    for (size_t at = out.kernel.ptx.size(); uint64_t n : linked) out.kernel.linked_ptx.emplace_back(ptx_section.substr(at, n)), at += n;
  } catch (const std::exception& e) {
    return bad(std::string("metadata is incomplete: ") + e.what());
  }
  const std::string& ptx = out.kernel.ptx;
  if (ptx.find(".target " + out.kernel.target.name()) == std::string::npos)
    return bad("the metadata says target " + out.kernel.target.name() + ", the PTX is for another");
  if (ptx.find(".entry " + out.kernel.name + "(") == std::string::npos)
    return bad("the metadata says kernel '" + out.kernel.name + "', the PTX has no such entry");
  out.kernel.cache_key = std::string(key);
  out.kernel.from_cache = true;
  return out;
}

}  // namespace cutejit::detail
