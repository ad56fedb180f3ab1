// The GPU model (apps/qwen3/model.hpp) against the float64 host reference on a tiny random
// configuration (2 layers, hidden 256, GQA 4:2, head dim 64): every layer's output and the
// logits. The model keeps BF16 between its kernels (about 2^-9 relative per rounding, a dozen
// roundings a layer), so each output may differ from the exact answer by a few per cent of its
// largest value; a wrong step (a missing RoPE, a misplaced head, a lost residual) moves it by
// tens of per cent. On sm_90a, sm_100a and sm_120a it runs each target's kernels.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

#include "qwen3/argmax_rows.hpp"
#include "qwen3/model.hpp"
#include "qwen3/reference.hpp"
#include "qwen3/sampling.hpp"
#include "qwen3_test_weights.hpp"

using namespace cutejit;

namespace {

/// The tests' tiny configuration (2 layers, hidden 256, GQA 4:2, head dim 64), its random
/// weights written as a checkpoint and opened.
struct TinyCheckpoint {
  qwen3::Config config{256, 2, 4, 2, 64, 512, 320, 1e6, 1e-6, false};
  qwen3_test::TempDir dir;
  qwen3::Checkpoint checkpoint{write(config, dir)};

  static const std::filesystem::path& write(const qwen3::Config& c, const qwen3_test::TempDir& d) {
    qwen3::write_checkpoint(d.path, c, qwen3_test::weights(c));
    return d.path;
  }
};

/// max |got - want| / max |want|.
double relative_error(const std::vector<bf16>& got, const std::vector<double>& want) {
  double worst = 0, largest = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double g = double(float(got[i]));
    worst = std::max(worst, std::isnan(g) ? INFINITY : std::abs(g - want[i]));
    largest = std::max(largest, std::abs(want[i]));
  }
  return worst / largest;
}

}  // namespace

TEST_CASE("the Qwen3 model on the GPU matches the float64 reference layer by layer on a tiny configuration",
          "[gpu][qwen3][sm100][sm120]") {
  Device gpu;
  INFO(gpu.target().name());
  const TinyCheckpoint written;
  const qwen3::Config& tiny = written.config;
  const qwen3::Checkpoint& checkpoint = written.checkpoint;
  std::vector<int32_t> tokens;
  for (int i = 0; i < 37; ++i) tokens.push_back(int32_t((i * 131 + 7) % tiny.vocab));
  const qwen3::ReferenceOutputs want = qwen3::reference_forward(checkpoint, tokens);
  const qwen3::Model model(gpu, checkpoint);
  const qwen3::PrefillOutputs got = model.prefill(tokens);
  REQUIRE(got.layers.size() == want.layers.size());
  for (size_t l = 0; l < want.layers.size(); ++l) {
    INFO("layer " << l);
    CHECK(relative_error(got.layers[l], want.layers[l]) < 3e-2);
  }
  CHECK(relative_error(got.logits, want.logits) < 3e-2);
  CHECK_THROWS_WITH(model.prefill({1, 2, int32_t(tiny.vocab)}), Catch::Contains("token 320 at position 2 is outside the vocabulary of 320"));
}

namespace {

/// Sequence b's tokens: a prompt of `prompt` tokens and then the ones decode steps feed.
std::vector<int32_t> tokens_of(int b, int count, int64_t vocab) {
  std::vector<int32_t> t;
  for (int i = 0; i < count; ++i) t.push_back(int32_t((i * 97 + b * 53 + 11) % vocab));
  return t;
}

/// Row `row` of the reference's logits against `got`'s row `got_row`.
double row_error(const std::vector<bf16>& got, int64_t got_row, const std::vector<double>& want, int64_t row, int64_t vocab) {
  return relative_error(std::vector<bf16>(got.begin() + got_row * vocab, got.begin() + (got_row + 1) * vocab),
                        std::vector<double>(want.begin() + row * vocab, want.begin() + (row + 1) * vocab));
}

}  // namespace

TEST_CASE("the Qwen3 model prefills a batch into a paged KV cache and decodes from it, each step's logits the reference's",
          "[gpu][qwen3][sm100][sm120]") {
  Device gpu;
  INFO(gpu.target().name());
  const TinyCheckpoint written;
  const qwen3::Config& tiny = written.config;
  const qwen3::Checkpoint& checkpoint = written.checkpoint;
  const qwen3::Model model(gpu, checkpoint);
  // Prompts of 37, 23 and 5 tokens (pages of 16 fill, cross and stay partial); the third
  // sequence stops after two steps, so later steps decode a batch of two. Teacher forcing: each
  // step feeds the sequence's next token, and its logits are the reference's at that position.
  const std::vector<int> prompt{37, 23, 5}, steps{6, 6, 2};
  std::vector<std::vector<int32_t>> full;
  std::vector<std::vector<double>> want;
  for (int b = 0; b < 3; ++b) {
    full.push_back(tokens_of(b, prompt[size_t(b)] + steps[size_t(b)], tiny.vocab));
    want.push_back(qwen3::reference_forward(checkpoint, full.back()).logits);
  }
  qwen3::KvCache cache(gpu, tiny, 3, 48);
  std::vector<std::vector<int32_t>> prompts;
  for (int b = 0; b < 3; ++b) prompts.emplace_back(full[size_t(b)].begin(), full[size_t(b)].begin() + prompt[size_t(b)]);
  // Two passes: sequences 0 and 1 together, then sequence 2 alone (a prefill from a later sequence).
  std::vector<bf16> first = model.prefill({prompts[0], prompts[1]}, cache);
  const std::vector<bf16> third = model.prefill({prompts[2]}, cache, 2);
  first.insert(first.end(), third.begin(), third.end());
  for (int64_t b = 0; b < 3; ++b) {
    INFO("prefill, sequence " << b);
    CHECK(cache.length(b) == prompt[size_t(b)]);
    CHECK(row_error(first, b, want[size_t(b)], prompt[size_t(b)] - 1, tiny.vocab) < 3e-2);
  }
  for (int s = 0; s < 6; ++s) {
    const int batch = s < 2 ? 3 : 2;
    std::vector<int32_t> next;
    for (int b = 0; b < batch; ++b) next.push_back(full[size_t(b)][size_t(prompt[size_t(b)] + s)]);
    const std::vector<bf16> logits = model.decode(next, cache);
    REQUIRE(logits.size() == size_t(batch * tiny.vocab));
    for (int b = 0; b < batch; ++b) {
      INFO("decode step " << s << ", sequence " << b);
      CHECK(row_error(logits, b, want[size_t(b)], prompt[size_t(b)] + s, tiny.vocab) < 3e-2);
    }
  }
  // A finished sequence's pages go back to the pool, and a new prompt in its place (on pages in
  // another order) is the reference's again.
  cache.reset(0);
  const std::vector<int32_t> again = tokens_of(5, 20, tiny.vocab);
  const std::vector<bf16> got = model.prefill({again}, cache);
  CHECK(row_error(got, 0, qwen3::reference_forward(checkpoint, again).logits, 19, tiny.vocab) < 3e-2);
}

TEST_CASE("the Qwen3 model's KV cache steps refuse what they cannot take, the cache unchanged", "[gpu][qwen3]") {
  Device gpu;
  const TinyCheckpoint written;
  const qwen3::Config& tiny = written.config;
  const qwen3::Checkpoint& checkpoint = written.checkpoint;
  const qwen3::Model model(gpu, checkpoint);
  qwen3::KvCache cache(gpu, tiny, 2, 32, 16, 3);  // a pool of 3 pages for two sequences of up to 2 pages
  CHECK_THROWS_WITH(model.prefill({{1, 2, 320}}, cache), Catch::Contains("token 320 at prompt 0, position 2 is outside the vocabulary"));
  CHECK(cache.length(0) == 0);
  CHECK_THROWS_WITH(model.prefill({std::vector<int32_t>(33, 1)}, cache), Catch::Contains("33 more would pass its 32"));
  model.prefill({std::vector<int32_t>(20, 1), std::vector<int32_t>(3, 2)}, cache);  // takes all 3 pages
  CHECK_THROWS_WITH(model.prefill({{4}}, cache), Catch::Contains("sequence 0 holds 20 tokens: reset it, or continue it with decode"));
  CHECK_THROWS_WITH(model.prefill({{4}}, cache, 1), Catch::Contains("sequence 1 holds 3 tokens"));
  CHECK_THROWS_WITH(model.prefill({{4}}, cache, 2), Catch::Contains("prefill's first sequence is 2; the KV cache has sequences 0 to 1"));
  CHECK_THROWS_WITH(model.prefill({{4}, {5}}, cache, 1), Catch::Contains("from sequence 1 takes 1 to 1 prompts"));
  CHECK_THROWS_WITH(model.decode({1, 2, 3}, cache), Catch::Contains("1 to 2 tokens (one a sequence of the KV cache), not 3"));
  CHECK_THROWS_WITH(model.decode({1, -1}, cache), Catch::Contains("token -1 at sequence 1 is outside the vocabulary"));
  for (int i = 0; i < 12; ++i) model.decode({1}, cache);  // sequence 0 fills its two pages
  CHECK(cache.length(0) == 32);
  CHECK_THROWS_WITH(model.decode({1}, cache), Catch::Contains("sequence 0 of the KV cache holds 32 tokens; 1 more would pass its 32"));
  cache.reset(1);
  cache.reset(0);
  CHECK_THROWS_WITH(model.prefill({std::vector<int32_t>(32, 1), std::vector<int32_t>(17, 1)}, cache),
                    Catch::Contains("pool has 3 free pages; the step needs 4"));
  CHECK((cache.length(0) == 0 && cache.length(1) == 0));
  const qwen3::Config other{256, 3, 4, 2, 64, 512, 320, 1e6, 1e-6, false};
  qwen3::KvCache wrong(gpu, other, 1, 16);
  CHECK_THROWS_WITH(model.decode({1}, wrong), Catch::Contains("the KV cache was made for 3 layers"));
}

TEST_CASE("the Qwen3 model's decode steps replayed as CUDA graphs, or with their kernels launched one after another, give the logits "
          "of the steps run kernel by kernel, bit for bit",
          "[gpu][qwen3]") {
  Device gpu;
  const TinyCheckpoint written;
  const qwen3::Config& tiny = written.config;
  const qwen3::Checkpoint& checkpoint = written.checkpoint;
  // The default (graphs of dependent launches on sm_90 and newer), the same kernels launched
  // one at a time, and graphs of launches that each wait for the one before.
  qwen3::Model graphs(gpu, checkpoint), eager(gpu, checkpoint), serial(gpu, checkpoint);
  eager.use_graphs(false);
  serial.use_dependent_launches(false);
  qwen3::KvCache cache_g(gpu, tiny, 2, 40), cache_e(gpu, tiny, 2, 40), cache_s(gpu, tiny, 2, 40);
  const std::vector<std::vector<int32_t>> prompts{tokens_of(0, 17, tiny.vocab), tokens_of(1, 9, tiny.vocab)};
  const std::vector<bf16> pg = graphs.prefill(prompts, cache_g), pe = eager.prefill(prompts, cache_e);
  CHECK(std::memcmp(pg.data(), pe.data(), pg.size() * sizeof(bf16)) == 0);
  serial.prefill(prompts, cache_s);
  // Steps of two sequences, then of one (another graph), then of two again (the first graph,
  // replayed with the sequences' new lengths and pages).
  for (int batch : {2, 2, 2, 1, 1, 2, 2}) {
    std::vector<int32_t> next;
    for (int b = 0; b < batch; ++b) next.push_back(int32_t((cache_g.length(b) * 31 + b) % tiny.vocab));
    INFO("batch " << batch << ", lengths " << cache_g.length(0) << " and " << cache_g.length(1));
    const std::vector<bf16> g = graphs.decode(next, cache_g), e = eager.decode(next, cache_e), s = serial.decode(next, cache_s);
    REQUIRE(g.size() == e.size());
    REQUIRE(s.size() == e.size());
    CHECK(std::memcmp(g.data(), e.data(), g.size() * sizeof(bf16)) == 0);
    CHECK(std::memcmp(s.data(), e.data(), s.size() * sizeof(bf16)) == 0);
  }
}

TEST_CASE("the device's greedy choice takes each row's largest logit, the first of equals, and marks rows that are not all finite",
          "[gpu][qwen3]") {
  Device gpu;
  // Rows of 1000 (several values a thread), 5 (fewer values than threads) and 600 logits.
  auto rows_of = [](int64_t n, int64_t count) { return std::vector<std::vector<float>>(size_t(count), std::vector<float>(size_t(n), -3.0f)); };
  auto run = [&](const std::vector<std::vector<float>>& rows) {
    const auto R = int64_t(rows.size()), n = int64_t(rows[0].size());
    std::vector<bf16> flat;
    for (const auto& r : rows)
      for (float v : r) flat.push_back(bf16(v));
    const auto logits = gpu.upload(flat);
    auto out = gpu.upload(std::vector<int32_t>(size_t(R), -7));
    qwen3::argmax_rows(gpu, Launch{.grid = uint32_t(R), .block = 256}, logits.view({R, n}), out.view({R}));
    gpu.synchronize();
    return out.to_host();
  };
  auto wide = rows_of(1000, 6);
  wide[0][999] = 5.0f;                      // the last value
  wide[1][700] = 2.0f, wide[1][44] = 2.0f;  // equals in two threads' slices: the lower index
  wide[2][300] = 2.0f, wide[2][44] = 2.0f;  // the same with the threads' order reversed (300 = 44 + 256)
  wide[3][10] = NAN;                        // not finite: -1
  wide[4][512] = -INFINITY;
  // wide[5]: all equal, the first
  CHECK(run(wide) == std::vector<int32_t>{999, 44, 44, -1, -1, 0});
  auto narrow = rows_of(5, 2);
  narrow[0][3] = -1.0f;
  narrow[1][4] = INFINITY;
  CHECK(run(narrow) == std::vector<int32_t>{3, -1});
  // Random rows against the host's greedy.
  std::vector<std::vector<float>> random(8, std::vector<float>(600));
  uint32_t state = 12345;
  for (auto& r : random)
    for (float& v : r) v = float(int((state = state * 1664525u + 1013904223u) >> 22) % 61) / 8.0f;  // many equal values
  std::vector<int32_t> want;
  for (const auto& r : random) {
    std::vector<bf16> row(r.begin(), r.end());
    want.push_back(qwen3::greedy(row));
  }
  CHECK(run(random) == want);
}

TEST_CASE("the Qwen3 model's greedy decode steps choose on the device what greedy chooses from the same steps' logits",
          "[gpu][qwen3]") {
  Device gpu;
  const TinyCheckpoint written;
  const qwen3::Config& tiny = written.config;
  const qwen3::Model model(gpu, written.checkpoint);
  qwen3::KvCache on_host(gpu, tiny, 3, 40), on_device(gpu, tiny, 3, 40);
  const std::vector<std::vector<int32_t>> prompts{tokens_of(0, 13, tiny.vocab), tokens_of(1, 6, tiny.vocab), tokens_of(2, 9, tiny.vocab)};
  const std::vector<bf16> first = model.prefill(prompts, on_host);
  model.prefill(prompts, on_device);
  std::vector<int32_t> next;
  for (int64_t b = 0; b < 3; ++b) next.push_back(qwen3::greedy(std::span<const bf16>(first).subspan(size_t(b * tiny.vocab), size_t(tiny.vocab))));
  // Graphs of three sequences, then two (the step's logits come back in one case, the tokens
  // alone in the other: different graphs).
  for (int batch : {3, 3, 3, 2, 2, 3}) {
    next.resize(size_t(batch));
    const std::vector<bf16> logits = model.decode(next, on_host);
    std::vector<int32_t> want;
    for (int b = 0; b < batch; ++b)
      want.push_back(qwen3::greedy(std::span<const bf16>(logits).subspan(size_t(b * tiny.vocab), size_t(tiny.vocab))));
    const std::vector<int32_t> got = model.decode_greedy(next, on_device);
    INFO("batch " << batch << ", length " << on_device.length(0));
    CHECK(got == want);
    next = want;
    while (int(next.size()) < 3) next.push_back(int32_t((on_host.length(int64_t(next.size())) * 7) % tiny.vocab));
  }
}
