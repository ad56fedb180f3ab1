// Problems the FA2 forward does not support: a cutejit::Error at the caller's line saying
// what would be valid, before anything is launched.
#include <catch2/catch.hpp>

#include <array>
#include <vector>

#include "fmha_sm90.hpp"

using Catch::Contains;

TEST_CASE("the FA2 forward refuses head dims, head counts and token counts it does not support", "[error]") {
  fixtures::FmhaProblem p{.batch = 2, .heads = 8, .kv_heads = 2, .head_dim = 128, .total_q = 100, .total_k = 100, .max_seqlen_q = 50};
  CHECK_NOTHROW(fixtures::fmha80::check(p));
  p.head_dim = 96;
  CHECK_THROWS_WITH(fixtures::fmha80::check(p),
                    Contains("test_fmha_errors.cpp") && Contains("fmha_forward: head dims 64 and 128 are supported, not 96"));
  p.head_dim = 64;
  p.kv_heads = 3;
  CHECK_THROWS_WITH(fixtures::fmha80::check(p),
                    Contains("test_fmha_errors.cpp") && Contains("query heads a multiple of the key/value heads") && Contains("8 query and 3"));
  p.kv_heads = 2;
  p.max_seqlen_q = 101;
  CHECK_THROWS_WITH(fixtures::fmha80::check(p), Contains("test_fmha_errors.cpp") && Contains("max_seqlen_q at most total_q"));
  p.max_seqlen_q = 50;
  p.total_k = int64_t(1) << 30;
  CHECK_THROWS_WITH(fixtures::fmha80::check(p), Contains("test_fmha_errors.cpp") && Contains("(32-bit offsets)"));
}

TEST_CASE("the Hopper forward refuses head dims, windows and token counts it does not support", "[error]") {
  using fixtures::fmha90::check;
  fixtures::FmhaProblem p{.batch = 2, .heads = 8, .kv_heads = 2, .head_dim = 256, .total_q = 100, .total_k = 100, .max_seqlen_q = 50};
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
  fixtures::FmhaProblem p{.batch = 1, .heads = 2, .kv_heads = 2, .head_dim = 64, .total_q = 100, .total_k = 100, .max_seqlen_q = 100};
  p.window_left = 10;
  CHECK_THROWS_WITH(fixtures::fmha80::check(p), Contains("test_fmha_errors.cpp") &&
                                                    Contains("sliding windows and top-left aligned masks are not supported by this kernel"));
  p.window_left = -1;
  p.top_left = true;
  CHECK_THROWS_WITH(fixtures::fmha80::check(p), Contains("the sm_90a kernels, which attention_forward and attention_backward pick on sm_90a, have both"));
}

TEST_CASE("host copies of cu_seqlens that do not describe the problem are refused", "[error]") {
  fixtures::FmhaProblem p{.batch = 3, .heads = 2, .kv_heads = 2, .head_dim = 64, .total_q = 30, .total_k = 40, .max_seqlen_q = 15};
  using V = std::vector<int32_t>;
  CHECK_NOTHROW(fixtures::check_seqlens(p, V{0, 10, 15, 30}, V{0, 0, 20, 40}));  // an empty key sequence is allowed
  CHECK_THROWS_WITH(fixtures::check_seqlens(p, V{0, 10, 30}, V{0, 0, 20, 40}),
                    Contains("test_fmha_errors.cpp") && Contains("cu_seqlens_q has 3 offsets; a batch of 3 needs 4"));
  CHECK_THROWS_WITH(fixtures::check_seqlens(p, V{0, 10, 15, 30}, V{0, 25, 20, 40}),
                    Contains("cu_seqlens_k decreases from 25 to 20 at sequence 1"));
  CHECK_THROWS_WITH(fixtures::check_seqlens(p, V{0, 10, 15, 30}, V{0, 0, 20, 41}),
                    Contains("cu_seqlens_k ends at 41, but the tensors hold 40 tokens"));
  CHECK_THROWS_WITH(fixtures::check_seqlens(p, V{1, 10, 15, 30}, V{0, 0, 20, 40}), Contains("cu_seqlens_q starts at 1, not 0"));
  CHECK_THROWS_WITH(fixtures::check_seqlens(p, V{0, 5, 10, 30}, V{0, 0, 20, 40}),
                    Contains("cu_seqlens_q gives sequence 2 20 queries, more than max_seqlen_q (15)"));
}

TEST_CASE("the Hopper forward on dense tensors refuses tensors that do not hold the problem or that TMA cannot read", "[error]") {
  using cutejit::DeviceTensor;
  using fixtures::fmha90::check_dense;
  using A4 = std::array<int64_t, 4>;
  // Two sequences of 100 queries and 120 keys, 8 query and 2 key/value heads, head dim 64:
  // BSHD q, k, v, o (no memory behind them: only the checks run), lse (batch, heads, seqlen_q).
  auto p = fixtures::FmhaProblem::dense(2, 8, 2, 64, 100, 120);
  auto tensor = [](A4 shape, A4 stride, uint64_t at = 1 << 20) { return DeviceTensor<cutejit::bf16>::make(at, shape, stride); };
  auto q = tensor({2, 100, 8, 64}, {100 * 512, 512, 64, 1}), o = q;
  auto k = tensor({2, 120, 2, 64}, {120 * 128, 128, 64, 1}), v = k;
  auto lse = DeviceTensor<float>::make(1 << 20, std::array<int64_t, 3>{2, 8, 100}, std::array<int64_t, 3>{800, 100, 1});
  CHECK_NOTHROW(check_dense(p, q, k, v, o, lse));
  // BHSD: the same tensors with the seqlen and heads strides exchanged.
  CHECK_NOTHROW(check_dense(p, tensor({2, 100, 8, 64}, {100 * 512, 64, 6400, 1}), k, v, o, lse));

  CHECK_THROWS_WITH(check_dense(p, q, v, k, tensor({2, 100, 4, 64}, {100 * 256, 256, 64, 1}), lse),
                    Contains("test_fmha_errors.cpp") &&
                        Contains("o is (2, 100, 4, 64), but the problem's o (batch, seqlen_q, heads, head_dim) is (2, 100, 8, 64)"));
  CHECK_THROWS_WITH(check_dense(p, q, k, v, o, DeviceTensor<float>::make(1 << 20, std::array<int64_t, 2>{8, 200}, std::array<int64_t, 2>{200, 1})),
                    Contains("lse is (8, 200), but the problem's lse (batch, heads, seqlen_q) is (2, 8, 100)"));
  CHECK_THROWS_WITH(check_dense(p, q, tensor({2, 120, 2, 64}, {120 * 128, 128, 1, 2}), v, o, lse),
                    Contains("k's head_dim has stride 2; TMA reads it, so it must be contiguous (stride 1)"));
  CHECK_THROWS_WITH(check_dense(p, q, k, tensor({2, 120, 2, 64}, {120 * 136, 136, 66, 1}), o, lse),
                    Contains("v's heads stride is 66 elements (132 bytes); TMA needs multiples of 16 bytes"));
  CHECK_THROWS_WITH(check_dense(p, tensor({2, 100, 8, 64}, {100 * 512, 512, 64, 1}, (1 << 20) + 2), k, v, o, lse),
                    Contains("q starts 2 bytes past a 16-byte boundary; TMA needs it aligned"));

  auto packed = p;
  packed.total_q = 150;  // a varlen problem is not a dense batch
  CHECK_THROWS_WITH(check_dense(packed, q, k, v, o, lse),
                    Contains("a dense batch is `batch` sequences of seqlen_q queries and seqlen_k keys each") &&
                        Contains("FmhaProblem::dense(batch, heads, kv_heads, head_dim, seqlen_q, seqlen_k)"));
  auto windowed = p;
  windowed.window_left = 120;  // shorter than all 240 keys of the batch, not than a sequence's 120
  CHECK_THROWS_WITH(check_dense(windowed, q, k, v, o, lse),
                    Contains("test_fmha_errors.cpp") && Contains("a window of 120 keys is as long as a sequence's 120 keys; give -1 for no bound"));
  auto bad_heads = fixtures::FmhaProblem::dense(2, 8, 3, 64, 100, 120);
  CHECK_THROWS_WITH(check_dense(bad_heads, q, k, v, o, lse), Contains("query heads a multiple of the key/value heads"));
}
