// Problems the FA2 forward does not support: a cutejit::Error at the caller's line saying
// what would be valid, before anything is launched.
#include <catch2/catch.hpp>

#include <vector>

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

TEST_CASE("the Hopper forward refuses head dims, windows and token counts it does not support", "[error]") {
  using examples::fmha90::check;
  examples::FmhaProblem p{.batch = 2, .heads = 8, .kv_heads = 2, .head_dim = 256, .total_q = 100, .total_k = 100, .max_seqlen_q = 50};
  CHECK_NOTHROW(check(p));
  p.head_dim = 96;
  CHECK_THROWS_WITH(check(p), Contains("test_fmha_errors.cpp") && Contains("fmha_forward_sm90: head dims 64, 128 and 256 are supported, not 96"));
  p.head_dim = 64;
  p.total_k = 0;
  CHECK_THROWS_WITH(check(p), Contains("test_fmha_errors.cpp") &&
                                  Contains("needs at least one query and one key token in all (TMA maps no empty tensor), not 100 and 0"));
  p.total_k = 100;
  p.window_left = 30;
  p.window_right = 0;
  p.top_left = true;
  CHECK_NOTHROW(check(p));
  p.window_left = 100;
  CHECK_THROWS_WITH(check(p), Contains("test_fmha_errors.cpp") && Contains("a window of 100 keys is as long as all 100 keys of the batch"));
  p.window_left = -2;
  CHECK_THROWS_WITH(check(p), Contains("a window bound is a number of keys from 0, or -1 for none, not -2"));
  p.window_left = -1;
  p.window_right = 5;
  p.causal = true;
  CHECK_THROWS_WITH(check(p), Contains("a causal mask sees no key after the diagonal, but window_right is 5"));
}

TEST_CASE("the FA2 forward refuses the masks only the Hopper forward has", "[error]") {
  examples::FmhaProblem p{.batch = 1, .heads = 2, .kv_heads = 2, .head_dim = 64, .total_q = 100, .total_k = 100, .max_seqlen_q = 100};
  p.window_left = 10;
  CHECK_THROWS_WITH(examples::fmha80::check(p), Contains("test_fmha_errors.cpp") &&
                                                    Contains("sliding windows and top-left aligned masks are not supported by this kernel"));
  p.window_left = -1;
  p.top_left = true;
  CHECK_THROWS_WITH(examples::fmha80::check(p), Contains("fmha_forward_sm90_prepare, has both"));
}

TEST_CASE("host copies of cu_seqlens that do not describe the problem are refused", "[error]") {
  examples::FmhaProblem p{.batch = 3, .heads = 2, .kv_heads = 2, .head_dim = 64, .total_q = 30, .total_k = 40, .max_seqlen_q = 15};
  using V = std::vector<int32_t>;
  CHECK_NOTHROW(examples::check_seqlens(p, V{0, 10, 15, 30}, V{0, 0, 20, 40}));  // an empty key sequence is allowed
  CHECK_THROWS_WITH(examples::check_seqlens(p, V{0, 10, 30}, V{0, 0, 20, 40}),
                    Contains("test_fmha_errors.cpp") && Contains("cu_seqlens_q has 3 offsets; a batch of 3 needs 4"));
  CHECK_THROWS_WITH(examples::check_seqlens(p, V{0, 10, 15, 30}, V{0, 25, 20, 40}),
                    Contains("cu_seqlens_k decreases from 25 to 20 at sequence 1"));
  CHECK_THROWS_WITH(examples::check_seqlens(p, V{0, 10, 15, 30}, V{0, 0, 20, 41}),
                    Contains("cu_seqlens_k ends at 41, but the tensors hold 40 tokens"));
  CHECK_THROWS_WITH(examples::check_seqlens(p, V{1, 10, 15, 30}, V{0, 0, 20, 40}), Contains("cu_seqlens_q starts at 1, not 0"));
  CHECK_THROWS_WITH(examples::check_seqlens(p, V{0, 5, 10, 30}, V{0, 0, 20, 40}),
                    Contains("cu_seqlens_q gives sequence 2 20 queries, more than max_seqlen_q (15)"));
}
