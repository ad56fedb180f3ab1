// The paged-KV decode (tests/fixtures/fmha_decode.hpp) on the GPU, against the float64 reference on
// the same keys gathered out of the pages, with fresh random inputs, shuffled page tables and
// poisoned outputs: every head dim x (MHA, GQA of 8, GQA of 7 over two tiles, 16 heads x 4
// queries over four tiles) x page size x split counts (one, several, more than the blocks, the
// GPU's choice) x causal and not, ragged lengths (one key, fewer keys than queries, a block
// and one, pages and a bit, thousands), the error bounded element by element for O and for
// the log-sum-exp.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "fmha_decode.hpp"

using namespace cutejit;

namespace {

struct Shape {
  const char* name;
  int64_t heads, kv_heads, q_len, page_size;
  bool causal;
};

const std::vector<Shape> shapes = {{"MHA, 1 query, pages of 16", 4, 4, 1, 16, true},
                                   {"GQA 8:1, 1 query, pages of 64", 16, 2, 1, 64, true},
                                   {"GQA 7:1, 3 queries (21 rows: two tiles), causal, pages of 32", 14, 2, 3, 32, true},
                                   {"GQA 7:1, 3 queries, not causal, pages of 16", 14, 2, 3, 16, false},
                                   {"GQA 16:1, 4 queries (64 rows: four tiles), causal, pages of 256", 16, 1, 4, 256, true}};

/// What each shape runs with: keys per sequence (one, fewer than the queries, a block and one,
/// pages and a bit, thousands) and split counts (one, several, more than the blocks, the GPU's).
struct Sweep {
  std::vector<int32_t> lengths;
  std::vector<int64_t> splits;
};

// The emulator interprets every thread, so it runs the thousands of keys and more splits than
// blocks at head dim 64 alone; the full sweep is the GPU's.
Sweep lengths_and_splits(const Device& gpu, int64_t head_dim) {
  if (gpu.is_emulated() && head_dim > 64) return {{1, 2, 17, 300}, {1, 3, 0}};
  return {{1, 2, 17, 300, 1000, 2100}, {1, 3, 64, 0}};
}

template <Element T>
void check_head_dim(const Device& gpu, int64_t head_dim, const char* type) {
  const Sweep sweep = lengths_and_splits(gpu, head_dim);
  unsigned seed = 700 + unsigned(head_dim);
  for (const Shape& s : shapes)
    for (int64_t splits : sweep.splits) {
      auto in = fixtures::decode_inputs<T>(sweep.lengths, s.q_len, s.heads, s.kv_heads, head_dim, s.page_size, seed += 5);
      in.problem.causal = s.causal;
      in.problem.splits = splits;
      double error = fixtures::decode_check(gpu, in);
      INFO(type << " hd " << head_dim << ", " << s.name << ", " << (splits ? std::to_string(splits) : std::string("chosen")) << " splits");
      CHECK(error < 1e-2);
    }
}

}  // namespace

TEST_CASE("the paged decode matches float64 attention at head dim 64", "[gpu]") {
  Device gpu;
  check_head_dim<bf16>(gpu, 64, "bf16");
}
TEST_CASE("the paged decode matches float64 attention at head dim 128, in bf16 and f16", "[gpu]") {
  Device gpu;
  check_head_dim<bf16>(gpu, 128, "bf16");
  check_head_dim<f16>(gpu, 128, "f16");
}
TEST_CASE("the paged decode matches float64 attention at head dim 256", "[gpu]") {
  Device gpu;
  check_head_dim<bf16>(gpu, 256, "bf16");
}
