#include "core/warnings.hpp"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>

namespace cutejit::detail {

void warn_once(std::string_view topic, const std::string& message) {
  // Never destroyed: a warning may come from a thread still at work while the process exits.
  static std::mutex& mutex = *new std::mutex;
  static std::set<std::string, std::less<>>& printed = *new std::set<std::string, std::less<>>;
  {
    std::lock_guard lock(mutex);
    if (!printed.emplace(topic).second) return;
  }
  std::fprintf(stderr, "cutejit: warning: %s (further warnings of this kind are not shown)\n", message.c_str());
}

std::string setting(const char* variable) {
  const char* v = std::getenv(variable);
  std::string s = v ? v : "";
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t start = 0;
  while (start < s.size() && std::isspace(static_cast<unsigned char>(s[start]))) ++start;
  return s.substr(start);
}

}  // namespace cutejit::detail
