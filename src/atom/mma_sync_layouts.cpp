// The PTX ISA's mma.sync fragment layouts as CuTe thread-value layouts. In every m16n8 kind a
// thread t is (t % 4, t / 4): its "thread in group" picks K (or N for C) and its "group" picks
// M (or N for B); a 32-bit register holds 32 / bits consecutive K values, and registers step
// first to M + 8, then to the next K group of four threads' registers.
#include "cutejit/atom/sm80/mma.hpp"

#include <string>

#include "cutejit/core/error.hpp"

namespace cutejit::detail {

namespace {
std::string s(int64_t v) { return std::to_string(v); }
void check_shape(int m, int n, int k) {
  bool ok = (m == 16 && n == 8 && (k == 4 || k == 8 || k == 16 || k == 32)) || (m == 8 && n == 8 && k == 4);
  if (!ok) throw Error("error: mma.sync has no m" + s(m) + "n" + s(n) + "k" + s(k) + " fragments; it has m16n8k{4,8,16,32} and m8n8k4");
}
}  // namespace

Layout mma_sync_layout_a(int m, int n, int k, int bits) {
  check_shape(m, n, k);
  if (m == 8) return parse_layout("((4,8),1):((8,1),0)");  // f64: a0 = (row g, col t % 4)
  const int per_register = 32 / bits, groups = k / (4 * per_register);  // K groups of 4 threads' registers
  std::string values = per_register == 1 ? "2" : "(" + s(per_register) + ",2";
  std::string strides = per_register == 1 ? "8" : "(16,8";
  if (groups > 1) {
    values = (per_register == 1 ? "(2" : values) + "," + s(groups);
    strides = (per_register == 1 ? "(8" : strides) + "," + s(64 * per_register);
  }
  if (per_register > 1 || groups > 1) values += ")", strides += ")";
  return parse_layout("((4,8)," + values + "):((" + s(16 * per_register) + ",1)," + strides + ")");
}

Layout mma_sync_layout_b(int m, int n, int k, int bits) {
  check_shape(m, n, k);
  if (m == 8) return parse_layout("((4,8),1):((8,1),0)");  // f64: b0 = (row t % 4, col g)
  const int per_register = 32 / bits, groups = k / (4 * per_register);
  std::string values, strides;
  if (per_register > 1 && groups > 1) values = "(" + s(per_register) + "," + s(groups) + ")", strides = "(8," + s(32 * per_register) + ")";
  else if (per_register > 1) values = s(per_register), strides = "8";
  else if (groups > 1) values = s(groups), strides = s(32);
  else values = "1", strides = "0";
  return parse_layout("((4,8)," + values + "):((" + s(8 * per_register) + ",1)," + strides + ")");
}

Layout mma_sync_layout_c(int m, int n, int k) {
  check_shape(m, n, k);
  if (m == 8) return parse_layout("((4,8),2):((16,1),8)");  // f64: c0, c1 = (row g, cols 2 (t % 4) + {0, 1})
  return parse_layout("((4,8),(2,2)):((32,1),(16,8))");
}

}  // namespace cutejit::detail
