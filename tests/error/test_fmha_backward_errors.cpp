// Problems the attention backward does not support: a cutejit::Error at the caller's line
// saying what would be valid, before anything is launched.
#include <catch2/catch.hpp>

#include <vector>

#include "fmha_backward_sm90.hpp"

using Catch::Contains;

TEST_CASE("the attention backward refuses head dims, windows and token counts it does not support", "[error]") {
  fixtures::FmhaProblem p{.batch = 2, .heads = 8, .kv_heads = 2, .head_dim = 128, .total_q = 100, .total_k = 120,
                          .max_seqlen_q = 50, .max_seqlen_k = 60, .causal = true};
  CHECK_NOTHROW(fixtures::check_backward(p));
  p.head_dim = 256;
  CHECK_THROWS_WITH(fixtures::check_backward(p),
                    Contains("test_fmha_backward_errors.cpp") && Contains("fmha_backward: head dims 64 and 128 are supported, not 256"));
  p.head_dim = 64;
  p.heads = 6;
  p.kv_heads = 4;
  CHECK_THROWS_WITH(fixtures::check_backward(p), Contains("query heads a multiple of the key/value heads") && Contains("6 query and 4"));
  p.heads = 8;
  p.kv_heads = 2;
  p.max_seqlen_k = 121;
  CHECK_THROWS_WITH(fixtures::check_backward(p), Contains("test_fmha_backward_errors.cpp") && Contains("max_seqlen_k at most total_k"));
  p.max_seqlen_k = 60;
  p.window_left = 16;
  CHECK_THROWS_WITH(fixtures::check_backward(p), Contains("test_fmha_backward_errors.cpp") &&
                                                     Contains("sliding windows and top-left aligned masks are not supported"));
}

TEST_CASE("host copies of cu_seqlens_k with a sequence longer than max_seqlen_k are refused", "[error]") {
  // The backward's dK/dV grid covers max_seqlen_k keys: a longer sequence's last keys would be
  // left without gradients.
  fixtures::FmhaProblem p{.batch = 2, .heads = 2, .kv_heads = 2, .head_dim = 64, .total_q = 30, .total_k = 40,
                          .max_seqlen_q = 15, .max_seqlen_k = 25};
  using V = std::vector<int32_t>;
  CHECK_NOTHROW(fixtures::check_seqlens(p, V{0, 15, 30}, V{0, 20, 40}));
  CHECK_THROWS_WITH(fixtures::check_seqlens(p, V{0, 15, 30}, V{0, 10, 40}),
                    Contains("test_fmha_backward_errors.cpp") && Contains("cu_seqlens_k gives sequence 1 30 keys, more than max_seqlen_k (25)"));
  p.max_seqlen_k = 0;  // not given: any length
  CHECK_NOTHROW(fixtures::check_seqlens(p, V{0, 15, 30}, V{0, 10, 40}));
}

TEST_CASE("the Hopper attention backward takes the forward's windows and top-left masks, and refuses what it refuses", "[error]") {
  using fixtures::fmha_bwd90::check;
  fixtures::FmhaProblem p{.batch = 2, .heads = 8, .kv_heads = 2, .head_dim = 64, .total_q = 100, .total_k = 120,
                          .max_seqlen_q = 50, .max_seqlen_k = 60, .window_left = 30, .window_right = 10, .top_left = true};
  CHECK_NOTHROW(check(p));
  p.head_dim = 256;
  CHECK_THROWS_WITH(check(p), Contains("test_fmha_backward_errors.cpp") && Contains("fmha_backward_sm90: head dims 64 and 128 are supported, not 256"));
  p.head_dim = 128;
  p.window_left = 120;
  CHECK_THROWS_WITH(check(p), Contains("a window of 120 keys is as long as all 120 keys of the batch"));
  p.window_left = -1;
  p.causal = true;
  CHECK_THROWS_WITH(check(p), Contains("a causal mask sees no key after the diagonal, but window_right is 10"));
}
