// A tensor-core operand's shared-memory descriptor fields, derived from the tile's layout and
// checked by the descriptor model (arch/sm100/descriptors.hpp) at every element the MMA reads.
#include <bit>
#include <string>

#include "cutejit/atom/smem_operand.hpp"
#include "cutejit/layout/algebra.hpp"
#include "layout/index_table.hpp"

namespace cutejit::detail {

namespace {
using sm100::Major;
using sm100::SmemSwizzle;

/// The descriptor's swizzle mode for a tile's swizzle, in elements of `e` bytes: the hardware
/// XORs byte-address bits [4, 4 + b) with [7, 7 + b), which is Swizzle<b, 4 - log2(e), 3> of an
/// element offset.
SmemSwizzle swizzle_mode(const std::optional<Swizzle>& sw, int e, const std::string& operand, Where w) {
  if (!sw || sw->bits() == 0) return SmemSwizzle::none;
  const int base = 4 - std::countr_zero(unsigned(e));
  if (sw->base() == base && sw->shift() == 3) {
    if (sw->bits() == 3) return SmemSwizzle::bytes128;
    if (sw->bits() == 2) return SmemSwizzle::bytes64;
    if (sw->bits() == 1) return SmemSwizzle::bytes32;
  }
  fail(operand + " tile has the swizzle " + to_string(*sw) + ", which the tensor core cannot read; for " +
           std::to_string(e) + "-byte elements it reads Sw<3," + std::to_string(base) + ",3> (128-byte), Sw<2," + std::to_string(base) +
           ",3> (64-byte), Sw<1," + std::to_string(base) + ",3> (32-byte) or none",
       w);
}

std::string describe(const sm100::SmemDescriptor& d) {
  return to_string(d.swizzle) + ", leading byte offset " + std::to_string(d.leading_byte_offset) + ", stride byte offset " +
         std::to_string(d.stride_byte_offset);
}
}  // namespace

SmemOperandPlan plan_smem_operand(const Layout& layout, const std::optional<Swizzle>& swizzle, int64_t swizzle_base, int e, int mn,
                                  int k_per_mma, const std::string& operand, Where w) {
  const std::string name = operand + " tile";
  if (rank(layout) != 2) fail(name + " is (MN, K), of rank 2, not " + to_string(layout), w);
  const int64_t rows = size(mode(layout, 0)).value(), cols = size(mode(layout, 1)).value();
  if (rows != mn) fail(name + " has " + std::to_string(rows) + " rows, but the atom reads " + std::to_string(mn), w);
  if (cols % k_per_mma != 0 || cols == 0)
    fail(name + " has " + std::to_string(cols) + " elements of K, not a multiple of the " + std::to_string(k_per_mma) +
             " one MMA reads",
         w);
  // A layout is the sum of its modes' offsets: one table per mode.
  const std::vector<int64_t> row_at = index_table(mode(layout, 0)), col_at = index_table(mode(layout, 1));
  auto unswizzled = [&](int64_t r, int64_t c) { return swizzle_base + row_at[size_t(r)] + col_at[size_t(c)]; };
  auto byte_of = [&](int64_t r, int64_t c) {
    const int64_t o = unswizzled(r, c);
    return e * (swizzle ? (*swizzle)(o) : o);
  };

  SmemOperandPlan plan;
  const SmemSwizzle mode_bits = swizzle_mode(swizzle, e, operand, w);
  const int width = sm100::swizzle_bytes(mode_bits);
  plan.fields.swizzle = mode_bits;
  plan.alignment = width ? 8 * width : 16;
  const int64_t k_step = col_at.size() > 1 ? col_at[1] : 0, mn_step = row_at.size() > 1 ? row_at[1] : 0;
  if (k_step == 1) plan.major = Major::k;
  else if (mn_step == 1) plan.major = Major::mn;
  else
    fail(name + " " + to_string(layout) + " has neither K nor MN contiguous (stride 1); the tensor core reads one of the two", w);
  // The byte distance from element 0 to (r, c) before the swizzle, where the dimension has it.
  auto bytes_to = [&](int64_t r, int64_t c) -> int64_t {
    if (r >= rows || c >= cols) return 16;  // a stride the MMA never takes: any valid value
    return e * (row_at[size_t(r)] + col_at[size_t(c)] - row_at[0] - col_at[0]);
  };
  auto field = [&](int64_t bytes, const char* what) -> uint32_t {
    if (bytes <= 0 || bytes % 16 != 0 || bytes >= (int64_t(1) << 18))
      fail(name + " " + to_string(layout) + " is not in a layout the tensor core reads: its " + what + " would be " +
               std::to_string(bytes) + " bytes, and descriptors take positive multiples of 16 below 2^18",
           w);
    return uint32_t(bytes);
  };
  if (plan.major == Major::k) {
    // Rows of the swizzle width (or 16-byte core-matrix rows), 8-row groups SBO apart; without
    // a swizzle, K's 16-byte core matrices LBO apart.
    plan.fields.stride_byte_offset = field(bytes_to(8, 0), "stride byte offset (from row 0 to row 8)");
    plan.fields.leading_byte_offset = width ? 16 : field(bytes_to(0, 16 / e), "leading byte offset (from one 16 bytes of K to the next)");
  } else {
    // Rows of K; MN in chunks of the swizzle width (16 bytes without one).
    const int chunk = (width ? width : 16) / e;
    if (width) {
      plan.fields.leading_byte_offset = field(bytes_to(chunk, 0), "leading byte offset (from one swizzle-wide chunk of MN to the next)");
      plan.fields.stride_byte_offset = field(bytes_to(0, 8), "stride byte offset (from K row 0 to K row 8)");
    } else {
      plan.fields.stride_byte_offset = field(bytes_to(chunk, 0), "stride byte offset (from one 16 bytes of MN to the next)");
      plan.fields.leading_byte_offset = field(bytes_to(0, 8), "leading byte offset (from K row 0 to K row 8)");
    }
  }
  // Each K step starts at its first element's byte before the swizzle (the hardware swizzles
  // the address it forms); then every element the MMA reads must be where the tile holds it.
  for (int64_t s = 0; s < cols / k_per_mma; ++s) {
    const int64_t start = e * unswizzled(0, s * k_per_mma);
    if (start < 0 || start % 16 != 0 || start >= (int64_t(1) << 18))
      fail(name + ": K step " + std::to_string(s) + " starts " + std::to_string(start) +
               " bytes into the tile, not a multiple of 16 (descriptor addresses are 16-byte units)",
           w);
    sm100::SmemDescriptor d = plan.fields;
    d.start_address = uint32_t(start);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < k_per_mma; ++c) {
        const int64_t want = byte_of(r, s * k_per_mma + c);
        const int64_t got = sm100::operand_address(d, plan.major, 8 * e, int(r), int(c));
        if (want != got)
          fail(name + " " + (swizzle ? to_string(*swizzle) + " o " : std::string()) + to_string(layout) +
                   " is not in a layout the tensor core reads: element (" + std::to_string(r) + ", " + std::to_string(s * k_per_mma + c) +
                   ") is at byte " + std::to_string(want) + " of the tile, but the descriptor (" +
                   (plan.major == Major::k ? "K-major, " : "MN-major, ") + describe(d) + ") reads it at byte " + std::to_string(got),
               w);
      }
    plan.step_bytes.push_back(uint32_t(start));
  }
  return plan;
}

}  // namespace cutejit::detail
