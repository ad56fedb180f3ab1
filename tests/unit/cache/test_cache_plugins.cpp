// Plugins that misbehave while loading or compiling, and warm's reasons (issue 35, 2.10 and
// 2.11): the CLI names the plugin and the kernel and exits 1, whatever the plugin did.
#include <catch2/catch.hpp>

#include "cache_test_support.hpp"

using namespace cache_test;

namespace {

/// The source tree this test program was built from (for the headers a plugin includes).
std::filesystem::path source_tree() {
  const std::filesystem::path build = std::filesystem::read_symlink("/proc/self/exe").parent_path().parent_path();
  const std::string cache = read_text(build / "CMakeCache.txt");
  const std::string field = "CMAKE_HOME_DIRECTORY:INTERNAL=";
  size_t at = cache.find(field);
  if (at == std::string::npos) return {};
  at += field.size();
  return cache.substr(at, cache.find('\n', at) - at);
}

/// `source` built into a shared library in `directory`; empty (and a WARN) when no compiler is here.
std::filesystem::path build_plugin(const std::filesystem::path& directory, const std::string& name, const std::string& source) {
  const std::filesystem::path file = directory / (name + ".cpp"), library = directory / ("lib" + name + ".so");
  write_bytes(file, source);
  const std::string command = "c++ -std=c++20 -shared -fPIC -O0 -I" + (source_tree() / "include").string() + " -o " + library.string() +
                              " " + file.string() + " 2>&1";
  if (std::system(command.c_str()) != 0) {
    WARN("no C++ compiler could build a test plugin (" + command + "): the plugin cases were not checked");
    return {};
  }
  return library;
}

// The kernel the throwing plugin registers, with the same parameters: its specialization here is
// the manifest line the plugin's warm reads.
cutejit::Kernel thrower{"thrower", [](cutejit::Tensor<cutejit::f32>) {}};

}  // namespace

TEST_CASE("a plugin that throws, crashes or exits while loading is named, and warm exits 1", "[cache]") {
  TempCache tmp;
  auto v = cutejit::DeviceTensor<float>::make(256, std::array<int64_t, 1>{1 << 20}, std::array<int64_t, 1>{1});
  const std::filesystem::path manifest = tmp.path() / "manifest.jsonl";
  REQUIRE(cutejit::append_to_manifest(manifest, fixtures::vector_add.specialization(v, v, v)).empty());
  struct Bad {
    const char* name;
    const char* body;
    const char* said;
  };
  for (const Bad& bad : {Bad{"throws", "#include <stdexcept>\nstatic int x = [] { throw std::runtime_error(\"broken plugin\"); return 0; }();\n",
                             "broken plugin"},
                         Bad{"throws_int", "static int x = [] { throw 42; return 0; }();\n", "exception"},
                         Bad{"segfaults", "#include <csignal>\nstatic int x = [] { std::raise(SIGSEGV); return 0; }();\n", "SIGSEGV"},
                         Bad{"exits", "#include <cstdlib>\nstatic int x = [] { std::exit(0); return 0; }();\n", "exit"}}) {
    INFO(bad.name);
    const std::filesystem::path plugin = build_plugin(tmp.path(), bad.name, bad.body);
    if (plugin.empty()) return;
    Run warm = cli(tmp, "warm --plugin " + plugin.string() + " --manifest " + manifest.string() + " --targets sm_90a -j 1");
    INFO(warm.output);
    CHECK(warm.exit_code == 1);
    CHECK_THAT(warm.output, Catch::Contains(plugin.string()) && Catch::Contains(bad.said));
  }
}

TEST_CASE("a kernel that throws something other than a std::exception fails warm by name", "[cache]") {
  TempCache tmp;
  const std::filesystem::path plugin = build_plugin(tmp.path(), "thrower",
                                                    "#include <cutejit/cutejit.hpp>\n#include <cutejit/jit/registry.hpp>\n"
                                                    "cutejit::Kernel thrower{\"thrower\", [](cutejit::Tensor<cutejit::f32>) { throw 42; }};\n"
                                                    "CUTEJIT_REGISTER(thrower);\n");
  if (plugin.empty()) return;
  auto v = cutejit::DeviceTensor<float>::make(256, std::array<int64_t, 1>{1 << 20}, std::array<int64_t, 1>{1});
  const std::filesystem::path manifest = tmp.path() / "manifest.jsonl";
  REQUIRE(cutejit::append_to_manifest(manifest, thrower.specialization(v)).empty());
  Run warm = cli(tmp, "warm --plugin " + plugin.string() + " --manifest " + manifest.string() + " --targets sm_90a,sm_100a -j 2");
  INFO(warm.output);
  CHECK(warm.exit_code == 1);
  CHECK_THAT(warm.output, Catch::Contains("failed: thrower for sm_90a") && Catch::Contains("failed: thrower for sm_100a") &&
                              Catch::Contains("not a std::exception") && Catch::Contains("2 failed"));
}

TEST_CASE("warm says why the cache did not keep a kernel", "[cache]") {
  TempCache tmp;
  auto v = cutejit::DeviceTensor<float>::make(256, std::array<int64_t, 1>{1 << 20}, std::array<int64_t, 1>{1});
  const std::filesystem::path manifest = tmp.path() / "manifest.jsonl";
  REQUIRE(cutejit::append_to_manifest(manifest, fixtures::vector_add.specialization(v, v, v)).empty());
  ScopedEnv limit("CUTEJIT_CACHE_MAX_SIZE", "1K");
  Run warm = cli(tmp, "warm --plugin " + plugin_path().string() + " --manifest " + manifest.string() + " --targets sm_90a -j 1");
  CHECK(warm.exit_code == 1);
  CHECK_THAT(warm.output, Catch::Contains("larger than the cache's size limit (1024 bytes") && !Catch::Contains("says why"));
}
