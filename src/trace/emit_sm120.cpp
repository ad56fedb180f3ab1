/** \file
 * The sm_120 family's mma.sync with FP8/FP6/FP4 fragments, block-scaled or not, as inline PTX:
 * MLIR 22's nvvm.mma.sync refuses e2m1 at m16n8k32, and the fragments are plain 32-bit
 * registers anyway.
 */
#include <string>

#include <mlir/Dialect/LLVMIR/LLVMDialect.h>

#include "cutejit/arch/sm120.hpp"
#include "trace/trace.hpp"

namespace cutejit::detail {

const char* ptx_name(MxType t) {
  switch (t) {
    case MxType::e4m3: return "e4m3";
    case MxType::e5m2: return "e5m2";
    case MxType::e3m2: return "e3m2";
    case MxType::e2m3: return "e2m3";
    case MxType::e2m1: return "e2m1";
  }
  return "?";
}

namespace {
/// The fragments as the asm's operands: A's four registers, B's two, C's four f32.
llvm::SmallVector<mlir::Value> fragment_operands(Trace& t, std::span<const ValueId> a, std::span<const ValueId> b,
                                                 std::span<const ValueId> c, mlir::Location l, const Where& w) {
  if (a.size() != 16 || b.size() != 8 || c.size() != 4)
    trace_error("mma.sync m16n8k32 with 8-bit fragments takes 16 bytes of A, 8 of B and 4 f32 of C per thread, not " +
                    std::to_string(a.size()) + ", " + std::to_string(b.size()) + " and " + std::to_string(c.size()),
                w);
  llvm::SmallVector<mlir::Value> operands = pack(t, a, DType::u8, false, "the A fragment", l, w).values;
  llvm::SmallVector<mlir::Value> b_registers = pack(t, b, DType::u8, false, "the B fragment", l, w).values;
  operands.append(b_registers.begin(), b_registers.end());
  for (ValueId v : c) {
    const ValueInfo& x = t.get(v, w);
    if (x.pointer || x.type != DType::f32) trace_error("this mma.sync accumulates in f32", w);
    operands.push_back(x.value);
  }
  return operands;
}

/// The asm with D's four f32 as its results, and D as values.
std::vector<ValueId> emit_mma(Trace& t, const std::string& ptx, const std::string& constraints, mlir::ValueRange operands, mlir::Location l) {
  mlir::OpBuilder& builder = t.builder();
  auto f32 = builder.getF32Type();
  auto result = mlir::LLVM::LLVMStructType::getLiteral(&t.context(), {f32, f32, f32, f32});
  auto op = mlir::LLVM::InlineAsmOp::create(builder, l, result, operands, ptx, constraints, false, false, mlir::LLVM::TailCallKind::None,
                                            mlir::LLVM::AsmDialectAttr(), mlir::ArrayAttr());
  std::vector<ValueId> d;
  for (int64_t i = 0; i < 4; ++i)
    d.push_back(t.add(mlir::LLVM::ExtractValueOp::create(builder, l, op.getResult(0), llvm::ArrayRef<int64_t>{i}), DType::f32));
  return d;
}
}  // namespace

std::vector<ValueId> mma_sync_block_scaled(ScaledMmaKind kind, MxType a_type, MxType b_type, std::span<const ValueId> a,
                                           std::span<const ValueId> b, std::span<const ValueId> c, ValueId scale_a, ValueId scale_b,
                                           Where where) {
  Trace& t = Trace::current(where);
  std::string name;
  switch (kind) {
    case ScaledMmaKind::mxf8f6f4:
      name = std::string("mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.") + ptx_name(a_type) + "." +
             ptx_name(b_type) + ".f32.ue8m0";
      t.require(Feature::mma_kinds, name.c_str(), where);
      break;
    case ScaledMmaKind::mxf4:
    case ScaledMmaKind::mxf4nvf4:
      if (a_type != MxType::e2m1 || b_type != MxType::e2m1)
        trace_error("block-scaled mma.sync m16n8k64 (kind::mxf4, mxf4nvf4) takes e2m1 operands only", where);
      name = kind == ScaledMmaKind::mxf4
                 ? "mma.sync.aligned.m16n8k64.row.col.kind::mxf4.block_scale.scale_vec::2X.f32.e2m1.e2m1.f32.ue8m0"
                 : "mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3";
      t.require(Feature::mma_kinds, name.c_str(), where);
      break;
  }
  mlir::Location l = t.loc(where);
  llvm::SmallVector<mlir::Value> operands = fragment_operands(t, a, b, c, l, where);
  operands.push_back(i32_operand(t, scale_a, "A's scale register", where));
  operands.push_back(i32_operand(t, scale_b, "B's scale register", where));
  // $0-$3 D, $4-$7 A, $8-$9 B, $10-$13 C, $14 scale A, $15 scale B; byte and thread selectors 0.
  return emit_mma(t, name + " {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13}, $14, {0, 0}, $15, {0, 0};",
                  "=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f,r,r", operands, l);
}

std::vector<ValueId> mma_sync_f8f6f4(MxType a_type, MxType b_type, std::span<const ValueId> a, std::span<const ValueId> b,
                                     std::span<const ValueId> c, Where where) {
  Trace& t = Trace::current(where);
  const std::string name = std::string("mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f32.") + ptx_name(a_type) + "." +
                           ptx_name(b_type) + ".f32";
  t.require(Feature::mma_kinds, name.c_str(), where);
  mlir::Location l = t.loc(where);
  return emit_mma(t, name + " {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};", "=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f",
                  fragment_operands(t, a, b, c, l, where), l);
}

}  // namespace cutejit::detail
