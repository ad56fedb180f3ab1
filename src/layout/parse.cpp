// Parsing of CuTe notation: "(4,(2,3)):(1,(4,8))", "8:1", "Sw<3,4,3> o 0 o (8,64):(64,1)".
#include <cutejit/core/error.hpp>
#include <cutejit/layout/int_tuple.hpp>
#include <cutejit/layout/layout.hpp>
#include <cutejit/layout/swizzle.hpp>

#include <cctype>
#include <limits>
#include <string>

namespace cutejit {

namespace {

class Parser {
 public:
  Parser(std::string_view text, const char* what) : text_(text), what_(what) {}

  [[noreturn]] void error(const std::string& expected) const {
    // Long text is shown as the 60 characters around the column.
    const bool whole = text_.size() <= 120;
    const size_t from = whole ? 0 : (pos_ > 30 ? pos_ - 30 : 0);
    std::string shown(text_.substr(from, whole ? text_.size() : 60));
    std::string quoted = whole ? std::string(text_) : "..." + shown + "...";
    std::string msg = std::string(what_) + ": expected " + expected + " at column " + std::to_string(pos_ + 1) + " of \"" + quoted +
                      "\"\n  " + shown + "\n  " + std::string(pos_ - from, ' ') + "^";
    throw Error(msg);
  }

  void skip_ws() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool at_end() {
    skip_ws();
    return pos_ >= text_.size();
  }
  bool peek(char c) {
    skip_ws();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  bool accept(char c) {
    if (peek(c)) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c, const std::string& expected) {
    if (!accept(c)) error(expected);
  }

  bool peek_int() {
    skip_ws();
    size_t p = pos_;
    if (p < text_.size() && (text_[p] == '-' || text_[p] == '+' || text_[p] == '_')) ++p;
    return p < text_.size() && std::isdigit(static_cast<unsigned char>(text_[p]));
  }

  int64_t integer() {
    skip_ws();
    size_t start = pos_;
    bool neg = false;
    if (pos_ < text_.size() && text_[pos_] == '_') ++pos_;  // CuTe C++ prints static ints as _4
    if (pos_ < text_.size() && (text_[pos_] == '-' || text_[pos_] == '+')) neg = text_[pos_++] == '-';
    if (pos_ >= text_.size() || !std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      pos_ = start;
      error("an integer");
    }
    // Checked before each digit is added, so that no number wraps around 2^64 on the way.
    constexpr uint64_t largest = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    uint64_t v = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      uint64_t digit = static_cast<uint64_t>(text_[pos_] - '0');
      if (v > (largest - digit) / 10) {
        pos_ = start;
        error("an integer that fits in 64 bits");
      }
      v = v * 10 + digit;
      ++pos_;
    }
    return neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  }

  IntTuple int_tuple(int depth = 0) {
    skip_ws();
    // Deeper text is not a layout anyone writes, and would exhaust the stack.
    if (depth > max_depth) error("at most " + std::to_string(max_depth) + " levels of nesting");
    if (accept('(')) {
      std::vector<IntTuple> elems;
      if (accept(')')) return IntTuple(std::move(elems));
      elems.push_back(int_tuple(depth + 1));
      while (true) {
        if (accept(')')) break;
        if (!accept(',')) error("',' or ')'");
        if (accept(')')) break;  // python-style trailing comma "(8,)"
        elems.push_back(int_tuple(depth + 1));
      }
      return IntTuple(std::move(elems));
    }
    if (!peek_int()) error("an integer or '('");
    return integer();
  }

  Layout layout() {
    size_t start = (skip_ws(), pos_);
    IntTuple shape = int_tuple();
    expect(':', "':' between shape and stride");
    IntTuple stride = int_tuple();
    if (!congruent(shape, stride)) {
      pos_ = start;
      error("a stride congruent with the shape " + to_string(shape) + " (got the stride " + to_string(stride) + ")");
    }
    return Layout(shape, stride);
  }

  void end() {
    if (!at_end()) error("end of text");
  }

  /// A swizzle field: an integer small enough for the masks (the Swizzle checks the rest).
  int swizzle_field() {
    size_t start = (skip_ws(), pos_);
    int64_t v = integer();
    if (v < -62 || v > 62) {
      pos_ = start;
      error("a swizzle field from -62 to 62");
    }
    return static_cast<int>(v);
  }

  static constexpr int max_depth = 64;

  size_t pos() const { return pos_; }
  void set_pos(size_t p) { pos_ = p; }
  std::string_view text() const { return text_; }

 private:
  std::string_view text_;
  const char* what_;
  size_t pos_ = 0;
};

}  // namespace

IntTuple parse_int_tuple(std::string_view text) {
  Parser p(text, "parse_int_tuple");
  IntTuple t = p.int_tuple();
  p.end();
  return t;
}

Layout parse_layout(std::string_view text) {
  Parser p(text, "parse_layout");
  Layout l = p.layout();
  p.end();
  return l;
}

ComposedLayout parse_composed_layout(std::string_view text) {
  Parser p(text, "parse_composed_layout");
  p.skip_ws();
  if (p.text().substr(p.pos(), 3) != "Sw<") p.error("\"Sw<\"");
  p.set_pos(p.pos() + 3);
  int b = p.swizzle_field();
  p.expect(',', "','");
  int m = p.swizzle_field();
  p.expect(',', "','");
  int s = p.swizzle_field();
  p.expect('>', "'>'");
  p.expect('o', "'o'");
  int64_t offset = 0;
  // Either "o OFFSET o LAYOUT" or "o LAYOUT": an offset is an integer followed by 'o'.
  size_t save = p.pos();
  if (p.peek_int()) {
    int64_t v = p.integer();
    if (p.accept('o')) {
      offset = v;
    } else {
      p.set_pos(save);
    }
  }
  Layout inner = p.layout();
  p.end();
  return ComposedLayout(Swizzle(b, m, s), offset, inner);
}

}  // namespace cutejit
