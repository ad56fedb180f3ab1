// The SASS of a cubin, read with cuobjdump (CUTEJIT_TEST_CUOBJDUMP's, else the toolkit's):
// how the tests check the instructions of targets they cannot run.
#pragma once

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include <unistd.h>

#include "support.hpp"

namespace test {

inline std::string cuobjdump() {
  if (const char* p = std::getenv("CUTEJIT_TEST_CUOBJDUMP"); p && *p && std::filesystem::exists(p)) return p;
  if (std::filesystem::exists("/usr/local/cuda/bin/cuobjdump")) return "/usr/local/cuda/bin/cuobjdump";
  return "";
}

/// `cuobjdump <flag>` of a cubin, as text.
inline std::string disassemble(const std::vector<char>& cubin, const char* flag) {
  std::string tool = cuobjdump();
  // No disassembler is a failure, not a skip: this is the only check of these targets' SASS.
  REQUIRE_FALSE(tool.empty());
  auto path = std::filesystem::temp_directory_path() / ("cutejit_sass_" + std::to_string(::getpid()) + ".cubin");
  std::ofstream(path, std::ios::binary).write(cubin.data(), std::streamsize(cubin.size()));
  std::string out;
  FILE* p = ::popen((tool + " " + flag + " " + path.string() + " 2>&1").c_str(), "r");
  REQUIRE(p != nullptr);
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, p)) > 0;) out.append(buffer, n);
  int rc = ::pclose(p);
  std::filesystem::remove(path);
  INFO(out);
  REQUIRE(rc == 0);
  return out;
}

/// A kernel's figure in `cuobjdump -res-usage` ("Function k:\n  REG:98 STACK:0 ..."), `field`
/// being REG, STACK, SHARED or LOCAL. The cubin's other functions (ptxas's slow paths, its TMEM
/// guardrail traps) have lines of their own, so the line is the one under the kernel's name.
inline int resource_usage(const std::vector<char>& cubin, const std::string& kernel, const std::string& field) {
  const std::string usage = disassemble(cubin, "-res-usage");
  std::smatch m;
  INFO(usage);
  REQUIRE(std::regex_search(usage, m, std::regex("Function " + kernel + ":\\s*[^\\n]*\\b" + field + ":([0-9]+)")));
  return std::stoi(m[1]);
}

/// The kernel `name` of `cubin` (whose SASS is `sass`) keeps everything in registers: no local
/// loads or stores, no stack frame.
inline void check_no_local_memory(const std::vector<char>& cubin, const std::string& name, const std::string& sass) {
  CHECK_FALSE(sass.find("LDL") != std::string::npos);
  CHECK_FALSE(sass.find("STL") != std::string::npos);
  CHECK(resource_usage(cubin, name, "STACK") == 0);
}

/// Every wgmma wait in the SASS is one the PTX asked for (wgmma.wait_group): ptxas added none,
/// as it does after each wgmma when it serializes them (C7510).
inline void check_wgmma_not_serialized(const std::string& ptx, const std::vector<char>& cubin) {
  const size_t asked = count(ptx, "wgmma.wait_group.sync.aligned");
  CHECK(asked > 0);
  CHECK(count(disassemble(cubin, "-sass"), "WARPGROUP.DEPBAR") == asked);
}

}  // namespace test
