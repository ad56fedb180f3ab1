/** \file
 * JSON from files another process wrote (cache metadata, tuning records), parsed with a bound
 * on nesting: nlohmann's parser is iterative, but printing, comparing or copying a value nested
 * 100,000 deep recurses once per level and overflows the stack, and printing one 40,000 deep
 * with indentation writes gigabytes.
 */
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace cutejit::detail {

/// `text` parsed; a discarded value (`is_discarded()`) with `problem` set when it is not JSON
/// or nests arrays and objects deeper than `max_depth`. Never throws.
nlohmann::json parse_bounded_json(std::string_view text, size_t max_depth, std::string& problem);

}  // namespace cutejit::detail
