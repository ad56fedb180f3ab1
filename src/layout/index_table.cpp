#include "layout/index_table.hpp"

#include "cutejit/layout/algebra.hpp"

namespace cutejit::detail {

std::vector<int64_t> index_table(const Layout& l) {
  IntTuple shape = flatten_to_tuple(l.shape()), stride = flatten_to_tuple(l.stride());
  std::vector<std::pair<int64_t, int64_t>> leaves;
  for (int leaf = 0; leaf < shape.rank(); ++leaf) leaves.emplace_back(shape[leaf].value(), stride[leaf].value());
  std::vector<int64_t> table(size_t(size(l).value()));
  for (size_t i = 0; i < table.size(); ++i) {
    int64_t rest = int64_t(i), index = 0;
    for (auto [n, d] : leaves) {
      index += (rest % n) * d;
      rest /= n;
    }
    table[i] = index;
  }
  return table;
}

}  // namespace cutejit::detail
