// Hand-written PTX kernels for the machine's tests: one pointer parameter around a body (its
// `.loc 1 N` lines name "k.cu"), run on one grid with a fresh buffer of poisoned words.
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include "emulator/machine.hpp"

namespace test {

/// A kernel taking one pointer (in %rd1), around `body`; registers %p, %rs, %r, %rd, %f, %fd.
inline std::string kernel(const std::string& decls, const std::string& body) {
  return ".version 8.6\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 k_param_0)\n{\n"
         "  .reg .pred %p<8>;\n  .reg .b16 %rs<8>;\n  .reg .b32 %r<32>;\n  .reg .b64 %rd<16>;\n  .reg .f32 %f<8>;\n"
         "  .reg .f64 %fd<8>;\n" +
         decls + "  ld.param.u64 %rd1, [k_param_0];\n" + body + "  ret;\n}\n.file 1 \"k.cu\"\n";
}

/// Runs `ptx` on `blocks` CTAs of `threads`, its pointer a buffer of `words` words of 0xdeadbeef;
/// keeps the buffer afterwards and the fault's report, if any. `program` is a kernel's PTX
/// followed by the PTX modules linked with it, loaded as the driver loads them (link_ptx).
struct Run {
  cutejit::emulator::DeviceMemory memory;
  std::vector<uint32_t> out;
  std::string fault;

  Run(const std::string& ptx, uint32_t threads, size_t words = 64, uint32_t blocks = 1, cutejit::emulator::RunOptions options = {})
      : Run(std::vector<std::string>{ptx}, threads, words, blocks, options) {}

  Run(const std::vector<std::string>& program, uint32_t threads, size_t words = 64, uint32_t blocks = 1,
      cutejit::emulator::RunOptions options = {}) {
    using namespace cutejit::emulator;
    uint64_t buffer = memory.allocate(words * 4);
    out.assign(words, 0xdeadbeef);
    memory.write(buffer, out.data(), words * 4);
    try {
      std::vector<std::string_view> texts(program.begin(), program.end());
      auto module = link_ptx(texts, [&](const GlobalVariable& g) { return memory.allocate(g.init.size()); });
      LaunchConfig cfg;
      cfg.grid[0] = blocks;
      cfg.block[0] = threads;
      cfg.params.resize(8);
      std::memcpy(cfg.params.data(), &buffer, 8);
      if (!options.instruction_budget) options.instruction_budget = 1'000'000;
      Grid grid(*module, module->functions.at(0), cfg, memory, options);
      grid.run();
    } catch (const Fault& f) {
      fault = f.what();
    }
    memory.read(buffer, out.data(), words * 4);
  }
};

}  // namespace test
