// What the apps' programs read from their command lines: numbers, lists of counts, and token
// ids as comma-separated integers.
#pragma once

#include <cstdint>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace qwen3 {

/// The whole of `text` as a number of type T; else std::invalid_argument naming `what` (the
/// option or argument it was given for).
template <class T>
T parse_number(const std::string& what, const std::string& text) {
  std::istringstream in(text);
  T value{};
  if (!(in >> value) || !in.eof()) throw std::invalid_argument("error: " + what + " takes a number, not '" + text + "'");
  return value;
}

/// `text` as a whole number from `least` (1, or 0 where 0 means something) up; else
/// std::invalid_argument naming `what`.
inline int64_t parse_count(const std::string& what, const std::string& text, int64_t least = 1) {
  int64_t n = least - 1;
  try {
    n = parse_number<int64_t>(what, text);
  } catch (const std::invalid_argument&) {
  }
  if (n < least)
    throw std::invalid_argument("error: " + what + " takes whole numbers from " + std::to_string(least) + " up, not '" + text + "'");
  return n;
}

/// "1,8,32" as whole numbers from `least` up (parse_count's), in order.
inline std::vector<int64_t> parse_count_list(const std::string& what, const std::string& text, int64_t least = 1) {
  std::vector<int64_t> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) out.push_back(parse_count(what, item, least));
  if (out.empty())
    throw std::invalid_argument("error: " + what + " takes a comma-separated list of whole numbers from " + std::to_string(least) +
                                " up, not '" + text + "'");
  return out;
}

/// "1,22,333" as token ids. Throws std::invalid_argument naming the list for anything but
/// comma-separated whole numbers from 0 up (the model checks them against its vocabulary).
inline std::vector<int32_t> parse_token_list(const std::string& list) {
  std::vector<int32_t> tokens;
  std::stringstream in(list);
  for (std::string id; std::getline(in, id, ',');) {
    size_t used = 0;
    long long value = -1;
    try {
      value = std::stoll(id, &used);
    } catch (const std::logic_error&) {
    }
    if (value < 0 || value > std::numeric_limits<int32_t>::max() || used != id.size() || id.empty())
      throw std::invalid_argument("error: token ids are comma-separated whole numbers from 0 up; '" + id + "' in '" + list + "' is not one");
    tokens.push_back(int32_t(value));
  }
  if (tokens.empty()) throw std::invalid_argument("error: the token list is empty");
  return tokens;
}

}  // namespace qwen3
