/** \file
 * PTX -> cubin for one target: nvJitLink (dlopen'ed from the CUDA toolkit) when present,
 * else the toolkit's `ptxas` as a subprocess; and ptxas for a kernel that uses setmaxnreg and
 * links nothing, since nvJitLink's separate compilation ignores setmaxnreg. Neither is needed
 * to trace or to emit PTX.
 */
#pragma once

#include <string>
#include <vector>

#include "cutejit/core/target.hpp"

namespace cutejit::detail {

struct Assembled {
  std::vector<char> cubin;
  std::string assembler;  ///< "nvJitLink" or "ptxas"
};

/// Relocatable PTX linked with the kernel's (the CUDA functions it calls, from NVRTC).
struct LinkedPtx {
  std::string name;
  std::string ptx;
};

/// Throws cutejit::Error with the assembler's log when it rejects the PTX, or when neither
/// assembler can be found (saying where it looked and how to point cutejit at one). Linking
/// `linked` needs nvJitLink: ptxas alone does not link.
Assembled assemble(const std::string& ptx, const Target& target, const std::string& kernel, const std::vector<LinkedPtx>& linked = {});

/// Loads nvJitLink on a background thread, once per process: its dlopen (tens of milliseconds)
/// then overlaps other work, such as the driver creating a context, instead of delaying the
/// process's first compile.
void warm_up_assembler();

/// "nvJitLink <path> <size>[, ptxas <path> <size>]" or "ptxas ..." — part of the cache key,
/// since it decides the cubin.
std::string assembler_version();

}  // namespace cutejit::detail
