// Problems the FA2 forward does not support: a cutejit::Error at the caller's line saying
// what would be valid, before anything is launched.
#include <catch2/catch.hpp>

#include "fmha_sm90.hpp"

using Catch::Contains;

TEST_CASE("the FA2 forward refuses head dims, head counts and token counts it does not support", "[error]") {
  examples::FmhaProblem p{.batch = 2, .heads = 8, .kv_heads = 2, .head_dim = 128, .total_q = 100, .total_k = 100, .max_seqlen_q = 50};
  CHECK_NOTHROW(examples::fmha80::check(p));
  p.head_dim = 96;
  CHECK_THROWS_WITH(examples::fmha80::check(p),
                    Contains("test_fmha_errors.cpp") && Contains("fmha_forward: head dims 64 and 128 are supported, not 96"));
  p.head_dim = 64;
  p.kv_heads = 3;
  CHECK_THROWS_WITH(examples::fmha80::check(p),
                    Contains("test_fmha_errors.cpp") && Contains("query heads a multiple of the key/value heads") && Contains("8 query and 3"));
  p.kv_heads = 2;
  p.max_seqlen_q = 101;
  CHECK_THROWS_WITH(examples::fmha80::check(p), Contains("test_fmha_errors.cpp") && Contains("max_seqlen_q at most total_q"));
  p.max_seqlen_q = 50;
  p.total_k = int64_t(1) << 30;
  CHECK_THROWS_WITH(examples::fmha80::check(p), Contains("test_fmha_errors.cpp") && Contains("(32-bit offsets)"));
}

TEST_CASE("the Hopper forward refuses what the FA2 forward does, and a batch without a token", "[error]") {
  examples::FmhaProblem p{.batch = 2, .heads = 8, .kv_heads = 2, .head_dim = 128, .total_q = 100, .total_k = 100, .max_seqlen_q = 50};
  CHECK_NOTHROW(examples::fmha90::check(p));
  p.head_dim = 256;
  CHECK_THROWS_WITH(examples::fmha90::check(p), Contains("test_fmha_errors.cpp") && Contains("head dims 64 and 128 are supported, not 256"));
  p.head_dim = 64;
  p.total_k = 0;
  CHECK_THROWS_WITH(examples::fmha90::check(p), Contains("test_fmha_errors.cpp") &&
                                                    Contains("needs at least one query and one key token in all (TMA maps no empty tensor), not 100 and 0"));
}
