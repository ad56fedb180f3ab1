// What every attention kernel that reads cu_seqlens shows in its code: the device check of each
// sequence's offsets (examples::sequence).
#pragma once

#include <catch2/catch.hpp>

#include <string>

#include "sass.hpp"
#include "support.hpp"

namespace test {

/// The check's message in the PTX (a .b8 array of its bytes), its trap in the SASS, and a stack
/// of exactly the 8 bytes of its printf arguments (a path taken only to trap): no spills.
inline void check_sequence_assert(const cutejit::CompiledKernel& k) {
  std::string bytes;
  for (char c : std::string("cu_seqlens_q has a sequence that starts below 0")) bytes += (bytes.empty() ? "" : ", ") + std::to_string(int(c));
  CHECK(contains(k.ptx, bytes));
  CHECK(contains(disassemble(k.cubin, "-sass"), "BPT.TRAP"));
  CHECK(resource_usage(k.cubin, k.name, "STACK") == 8);
}

}  // namespace test
