/** \file
 * One CUDA C++ source a traced kernel calls into, as the tracer records it and NVRTC compiles
 * it: the user's text, their NVRTC options, and the generated extern "C" wrappers the kernel
 * calls. Calls to functions of one source with one set of options share a program, so a
 * helper the source defines is defined once in the link.
 */
#pragma once

#include <string>
#include <vector>

namespace cutejit::detail {

struct CudaProgram {
  std::string source;
  std::vector<std::string> options;
  std::vector<std::string> wrappers;  ///< each an `extern "C" __device__` definition
  std::vector<std::string> names;     ///< the functions called, for messages
  std::string declared_at;            ///< "file.cpp:12", where the first was declared
};

}  // namespace cutejit::detail
