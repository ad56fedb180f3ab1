#include "cache/warnings.hpp"

#include <array>
#include <atomic>
#include <cstdio>

namespace cutejit::detail {

void warn_once(CacheProblem kind, const std::string& message) {
  static std::array<std::atomic<bool>, size_t(CacheProblem::count)> printed{};
  if (printed[size_t(kind)].exchange(true)) return;
  std::fprintf(stderr, "cutejit: warning: %s (further warnings of this kind are not shown)\n", message.c_str());
}

}  // namespace cutejit::detail
