/** \file
 * A compilation target: an SM version, and whether the arch-specific ("a") feature set is on
 * (wgmma and setmaxnreg need sm_90a, tcgen05 sm_100a, block-scaled mma sm_120a).
 */
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cutejit {

struct Target {
  int sm = 90;                ///< 80, 86, 89, 90, 100, 120
  bool arch_specific = true;  ///< the "a" suffix

  /// Parses "sm_90a", "sm_100a", "sm_80", ...; throws Error listing the valid names.
  static Target parse(std::string_view name);
  /// Every target cutejit compiles for.
  static std::vector<Target> all();
  std::string name() const;  ///< "sm_90a"
  bool operator==(const Target&) const = default;
};

}  // namespace cutejit
