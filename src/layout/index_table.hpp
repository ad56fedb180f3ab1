// The offsets of every index of a static layout, for host-side checks that read every element
// of a tile (the stmatrix copy atom's lane check, the tcgen05 operand descriptor check).
#pragma once

#include <cstdint>
#include <vector>

#include "cutejit/layout/layout.hpp"

namespace cutejit::detail {

/// l(i) for every index i of a static layout, in index order (colexicographic coordinates),
/// computed from the flattened leaves without building a coordinate per element.
std::vector<int64_t> index_table(const Layout& l);

}  // namespace cutejit::detail
