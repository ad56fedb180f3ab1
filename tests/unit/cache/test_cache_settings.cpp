// Settings the JIT reads from the environment, and the CLI's own edge cases: a value it cannot
// use is said once on stderr, never silently ignored; a command that can do nothing says so.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <cutejit/jit/specialization.hpp>

#include "cache_test_support.hpp"

using namespace cache_test;

namespace {
/// This test program run again for the hidden test that compiles vector_add twice, with
/// `environment` (shell assignments) in front: its stdout and stderr.
std::string compile_in_child(const std::string& environment) {
  Run run = {};
  std::string command = environment + " " + std::filesystem::read_symlink("/proc/self/exe").string() + " '[.settings_child]' 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) run.output.append(buffer, n);
  int status = pclose(pipe);
  INFO(run.output);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  return run.output;
}
}  // namespace

TEST_CASE("settings child: compiles vector_add twice", "[.settings_child]") {
  cutejit::CompiledKernel first = compile_vector_add();
  cutejit::CompiledKernel second = compile_vector_add();
  std::printf("assembler=%s second_from_cache=%d\n", second.assembler.c_str(), int(second.from_cache));
}

TEST_CASE("a setting the JIT cannot use is said once, and the default is kept", "[cache]") {
  TempCache tmp;
  const std::string dir = "CUTEJIT_CACHE_DIR=" + tmp.path().string();

  std::string cache = compile_in_child(dir + " CUTEJIT_CACHE=disabled");
  CHECK_THAT(cache, Catch::Contains("CUTEJIT_CACHE='disabled' is neither on") && Catch::Contains("the cache stays on") &&
                        Catch::Contains("second_from_cache=1"));
    size_t said = 0;
  for (size_t at = cache.find("CUTEJIT_CACHE='"); at != std::string::npos; at = cache.find("CUTEJIT_CACHE='", at + 1)) ++said;
  CHECK(said == 1);  // once, though the process compiled twice
  // "off", in any case and with blanks around it, still turns it off.
  CHECK_THAT(compile_in_child(dir + " CUTEJIT_CACHE=' OFF '"), Catch::Contains("second_from_cache=0") && !Catch::Contains("warning"));

  // A bogus value is "auto": the assembler it picks is the one an unset variable picks here.
  std::string automatic = compile_in_child(dir + " CUTEJIT_CACHE=off");
  std::string picked = automatic.substr(automatic.find("assembler="), automatic.find(' ', automatic.find("assembler=")) - automatic.find("assembler="));
  std::string assembler = compile_in_child(dir + " CUTEJIT_CACHE=off CUTEJIT_ASSEMBLER=bogus");
  CHECK_THAT(assembler, Catch::Contains("CUTEJIT_ASSEMBLER='bogus' is not one of auto, nvjitlink and ptxas") && Catch::Contains(picked));
  CHECK_THAT(compile_in_child(dir + " CUTEJIT_CACHE=off CUTEJIT_ASSEMBLER=PTXAS"), Catch::Contains("assembler=ptxas"));

  // A dump directory that cannot be made is said once; the cache then works as without it.
  write_bytes(tmp.path() / "a-file", "");
  std::string dump = compile_in_child(dir + " CUTEJIT_DUMP=" + (tmp.path() / "a-file" / "dump").string());
  CHECK_THAT(dump, Catch::Contains("CUTEJIT_DUMP=") && Catch::Contains("nothing is dumped") && Catch::Contains("second_from_cache=1"));

  // Two bad settings in one process: each is said, one does not hide the other.
  std::string both = compile_in_child(dir + " CUTEJIT_CACHE=maybe CUTEJIT_CACHE_MAX_SIZE=lots");
  CHECK_THAT(both, Catch::Contains("CUTEJIT_CACHE='maybe'") && Catch::Contains("CUTEJIT_CACHE_MAX_SIZE ignored"));
}

TEST_CASE("warm and export: nothing to do is an error, and a failed write keeps the previous header", "[cache]") {
  TempCache tmp;
  auto v = cutejit::DeviceTensor<float>::make(256, std::array<int64_t, 1>{1 << 20}, std::array<int64_t, 1>{1});
  std::filesystem::path manifest = tmp.path() / "manifest.jsonl";
  write_bytes(manifest, cutejit::manifest_line(fixtures::vector_add.specialization(v, v, v)));
  const std::string plugin = " --plugin " + plugin_path().string() + " --manifest " + manifest.string();

  Run twice = cli(tmp, "list --json --json");
  CHECK(twice.exit_code == 2);
  CHECK_THAT(twice.output, Catch::Contains("--json is given twice"));
  Run no_names = cli(tmp, "warm" + plugin + " --kernels ,");
  CHECK(no_names.exit_code == 2);
  CHECK_THAT(no_names.output, Catch::Contains("--kernels lists no kernel"));
  // saxpy is registered, but the manifest has none of it.
  Run nothing = cli(tmp, "warm" + plugin + " --kernels saxpy");
  CHECK(nothing.exit_code == 1);
  CHECK_THAT(nothing.output, Catch::Contains("nothing to warm"));

  std::filesystem::path out = tmp.path() / "out";
  const std::string export_args = "export" + plugin + " --targets sm_90a --namespace k --out " + out.string();
  Run good = cli(tmp, export_args);
  REQUIRE(good.exit_code == 0);
  const std::string header = read_text(out / "k.hpp");
  // As on a full disk: every write beyond 4 KiB fails. The header written before stays whole.
  std::string command = "bash -c \"trap '' XFSZ; ulimit -f 4; " + cli_path().string() + " --dir " + tmp.path().string() + " " + export_args + " 2>&1\"";
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string output;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  int status = pclose(pipe);
  INFO(output);
  CHECK(WEXITSTATUS(status) == 1);
  CHECK_THAT(output, Catch::Contains("cannot write") && Catch::Contains("File too large") && Catch::Contains("unchanged"));
  CHECK(read_text(out / "k.hpp") == header);
  for (const auto& f : std::filesystem::recursive_directory_iterator(out))
    CHECK_FALSE(f.path().filename().string().find(".tmp.") != std::string::npos);  // no temporary left behind
}
