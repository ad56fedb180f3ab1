// Token ids as the apps' programs take them on the command line: comma-separated integers.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace qwen3 {

inline std::vector<int32_t> parse_token_list(const std::string& list) {
  std::vector<int32_t> tokens;
  std::stringstream in(list);
  for (std::string id; std::getline(in, id, ',');) tokens.push_back(int32_t(std::stol(id)));
  return tokens;
}

}  // namespace qwen3
