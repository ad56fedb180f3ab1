/** \file
 * A tensor-core operand tile in shared memory, as the descriptor that reads it: wgmma (sm_90a)
 * and tcgen05.mma (sm_100 family) read the same canonical layouts (K-major rows or MN-major
 * chunks of 16 to 128 swizzled bytes, 8-row groups a stride byte offset apart; the PTX ISA's
 * "Matrix Descriptor" sections), and differ only in where the fields sit in the 64 bits. So
 * one planner derives the fields from a tile's layout and swizzle and checks them by the
 * descriptor model of arch/sm100/descriptors.hpp: for every K step and every (mn, k) the MMA
 * reads, the byte the model says the hardware reads must be the byte where the tile holds that
 * element. Each atom encodes the plan in its own descriptor format.
 */
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cutejit/arch/sm100/descriptors.hpp"
#include "cutejit/dsl/trace_api.hpp"  // Where
#include "cutejit/layout/swizzle.hpp"

namespace cutejit::detail {

/// What an operand tile's layout gives its descriptors: the fields every K step shares and the
/// start of each K step, in bytes from the tile's data pointer.
struct SmemOperandPlan {
  sm100::SmemDescriptor fields;  ///< start address 0
  sm100::Major major = sm100::Major::k;
  std::vector<uint32_t> step_bytes;
  int64_t alignment = 16;  ///< the alignment the tile's data pointer needs (its swizzle pattern's)
};

/// Derives the plan for an (MN, K) tile of `element_bytes` elements with this (static) layout,
/// swizzle and swizzle base, read `k_per_mma` K elements at a time with `mn` rows, and checks
/// it against the descriptor model. `operand` names it in errors ("tcgen05.mma's A").
SmemOperandPlan plan_smem_operand(const Layout& layout, const std::optional<Swizzle>& swizzle, int64_t swizzle_base,
                                  int element_bytes, int mn, int k_per_mma, const std::string& operand, Where w);

}  // namespace cutejit::detail
