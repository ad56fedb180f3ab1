/** \file
 * The one exception type cutejit throws. Every message reads like a compiler's, in one format:
 * "file:line: error: what went wrong, and what would be valid" when the user's line is known,
 * "error: ..." when it is not (host-side checks, I/O, the driver).
 */
#pragma once

#include <source_location>
#include <stdexcept>
#include <string>
#include <string_view>
#include <algorithm>

namespace cutejit {

class Error : public std::runtime_error {
 public:
  /// A message, with or without a location already in front ("file:line: ..."); an "error: "
  /// the message starts with is not repeated.
  explicit Error(const std::string& message) : std::runtime_error(format(message)) {}

  /// A message attributed to a line of the user's code, unless the message names one already.
  Error(const std::string& message, const std::source_location& where)
      : std::runtime_error(location_length(message) ? format(message)
                                                    : std::string(where.file_name()) + ":" + std::to_string(where.line()) + ": " +
                                                          format(message)) {}

  /// Whether the message names a line ("file:line: error: ...").
  bool located() const { return location_length(what()) > 0; }

  /// What went wrong, without the location and the "error: " in front: for putting the message
  /// into another error's context.
  std::string_view message() const {
    std::string_view m = what();
    m.remove_prefix(location_length(m));
    if (m.starts_with("error: ")) m.remove_prefix(7);
    return m;
  }

 private:
  /// The length of a leading "file:line: " (a file name, which may hold blanks but no ": ",
  /// then ":<digits>: "), or 0.
  static size_t location_length(std::string_view m) {
    const size_t line_end = std::min(m.find('\n'), m.size());
    for (size_t colon = m.find(':'); colon != std::string_view::npos && colon < line_end; colon = m.find(':', colon + 1)) {
      size_t digits = colon + 1;
      while (digits < line_end && m[digits] >= '0' && m[digits] <= '9') ++digits;
      if (m.substr(0, colon).find(": ") != std::string_view::npos) return 0;
      if (digits > colon + 1 && colon > 0 && m.substr(digits, 2) == ": ") return digits + 2;
    }
    return 0;
  }
  static std::string format(std::string_view m) {
    const size_t at = location_length(m);
    std::string_view rest = m.substr(at);
    while (rest.starts_with("error: ")) rest.remove_prefix(7);
    return std::string(m.substr(0, at)) + "error: " + std::string(rest);
  }
};

}  // namespace cutejit
