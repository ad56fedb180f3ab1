// Manifests, the kernel registry, and `cutejit-cache warm` / `export` run as a user would.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <cutejit/jit/specialization.hpp>

#include "block_reduce.hpp"
#include "cache_test_support.hpp"
#include "gemm_bf16.hpp"
#include "saxpy.hpp"

using namespace cache_test;
using cutejit::Specialization;

namespace {

cutejit::DeviceTensor<float> vector(int64_t n) {
  return cutejit::DeviceTensor<float>::make(256, std::array<int64_t, 1>{n}, std::array<int64_t, 1>{1});
}

/// Five specializations: two of vector_add (lengths with different divisibility), saxpy, and
/// block_reduce with two Constexpr block sizes.
std::vector<Specialization> five_specializations() {
  auto v = vector(1 << 20), odd = vector(1000), one = vector(1);
  return {fixtures::vector_add.specialization(v, v, v), fixtures::vector_add.specialization(odd, odd, odd),
          fixtures::saxpy.specialization(2.0f, v, v), fixtures::block_reduce.specialization(v, one, 256),
          fixtures::block_reduce.specialization(v, one, 128)};
}

std::string write_manifest(const TempCache& tmp, const std::vector<Specialization>& specs, const std::string& extra = "") {
  std::filesystem::path file = tmp.path() / "manifest.jsonl";
  std::string text;
  for (const Specialization& s : specs) text += cutejit::manifest_line(s);
  write_bytes(file, text + extra);
  return file.string();
}

std::string warm_args(const std::string& manifest, const std::string& targets) {
  return "warm --plugin " + plugin_path().string() + " --manifest " + manifest + " --targets " + targets;
}

nlohmann::json json_of(const Run& run) {
  size_t start = run.output.find('{');
  REQUIRE(start != std::string::npos);
  return nlohmann::json::parse(run.output.substr(start));
}

}  // namespace

TEST_CASE("a manifest round-trips, and its words compile the same kernel as the arguments", "[cache]") {
  TempCache tmp;
  std::vector<Specialization> specs = five_specializations();
  specs[0].target = "sm_90a";
  std::string manifest = write_manifest(tmp, specs, cutejit::manifest_line(specs[0]) + "\n");  // a duplicate and a blank line
  std::vector<Specialization> read = cutejit::read_manifest(manifest);
  REQUIRE(read == specs);
  CHECK(specs[0].words != specs[1].words);  // 2^20 and 1000 are multiples of 16 and of 8
  CHECK(specs[3].words != specs[4].words);  // the Constexpr is in the words

  cutejit::Target t = cutejit::Target::parse("sm_100a");
  auto v = vector(1 << 20);
  cutejit::CompiledKernel from_args = fixtures::vector_add.compile(t, v, v, v);
  cutejit::CompiledKernel from_words = fixtures::vector_add.compile(t, read[0]);
  CHECK(from_words.cache_key == from_args.cache_key);
  CHECK(from_words.cubin == from_args.cubin);

  Specialization wrong = specs[2];  // saxpy's words given to vector_add
  wrong.kernel = "vector_add";
  CHECK_THROWS_WITH(fixtures::vector_add.compile(t, wrong), Catch::Contains("does not match the kernel's parameters"));
  Specialization truncated = specs[0];
  truncated.words.pop_back();
  CHECK_THROWS_WITH(fixtures::vector_add.compile(t, truncated), Catch::Contains("does not match the kernel's parameters"));

  // Words that no launch could have produced: an alignment of 2^255, a stray bit, a bool
  // Constexpr holding 2, an int Constexpr's words given to a bool one.
  Specialization misaligned = specs[0];
  misaligned.words[0] |= uint64_t(0xff) << 32;
  Specialization stray = specs[0];
  stray.words[1] |= uint64_t(1) << 7;
  for (const Specialization& s : {misaligned, stray})
    CHECK_THROWS_WITH(fixtures::vector_add.compile(t, s), Catch::Contains("does not match the kernel's parameters"));
  cutejit::Kernel flag{"flag", [](cutejit::Tensor<float> x, cutejit::Constexpr<bool> on) {
    if (on) x(0) = 1.0f;
  }};
  Specialization two = flag.specialization(v, true);
  two.words.back() = 2;
  CHECK_THROWS_WITH(flag.compile(t, two), Catch::Contains("does not match the kernel's parameters"));
  Specialization from_int = specs[3];  // block_reduce's (tensor, tensor, Constexpr<int>)
  from_int.kernel = "flag";
  from_int.words.erase(from_int.words.begin() + 1);  // (tensor, Constexpr<int>)
  CHECK_THROWS_WITH(flag.compile(t, from_int), Catch::Contains("does not match the kernel's parameters"));
  CHECK_NOTHROW(flag.compile(t, flag.specialization(v, true)));

  write_bytes(tmp.path() / "bad.jsonl", cutejit::manifest_line(specs[0]) + "{\"kernel\": \"x\", \"words\": [\"0xZZ\"]}\n");
  CHECK_THROWS_WITH(cutejit::read_manifest(tmp.path() / "bad.jsonl"), Catch::Contains("bad.jsonl:2: not a manifest line"));
  CHECK_THROWS_WITH(cutejit::read_manifest(tmp.path() / "missing.jsonl"), Catch::Contains("does not exist"));
  CHECK_THROWS_WITH(cutejit::read_manifest(tmp.path()), Catch::Contains("is not a file"));
  write_bytes(tmp.path() / "signed.jsonl", "{\"kernel\": \"x\", \"words\": [\"-0x1\"]}\n");
  CHECK_THROWS_WITH(cutejit::read_manifest(tmp.path() / "signed.jsonl"), Catch::Contains("signed.jsonl:1: not a manifest line"));
}

TEST_CASE("cutejit-cache warm compiles a manifest for three targets, then finds it all cached", "[cache]") {
  TempCache tmp;
  std::string manifest = write_manifest(tmp, five_specializations());
  Run first = cli(tmp, warm_args(manifest, "sm_90a,sm_100a,sm_120a") + " -j 2 --json");
  INFO(first.output);
  REQUIRE(first.exit_code == 0);
  nlohmann::json summary = json_of(first);
  CHECK(summary["kernels"] == 15);
  CHECK(summary["compiled"] == 15);
  CHECK(summary["already_cached"] == 0);
  CHECK(summary["failed"].empty());
  CHECK(tmp.cache().verify(false).checked == 15);

  // This process traces the same kernels itself and finds the entries another process wrote:
  // the key is the same in both.
  auto v = vector(1 << 20);
  CHECK(fixtures::saxpy.compile(cutejit::Target::parse("sm_120a"), 2.0f, v, v).from_cache);

  Run second = cli(tmp, warm_args(manifest, "sm_90a,sm_100a,sm_120a"));
  INFO(second.output);
  CHECK(second.exit_code == 0);
  CHECK_THAT(second.output, Catch::Contains("15 kernels in") && Catch::Contains("0 compiled, 15 already cached, 0 failed"));
}

TEST_CASE("cutejit-cache warm says what failed and why", "[cache]") {
  TempCache tmp;
  auto ta = cutejit::TensorMap<cutejit::bf16>::for_compile(2, {128, 64}, cutejit::TmaSwizzle::bytes128);
  auto tb = cutejit::TensorMap<cutejit::bf16>::for_compile(2, {128, 64}, cutejit::TmaSwizzle::bytes128);
  auto c = cutejit::kernels::gemm_sm90::output_map_for_compile();
  Specialization gemm = fixtures::gemm_bf16.specialization(ta, tb, c, 256, 384, 512);
  Specialization unknown = five_specializations()[0];
  unknown.kernel = "no_such_kernel";
  std::string manifest = write_manifest(tmp, {gemm, unknown});

  Run run = cli(tmp, warm_args(manifest, "sm_90a,sm_100a"));
  INFO(run.output);
  CHECK(run.exit_code == 1);
  CHECK_THAT(run.output, Catch::Contains("failed: gemm_bf16 for sm_100a") && Catch::Contains("sm_90a only"));
  CHECK_THAT(run.output, Catch::Contains("failed: no_such_kernel for sm_90a: error: no kernel named 'no_such_kernel' is registered") &&
                             Catch::Contains("registered: vector_add, saxpy, block_reduce, gemm_bf16, tma_prefetch"));
  CHECK_THAT(run.output, Catch::Contains("4 kernels in") && Catch::Contains("1 compiled, 0 already cached, 3 failed"));

  Run no_plugin = cli(tmp, "warm --manifest " + manifest);
  CHECK(no_plugin.exit_code == 2);
  CHECK_THAT(no_plugin.output, Catch::Contains("--plugin LIB is required"));
  Run missing_plugin = cli(tmp, "warm --plugin /nonexistent/libk.so --manifest " + manifest);
  CHECK(missing_plugin.exit_code == 1);
  CHECK_THAT(missing_plugin.output, Catch::Contains("cannot load the plugin /nonexistent/libk.so"));
  Run bad_jobs = cli(tmp, warm_args(manifest, "sm_90a") + " -j many");
  CHECK(bad_jobs.exit_code == 2);
  CHECK_THAT(bad_jobs.output, Catch::Contains("-j takes a number"));
  Run bad_target = cli(tmp, warm_args(manifest, "sm_91"));
  CHECK(bad_target.exit_code == 2);
  CHECK_THAT(bad_target.output, Catch::Contains("sm_91"));
  Run no_target = cli(tmp, warm_args(manifest, ","));
  CHECK(no_target.exit_code == 2);
  CHECK_THAT(no_target.output, Catch::Contains("--targets lists no target"));
  Run cache_off{};
  {
    ScopedEnv off("CUTEJIT_CACHE", "0");
    cache_off = cli(tmp, warm_args(manifest, "sm_90a"));
  }
  CHECK(cache_off.exit_code == 1);
  CHECK_THAT(cache_off.output, Catch::Contains("the disk cache is off (CUTEJIT_CACHE=0)"));
  write_bytes(tmp.path() / "broken.jsonl", "{\"kernel\": \"vector_add\"}\n");
  Run broken = cli(tmp, warm_args((tmp.path() / "broken.jsonl").string(), "sm_90a"));
  CHECK(broken.exit_code == 1);
  CHECK_THAT(broken.output, Catch::Contains("broken.jsonl:1: not a manifest line"));
}

TEST_CASE("8 cutejit-cache warm processes fill one empty directory from one manifest", "[cache]") {
  TempCache tmp;
  std::string manifest = write_manifest(tmp, five_specializations());
  std::string one = cli_path().string() + " --dir " + tmp.path().string() + " " + warm_args(manifest, "sm_90a,sm_100a,sm_120a") + " -j 1";
  std::string script = "pids=''; for i in 1 2 3 4 5 6 7 8; do " + one + " > " + tmp.path().string() +
                       "/out.$i 2>&1 & pids=\"$pids $!\"; done; status=0; for p in $pids; do wait $p || status=1; done; exit $status";
  FILE* pipe = popen(("bash -c '" + script + "'").c_str(), "r");
  REQUIRE(pipe);
  int status = pclose(pipe);
  for (int i = 1; i <= 8; ++i) {
    std::string out = read_text(tmp.path() / ("out." + std::to_string(i)));
    INFO(out);
    CHECK_THAT(out, Catch::Contains("15 kernels in") && Catch::Contains(" 0 failed"));
  }
  CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  cutejit::CacheVerifyReport report = tmp.cache().verify(false);
  CHECK(report.bad.empty());
  CHECK(report.checked == 15);
  for (const auto& file : std::filesystem::directory_iterator(tmp.path() / "v1")) CHECK(file.path().extension() == ".entry");
  auto v = vector(1 << 20), one_element = vector(1);
  CHECK(fixtures::block_reduce.compile(cutejit::Target::parse("sm_100a"), v, one_element, 128).from_cache);
}

TEST_CASE("cutejit-cache export refuses what it cannot do, clearly", "[cache]") {
  TempCache tmp;
  std::string manifest = write_manifest(tmp, five_specializations());
  std::string base = "export --plugin " + plugin_path().string() + " --manifest " + manifest;
  Run no_out = cli(tmp, base + " --targets sm_90a");
  CHECK(no_out.exit_code == 2);
  CHECK_THAT(no_out.output, Catch::Contains("--out DIR is required"));
  Run no_targets = cli(tmp, base + " --out " + (tmp.path() / "x").string());
  CHECK(no_targets.exit_code == 2);
  Run bad_namespace = cli(tmp, base + " --targets sm_90a --namespace 9lives --out " + (tmp.path() / "x").string());
  CHECK(bad_namespace.exit_code == 2);
  CHECK_THAT(bad_namespace.output, Catch::Contains("C++ identifier"));
  Run typo = cli(tmp, base + " --namespace k --targets sm_90a --kernels vector_ad --out " + (tmp.path() / "x").string());
  CHECK(typo.exit_code == 1);
  CHECK_THAT(typo.output, Catch::Contains("no kernel named 'vector_ad'"));
  Run no_namespace = cli(tmp, base + " --targets sm_90a --out " + (tmp.path() / "x").string());
  CHECK(no_namespace.exit_code == 2);
  CHECK_THAT(no_namespace.output, Catch::Contains("--namespace NAME is required"));
  Run keyword = cli(tmp, base + " --targets sm_90a --namespace delete --out " + (tmp.path() / "x").string());
  CHECK(keyword.exit_code == 2);
  CHECK_THAT(keyword.output, Catch::Contains("C++ keyword"));
  CHECK_FALSE(std::filesystem::exists(tmp.path() / "x"));
  write_bytes(tmp.path() / "a_file", "");
  Run out_is_file = cli(tmp, base + " --targets sm_90a --namespace k --kernels saxpy --out " + (tmp.path() / "a_file").string());
  CHECK(out_is_file.exit_code == 1);
  CHECK_THAT(out_is_file.output, Catch::Contains("cannot create"));

  // Two specializations whose tensor maps have different boxes: the exported launch function
  // could not tell which one a map was encoded for. (The words are what the plugin's
  // tma_prefetch(TmaDescriptor<float>) records for each box.)
  cutejit::Kernel tma_prefetch{"tma_prefetch", [](cutejit::TmaDescriptor<float> map) { map.prefetch(); }};
  Specialization box128 = tma_prefetch.specialization(cutejit::TensorMap<float>::for_compile(2, {128, 32}, cutejit::TmaSwizzle::bytes128));
  Specialization box64 = tma_prefetch.specialization(cutejit::TensorMap<float>::for_compile(2, {64, 32}, cutejit::TmaSwizzle::bytes128));
  std::string maps = write_manifest(tmp, {box128, box64});
  Run ambiguous = cli(tmp, "export --plugin " + plugin_path().string() + " --manifest " + maps + " --targets sm_90a --namespace k --out " +
                               (tmp.path() / "maps").string());
  INFO(ambiguous.output);
  CHECK(ambiguous.exit_code == 1);
  CHECK_THAT(ambiguous.output, Catch::Contains("differ in the box or swizzle of tensor map argument 0"));
  Run one_box = cli(tmp, "export --plugin " + plugin_path().string() + " --manifest " + write_manifest(tmp, {box128}) +
                             " --targets sm_90a --namespace k --out " + (tmp.path() / "maps").string());
  CHECK(one_box.exit_code == 0);
  CHECK_THAT(read_text(tmp.path() / "maps" / "k.hpp"), Catch::Contains("encoded with box 128 x 32 and 128-byte swizzle"));
}

TEST_CASE("cutejit-cache export writes the chosen kernels' cubins and a header for them", "[cache]") {
  TempCache tmp;
  std::string manifest = write_manifest(tmp, five_specializations());
  std::filesystem::path out = tmp.path() / "out";
  Run run = cli(tmp, "export --plugin " + plugin_path().string() + " --manifest " + manifest +
                         " --targets sm_90a,sm_120a --kernels block_reduce --namespace reduce --out " + out.string());
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.output, Catch::Contains("exported 4 cubin(s)"));
  std::string header = read_text(out / "reduce.hpp");
  CHECK_THAT(header, Catch::Contains("namespace reduce {") && Catch::Contains("inline CUresult block_reduce(") &&
                         Catch::Contains("detail::same_bits(arg2, 0x100ull)") && Catch::Contains("detail::same_bits(arg2, 0x80ull)") &&
                         Catch::Contains("arg2 == 256") && Catch::Contains("{1, 120, true, cubin_3}"));
  CHECK_THAT(header, !Catch::Contains("vector_add") && !Catch::Contains("saxpy"));
  size_t cubins = 0;
  for (const auto& f : std::filesystem::directory_iterator(out / "cubins")) {
    std::string bytes = read_text(f.path());
    CHECK(bytes.rfind("\x7f" "ELF", 0) == 0);
    ++cubins;
  }
  CHECK(cubins == 4);
}
