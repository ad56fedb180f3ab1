// Files and settings a hostile or broken environment hands the JIT and the CLI (issue 35, part
// 2): links planted at temporary names, a file-size limit, sizes, toolkit and cache paths that
// cannot be used, and a manifest too large to read.
#include <catch2/catch.hpp>

#include <sys/resource.h>
#include <sys/wait.h>

#include <csignal>

#include <cutejit/jit/autotune.hpp>

#include "cache_test_support.hpp"

using namespace cache_test;

namespace {

/// The files `directory` holds whose names start with `prefix`.
size_t count_starting_with(const std::filesystem::path& directory, const std::string& prefix) {
  size_t n = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(directory, ec))
    n += e.path().filename().string().starts_with(prefix);
  return n;
}

}  // namespace

TEST_CASE("export writes through a fresh temporary file: a link planted at the old name is not followed", "[cache]") {
  TempCache tmp;
  auto v = cutejit::DeviceTensor<float>::make(256, std::array<int64_t, 1>{1 << 20}, std::array<int64_t, 1>{1});
  const std::filesystem::path manifest = tmp.path() / "manifest.jsonl";
  REQUIRE(cutejit::append_to_manifest(manifest, fixtures::vector_add.specialization(v, v, v)).empty());
  const std::filesystem::path out = tmp.path() / "out", victim = tmp.path() / "victim";
  std::filesystem::create_directories(out);
  write_bytes(victim, "precious");
  const std::string cli_file = cli_path().string(), plugin = plugin_path().string(), manifest_file = manifest.string(), out_dir = out.string();
  // The name the export used was predictable from its process id: the child plants the link
  // for its own id, then becomes the CLI.
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const std::string planted = out_dir + "/.exported.hpp.tmp." + std::to_string(getpid());
    if (symlink(victim.c_str(), planted.c_str()) != 0) _exit(90);
    execl(cli_file.c_str(), cli_file.c_str(), "--dir", tmp.path().c_str(), "export", "--plugin", plugin.c_str(), "--manifest",
          manifest_file.c_str(), "--targets", "sm_90a", "--out", out_dir.c_str(), "--namespace", "exported", "-j", "1", (char*)nullptr);
    _exit(91);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  CHECK(read_text(victim) == "precious");
  CHECK(std::filesystem::is_regular_file(out / "exported.hpp"));
}

TEST_CASE("dumps and manifests do not follow a link planted at their names", "[cache]") {
  TempCache tmp;
  const std::filesystem::path dump = tmp.path() / "dump", victim = tmp.path() / "victim";
  std::filesystem::create_directories(dump);
  write_bytes(victim, "precious");
  // Every name this kernel's dumps could take in this process (a later compile's are numbered).
  for (const char* stage : {"traced.mlir", "lowered.mlir", "ll", "opt.ll", "ptx", "cubin"})
    for (int n = 0; n < 64; ++n)
      std::filesystem::create_symlink(victim, dump / ("vector_add.sm_89." + (n ? std::to_string(n) + "." : std::string()) + stage));
  {
    ScopedEnv dumping("CUTEJIT_DUMP", dump.string());
    compile_vector_add("sm_89");
  }
  CHECK(read_text(victim) == "precious");
  CHECK(std::filesystem::is_regular_file(dump / "vector_add.sm_89.ptx"));

  const std::filesystem::path manifest = tmp.path() / "launches.jsonl";
  std::filesystem::create_symlink(victim, manifest);
  auto v = cutejit::DeviceTensor<float>::make(256, std::array<int64_t, 1>{1 << 20}, std::array<int64_t, 1>{1});
  CHECK_THAT(cutejit::append_to_manifest(manifest, fixtures::vector_add.specialization(v, v, v)), Catch::Contains("symbolic link"));
  CHECK(read_text(victim) == "precious");
}

TEST_CASE("cache child: compile with a 4 KiB file size limit, SIGXFSZ at its default", "[.cache_child_xfsz]") {
  std::signal(SIGXFSZ, SIG_DFL);
  rlimit limit{4096, 4096};
  REQUIRE(setrlimit(RLIMIT_FSIZE, &limit) == 0);
  cutejit::CompiledKernel k = compile_vector_add();
  REQUIRE_FALSE(k.cubin.empty());
  REQUIRE_FALSE(compile_vector_add().from_cache);
}

TEST_CASE("a file-size limit (ulimit -f) is a full disk: the JIT, warm and export keep working", "[cache]") {
  TempCache tmp;
  const SelfRun child = run_self({"[.cache_child_xfsz]"});
  INFO(child.output);
  REQUIRE(child.status != -1);
  CHECK_FALSE(WIFSIGNALED(child.status));
  CHECK((WIFEXITED(child.status) && WEXITSTATUS(child.status) == 0));
  CHECK(count_starting_with(tmp.path() / "v1", ".") == 0);  // no temporary file left

  auto v = cutejit::DeviceTensor<float>::make(256, std::array<int64_t, 1>{1 << 20}, std::array<int64_t, 1>{1});
  const std::filesystem::path manifest = tmp.path() / "manifest.jsonl";
  REQUIRE(cutejit::append_to_manifest(manifest, fixtures::vector_add.specialization(v, v, v)).empty());
  const std::string common = "--plugin " + plugin_path().string() + " --manifest " + manifest.string() + " --targets sm_100a -j 1";
  Run warm = cli_raw_prefixed("ulimit -f 4; ", "--dir " + tmp.path().string() + " warm " + common);
  CHECK(warm.exit_code == 1);
  CHECK_THAT(warm.output, Catch::Contains("File too large") && !Catch::Contains("says why"));
  const std::filesystem::path out = tmp.path() / "out";
  Run exported = cli_raw_prefixed("ulimit -f 4; ", "--dir " + tmp.path().string() + " export " + common + " --out " + out.string() +
                                                       " --namespace limited");
  CHECK(exported.exit_code == 1);
  CHECK_THAT(exported.output, Catch::Contains("File too large"));
  CHECK(count_starting_with(out / "cubins", ".") == 0);
  CHECK(count_starting_with(out, ".") == 0);
}

TEST_CASE("a size too small for a double is a size, not an exception", "[cache]") {
  const std::string tiny = "0." + std::string(307, '0') + "1";
  CHECK(cutejit::KernelCache::parse_size(tiny) == 0);
  CHECK(cutejit::KernelCache::parse_size("1." + std::string(400, '5') + "K") == 1592);
  CHECK_THROWS_AS(cutejit::KernelCache::parse_size(std::string(400, '9')), cutejit::Error);
  TempCache tmp;
  {
    ScopedEnv size("CUTEJIT_CACHE_MAX_SIZE", tiny);
    CHECK_NOTHROW(cutejit::KernelCache::from_environment());
    CHECK_NOTHROW(compile_vector_add());
    Run stats = cli(tmp, "stats");
    CHECK(stats.exit_code == 0);
    CHECK_THAT(stats.output, !Catch::Contains("stod"));
  }
  ScopedEnv size("CUTEJIT_CACHE_MAX_SIZE", std::string(400, '9'));
  Run stats = cli(tmp, "stats");
  CHECK(stats.exit_code == 0);
  CHECK_THAT(stats.output, Catch::Contains("CUTEJIT_CACHE_MAX_SIZE ignored"));
}

TEST_CASE("a CUDA_HOME or CUDA_PATH that cannot be used is skipped", "[cache]") {
  TempCache tmp;
  const std::filesystem::path loop = tmp.path() / "loop";
  std::filesystem::create_symlink(loop, loop);
  for (const std::string& bad : {loop.string(), "/" + std::string(5000, 'a'), (loop / "cuda").string()}) {
    INFO(bad.substr(0, 80));
    for (const char* variable : {"CUDA_HOME", "CUDA_PATH"}) {
      ScopedEnv home(variable, bad);
      cutejit::CompiledKernel k;
      CHECK_NOTHROW(k = compile_vector_add());
      CHECK_FALSE(k.cubin.empty());
    }
  }
}

TEST_CASE("a relative XDG_CACHE_HOME is ignored, as the XDG specification says", "[cache]") {
  ScopedEnv dir("CUTEJIT_CACHE_DIR", std::nullopt), xdg("XDG_CACHE_HOME", "relative/cache"), home("HOME", "/home/someone");
  CHECK(cutejit::KernelCache::default_directory() == "/home/someone/.cache/cutejit");
  ScopedEnv absolute("XDG_CACHE_HOME", "/var/cache/someone");
  CHECK(cutejit::KernelCache::default_directory() == "/var/cache/someone/cutejit");
}

TEST_CASE("a manifest larger than any real one is refused by its size, before it is read", "[cache]") {
  TempCache tmp;
  const std::filesystem::path manifest = tmp.path() / "huge.jsonl";
  write_bytes(manifest, "");
  std::filesystem::resize_file(manifest, uint64_t(128) << 20);  // sparse: no disk, and no memory if not read
  auto started = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(cutejit::read_manifest(manifest), Catch::Contains("bytes") && Catch::Contains("more than"));
  CHECK_THROWS_WITH(cutejit::read_tuning_questions(manifest), Catch::Contains("more than"));
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(2));
}
