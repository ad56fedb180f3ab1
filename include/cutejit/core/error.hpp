/** \file
 * The one exception type cutejit throws. Every message reads like a compiler's:
 * where (the user's file:line when known), what went wrong, and what would be valid.
 */
#pragma once

#include <source_location>
#include <stdexcept>
#include <string>

namespace cutejit {

class Error : public std::runtime_error {
 public:
  /// A message with no user source location (host-side checks, I/O, the driver).
  explicit Error(const std::string& message) : std::runtime_error(message) {}

  /// A message attributed to a line of the user's code: "file:line: message".
  Error(const std::string& message, const std::source_location& where)
      : std::runtime_error(located(message, where)) {}

 private:
  static std::string located(const std::string& message, const std::source_location& where) {
    return std::string(where.file_name()) + ":" + std::to_string(where.line()) + ": " + message;
  }
};

}  // namespace cutejit
