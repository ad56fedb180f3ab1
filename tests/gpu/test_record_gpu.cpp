// CUTEJIT_RECORD=FILE on a real GPU: every specialization a process loads for launching is
// appended to FILE once, and the manifest compiles again, for another target, elsewhere.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

#include <cutejit/jit/specialization.hpp>

#include "support.hpp"

using namespace cutejit;

namespace {
Kernel record_probe{"record_probe", [](Tensor<f32> out, Constexpr<int> value) {
  Int i = block_idx().x * block_dim().x + thread_idx().x;
  if_(i < size(out), [&] { out(i) = float(value); });
}};
}  // namespace

TEST_CASE("CUTEJIT_RECORD writes each launched specialization once, and it compiles again from the manifest", "[gpu]") {
  std::filesystem::path file = std::filesystem::temp_directory_path() / ("cutejit-record-" + std::to_string(getpid()) + ".jsonl");
  std::filesystem::remove(file);
  setenv("CUTEJIT_RECORD", file.c_str(), 1);
  Device gpu;
  auto a = gpu.upload(std::vector<float>(1024, 0.0f));
  auto b = gpu.upload(std::vector<float>(1000, 0.0f));
  Launch cfg{.grid = 4, .block = 256};
  record_probe(gpu, cfg, a, 1);
  record_probe(gpu, cfg, a, 1);  // the same specialization: not recorded again
  record_probe(gpu, cfg, a, 2);
  record_probe(gpu, cfg, b, 1);  // 1000 is a multiple of 8, not 16: another specialization
  gpu.synchronize();
  unsetenv("CUTEJIT_RECORD");

  std::ifstream lines(file);
  int raw_lines = 0;
  for (std::string line; std::getline(lines, line);) ++raw_lines;
  CHECK(raw_lines == 3);  // each specialization written once, not once per launch
  std::vector<Specialization> recorded = read_manifest(file);
  REQUIRE(recorded.size() == 3);
  for (const Specialization& s : recorded) {
    CHECK(s.kernel == "record_probe");
    CHECK(s.target == gpu.target().name());
  }
  CHECK(recorded[0] == Specialization{"record_probe", record_probe.specialization(a, 1).words, gpu.target().name()});
  for (const Specialization& s : recorded) {
    CompiledKernel k = record_probe.compile(Target::parse("sm_100a"), s);
    CHECK(k.cubin.size() > 0);
  }
  CHECK(b.to_host()[999] == 1.0f);
  std::filesystem::remove(file);
}
