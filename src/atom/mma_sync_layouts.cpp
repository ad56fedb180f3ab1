// The PTX ISA's mma.sync fragment layouts as CuTe thread-value layouts. In every m16n8 kind a
// thread t is (t % 4, t / 4): its "thread in group" picks K (or N for C) and its "group" picks
// M (or N for B); a 32-bit register holds 32 / bits consecutive K values, and registers step
// first to M + 8, then to the next K group of four threads' registers.
#include "cutejit/atom/sm80/mma.hpp"

#include <string>
#include <utility>
#include <vector>

#include "cutejit/core/error.hpp"

namespace cutejit::detail {

namespace {
std::string s(int64_t v) { return std::to_string(v); }
void check_shape(int m, int n, int k) {
  bool ok = (m == 16 && n == 8 && (k == 4 || k == 8 || k == 16 || k == 32)) || (m == 8 && n == 8 && k == 4);
  if (!ok) throw Error("error: mma.sync has no m" + s(m) + "n" + s(n) + "k" + s(k) + " fragments; it has m16n8k{4,8,16,32} and m8n8k4");
}
/// ((4,8),values):((thread_in_group_stride,1),strides): the group picks M (A) or N (B) one by
/// one. Value modes of size 1 are left out as CuTe writes them (none left: a single 1:0 mode).
Layout thread_values(int64_t thread_in_group_stride, std::vector<std::pair<int64_t, int64_t>> values) {
  std::vector<IntTuple> shape, stride;
  for (auto [size, step] : values)
    if (size > 1) shape.emplace_back(size), stride.emplace_back(step);
  if (shape.empty()) shape.emplace_back(1), stride.emplace_back(0);
  IntTuple vs = shape.size() == 1 ? shape[0] : IntTuple(shape), vd = stride.size() == 1 ? stride[0] : IntTuple(stride);
  return Layout(IntTuple{IntTuple{4, 8}, vs}, IntTuple{IntTuple{thread_in_group_stride, 1}, vd});
}
}  // namespace

Layout mma_sync_layout_a(int m, int n, int k, int bits) {
  check_shape(m, n, k);
  if (m == 8) return parse_layout("((4,8),1):((8,1),0)");  // f64: a0 = (row g, col t % 4)
  const int per_register = 32 / bits, groups = k / (4 * per_register);  // K groups of 4 threads' registers
  // Values: the register's K neighbours, then row + 8, then the next K group.
  return thread_values(16 * per_register, {{per_register, 16}, {2, 8}, {groups, 64 * per_register}});
}

Layout mma_sync_layout_b(int m, int n, int k, int bits) {
  check_shape(m, n, k);
  if (m == 8) return parse_layout("((4,8),1):((8,1),0)");  // f64: b0 = (row t % 4, col g)
  const int per_register = 32 / bits, groups = k / (4 * per_register);
  // Values: the register's K neighbours, then the next K group.
  return thread_values(8 * per_register, {{per_register, 8}, {groups, 32 * per_register}});
}

Layout mma_sync_layout_c(int m, int n, int k) {
  check_shape(m, n, k);
  if (m == 8) return parse_layout("((4,8),2):((16,1),8)");  // f64: c0, c1 = (row g, cols 2 (t % 4) + {0, 1})
  return parse_layout("((4,8),(2,2)):((32,1),(16,8))");
}

}  // namespace cutejit::detail
