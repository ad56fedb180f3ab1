// autotune's decisions without a GPU: candidates are timed by a model (each candidate's launch
// says which one it is, the model says how long it takes), so that what is chosen, what is
// recorded, what is reused and what is refused can be checked exactly.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <atomic>
#include <map>

#include <nlohmann/json.hpp>

#include <cutejit/jit/autotune.hpp>
#include <cutejit/jit/specialization.hpp>

#include "unit/cache/cache_test_support.hpp"

using namespace cutejit;
using cache_test::read_text;
using cache_test::ScopedEnv;
using cache_test::TempCache;
using cache_test::write_bytes;

namespace {

const detail::TuneContext h200{"NVIDIA H200", "sm_90a", 13000};

/// A tuning run against a model: candidate i takes `ms[i]`, or fails to prepare when it is
/// negative. Counts what was prepared and timed.
struct Model {
  std::vector<std::string> names;
  std::vector<double> ms;
  std::atomic<int> prepared = 0;
  int timed = 0;
  TuneOptions options;

  size_t choose(const TuneKey& key, bool& from_record, std::vector<TuneTiming>& timings,
                const detail::TuneContext& context = h200) {
    int ran = -1;
    auto prepare = [&](size_t i) -> detail::TuneLaunch {
      ++prepared;
      if (ms[i] < 0) throw Error("error: candidate " + names[i] + " needs more shared memory than the GPU has");
      return [&ran, i](int) { ran = int(i); };
    };
    auto time = [&](const detail::TuneLaunch& launch) {
      ++timed;
      launch(0);
      return ms[size_t(ran)];
    };
    return detail::autotune_choice(context, nullptr, key, names, prepare, time, options, from_record, timings);
  }
  size_t choose(const TuneKey& key) {
    bool from_record = false;
    std::vector<TuneTiming> timings;
    return choose(key, from_record, timings);
  }
};

std::vector<std::filesystem::path> records(const TempCache& tmp) {
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(tmp.path() / "tune" / "v1", ec)) out.push_back(e.path());
  return out;
}

}  // namespace

TEST_CASE("autotune chooses the fastest candidate and records it", "[autotune]") {
  TempCache tmp;
  detail::forget_tune_decisions();
  Model m{{"256", "128", "64"}, {1.5, 1.2, 1.9}};
  bool from_record = true;
  std::vector<TuneTiming> timings;
  CHECK(m.choose({"gemm_test", {128, 8192, 8192}}, from_record, timings) == 1);
  CHECK_FALSE(from_record);
  CHECK(m.prepared == 3);
  CHECK(m.timed == 3);
  REQUIRE(timings.size() == 3);
  CHECK(timings[0].name == "256");
  CHECK(timings[0].median_ms == 1.5);
  CHECK(timings[2].median_ms == 1.9);

  auto files = records(tmp);
  REQUIRE(files.size() == 1);
  nlohmann::json record = nlohmann::json::parse(read_text(files[0]));
  CHECK(record["winner"] == "128");
  CHECK(record["key"]["name"] == "gemm_test");
  CHECK(record["key"]["values"] == nlohmann::json({128, 8192, 8192}));
  CHECK(record["key"]["candidates"] == nlohmann::json({"256", "128", "64"}));
  CHECK(record["key"]["device"] == "NVIDIA H200");
  CHECK(record["key"]["driver"] == 13000);
  CHECK(record["median_ms"]["64"] == 1.9);
}

TEST_CASE("a decision is reused from memory and from disk without preparing or timing anything", "[autotune]") {
  TempCache tmp;
  detail::forget_tune_decisions();
  Model first{{"a", "b"}, {2.0, 1.0}};
  REQUIRE(first.choose({"reuse", {1}}) == 1);

  // The model now says "a" is faster; a record answers regardless.
  Model again{{"a", "b"}, {0.5, 1.0}};
  bool from_record = false;
  std::vector<TuneTiming> timings{{"stale", 1, ""}};
  CHECK(again.choose({"reuse", {1}}, from_record, timings) == 1);
  CHECK(from_record);
  CHECK(timings.empty());
  CHECK(again.prepared == 0);
  CHECK(again.timed == 0);

  detail::forget_tune_decisions();  // as a new process: only the disk remembers
  CHECK(again.choose({"reuse", {1}}, from_record, timings) == 1);
  CHECK(from_record);
  CHECK(again.prepared == 0);

  SECTION("retune times again and replaces the record") {
    again.options.retune = true;
    CHECK(again.choose({"reuse", {1}}, from_record, timings) == 0);
    CHECK_FALSE(from_record);
    CHECK(again.timed == 2);
    auto files = records(tmp);
    REQUIRE(files.size() == 1);
    CHECK(nlohmann::json::parse(read_text(files[0]))["winner"] == "a");
  }
  SECTION("CUTEJIT_RETUNE=1 does the same") {
    ScopedEnv retune("CUTEJIT_RETUNE", "1");
    CHECK(again.choose({"reuse", {1}}) == 0);
    CHECK(again.timed == 2);
  }
  SECTION("CUTEJIT_RETUNE=0, or a value it does not take (said once), leaves the record to answer") {
    ScopedEnv retune("CUTEJIT_RETUNE", GENERATE("0", "yes"));
    CHECK(again.choose({"reuse", {1}}) == 1);
    CHECK(again.timed == 0);
  }
}

TEST_CASE("another shape, candidate list, GPU or driver is another question", "[autotune]") {
  TempCache tmp;
  detail::forget_tune_decisions();
  Model m{{"a", "b"}, {2.0, 1.0}};
  REQUIRE(m.choose({"q", {1, 2}}) == 1);
  Model faster_a{{"a", "b"}, {0.5, 1.0}};
  CHECK(faster_a.choose({"q", {1, 3}}) == 0);
  CHECK(faster_a.choose({"q2", {1, 2}}) == 0);
  bool from_record = false;
  std::vector<TuneTiming> timings;
  CHECK(faster_a.choose({"q", {1, 2}}, from_record, timings, {"NVIDIA H100 80GB HBM3", "sm_90a", 13000}) == 0);
  CHECK(faster_a.choose({"q", {1, 2}}, from_record, timings, {"NVIDIA H200", "sm_90a", 12080}) == 0);
  Model three{{"a", "b", "c"}, {0.5, 1.0, 3.0}};
  CHECK(three.choose({"q", {1, 2}}) == 0);
  CHECK(faster_a.timed == 8);
  CHECK(records(tmp).size() == 6);
}

TEST_CASE("a candidate that cannot be prepared is left out; when none can, autotune says why each failed", "[autotune]") {
  TempCache tmp;
  detail::forget_tune_decisions();
  Model m{{"wide", "narrow"}, {-1, 3.0}};
  bool from_record = false;
  std::vector<TuneTiming> timings;
  CHECK(m.choose({"partial", {7}}, from_record, timings) == 1);
  CHECK_THAT(timings[0].error, Catch::Contains("needs more shared memory"));
  CHECK(m.timed == 1);

  Model none{{"x", "y"}, {-1, -1}};
  CHECK_THROWS_WITH(none.choose({"none", {7}}), Catch::StartsWith("error: autotune of 'none': no candidate ran") &&
                                                     Catch::Contains("\n  x: error: candidate x needs more shared memory") &&
                                                     Catch::Contains("\n  y: error: candidate y"));
  CHECK(records(tmp).size() == 1);  // nothing recorded for the failed question
}

TEST_CASE("autotune refuses questions it cannot record", "[autotune]") {
  TempCache tmp;
  Model unnamed{{"a"}, {1.0}};
  CHECK_THROWS_WITH(unnamed.choose({"", {1}}), Catch::Contains("autotune needs a key with a name"));
  Model empty{{}, {}};
  CHECK_THROWS_WITH(empty.choose({"q", {1}}), "error: autotune of 'q' was given no candidates");
  Model twice{{"64", "128", "64"}, {1, 2, 3}};
  CHECK_THROWS_WITH(twice.choose({"q", {1}}), Catch::Contains("two candidates named '64'"));
  CHECK(tune_name(128) == "128");
  struct Tile {
    int m, n;
    std::string name() const { return std::to_string(m) + "x" + std::to_string(n); }
  };
  CHECK(tune_name(Tile{128, 64}) == "128x64");
}

TEST_CASE("a record that is not sound is ignored, timed again and replaced", "[autotune]") {
  TempCache tmp;
  detail::forget_tune_decisions();
  Model m{{"a", "b"}, {2.0, 1.0}};
  REQUIRE(m.choose({"hostile", {5}}) == 1);
  auto files = records(tmp);
  REQUIRE(files.size() == 1);
  const std::filesystem::path file = files[0];
  nlohmann::json good = nlohmann::json::parse(read_text(file));

  auto expect_retimed = [&](const char* what) {
    INFO(what);
    detail::forget_tune_decisions();
    Model again{{"a", "b"}, {2.0, 1.0}};
    bool from_record = true;
    std::vector<TuneTiming> timings;
    CHECK(again.choose({"hostile", {5}}, from_record, timings) == 1);
    CHECK_FALSE(from_record);
    CHECK(again.timed == 2);
    CHECK(std::filesystem::is_regular_file(file));
    CHECK(nlohmann::json::parse(read_text(file))["winner"] == "b");
  };
  write_bytes(file, "{ not json");
  expect_retimed("not JSON");
  nlohmann::json other = good;
  other["winner"] = "c";
  write_bytes(file, other.dump());
  expect_retimed("a winner that is not a candidate");
  other = good;
  other["key"]["values"] = {6};
  write_bytes(file, other.dump());
  expect_retimed("another question's key under this name");
  other = good;
  other["format"] = "cutejit-tune 0";
  write_bytes(file, other.dump());
  expect_retimed("another format");
  write_bytes(file, "[1, 2, 3]");
  expect_retimed("JSON that is not an object");
  std::filesystem::remove(file);
  std::filesystem::create_directory(file);
  expect_retimed("a directory at the record's name");
  std::filesystem::remove_all(file);
  REQUIRE(mkfifo(file.c_str(), 0600) == 0);
  expect_retimed("a FIFO at the record's name (opening it must not block)");
  std::filesystem::remove(file);
  write_bytes(file, std::string(100 << 10, ' '));
  expect_retimed("a file too large to be a record");
}

TEST_CASE("with the cache off, autotune keeps no record", "[autotune]") {
  TempCache tmp;
  ScopedEnv off("CUTEJIT_CACHE", "off");
  detail::forget_tune_decisions();
  Model m{{"a", "b"}, {2.0, 1.0}};
  CHECK(m.choose({"off", {1}}) == 1);
  CHECK(records(tmp).empty());
}

TEST_CASE("CUTEJIT_RECORD records each tuning question beside the specializations", "[autotune]") {
  TempCache tmp;
  detail::forget_tune_decisions();
  std::filesystem::path manifest = tmp.path() / "manifest.jsonl";
  Specialization s{"vector_add", {0x0109010400000401}, "sm_90a"};
  REQUIRE(append_to_manifest(manifest, s).empty());
  {
    ScopedEnv record("CUTEJIT_RECORD", manifest.string());
    Model m{{"a", "b"}, {2.0, 1.0}};
    m.choose({"gemm_bf16", {128, 8192, 8192}});
    m.choose({"gemm_bf16", {128, 8192, 8192}});  // answered from memory, recorded again: the reader drops duplicates
    m.choose({"gemm_bf16", {4096, 4096, 4096}});
  }
  std::vector<TuneKey> questions = read_tuning_questions(manifest);
  REQUIRE(questions.size() == 2);
  CHECK(questions[0].name == "gemm_bf16");
  CHECK(questions[0].values == std::vector<int64_t>{128, 8192, 8192});
  CHECK(questions[1].values == std::vector<int64_t>{4096, 4096, 4096});
  // The specializations' reader passes over the questions.
  CHECK(read_manifest(manifest) == std::vector<Specialization>{s});

  write_bytes(manifest, read_text(manifest) + "{\"tune\": \"gemm_bf16\", \"values\": [1, \"two\"]}\n");
  CHECK_THROWS_WITH(read_tuning_questions(manifest), Catch::Contains("manifest.jsonl:5: not a tuning question") &&
                                                         Catch::Contains("each is {\"tune\": NAME, \"values\": [integers]}"));
  CHECK_THROWS_WITH(read_tuning_questions(tmp.path() / "missing.jsonl"), Catch::EndsWith("missing.jsonl does not exist"));
}

TEST_CASE("cutejit-cache tune reads its questions before it needs a GPU, and says what is wrong", "[autotune][cache]") {
  using namespace cache_test;
  TempCache tmp;
  std::filesystem::path manifest = tmp.path() / "manifest.jsonl";
  write_bytes(manifest, cutejit::manifest_line(Specialization{"vector_add", {0x0109010400000401}, "sm_90a"}));
  std::string plugin = " --plugin " + plugin_path().string();

  Run no_plugin = cli(tmp, "tune --manifest " + manifest.string());
  CHECK(no_plugin.exit_code == 2);
  CHECK_THAT(no_plugin.output, Catch::Contains("--plugin LIB is required"));
  Run no_questions = cli(tmp, "tune" + plugin + " --manifest " + manifest.string());
  CHECK(no_questions.exit_code == 1);
  CHECK_THAT(no_questions.output, Catch::Contains("nothing to tune: the manifest " + manifest.string() + " holds no tuning question"));

  write_bytes(manifest, read_text(manifest) + "{\"tune\": \"gemm_bf16\", \"values\": [128, 8192, 8192]}\n");
  Run typo = cli(tmp, "tune" + plugin + " --manifest " + manifest.string() + " --tunings gemm_bf61");
  CHECK(typo.exit_code == 1);
  CHECK_THAT(typo.output, Catch::Contains("no tuning is registered as 'gemm_bf61'; registered: gemm_bf16"));
  if (Device::count() == 0) {  // this machine: the questions are read, then the GPU is asked for
    Run no_gpu = cli(tmp, "tune" + plugin + " --manifest " + manifest.string());
    CHECK(no_gpu.exit_code == 1);
    CHECK_THAT(no_gpu.output, Catch::Contains("cutejit-cache tune: error:"));
  }
}
