/** \file
 * Conversions to and from the microscaling formats (cvt with e2m1x2, e2m3x2, e3m2x2, ue8m0x2
 * types), as inline PTX: the packed operands live in .b8 / .b16 registers, which the asm widens
 * to and from 32 bits.
 */
#include <string>

#include <mlir/Dialect/LLVMIR/LLVMDialect.h>

#include "cutejit/dsl/narrow_floats.hpp"
#include "trace/trace.hpp"

namespace cutejit::detail {

namespace {
struct Spelling {
  const char* cvt;       ///< the instruction, "cvt.rn.satfinite.e2m1x2.f32"
  const char* reg;       ///< the packed register's type
  const char* widen;     ///< its conversion to 32 bits
  const char* name;      ///< for messages
};

Spelling spelling(NarrowPack k) {
  switch (k) {
    case NarrowPack::e2m1x2: return {"cvt.rn.satfinite.e2m1x2.f32", ".b8", "cvt.u32.u8", "e2m1x2"};
    case NarrowPack::e2m3x2: return {"cvt.rn.satfinite.e2m3x2.f32", ".b16", "cvt.u32.u16", "e2m3x2"};
    case NarrowPack::e3m2x2: return {"cvt.rn.satfinite.e3m2x2.f32", ".b16", "cvt.u32.u16", "e3m2x2"};
    case NarrowPack::ue8m0x2_rz: return {"cvt.rz.satfinite.ue8m0x2.f32", ".b16", "cvt.u32.u16", "ue8m0x2"};
    case NarrowPack::ue8m0x2_rp: return {"cvt.rp.satfinite.ue8m0x2.f32", ".b16", "cvt.u32.u16", "ue8m0x2"};
  }
  return {};
}

mlir::Value f32_operand(Trace& t, ValueId id, const char* what, const Where& w) {
  const ValueInfo& v = t.get(id, w);
  if (v.pointer || v.type != DType::f32) trace_error(std::string(what) + " takes f32 values", w);
  return v.value;
}
}  // namespace

ValueId narrow_pack(NarrowPack kind, ValueId first, ValueId second, Where where) {
  Trace& t = Trace::current(where);
  const Spelling s = spelling(kind);
  t.require(Feature::narrow_convert, s.cvt, where);
  mlir::OpBuilder& b = t.builder();
  // The instruction's first source goes to the high part: (second, first) puts `first` low.
  const std::string ptx = std::string("{ .reg ") + s.reg + " t; " + s.cvt + " t, $2, $1; " + s.widen + " $0, t; }";
  mlir::Value operands[] = {f32_operand(t, first, s.cvt, where), f32_operand(t, second, s.cvt, where)};
  auto op = mlir::LLVM::InlineAsmOp::create(b, t.loc(where), b.getI32Type(), operands, ptx, "=r,f,f", false, false,
                                            mlir::LLVM::TailCallKind::None, mlir::LLVM::AsmDialectAttr(), mlir::ArrayAttr());
  return t.add(op.getResult(0), DType::u32);
}

std::pair<ValueId, ValueId> narrow_unpack_e2m1x2(ValueId packed, Where where) {
  Trace& t = Trace::current(where);
  t.require(Feature::narrow_convert, "cvt.rn.f16x2.e2m1x2", where);
  mlir::OpBuilder& b = t.builder();
  // f16x2 holds every FP4 value exactly, and so does its widening to f32.
  const char* ptx =
      "{ .reg .b8 t; .reg .b32 h; .reg .b16 l, u; cvt.u8.u32 t, $2; cvt.rn.f16x2.e2m1x2 h, t; mov.b32 {l, u}, h; "
      "cvt.f32.f16 $0, l; cvt.f32.f16 $1, u; }";
  auto pair = mlir::LLVM::LLVMStructType::getLiteral(&t.context(), {b.getF32Type(), b.getF32Type()});
  auto op = mlir::LLVM::InlineAsmOp::create(b, t.loc(where), pair, mlir::ValueRange{i32_operand(t, packed, "an e2m1x2 byte", where)}, ptx,
                                            "=f,=f,r", false, false, mlir::LLVM::TailCallKind::None, mlir::LLVM::AsmDialectAttr(),
                                            mlir::ArrayAttr());
  auto field = [&](int64_t i) {
    return t.add(mlir::LLVM::ExtractValueOp::create(b, t.loc(where), op.getResult(0), llvm::ArrayRef<int64_t>{i}), DType::f32);
  };
  return {field(0), field(1)};
}

}  // namespace cutejit::detail
