/** \file
 * A host-side model of how a warp's shared-memory access is served, to prove a layout free of
 * bank conflicts before any kernel runs.
 *
 * Shared memory has 32 banks of 4-byte words. A warp instruction in which each lane moves
 * `bytes` (4, 8 or 16) is split into phases of 128 / bytes lanes (all 32, halves, or quarters:
 * a 16-byte cp.async, ld.shared.v4, or ldmatrix's eight row addresses per matrix); a phase takes
 * as many wavefronts as its most used bank has distinct words (lanes reading one word share it).
 * A conflict-free access takes one wavefront per phase.
 */
#pragma once

#include <cstdint>
#include <span>

namespace cutejit {

struct SharedAccess {
  int phases = 0;
  int wavefronts = 0;
  /// The wavefronts beyond one per phase: 0 for a conflict-free access.
  int conflicts() const { return wavefronts - phases; }
};

/// The phases and wavefronts of one access: lane i moves `bytes` at byte address `addresses[i]`
/// (aligned to `bytes`); fewer than 32 addresses model an instruction that reads fewer (ldmatrix.x2
/// uses the addresses of lanes 0-15).
SharedAccess shared_memory_access(std::span<const int64_t> addresses, int bytes);

}  // namespace cutejit
