/** \file
 * The integer operations LLVM leaves undefined: division and remainder by zero, INT_MIN / -1,
 * and shifts by the bit width or more (or by a negative amount). LLVM may assume they never
 * happen, so a kernel that does one can lose the code around it (a division by a constant 0
 * used to leave a kernel whose PTX was only `ret`). With constant operands each is an error at
 * the user's line; with a dynamic operand the result is defined, as docs/dsl.md states:
 *
 *   x / 0 == x and x % 0 == 0 (as if dividing by 1); INT_MIN / -1 == INT_MIN, INT_MIN % -1 == 0;
 *   x << n and unsigned x >> n are 0 for n outside 0..width-1, signed x >> n is x >> (width-1)
 *   (the sign in every bit): what PTX's shl/shr do, which clamp the amount (read as unsigned).
 *
 * A guard costs a compare and a select, emitted only when the operand is not a constant.
 */
#include <string>

#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/IR/Matchers.h>

#include "trace/trace.hpp"

namespace cutejit::detail {

std::optional<llvm::APInt> constant_integer(mlir::Value v) {
  llvm::APInt c;
  if (!mlir::matchPattern(v, mlir::m_ConstantInt(&c))) return std::nullopt;
  return c;
}

namespace {
std::string type_name(mlir::Value v, bool is_unsigned) {
  return (is_unsigned ? "u" : "i") + std::to_string(v.getType().getIntOrFloatBitWidth());
}
std::string decimal(const llvm::APInt& c, bool is_unsigned) { return llvm::toString(c, 10, !is_unsigned); }
}  // namespace

mlir::Value integer_division(Trace& t, bool remainder, mlir::Value x, mlir::Value y, bool is_unsigned, const Where& w) {
  using namespace mlir::arith;
  mlir::OpBuilder& b = t.builder();
  mlir::Location l = t.loc(w);
  auto divide = [&](mlir::Value d) -> mlir::Value {
    if (remainder) return is_unsigned ? mlir::Value(RemUIOp::create(b, l, x, d)) : RemSIOp::create(b, l, x, d);
    return is_unsigned ? mlir::Value(DivUIOp::create(b, l, x, d)) : DivSIOp::create(b, l, x, d);
  };
  const char* op = remainder ? "%" : "/";
  const std::optional<llvm::APInt> cy = constant_integer(y), cx = constant_integer(x);
  if (cy && cy->isZero())
    trace_error(std::string(remainder ? "remainder" : "division") + " by the constant 0 (x " + op + " 0) is undefined; divide by a "
                    "nonzero value, or guard the operation with if_",
                w);
  const bool minus_one = !is_unsigned && cy && cy->isAllOnes();
  if (minus_one && cx && cx->isMinSignedValue())
    trace_error(decimal(*cx, false) + " " + op + " -1 overflows " + type_name(x, false) + " (the quotient " +
                    decimal(*cx, false).substr(1) + " is not an " + type_name(x, false) + "); compute it in a wider type",
                w);
  if (cy && !minus_one) return divide(y);
  // A dynamic divisor (or -1): divide by 1 instead of 0, and by 1 instead of -1 so that
  // INT_MIN / -1 cannot overflow; x / -1 is then the (wrapping) negation.
  auto zero = ConstantOp::create(b, l, b.getIntegerAttr(y.getType(), 0));
  auto one = ConstantOp::create(b, l, b.getIntegerAttr(y.getType(), 1));
  mlir::Value unsafe = CmpIOp::create(b, l, CmpIPredicate::eq, y, zero);
  mlir::Value is_minus_one;
  if (!is_unsigned) {
    auto all_ones = ConstantOp::create(b, l, b.getIntegerAttr(y.getType(), -1));
    is_minus_one = CmpIOp::create(b, l, CmpIPredicate::eq, y, all_ones);
    unsafe = OrIOp::create(b, l, unsafe, is_minus_one);
  }
  mlir::Value r = divide(SelectOp::create(b, l, unsafe, one, y));
  if (!is_unsigned && !remainder) r = SelectOp::create(b, l, is_minus_one, SubIOp::create(b, l, zero, x), r);
  return r;
}

mlir::Value integer_shift(Trace& t, bool left, mlir::Value x, mlir::Value n, bool is_unsigned, const Where& w) {
  using namespace mlir::arith;
  mlir::OpBuilder& b = t.builder();
  mlir::Location l = t.loc(w);
  const unsigned width = x.getType().getIntOrFloatBitWidth();
  auto shift = [&](mlir::Value amount) -> mlir::Value {
    if (left) return ShLIOp::create(b, l, x, amount);
    return is_unsigned ? mlir::Value(ShRUIOp::create(b, l, x, amount)) : ShRSIOp::create(b, l, x, amount);
  };
  if (std::optional<llvm::APInt> c = constant_integer(n)) {
    if (c->uge(width))
      trace_error(std::string("a shift by ") + decimal(*c, is_unsigned) + " is undefined for an " + type_name(x, is_unsigned) +
                      " value: the valid amounts are 0.." + std::to_string(width - 1),
                  w);
    return shift(n);
  }
  auto last = ConstantOp::create(b, l, b.getIntegerAttr(n.getType(), width - 1));
  if (!left && !is_unsigned) return shift(MinUIOp::create(b, l, n, last));  // the sign in every bit
  auto in_range = CmpIOp::create(b, l, CmpIPredicate::ule, n, last);
  auto zero = ConstantOp::create(b, l, b.getIntegerAttr(x.getType(), 0));
  return SelectOp::create(b, l, in_range, shift(n), zero);
}

}  // namespace cutejit::detail
