#include <algorithm>
#include <cstdio>
#include <ctime>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "cli.hpp"

namespace cli {

Arguments::Arguments(const std::vector<std::string>& words, const std::vector<std::string>& flags,
                     const std::vector<std::string>& options) {
  auto known = [](const std::vector<std::string>& list, const std::string& w) { return std::find(list.begin(), list.end(), w) != list.end(); };
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (known(flags, w)) {
      if (flag(w)) throw UsageError{w + " is given twice"};
      flags_.push_back(w);
    }
    else if (known(options, w)) {
      if (i + 1 == words.size()) throw UsageError{w + " needs a value"};
      if (words[i + 1].empty()) throw UsageError{w + " needs a value, not an empty string"};
      if (option(w)) throw UsageError{w + " is given twice"};
      options_.emplace_back(w, words[++i]);
    } else if (w.size() > 1 && w[0] == '-') throw UsageError{"unknown option " + w};
    else positional_.push_back(w);
  }
}

bool Arguments::flag(const std::string& name) const { return std::find(flags_.begin(), flags_.end(), name) != flags_.end(); }

std::optional<std::string> Arguments::option(const std::string& name) const {
  for (const auto& [n, v] : options_)
    if (n == name) return v;
  return std::nullopt;
}

std::string human_size(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = double(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  return u == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", v, units[u]);
}

std::string human_time(int64_t unix_seconds) {
  return fmt::format("{:%Y-%m-%d %H:%M:%S} UTC", fmt::gmtime(std::time_t(unix_seconds)));
}

}  // namespace cli
