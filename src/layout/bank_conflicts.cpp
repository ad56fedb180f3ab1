// The shared-memory bank model: phases of 128 bytes of lanes, each served in as many wavefronts
// as its most used bank has distinct 32-bit words.
#include "cutejit/layout/bank_conflicts.hpp"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "cutejit/core/error.hpp"

namespace cutejit {

SharedAccess shared_memory_access(std::span<const int64_t> addresses, int bytes) {
  if (bytes != 4 && bytes != 8 && bytes != 16) throw Error("error: a shared-memory access moves 4, 8 or 16 bytes per lane, not " + std::to_string(bytes));
  if (addresses.size() > 32) throw Error("error: a warp has 32 lanes, not " + std::to_string(addresses.size()));
  const size_t per_phase = size_t(128 / bytes);
  SharedAccess a;
  for (size_t first = 0; first < addresses.size(); first += per_phase) {
    std::vector<std::set<int64_t>> words(32);
    for (size_t lane = first; lane < std::min(addresses.size(), first + per_phase); ++lane) {
      if (addresses[lane] < 0 || addresses[lane] % bytes != 0)
        throw Error("error: lane " + std::to_string(lane) + "'s address " + std::to_string(addresses[lane]) + " is not " +
                    std::to_string(bytes) + "-byte aligned");
      for (int64_t word = addresses[lane] / 4; word < (addresses[lane] + bytes) / 4; ++word) words[size_t(word % 32)].insert(word);
    }
    size_t most = 0;
    for (const auto& w : words) most = std::max(most, w.size());
    ++a.phases;
    a.wavefronts += int(most);
  }
  return a;
}

}  // namespace cutejit
