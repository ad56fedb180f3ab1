/** \file
 * cutejit's warnings on stderr: each topic is printed once per process, so a broken cache or
 * a bad setting says so without flooding a program that compiles hundreds of kernels, and one
 * bad setting does not hide another.
 */
#pragma once

#include <string>
#include <string_view>

namespace cutejit::detail {

/// Prints "cutejit: warning: <message>" unless a warning on `topic` was already printed.
/// Topics are short names: "cache entry", "cache write", or the environment variable's name.
void warn_once(std::string_view topic, const std::string& message);

/// An environment variable's value, trimmed of surrounding blanks; empty when unset.
std::string setting(const char* variable);

}  // namespace cutejit::detail
