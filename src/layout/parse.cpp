// Parsing of CuTe notation: "(4,(2,3)):(1,(4,8))", "8:1", "Sw<3,4,3> o 0 o (8,64):(64,1)".
#include <cutejit/core/error.hpp>
#include <cutejit/layout/int_tuple.hpp>
#include <cutejit/layout/layout.hpp>
#include <cutejit/layout/swizzle.hpp>

#include <cctype>
#include <limits>

namespace cutejit {

namespace {

class Parser {
 public:
  Parser(std::string_view text, const char* what) : text_(text), what_(what) {}

  [[noreturn]] void error(const std::string& expected) const {
    std::string msg = std::string(what_) + ": expected " + expected + " at column " + std::to_string(pos_ + 1) +
                      " of \"" + std::string(text_) + "\"\n  " + std::string(text_) + "\n  " +
                      std::string(pos_, ' ') + "^";
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
    uint64_t v = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      v = v * 10 + static_cast<uint64_t>(text_[pos_] - '0');
      if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        pos_ = start;
        error("an integer that fits in 64 bits");
      }
      ++pos_;
    }
    return neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  }

  IntTuple int_tuple() {
    skip_ws();
    if (accept('(')) {
      std::vector<IntTuple> elems;
      if (accept(')')) return IntTuple(std::move(elems));
      elems.push_back(int_tuple());
      while (true) {
        if (accept(')')) break;
        if (!accept(',')) error("',' or ')'");
        if (accept(')')) break;  // python-style trailing comma "(8,)"
        elems.push_back(int_tuple());
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
  int64_t b = p.integer();
  p.expect(',', "','");
  int64_t m = p.integer();
  p.expect(',', "','");
  int64_t s = p.integer();
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
  return ComposedLayout(Swizzle(static_cast<int>(b), static_cast<int>(m), static_cast<int>(s)), offset, inner);
}

}  // namespace cutejit
