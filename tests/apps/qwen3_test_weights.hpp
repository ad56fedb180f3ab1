// What the Qwen3 tests share: a scratch directory for a checkpoint, and random weights for a
// configuration (drawn per tensor name, norms near 1, the rest small, as BF16).
#pragma once

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "qwen3/checkpoint.hpp"
#include "support.hpp"

namespace qwen3_test {

using qwen3::Config;
using qwen3::TensorToWrite;

using TempDir = test::TempDir;

inline uint16_t bf16_bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  return uint16_t((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
}

/// Tensors of `c`'s model with values drawn per name (so that two configurations share the
/// weights they have in common), norms near 1.
inline std::vector<TensorToWrite> weights(const Config& c) {
  std::vector<TensorToWrite> out;
  for (const qwen3::ExpectedTensor& e : qwen3::expected_tensors(c)) {
    std::mt19937 rng(uint32_t(std::hash<std::string>{}(e.name)));
    const bool norm = e.shape.size() == 1;
    std::normal_distribution<float> d(norm ? 1.0f : 0.0f, norm ? 0.1f : 0.05f);
    int64_t n = 1;
    for (int64_t s : e.shape) n *= s;
    TensorToWrite t{e.name, "BF16", e.shape, std::vector<std::byte>(size_t(2 * n))};
    for (int64_t i = 0; i < n; ++i) {
      const uint16_t b = bf16_bits(d(rng));
      std::memcpy(t.bytes.data() + 2 * i, &b, 2);
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace qwen3_test
