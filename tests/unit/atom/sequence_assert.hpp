// What every attention kernel that reads cu_seqlens shows in its code: the device check of each
// sequence's offsets (fixtures::sequence).
#pragma once

#include <catch2/catch.hpp>

#include <string>

#include "sass.hpp"
#include "support.hpp"

namespace test {

/// How a kernel's device check fails: printing its message then trapping, or (in a kernel that
/// issues wgmma, where the printf's call would serialize every wgmma) trapping only.
enum class AssertFailure { prints, traps };

/// The check's trap in the SASS; where it prints, its message in the PTX (a .b8 array of its
/// bytes) and a stack of exactly the 8 bytes of its printf arguments (a path taken only to
/// trap): no spills. Where it only traps: no call to vprintf, and no stack beyond
/// `spilled_bytes` (the spills a kernel is known to have; none unless given).
inline void check_sequence_assert(const cutejit::CompiledKernel& k, AssertFailure failure, int spilled_bytes = 0) {
  CHECK(contains(disassemble(k.cubin, "-sass"), "BPT.TRAP"));
  if (failure == AssertFailure::prints) {
    std::string bytes;
    for (char c : std::string("cu_seqlens_q has a sequence that starts below 0")) bytes += (bytes.empty() ? "" : ", ") + std::to_string(int(c));
    CHECK(contains(k.ptx, bytes));
    CHECK(resource_usage(k.cubin, k.name, "STACK") == 8);
  } else {
    CHECK_FALSE(contains(k.ptx, "vprintf"));
    CHECK(resource_usage(k.cubin, k.name, "STACK") <= spilled_bytes);
  }
}

}  // namespace test
