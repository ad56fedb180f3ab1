#include "cache/cubin_check.hpp"

#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

namespace cutejit::detail {

namespace {

constexpr uint16_t machine_cuda = 190;  // EM_CUDA
constexpr uint32_t section_symbols = 2, section_note = 7;  // SHT_SYMTAB, SHT_NOTE
constexpr unsigned symbol_function = 2, binding_global = 1;  // STT_FUNC, STB_GLOBAL

/// Little-endian fields of a byte string, each read only when it lies inside the string.
struct Bytes {
  std::string_view data;
  template <class T>
  std::optional<T> at(uint64_t offset) const {
    if (offset > data.size() || data.size() - offset < sizeof(T)) return std::nullopt;
    T v;
    std::memcpy(&v, data.data() + offset, sizeof v);
    return v;
  }
  /// The bytes [offset, offset + size), or nothing when they are not all inside.
  std::optional<std::string_view> range(uint64_t offset, uint64_t size) const {
    if (offset > data.size() || data.size() - offset < size) return std::nullopt;
    return data.substr(offset, size);
  }
};

struct Section {
  uint32_t name, type, link;
  uint64_t offset, size, entry_size;
};

/// The NUL-terminated string at `offset` of a string table, or nothing when it runs off the end.
std::optional<std::string_view> string_at(std::string_view table, uint64_t offset) {
  if (offset >= table.size()) return std::nullopt;
  size_t end = table.find('\0', offset);
  if (end == std::string_view::npos) return std::nullopt;
  return table.substr(offset, end - offset);
}

/// The target the toolkit's note says the cubin was assembled for ("sm_90a"), if it says.
std::optional<std::string> assembled_for(std::string_view note) {
  for (std::string_view flag : {"-arch ", "-arch="}) {
    size_t at = note.find(flag);
    if (at == std::string_view::npos) continue;
    at += flag.size();
    size_t end = at;
    while (end < note.size() && note[end] != ' ' && note[end] != '\0') ++end;
    std::string_view arch = note.substr(at, end - at);
    if (arch.starts_with("sm_")) return std::string(arch);
  }
  return std::nullopt;
}

}  // namespace

std::string cubin_problem(std::string_view cubin, const Target& target, std::string_view kernel) {
  const Bytes elf{cubin};
  const std::string not_elf = "the cubin is not a 64-bit little-endian CUDA ELF file with sound section headers";
  if (cubin.size() < 64 || std::memcmp(cubin.data(), "\x7f" "ELF", 4) != 0) return "the cubin is not an ELF file";
  if (cubin[4] != 2 || cubin[5] != 1 || elf.at<uint16_t>(18) != machine_cuda) return not_elf;

  // The SM number: bits 8-15 of the flags since ABI version 8 (CUDA 12.8), bits 0-7 before.
  const uint32_t flags = *elf.at<uint32_t>(48);
  const int sm = int(uint8_t(cubin[8]) >= 8 ? (flags >> 8) & 0xff : flags & 0xff);
  if (sm != target.sm) return "the cubin is for sm_" + std::to_string(sm) + ", not the metadata's " + target.name();

  const uint64_t section_headers = *elf.at<uint64_t>(40);
  const uint16_t header_size = *elf.at<uint16_t>(58), count = *elf.at<uint16_t>(60), names_index = *elf.at<uint16_t>(62);
  if (header_size != 64 || names_index >= count) return not_elf;
  std::vector<Section> sections;
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t h = section_headers + i * 64;
    std::optional<uint32_t> name = elf.at<uint32_t>(h), type = elf.at<uint32_t>(h + 4), link = elf.at<uint32_t>(h + 40);
    std::optional<uint64_t> offset = elf.at<uint64_t>(h + 24), size = elf.at<uint64_t>(h + 32), entry = elf.at<uint64_t>(h + 56);
    if (!name || !type || !link || !offset || !size || !entry) return not_elf;
    sections.push_back({*name, *type, *link, *offset, *size, *entry});
  }
  auto contents = [&](const Section& s) { return s.type == 8 ? std::optional<std::string_view>("") : elf.range(s.offset, s.size); };  // SHT_NOBITS
  std::optional<std::string_view> names = contents(sections[names_index]);
  if (!names) return not_elf;

  bool found = false;
  for (const Section& s : sections) {
    std::optional<std::string_view> body = contents(s);
    if (!body) return not_elf;
    if (s.type == section_note && string_at(*names, s.name) == ".note.nv.tkinfo")
      if (std::optional<std::string> arch = assembled_for(*body); arch && *arch != target.name())
        return "the cubin is for " + *arch + ", not the metadata's " + target.name();
    if (s.type != section_symbols || found) continue;
    if (s.entry_size != 24 || s.link >= sections.size()) return not_elf;
    std::optional<std::string_view> strings = contents(sections[s.link]);
    if (!strings) return not_elf;
    for (uint64_t at = 0; at + 24 <= body->size(); at += 24) {
      const Bytes symbol{body->substr(at, 24)};
      const uint8_t info = uint8_t((*body)[at + 4]);
      if ((info & 0xf) == symbol_function && (info >> 4) == binding_global && *symbol.at<uint16_t>(6) != 0 &&
          string_at(*strings, *symbol.at<uint32_t>(0)) == kernel)
        found = true;
    }
  }
  if (!found) return "the cubin defines no kernel named '" + std::string(kernel) + "'";
  return {};
}

}  // namespace cutejit::detail
