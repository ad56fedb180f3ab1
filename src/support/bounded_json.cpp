#include "support/bounded_json.hpp"

#include <algorithm>

namespace cutejit::detail {

namespace {

/// The deepest nesting of arrays and objects in `text`, brackets inside strings not counted;
/// stops counting past `limit`.
size_t nesting(std::string_view text, size_t limit) {
  size_t depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit) break;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

}  // namespace

nlohmann::json parse_bounded_json(std::string_view text, size_t max_depth, std::string& problem) {
  // Counted before parsing, so that nothing deeper is ever built.
  if (nesting(text, max_depth) > max_depth) {
    problem = "its JSON is nested more than " + std::to_string(max_depth) + " levels deep";
    return nlohmann::json::value_t::discarded;
  }
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) problem = "it is not JSON";
  return j;
}

}  // namespace cutejit::detail
