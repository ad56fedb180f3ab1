// Decode problems the paged kernel does not support, and page tables that would read outside
// the cache: a cutejit::Error at the caller's line saying what would be valid, before anything
// is launched.
#include <catch2/catch.hpp>

#include <vector>

#include "fmha_decode.hpp"

using Catch::Contains;

namespace {
fixtures::DecodeProblem valid() {
  return {.batch = 2, .heads = 32, .kv_heads = 8, .head_dim = 128, .q_len = 1, .pages = 10, .page_size = 16,
          .pages_per_sequence = 4, .max_seqlen_k = 64};
}
}  // namespace

TEST_CASE("the paged decode refuses head dims, head counts, query counts and page sizes it does not support", "[error]") {
  using fixtures::check_decode;
  fixtures::DecodeProblem p = valid();
  CHECK_NOTHROW(check_decode(p));
  p.head_dim = 96;
  CHECK_THROWS_WITH(check_decode(p), Contains("test_fmha_decode_errors.cpp") &&
                                         Contains("fmha_decode: head dims 64, 128 and 256 are supported, not 96"));
  p = valid();
  p.kv_heads = 5;
  CHECK_THROWS_WITH(check_decode(p), Contains("query heads a multiple of the key/value heads") && Contains("32 query and 5"));
  p = valid();
  p.q_len = 17;
  CHECK_THROWS_WITH(check_decode(p), Contains("takes 1 to 16 queries per sequence, not 17"));
  p = valid();
  p.q_len = 3;
  p.kv_heads = 1;
  CHECK_THROWS_WITH(check_decode(p), Contains("32 query heads per key/value head times 3 queries make 96 rows") &&
                                         Contains("at most 64"));
  p = valid();
  p.page_size = 24;
  CHECK_THROWS_WITH(check_decode(p), Contains("page sizes are multiples of 16 tokens") && Contains("not 24"));
  p = valid();
  p.max_seqlen_k = 65;
  CHECK_THROWS_WITH(check_decode(p), Contains("max_seqlen_k is 65, but a sequence holds at most 64 keys (4 pages of 16)"));
  p = valid();
  p.pages = int64_t(1) << 20;
  CHECK_THROWS_WITH(check_decode(p), Contains("exceed 2^31 elements"));
  p = valid();
  p.splits = 300;
  CHECK_THROWS_WITH(check_decode(p), Contains("splits is from 1 to 256, or 0 to choose, not 300"));
}

TEST_CASE("the paged decode refuses lengths and page tables that do not fit the cache", "[error]") {
  using fixtures::check_block_table;
  fixtures::DecodeProblem p = valid();
  std::vector<int32_t> lens = {64, 17}, table = {0, 1, 2, 3, 9, 8, -1, 12};  // sequence 1 uses two pages: 9 and 8
  CHECK_NOTHROW(check_block_table(p, lens, table));
  table[5] = 10;
  CHECK_THROWS_WITH(check_block_table(p, lens, table), Contains("test_fmha_decode_errors.cpp") &&
                                                           Contains("block_table[1][1] is page 10, outside the cache's 10 pages"));
  table[5] = -3;
  CHECK_THROWS_WITH(check_block_table(p, lens, table), Contains("block_table[1][1] is page -3"));
  table[5] = 8;
  lens[1] = 65;
  CHECK_THROWS_WITH(check_block_table(p, lens, table), Contains("sequence 1 has 65 keys, outside 0 to max_seqlen_k (64)"));
  lens = {64};
  CHECK_THROWS_WITH(check_block_table(p, lens, table), Contains("seqlens_k has 1 lengths for a batch of 2"));
  lens = {64, 17};
  table.pop_back();
  CHECK_THROWS_WITH(check_block_table(p, lens, table), Contains("block_table has 7 entries; 2 sequences of 4 pages need 8"));
}
