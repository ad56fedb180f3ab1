/** \file
 * The cache's warnings: each kind is printed once per process on stderr, so a broken cache
 * says so without flooding a program that compiles hundreds of kernels.
 */
#pragma once

#include <string>

namespace cutejit::detail {

enum class CacheProblem { bad_entry, unreadable, unwritable, bad_setting, count };

/// Prints "cutejit: warning: <message>" unless a warning of this kind was already printed.
void warn_once(CacheProblem kind, const std::string& message);

}  // namespace cutejit::detail
