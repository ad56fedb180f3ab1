/** \file
 * PTX text split into statements: comments gone, each statement with the `.loc` line it came
 * under, blocks marked, function headers and directives that end at a newline recognised.
 * The parser (ptx_parser.cpp) reads these instead of characters.
 */
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cutejit::emulator {

struct Statement {
  enum class Kind : uint8_t { statement, label, open, close };
  Kind kind = Kind::statement;
  std::string text;     ///< without the `;` (a label without its `:`)
  uint32_t ptx_line = 0;  ///< line in the PTX text, for messages about the PTX itself
};

std::vector<Statement> split_statements(std::string_view ptx);

/// Splits `s` at top-level commas (not inside [], {} or ()), trimming each piece.
std::vector<std::string_view> split_operands(std::string_view s);
std::string_view trim(std::string_view s);
/// A dotted opcode's parts: "mma.sync.aligned.m16n8k16" -> {"mma", "sync", "aligned", "m16n8k16"}.
std::vector<std::string_view> split_opcode(std::string_view opcode);
/// `s` split at white space.
std::vector<std::string_view> words(std::string_view s);

/// A PTX integer (decimal, `0x` hex, `0` octal, a `-` sign, a `U` suffix); false when `s` is none.
bool parse_integer(std::string_view s, uint64_t& out);
/// `0f3F800000` (f32 bits), `0d…` (f64 bits), a decimal floating-point constant (an f64 value,
/// made f32 when `f32`), or an integer.
bool parse_immediate(std::string_view s, uint64_t& out, bool f32 = false);

}  // namespace cutejit::emulator
