// What the Qwen3 programs read from their command lines (apps/qwen3/command_line.hpp) and the
// configurations they name: accepted values, and a refusal that names the option for the rest.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "qwen3/checkpoint.hpp"
#include "qwen3/command_line.hpp"

using Catch::Contains;

TEST_CASE("the Qwen3 programs' counts, lists and token ids: what they accept and how they refuse the rest", "[unit][qwen3]") {
  CHECK(qwen3::parse_count("--steps", "64") == 64);
  CHECK_THROWS_WITH(qwen3::parse_count("--steps", "0"), Contains("--steps takes whole numbers from 1 up, not '0'"));
  CHECK_THROWS_WITH(qwen3::parse_count("--steps", "6x"), Contains("--steps takes whole numbers from 1 up, not '6x'"));
  CHECK(qwen3::parse_count_list("--decode", "1,8,32") == std::vector<int64_t>{1, 8, 32});
  CHECK_THROWS_WITH(qwen3::parse_count_list("--decode", "1,,8"), Contains("--decode takes whole numbers from 1 up, not ''"));
  CHECK_THROWS_WITH(qwen3::parse_count_list("--decode", ""), Contains("--decode takes a comma-separated list"));
  CHECK(qwen3::parse_token_list("151644,872,0") == std::vector<int32_t>{151644, 872, 0});
  CHECK_THROWS_WITH(qwen3::parse_token_list("1,-2"), Contains("'-2' in '1,-2' is not one"));
  CHECK_THROWS_WITH(qwen3::parse_token_list("1,99999999999"), Contains("'99999999999'"));
  CHECK(qwen3::Config::named("8b").hidden == 4096);
  CHECK(qwen3::Config::named("0.6b").tie_word_embeddings);
  CHECK(qwen3::Config::named("tiny").layers == 2);
  CHECK_THROWS_WITH(qwen3::Config::named("9b"), Contains("the model is 8b, 1.7b, 0.6b or tiny, not '9b'"));
}
