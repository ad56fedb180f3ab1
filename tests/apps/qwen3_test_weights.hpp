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

/// The values of tensor `e`, drawn from its name (so that two configurations share the weights
/// they have in common), norms near 1: a Model's WeightSource.
inline std::vector<cutejit::bf16> values(const qwen3::ExpectedTensor& e) {
  std::mt19937 rng(uint32_t(std::hash<std::string>{}(e.name)));
  const bool norm = e.shape.size() == 1;
  std::normal_distribution<float> d(norm ? 1.0f : 0.0f, norm ? 0.1f : 0.05f);
  int64_t n = 1;
  for (int64_t s : e.shape) n *= s;
  std::vector<cutejit::bf16> v(static_cast<size_t>(n));
  for (cutejit::bf16& x : v) {
    const uint16_t b = bf16_bits(d(rng));
    std::memcpy(&x, &b, 2);
  }
  return v;
}

/// Tensors of `c`'s model with values(), as a checkpoint writes them.
inline std::vector<TensorToWrite> weights(const Config& c) {
  std::vector<TensorToWrite> out;
  for (const qwen3::ExpectedTensor& e : qwen3::expected_tensors(c)) {
    const std::vector<cutejit::bf16> v = values(e);
    TensorToWrite t{e.name, "BF16", e.shape, std::vector<std::byte>(v.size() * 2)};
    std::memcpy(t.bytes.data(), v.data(), t.bytes.size());
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace qwen3_test
