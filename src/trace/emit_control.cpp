/** \file
 * Dynamic control flow as scf ops with no results: values flow out of regions through Vars
 * (allocas), so each region only needs its insertion point pushed and popped.
 */
#include <numeric>

#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/LLVMIR/LLVMDialect.h>
#include <mlir/Dialect/SCF/IR/SCF.h>

#include "trace/trace.hpp"

namespace cutejit::detail {

uint32_t begin_if(ValueId cond, Where where) {
  Trace& t = Trace::current(where);
  const ValueInfo& c = t.get(cond, where);
  if (c.pointer || c.type != DType::i1) trace_error("if_ needs a Bool condition", where);
  auto op = mlir::scf::IfOp::create(t.builder(), t.loc(where), mlir::TypeRange{}, c.value, /*withElseRegion=*/true);
  t.push_insertion();
  t.builder().setInsertionPointToStart(&op.getThenRegion().front());
  t.if_ops().push_back(op);
  return uint32_t(t.if_ops().size() - 1);
}

void begin_else(uint32_t if_op, Where where) {
  Trace& t = Trace::current(where);
  auto op = mlir::cast<mlir::scf::IfOp>(t.if_ops().at(if_op));
  if (!op.getElseRegion().front().without_terminator().empty())
    trace_error("this if_ already has an else_ branch", where);
  t.push_insertion();
  t.builder().setInsertionPointToStart(&op.getElseRegion().front());
}

void end_if_region() { Trace::current(Where::current()).pop_insertion(); }

ValueId begin_for(ValueId lo, ValueId hi, ValueId step, int unroll, Where where) {
  Trace& t = Trace::current(where);
  const ValueInfo& l = t.get(lo, where);
  const ValueInfo& h = t.get(hi, where);
  const ValueInfo& s = t.get(step, where);
  if (l.type != h.type || l.type != s.type) trace_error("for_ bounds and step must have one integer type", where);
  // scf.for counts up by a positive step; any other step would never reach the bound (a zero
  // step spun forever). A constant one is refused; a dynamic one that is not positive runs
  // the body no times: the bound becomes `lo`, one compare and select before the loop.
  const bool is_unsigned = !is_signed(s.type);
  mlir::Value bound = h.value;
  if (std::optional<llvm::APInt> c = constant_integer(s.value)) {
    if (c->isZero() || (!is_unsigned && c->isNegative()))
      trace_error("for_ needs a positive step, not " + llvm::toString(*c, 10, !is_unsigned) +
                      ": it counts up from lo while i < hi. To count down, loop over k in [0, n) and use i = n - 1 - k",
                  where);
  } else {
    using namespace mlir::arith;
    mlir::OpBuilder& b = t.builder();
    mlir::Location at = t.loc(where);
    auto zero = ConstantOp::create(b, at, b.getIntegerAttr(s.value.getType(), 0));
    auto positive = CmpIOp::create(b, at, is_unsigned ? CmpIPredicate::ne : CmpIPredicate::sgt, s.value, zero);
    bound = SelectOp::create(b, at, positive, h.value, l.value);
  }
  auto op = mlir::scf::ForOp::create(t.builder(), t.loc(where), l.value, bound, s.value);
  if (unroll > 0) {
    // scf-to-cf forwards LLVM-dialect attributes to the loop's back branch, which becomes
    // !llvm.loop metadata.
    mlir::MLIRContext* ctx = &t.context();
    mlir::OpBuilder& b = t.builder();
    auto unroll_attr = unroll == 1
        ? mlir::LLVM::LoopUnrollAttr::get(ctx, b.getBoolAttr(true), {}, {}, {}, {}, {}, {})
        : mlir::LLVM::LoopUnrollAttr::get(ctx, {}, b.getI32IntegerAttr(unroll), {}, {}, {}, {}, {});
    auto annotation = mlir::LLVM::LoopAnnotationAttr::get(ctx, {}, {}, {}, unroll_attr, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {});
    op->setAttr("llvm.loop_annotation", annotation);
  }
  t.push_insertion();
  t.builder().setInsertionPointToStart(op.getBody());
  return t.add(op.getInductionVar(), l.type, std::gcd(l.known, s.known));
}

void end_for() { Trace::current(Where::current()).pop_insertion(); }

void begin_while(Where where) {
  Trace& t = Trace::current(where);
  auto op = mlir::scf::WhileOp::create(t.builder(), t.loc(where), mlir::TypeRange{}, mlir::ValueRange{});
  t.push_insertion();
  mlir::Block* before = t.builder().createBlock(&op.getBefore());
  t.builder().setInsertionPointToStart(before);
}

void while_condition(ValueId cond, Where where) {
  Trace& t = Trace::current(where);
  const ValueInfo& c = t.get(cond, where);
  if (c.pointer || c.type != DType::i1) trace_error("while_ needs a Bool condition", where);
  mlir::OpBuilder& b = t.builder();
  mlir::scf::ConditionOp::create(b, t.loc(where), c.value, mlir::ValueRange{});
  auto op = mlir::cast<mlir::scf::WhileOp>(b.getInsertionBlock()->getParentOp());
  mlir::Block* after = b.createBlock(&op.getAfter());
  b.setInsertionPointToStart(after);
}

void end_while() {
  Trace& t = Trace::current(Where::current());
  mlir::OpBuilder& b = t.builder();
  mlir::scf::YieldOp::create(b, b.getUnknownLoc());
  t.pop_insertion();
}

}  // namespace cutejit::detail
