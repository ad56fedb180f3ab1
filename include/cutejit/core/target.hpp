/** \file
 * A compilation target: an SM version and its feature set. A plain target ("sm_90") runs on its
 * architecture and every later one of the same major version; an arch-specific one ("sm_90a")
 * adds the instructions of exactly that architecture (wgmma, tcgen05, block-scaled mma.sync) and
 * runs only there; a family one ("sm_100f") adds what the architectures of one family share and
 * runs on each of them (sm_100f on sm_100 and sm_103).
 */
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cutejit {

struct Target {
  enum class Variant : unsigned char { portable, family, arch_specific };

  int sm = 90;  ///< 80, 86, 89, 90, 100, 103, 110, 120, 121
  Variant variant = Variant::arch_specific;

  /// Parses "sm_90a", "sm_100f", "sm_80", ...; throws Error listing the valid names.
  static Target parse(std::string_view name);
  /// The target a GPU of compute capability major.minor gets: its arch-specific one where the
  /// architecture has one (9.0 -> sm_90a, 10.0 -> sm_100a, 12.1 -> sm_121a), else the plain one.
  /// Throws Error for an architecture cutejit does not target.
  static Target for_compute_capability(int major, int minor);
  /// Every target cutejit compiles for.
  static std::vector<Target> all();
  std::string name() const;  ///< "sm_90a"
  /// The most shared memory one block may opt in to on this architecture, in bytes (the CUDA
  /// programming guide's table): what a kernel compiled with no GPU may plan for.
  int max_shared_per_block() const;
  bool arch_specific() const { return variant == Variant::arch_specific; }
  bool family() const { return variant == Variant::family; }
  bool operator==(const Target&) const = default;
};

}  // namespace cutejit
