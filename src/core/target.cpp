#include "cutejit/core/target.hpp"

#include "cutejit/core/error.hpp"

namespace cutejit {

namespace {
/// Each architecture and the variants the toolkit has for it: sm_8x are plain only, sm_90 has no
/// family variant, the Blackwell ones have all three.
struct Architecture {
  int sm;
  bool arch_specific;
  bool family;
};
constexpr Architecture architectures[] = {
    {80, false, false}, {86, false, false}, {89, false, false}, {90, true, false},  {100, true, true},
    {103, true, true},  {110, true, true},  {120, true, true},  {121, true, true},
};

std::string valid_names() {
  std::string s;
  for (const Target& t : Target::all()) s += (s.empty() ? "" : ", ") + t.name();
  return s;
}
}  // namespace

std::vector<Target> Target::all() {
  std::vector<Target> out;
  for (const Architecture& a : architectures) {
    out.push_back({a.sm, Variant::portable});
    if (a.family) out.push_back({a.sm, Variant::family});
    if (a.arch_specific) out.push_back({a.sm, Variant::arch_specific});
  }
  return out;
}

std::string Target::name() const {
  return "sm_" + std::to_string(sm) + (variant == Variant::arch_specific ? "a" : variant == Variant::family ? "f" : "");
}

Target Target::parse(std::string_view text) {
  for (const Target& t : all())
    if (t.name() == text) return t;
  throw Error("unknown target '" + std::string(text) + "'; valid targets: " + valid_names());
}

int Target::max_shared_per_block() const {
  switch (sm) {
    case 80: return 163 * 1024;
    case 90: case 100: case 103: case 110: return 227 * 1024;
    default: return 99 * 1024;  // sm_86, sm_89, sm_120, sm_121
  }
}

Target Target::for_compute_capability(int major, int minor) {
  const int sm = major * 10 + minor;
  for (const Architecture& a : architectures)
    if (a.sm == sm) return {sm, a.arch_specific ? Variant::arch_specific : Variant::portable};
  std::string supported;
  for (const Architecture& a : architectures)
    supported += (supported.empty() ? "" : ", ") + std::to_string(a.sm / 10) + "." + std::to_string(a.sm % 10);
  throw Error("compute capability " + std::to_string(major) + "." + std::to_string(minor) +
              " is not one cutejit targets (supported: " + supported + ")");
}

}  // namespace cutejit
