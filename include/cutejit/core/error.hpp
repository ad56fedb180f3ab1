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

 private:
  /// The length of a leading "file:line: ", or 0.
  static size_t location_length(std::string_view m) {
    size_t colon = m.find(": ");
    if (colon == std::string_view::npos || colon == 0) return 0;
    size_t digits = colon;
    while (digits > 0 && m[digits - 1] >= '0' && m[digits - 1] <= '9') --digits;
    if (digits == colon || digits < 2 || m[digits - 1] != ':') return 0;
    for (size_t i = 0; i < digits - 1; ++i)
      if (m[i] == ' ' || m[i] == '\n') return 0;
    return colon + 2;
  }
  static std::string format(std::string_view m) {
    const size_t at = location_length(m);
    std::string_view rest = m.substr(at);
    while (rest.starts_with("error: ")) rest.remove_prefix(7);
    return std::string(m.substr(0, at)) + "error: " + std::string(rest);
  }
};

}  // namespace cutejit
