#include "emulator/ptx_text.hpp"

#include <bit>
#include <cctype>
#include <charconv>

namespace cutejit::emulator {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

namespace {

// Directives that end at the end of their line rather than at a `;`.
bool ends_at_newline(std::string_view s) {
  for (std::string_view d : {".loc", ".file", ".version", ".target", ".address_size", ".maxntid", ".reqntid", ".minnctapersm",
                             ".explicitcluster", ".reqnctapercluster", ".maxnreg", ".maxclusterrank", ".blocksareclusters"})
    if (s.substr(0, d.size()) == d && (s.size() == d.size() || std::isspace(static_cast<unsigned char>(s[d.size()])))) return true;
  return false;
}

bool is_identifier(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.' || c == '%')) return false;
  return true;
}

}  // namespace

std::vector<Statement> split_statements(std::string_view ptx) {
  std::vector<Statement> out;
  std::string cur;
  uint32_t line = 1, start_line = 1;
  int parens = 0, braces = 0, brackets = 0;  // inside the statement being read
  bool in_section = false;                   // `.section` blocks hold debug data: skipped whole
  int section_depth = 0;

  auto emit = [&](Statement::Kind kind, std::string text) {
    out.push_back(Statement{kind, std::move(text), start_line});
  };
  auto flush = [&]() {
    std::string_view t = trim(cur);
    if (!t.empty()) emit(Statement::Kind::statement, std::string(t));
    cur.clear();
  };

  for (size_t i = 0; i < ptx.size(); ++i) {
    char c = ptx[i];
    if (c == '/' && i + 1 < ptx.size() && ptx[i + 1] == '/') {
      while (i < ptx.size() && ptx[i] != '\n') ++i;
      --i;
      continue;
    }
    if (c == '/' && i + 1 < ptx.size() && ptx[i + 1] == '*') {
      i += 2;
      while (i + 1 < ptx.size() && !(ptx[i] == '*' && ptx[i + 1] == '/')) line += ptx[i++] == '\n';
      ++i;
      continue;
    }
    if (c == '"') {  // strings (.file names) are copied whole
      size_t j = i + 1;
      while (j < ptx.size() && ptx[j] != '"' && ptx[j] != '\n') ++j;
      cur.append(ptx.substr(i, j - i + 1));
      i = j;
      continue;
    }
    if (in_section) {
      if (c == '{') ++section_depth;
      if (c == '}' && --section_depth == 0) in_section = false;
      line += c == '\n';
      continue;
    }
    if (trim(cur).empty()) start_line = line;
    switch (c) {
      case '\n': {
        ++line;
        std::string_view t = trim(cur);
        if (parens == 0 && braces == 0 && ends_at_newline(t)) flush();
        else cur += ' ';
        break;
      }
      case ';':
        if (braces || parens || brackets) cur += c;
        else flush();
        break;
      case '(': ++parens, cur += c; break;
      case ')': --parens, cur += c; break;
      case '[': ++brackets, cur += c; break;
      case ']': --brackets, cur += c; break;
      case '{': {
        std::string_view t = trim(cur);
        bool statement_part = !t.empty() && t.find(".entry") == std::string_view::npos && t.find(".func") == std::string_view::npos;
        if (t.substr(0, 8) == ".section") {
          cur.clear();
          in_section = true, section_depth = 1;
        } else if (statement_part || parens) {
          ++braces, cur += c;
        } else {
          flush();
          start_line = line;
          emit(Statement::Kind::open, "{");
        }
        break;
      }
      case '}':
        if (braces) {
          --braces, cur += c;
        } else {
          flush();
          start_line = line;
          emit(Statement::Kind::close, "}");
        }
        break;
      case ':': {
        // `name:` alone is a label; `::` belongs to an opcode or a state space.
        bool double_colon = (i + 1 < ptx.size() && ptx[i + 1] == ':') || (i > 0 && ptx[i - 1] == ':');
        std::string_view t = trim(cur);
        if (!double_colon && !braces && !brackets && !parens && is_identifier(t)) {
          emit(Statement::Kind::label, std::string(t));
          cur.clear();
        } else {
          cur += c;
        }
        break;
      }
      default: cur += c;
    }
  }
  flush();
  return out;
}

std::vector<std::string_view> split_opcode(std::string_view opcode) {
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    size_t dot = opcode.find('.', start);
    parts.push_back(opcode.substr(start, dot - start));
    if (dot == std::string_view::npos) return parts;
    start = dot + 1;
  }
}

std::vector<std::string_view> split_operands(std::string_view s) {
  std::vector<std::string_view> out;
  int depth = 0;
  size_t begin = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '[' || c == '{' || c == '(') ++depth;
    if (c == ']' || c == '}' || c == ')') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(trim(s.substr(begin, i - begin)));
      begin = i + 1;
    }
  }
  std::string_view last = trim(s.substr(begin));
  if (!last.empty() || !out.empty()) out.push_back(last);
  return out;
}

std::vector<std::string_view> words(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    size_t b = i;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i > b) out.push_back(s.substr(b, i - b));
  }
  return out;
}

bool parse_integer(std::string_view s, uint64_t& out) {
  bool negative = !s.empty() && s[0] == '-';
  if (negative) s.remove_prefix(1);
  if (!s.empty() && (s.back() == 'U' || s.back() == 'u')) s.remove_suffix(1);
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) base = 16, s.remove_prefix(2);
  else if (s.size() > 1 && s[0] == '0') base = 8, s.remove_prefix(1);
  if (s.empty()) return base == 8 ? (out = 0, true) : false;
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || p != s.data() + s.size()) return false;
  out = negative ? uint64_t(0) - v : v;
  return true;
}

bool parse_immediate(std::string_view s, uint64_t& out, bool f32) {
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'f' || s[1] == 'F' || s[1] == 'd' || s[1] == 'D')) {
    auto [p, ec] = std::from_chars(s.data() + 2, s.data() + s.size(), out, 16);
    return ec == std::errc() && p == s.data() + s.size();
  }
  // A decimal floating-point constant (`1.0`, `2e-3`) is an f64 value (the ISA's constants), made
  // f32 when the instruction reads its operand as f32.
  std::string_view digits = s.starts_with("-") ? s.substr(1) : s;
  bool hex = digits.size() > 1 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X');
  if (!hex && s.find_first_of(".eE") != std::string_view::npos) {
    double d = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
    if (ec != std::errc() || p != s.data() + s.size()) return false;
    out = f32 ? uint64_t(std::bit_cast<uint32_t>(float(d))) : std::bit_cast<uint64_t>(d);
    return true;
  }
  return parse_integer(s, out);
}

}  // namespace cutejit::emulator
