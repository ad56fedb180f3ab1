/** \file
 * Scalar values: constants, arithmetic, comparisons, casts, math, and the special registers.
 * Integer values carry a known power-of-two divisor so that later vector accesses can be
 * proven aligned at trace time.
 */
#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>
#include <optional>

#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/LLVMIR/LLVMDialect.h>
#include <mlir/Dialect/LLVMIR/NVVMDialect.h>
#include <mlir/IR/Matchers.h>

#include "trace/trace.hpp"

namespace cutejit::detail {

namespace {

constexpr int64_t max_divisor = max_known_divisor;

/// The amount of a shift by a constant smaller than the value's bit width, or nothing (a wider
/// shift is poison in LLVM and proves nothing).
std::optional<int64_t> constant_shift(mlir::Value amount) {
  llvm::APInt c;
  if (!mlir::matchPattern(amount, mlir::m_ConstantInt(&c)) || c.uge(amount.getType().getIntOrFloatBitWidth())) return std::nullopt;
  return int64_t(c.getZExtValue());
}

bool is_unsigned(DType t) { return t == DType::u8 || t == DType::u16 || t == DType::u32 || t == DType::u64 || t == DType::i1; }

struct Emitter {
  Trace& t;
  Where where;
  mlir::Location loc;
  mlir::OpBuilder& b;
  Emitter(Where w) : t(Trace::current(w)), where(w), loc(t.loc(w)), b(t.builder()) {}

  const ValueInfo& arg(ValueId id) { return t.get(id, where); }
  const ValueInfo& scalar(ValueId id) {
    const ValueInfo& v = arg(id);
    if (v.pointer) trace_error("a pointer is used where a number is expected", where);
    return v;
  }
  /// An operand of arithmetic: a number, and not an 8-bit float (a storage type: the GPU has
  /// no scalar FP8 arithmetic, and LLVM no FP8 type to do it in).
  const ValueInfo& number(ValueId id) {
    const ValueInfo& v = scalar(id);
    if (is_fp8(v.type))
      trace_error(std::string(name(v.type)) +
                      " values are for storage only (load, store, cast, select); convert with cast<float> before "
                      "arithmetic or comparison",
                  where);
    return v;
  }
  void same_type(const ValueInfo& a, const ValueInfo& b2) {
    if (a.type != b2.type)
      trace_error("operands have different element types (" + std::string(name(a.type)) + " and " +
                      std::string(name(b2.type)) + "); convert one with cast<T>",
                  where);
  }
};

/// PTX for the approximate instructions; inline asm keeps LLVM from ever seeing an intrinsic
/// it might not select for a target.
const char* fast_ptx(UnaryOp op) {
  switch (op) {
    case UnaryOp::fast_exp2: return "ex2.approx.ftz.f32 $0, $1;";
    case UnaryOp::fast_log2: return "lg2.approx.ftz.f32 $0, $1;";
    case UnaryOp::fast_sqrt: return "sqrt.approx.ftz.f32 $0, $1;";
    case UnaryOp::fast_rsqrt: return "rsqrt.approx.ftz.f32 $0, $1;";
    case UnaryOp::fast_sin: return "sin.approx.ftz.f32 $0, $1;";
    case UnaryOp::fast_cos: return "cos.approx.ftz.f32 $0, $1;";
    case UnaryOp::fast_tanh: return "tanh.approx.f32 $0, $1;";
    case UnaryOp::fast_reciprocal: return "rcp.approx.ftz.f32 $0, $1;";
    default: return nullptr;
  }
}

/// libdevice's accurate functions, linked in by the lowering when used.
const char* libdevice_name(UnaryOp op, bool f64) {
  switch (op) {
    case UnaryOp::exp: return f64 ? "__nv_exp" : "__nv_expf";
    case UnaryOp::exp2: return f64 ? "__nv_exp2" : "__nv_exp2f";
    case UnaryOp::log: return f64 ? "__nv_log" : "__nv_logf";
    case UnaryOp::log2: return f64 ? "__nv_log2" : "__nv_log2f";
    case UnaryOp::rsqrt: return f64 ? "__nv_rsqrt" : "__nv_rsqrtf";
    case UnaryOp::abs: return f64 ? "__nv_fabs" : "__nv_fabsf";
    case UnaryOp::sin: return f64 ? "__nv_sin" : "__nv_sinf";
    case UnaryOp::cos: return f64 ? "__nv_cos" : "__nv_cosf";
    case UnaryOp::tanh: return f64 ? "__nv_tanh" : "__nv_tanhf";
    default: return nullptr;
  }
}

mlir::Value call_libdevice(Emitter& e, const char* fn, mlir::Value x) {
  mlir::Type ty = x.getType();
  auto fn_type = mlir::LLVM::LLVMFunctionType::get(ty, {ty});
  mlir::gpu::GPUModuleOp m = e.t.gpu_module();
  if (!m.lookupSymbol(fn)) {
    mlir::OpBuilder::InsertionGuard guard(e.b);
    e.b.restoreInsertionPoint(e.t.module_point());
    mlir::LLVM::LLVMFuncOp::create(e.b, e.loc, fn, fn_type);
  }
  return mlir::LLVM::CallOp::create(e.b, e.loc, fn_type, mlir::FlatSymbolRefAttr::get(&e.t.context(), fn),
                                    mlir::ValueRange{x})
      .getResult();
}

/// One instruction of inline PTX without side effects: `result` from `operands`.
mlir::Value inline_ptx(Emitter& e, mlir::Type result, mlir::ValueRange operands, const char* ptx, const char* constraints) {
  return mlir::LLVM::InlineAsmOp::create(e.b, e.loc, result, operands, ptx, constraints, false, false, mlir::LLVM::TailCallKind::None,
                                         mlir::LLVM::AsmDialectAttr(), mlir::ArrayAttr())
      .getResult(0);
}

/// The same for a float -> float instruction ($0 from $1).
mlir::Value inline_ptx(Emitter& e, const char* ptx, mlir::Value x) {
  return inline_ptx(e, x.getType(), x, ptx, x.getType().isF64() ? "=d,d" : "=f,f");
}

}  // namespace

ValueId constant_int(DType type, int64_t value, Where where) {
  Emitter e(where);
  return e.t.constant(type, uint64_t(value), false, [&](mlir::OpBuilder& b) -> mlir::Value {
    return mlir::arith::ConstantOp::create(b, e.loc, b.getIntegerAttr(e.t.type(type), value));
  });
}

namespace {
/// The value of the float type `t` nearest to `x`, ties to even, in one rounding from the
/// double (no double rounding through f32); exact where `x` is representable. FP8 saturates
/// to its largest finite value and NaN stays NaN, as cvt.rn.satfinite does.
double nearest_value(mlir::Type t, DType type, double x) {
  if (type == DType::f64 || std::isnan(x)) return x;
  const llvm::fltSemantics& semantics = mlir::cast<mlir::FloatType>(t).getFloatSemantics();
  if (is_fp8(type)) {
    const double largest = llvm::APFloat::getLargest(semantics).convertToDouble();
    x = std::clamp(x, -largest, largest);
  }
  llvm::APFloat v(x);
  bool inexact = false;
  v.convert(semantics, llvm::APFloat::rmNearestTiesToEven, &inexact);
  return v.convertToDouble();
}
}  // namespace

ValueId constant_float(DType type, double unrounded, Where where) {
  Emitter e(where);
  const double value = nearest_value(e.t.type(type), type, unrounded);
  return e.t.constant(type, std::bit_cast<uint64_t>(value), true, [&](mlir::OpBuilder& b) -> mlir::Value {
    if (is_fp8(type)) {
      // Built from the host conversion's bits: an FP8 constant must not reach the LLVM lowering as a float.
      uint8_t bits = type == DType::f8e4m3 ? f8e4m3(float(value)).bits : f8e5m2(float(value)).bits;
      auto i8 = mlir::arith::ConstantOp::create(b, e.loc, b.getIntegerAttr(b.getI8Type(), bits));
      return mlir::arith::BitcastOp::create(b, e.loc, e.t.type(type), i8);
    }
    return mlir::arith::ConstantOp::create(b, e.loc, b.getFloatAttr(e.t.type(type), value));
  });
}

DType type_of(ValueId v) {
  Where here = Where::current();
  return Trace::current(here).get(v, here).type;
}

int64_t known_divisor(ValueId v) {
  Where here = Where::current();
  return Trace::current(here).get(v, here).known;
}

ValueId binary(BinaryOp op, ValueId a_id, ValueId b_id, Where where) {
  Emitter e(where);
  const ValueInfo& a = e.number(a_id);
  const ValueInfo& b = e.number(b_id);
  e.same_type(a, b);
  DType t = a.type;
  mlir::Value x = a.value, y = b.value;
  bool fp = is_float(t), u = is_unsigned(t);
  int64_t da = a.known, db = b.known, known = 1;
  mlir::Value r;
  using namespace mlir::arith;
  switch (op) {
    case BinaryOp::add:
      r = fp ? mlir::Value(AddFOp::create(e.b, e.loc, x, y)) : AddIOp::create(e.b, e.loc, x, y);
      known = std::gcd(da, db);
      break;
    case BinaryOp::sub:
      r = fp ? mlir::Value(SubFOp::create(e.b, e.loc, x, y)) : SubIOp::create(e.b, e.loc, x, y);
      known = std::gcd(da, db);
      break;
    case BinaryOp::mul:
      r = fp ? mlir::Value(MulFOp::create(e.b, e.loc, x, y)) : MulIOp::create(e.b, e.loc, x, y);
      known = std::min(da * db, max_divisor);
      break;
    case BinaryOp::div:
      r = fp ? mlir::Value(DivFOp::create(e.b, e.loc, x, y)) : integer_division(e.t, false, x, y, u, where);
      break;
    case BinaryOp::rem:
      r = integer_division(e.t, true, x, y, u, where);
      break;
    // Bit operations keep low zero bits: a & b has those of either, a | b and a ^ b those of
    // both. This carries a swizzled address's 16-byte alignment (offset ^ (offset & yyy) >> s).
    case BinaryOp::bit_and:
      r = AndIOp::create(e.b, e.loc, x, y);
      known = std::max(da, db);
      break;
    case BinaryOp::bit_or:
      r = OrIOp::create(e.b, e.loc, x, y);
      known = std::min(da, db);
      break;
    case BinaryOp::bit_xor:
      r = XOrIOp::create(e.b, e.loc, x, y);
      known = std::min(da, db);
      break;
    case BinaryOp::shl:
      r = integer_shift(e.t, true, x, y, u, where);
      if (auto c = constant_shift(y)) known = std::min(da << std::min<int64_t>(*c, 30), max_divisor);  // da <= 2^30
      break;
    case BinaryOp::shr:
      r = integer_shift(e.t, false, x, y, u, where);
      if (auto c = constant_shift(y)) known = std::max<int64_t>(da >> *c, 1);
      break;
    // llvm.minnum/maxnum rather than arith's: GPU-to-NVVM would turn arith's f32 forms into
    // calls to libdevice's fminf/fmaxf, which the kernel would then link, where these become
    // min.f32/max.f32 directly.
    case BinaryOp::min:
      r = fp ? mlir::Value(mlir::LLVM::MinNumOp::create(e.b, e.loc, x, y))
             : u ? mlir::Value(MinUIOp::create(e.b, e.loc, x, y)) : MinSIOp::create(e.b, e.loc, x, y);
      break;
    case BinaryOp::max:
      r = fp ? mlir::Value(mlir::LLVM::MaxNumOp::create(e.b, e.loc, x, y))
             : u ? mlir::Value(MaxUIOp::create(e.b, e.loc, x, y)) : MaxSIOp::create(e.b, e.loc, x, y);
      break;
  }
  return e.t.add(r, t, fp ? 1 : known);
}

ValueId unary(UnaryOp op, ValueId a_id, Where where) {
  Emitter e(where);
  const ValueInfo& a = e.number(a_id);
  DType t = a.type;
  mlir::Value x = a.value;
  using namespace mlir::arith;
  switch (op) {
    case UnaryOp::neg:
      if (is_float(t)) return e.t.add(NegFOp::create(e.b, e.loc, x), t);
      return e.t.add(SubIOp::create(e.b, e.loc, ConstantOp::create(e.b, e.loc, e.b.getIntegerAttr(x.getType(), 0)), x), t,
                     a.known);
    case UnaryOp::bit_not:
      return e.t.add(XOrIOp::create(e.b, e.loc, x, ConstantOp::create(e.b, e.loc, e.b.getIntegerAttr(x.getType(), -1))), t);
    case UnaryOp::abs:
      if (!is_float(t)) return e.t.add(mlir::LLVM::AbsOp::create(e.b, e.loc, x.getType(), x, false), t, a.known);
      break;  // floats: libdevice's fabs below (the GPU-to-NVVM conversion rejects llvm.fabs)
    default: break;
  }
  if (!is_float(t)) trace_error(std::string("this math function needs a floating-point value, not ") + std::string(name(t)), where);
  // f16/bf16 compute in f32, as the hardware does for these functions.
  bool narrow = t == DType::f16 || t == DType::bf16;
  mlir::Value v = narrow ? mlir::Value(ExtFOp::create(e.b, e.loc, e.b.getF32Type(), x)) : x;
  bool f64 = t == DType::f64;
  mlir::Value r;
  if (op == UnaryOp::sqrt || (op == UnaryOp::fast_sqrt && f64)) {
    // IEEE round-to-nearest square root, as CUDA's default -prec-sqrt=true gives (libdevice's
    // sqrtf would depend on an NVVM reflect flag LLVM does not set).
    r = inline_ptx(e, f64 ? "sqrt.rn.f64 $0, $1;" : "sqrt.rn.f32 $0, $1;", v);
  } else if (op == UnaryOp::fast_exp && !f64) {
    auto log2e = ConstantOp::create(e.b, e.loc, e.b.getF32FloatAttr(1.4426950408889634f));
    r = inline_ptx(e, fast_ptx(UnaryOp::fast_exp2), MulFOp::create(e.b, e.loc, v, log2e));
  } else if (const char* ptx = fast_ptx(op); ptx && !f64) {
    r = inline_ptx(e, ptx, v);
  } else {
    // f64 has no approximate instructions: the fast variants fall back to the accurate ones.
    UnaryOp accurate = op;
    switch (op) {
      case UnaryOp::fast_exp: accurate = UnaryOp::exp; break;
      case UnaryOp::fast_exp2: accurate = UnaryOp::exp2; break;
      case UnaryOp::fast_log2: accurate = UnaryOp::log2; break;
      case UnaryOp::fast_rsqrt: accurate = UnaryOp::rsqrt; break;
      case UnaryOp::fast_sin: accurate = UnaryOp::sin; break;
      case UnaryOp::fast_cos: accurate = UnaryOp::cos; break;
      case UnaryOp::fast_tanh: accurate = UnaryOp::tanh; break;
      default: break;
    }
    if (op == UnaryOp::fast_reciprocal) {
      r = DivFOp::create(e.b, e.loc, ConstantOp::create(e.b, e.loc, e.b.getFloatAttr(v.getType(), 1.0)), v);
    } else {
      r = call_libdevice(e, libdevice_name(accurate, f64), v);
    }
  }
  if (narrow) r = TruncFOp::create(e.b, e.loc, x.getType(), r);
  return e.t.add(r, t);
}

ValueId compare(CompareOp op, ValueId a_id, ValueId b_id, Where where) {
  Emitter e(where);
  const ValueInfo& a = e.number(a_id);
  const ValueInfo& b = e.number(b_id);
  e.same_type(a, b);
  using namespace mlir::arith;
  mlir::Value r;
  if (is_float(a.type)) {
    static constexpr CmpFPredicate preds[] = {CmpFPredicate::OEQ, CmpFPredicate::UNE, CmpFPredicate::OLT,
                                               CmpFPredicate::OLE, CmpFPredicate::OGT, CmpFPredicate::OGE};
    r = CmpFOp::create(e.b, e.loc, preds[int(op)], a.value, b.value);
  } else {
    bool u = is_unsigned(a.type);
    CmpIPredicate preds[] = {CmpIPredicate::eq, CmpIPredicate::ne,
                             u ? CmpIPredicate::ult : CmpIPredicate::slt, u ? CmpIPredicate::ule : CmpIPredicate::sle,
                             u ? CmpIPredicate::ugt : CmpIPredicate::sgt, u ? CmpIPredicate::uge : CmpIPredicate::sge};
    r = CmpIOp::create(e.b, e.loc, preds[int(op)], a.value, b.value);
  }
  return e.t.add(r, DType::i1);
}

ValueId select(ValueId c_id, ValueId a_id, ValueId b_id, Where where) {
  Emitter e(where);
  const ValueInfo& c = e.scalar(c_id);
  const ValueInfo& a = e.scalar(a_id);
  const ValueInfo& b = e.scalar(b_id);
  if (c.type != DType::i1) trace_error("select needs a Bool condition", where);
  e.same_type(a, b);
  return e.t.add(mlir::arith::SelectOp::create(e.b, e.loc, c.value, a.value, b.value), a.type, std::gcd(a.known, b.known));
}

ValueId fma(ValueId a_id, ValueId b_id, ValueId c_id, Where where) {
  Emitter e(where);
  const ValueInfo& a = e.number(a_id);
  const ValueInfo& b = e.number(b_id);
  const ValueInfo& c = e.number(c_id);
  e.same_type(a, b);
  e.same_type(a, c);
  return e.t.add(mlir::LLVM::FMAOp::create(e.b, e.loc, a.value, b.value, c.value), a.type);
}

namespace {
/// FP8 <-> f32 through the paired conversions sm_89 added (there are no scalar ones): the
/// value goes in both halves of an e4m3x2/e5m2x2 and the low half is kept. Inline PTX, so that
/// LLVM never meets an FP8 intrinsic it might not select; the target is checked first.
mlir::Value fp8_to_f32(Emitter& e, mlir::Value x, DType from) {
  using namespace mlir::arith;
  auto i16 = ExtUIOp::create(e.b, e.loc, e.b.getI16Type(), BitcastOp::create(e.b, e.loc, e.b.getI8Type(), x));
  const char* ptx = from == DType::f8e4m3 ? "cvt.rn.f16x2.e4m3x2 $0, $1;" : "cvt.rn.f16x2.e5m2x2 $0, $1;";
  mlir::Value pair = inline_ptx(e, e.b.getI32Type(), mlir::ValueRange{i16}, ptx, "=r,h");
  // f16 -> f32 is exact, so the result is exactly the FP8 value.
  mlir::Value half = BitcastOp::create(e.b, e.loc, e.b.getF16Type(), TruncIOp::create(e.b, e.loc, e.b.getI16Type(), pair));
  return ExtFOp::create(e.b, e.loc, e.b.getF32Type(), half);
}
/// Two f32 to an FP8 pair in an i16: `hi` in the upper byte, `lo` in the lower (the
/// instruction puts its first source in the upper byte).
mlir::Value f32x2_to_fp8x2(Emitter& e, mlir::Value hi, mlir::Value lo, DType to) {
  const char* ptx = to == DType::f8e4m3 ? "cvt.rn.satfinite.e4m3x2.f32 $0, $1, $2;" : "cvt.rn.satfinite.e5m2x2.f32 $0, $1, $2;";
  return inline_ptx(e, e.b.getI16Type(), mlir::ValueRange{hi, lo}, ptx, "=h,f,f");
}
mlir::Value f32_to_fp8(Emitter& e, mlir::Value x, DType to) {
  using namespace mlir::arith;
  mlir::Value pair = f32x2_to_fp8x2(e, x, x, to);
  return BitcastOp::create(e.b, e.loc, e.t.type(to), TruncIOp::create(e.b, e.loc, e.b.getI8Type(), pair));
}
}  // namespace

ValueId cast_fp8_pair(ValueId lo_id, ValueId hi_id, DType to, Where where) {
  Emitter e(where);
  if (!is_fp8(to)) trace_error("cast_pair converts to f8e4m3 or f8e5m2, not " + std::string(name(to)), where);
  e.t.require(Feature::fp8_convert, "conversion to FP8 (cvt.rn.satfinite.e4m3x2/e5m2x2.f32)", where);
  const ValueInfo& lo = e.scalar(lo_id);
  const ValueInfo& hi = e.scalar(hi_id);
  if (lo.type != DType::f32 || hi.type != DType::f32)
    trace_error("cast_pair converts two f32 values, not " + std::string(name(lo.type)) + " and " + std::string(name(hi.type)), where);
  return e.t.add(f32x2_to_fp8x2(e, hi.value, lo.value, to), DType::i16);
}

ValueId cast(ValueId a_id, DType to, Where where) {
  Emitter e(where);
  const ValueInfo& a = e.scalar(a_id);
  DType from = a.type;
  mlir::Value x = a.value;
  mlir::Type ty = e.t.type(to);
  using namespace mlir::arith;
  if (from == to) return a_id;
  if (is_fp8(from) || is_fp8(to)) {
    e.t.require(Feature::fp8_convert, is_fp8(to) ? "conversion to FP8 (cvt.rn.satfinite.e4m3x2/e5m2x2.f32)"
                                                 : "conversion from FP8 (cvt.rn.f16x2.e4m3x2/e5m2x2)",
                where);
    // Every other type goes through f32 (exact from FP8; one rounding into FP8 from f32).
    if (is_fp8(from)) return cast(e.t.add(fp8_to_f32(e, x, from), DType::f32), to, where);
    ValueId f = cast(a_id, DType::f32, where);
    return e.t.add(f32_to_fp8(e, e.t.value(f, where), to), to);
  }
  mlir::Value r;
  int from_bits = size_in_bytes(from) * 8, to_bits = size_in_bytes(to) * 8;
  if (from == DType::i1) from_bits = 1;
  if (to == DType::i1) {
    // C semantics: nonzero is true.
    if (is_float(from))
      r = CmpFOp::create(e.b, e.loc, CmpFPredicate::UNE, x, ConstantOp::create(e.b, e.loc, e.b.getFloatAttr(x.getType(), 0.0)));
    else
      r = CmpIOp::create(e.b, e.loc, CmpIPredicate::ne, x, ConstantOp::create(e.b, e.loc, e.b.getIntegerAttr(x.getType(), 0)));
  } else if (is_float(from) && is_float(to)) {
    if (to_bits > from_bits) r = ExtFOp::create(e.b, e.loc, ty, x);
    else if (to_bits < from_bits) r = TruncFOp::create(e.b, e.loc, ty, x);
    else r = TruncFOp::create(e.b, e.loc, ty, ExtFOp::create(e.b, e.loc, e.b.getF32Type(), x));  // f16 <-> bf16
  } else if (is_float(from)) {
    r = is_signed(to) ? mlir::Value(FPToSIOp::create(e.b, e.loc, ty, x)) : FPToUIOp::create(e.b, e.loc, ty, x);
  } else if (is_float(to)) {
    r = is_unsigned(from) ? mlir::Value(UIToFPOp::create(e.b, e.loc, ty, x)) : SIToFPOp::create(e.b, e.loc, ty, x);
  } else if (to_bits > from_bits) {
    r = is_unsigned(from) ? mlir::Value(ExtUIOp::create(e.b, e.loc, ty, x)) : ExtSIOp::create(e.b, e.loc, ty, x);
  } else if (to_bits < from_bits) {
    r = TruncIOp::create(e.b, e.loc, ty, x);
  } else {
    return e.t.add(x, to, a.known);  // i32 <-> u32: same bits
  }
  return e.t.add(r, to, is_float(to) || is_float(from) ? 1 : a.known);
}

ValueId bitcast(ValueId a_id, DType to, Where where) {
  Emitter e(where);
  const ValueInfo& a = e.scalar(a_id);
  if (size_in_bytes(a.type) != size_in_bytes(to))
    trace_error("bitcast between types of different widths (" + std::string(name(a.type)) + " and " + std::string(name(to)) + ")",
                where);
  return e.t.add(mlir::arith::BitcastOp::create(e.b, e.loc, e.t.type(to), a.value), to);
}

ValueId pack_pair(ValueId lo_id, ValueId hi_id, Where where) {
  Emitter e(where);
  const ValueInfo& lo = e.scalar(lo_id);
  const ValueInfo& hi = e.scalar(hi_id);
  if (lo.type != hi.type || size_in_bytes(lo.type) != 2)
    trace_error("pack_pair packs two values of one 16-bit type, not " + std::string(name(lo.type)) + " and " +
                    std::string(name(hi.type)),
                where);
  // As a two-element vector bitcast to i32, so that LLVM sees the pair: two f32 -> bf16
  // conversions feeding it become one cvt.rn.bf16x2.f32.
  auto vector = mlir::VectorType::get({2}, lo.value.getType());
  mlir::Value v = mlir::LLVM::PoisonOp::create(e.b, e.loc, vector);
  auto index = [&](int i) { return mlir::arith::ConstantOp::create(e.b, e.loc, e.b.getI32IntegerAttr(i)); };
  v = mlir::LLVM::InsertElementOp::create(e.b, e.loc, v, lo.value, index(0));
  v = mlir::LLVM::InsertElementOp::create(e.b, e.loc, v, hi.value, index(1));
  return e.t.add(mlir::LLVM::BitcastOp::create(e.b, e.loc, e.b.getI32Type(), v), DType::u32);
}

ValueId assume_divisible(ValueId v_id, int64_t divisor, Where where) {
  Emitter e(where);
  if (divisor <= 0 || (divisor & (divisor - 1)) != 0 || divisor > max_divisor)
    trace_error("assume_divisible needs a power of two between 1 and 2^30, not " + std::to_string(divisor), where);
  const ValueInfo& v = e.scalar(v_id);
  if (is_float(v.type)) trace_error("assume_divisible needs an integer value", where);
  using namespace mlir::arith;
  // Tell LLVM too: llvm.assume((v & (divisor-1)) == 0).
  auto mask = ConstantOp::create(e.b, e.loc, e.b.getIntegerAttr(v.value.getType(), divisor - 1));
  auto zero = ConstantOp::create(e.b, e.loc, e.b.getIntegerAttr(v.value.getType(), 0));
  auto ok = CmpIOp::create(e.b, e.loc, CmpIPredicate::eq, AndIOp::create(e.b, e.loc, v.value, mask), zero);
  mlir::LLVM::AssumeOp::create(e.b, e.loc, ok);
  return e.t.add(v.value, v.type, std::max(v.known, divisor));
}

ValueId special(Special which, Where where) {
  // A declared block shape (block_shape) makes block_dim() a constant the tracer can reason with.
  if (const auto& shape = Trace::current(where).block_shape()) {
    switch (which) {
      case Special::block_dim_x: return constant_int(DType::i32, shape->x, where);
      case Special::block_dim_y: return constant_int(DType::i32, shape->y, where);
      case Special::block_dim_z: return constant_int(DType::i32, shape->z, where);
      default: break;
    }
  }
  Emitter e(where);
  using namespace mlir::NVVM;
  mlir::Type i32 = e.b.getI32Type();
  auto& b = e.b;
  auto& l = e.loc;
  mlir::Value r;
  switch (which) {
    case Special::thread_x: r = ThreadIdXOp::create(b, l, i32); break;
    case Special::thread_y: r = ThreadIdYOp::create(b, l, i32); break;
    case Special::thread_z: r = ThreadIdZOp::create(b, l, i32); break;
    case Special::block_x: r = BlockIdXOp::create(b, l, i32); break;
    case Special::block_y: r = BlockIdYOp::create(b, l, i32); break;
    case Special::block_z: r = BlockIdZOp::create(b, l, i32); break;
    case Special::block_dim_x: r = BlockDimXOp::create(b, l, i32); break;
    case Special::block_dim_y: r = BlockDimYOp::create(b, l, i32); break;
    case Special::block_dim_z: r = BlockDimZOp::create(b, l, i32); break;
    case Special::grid_dim_x: r = GridDimXOp::create(b, l, i32); break;
    case Special::grid_dim_y: r = GridDimYOp::create(b, l, i32); break;
    case Special::grid_dim_z: r = GridDimZOp::create(b, l, i32); break;
    case Special::lane: r = LaneIdOp::create(b, l, i32); break;
    case Special::cluster_ctarank:
      e.t.require(Feature::sm90, "cluster_cta_rank (%cluster_ctarank)", where);
      r = ClusterId::create(b, l, i32);
      break;
    case Special::warp: {
      // The logical warp index: the linear thread index / 32 (%warpid is a physical slot).
      using namespace mlir::arith;
      mlir::Value x = ThreadIdXOp::create(b, l, i32), y = ThreadIdYOp::create(b, l, i32), z = ThreadIdZOp::create(b, l, i32);
      mlir::Value nx = BlockDimXOp::create(b, l, i32), ny = BlockDimYOp::create(b, l, i32);
      mlir::Value linear = AddIOp::create(b, l, x, MulIOp::create(b, l, nx, AddIOp::create(b, l, y, MulIOp::create(b, l, ny, z))));
      r = ShRUIOp::create(b, l, linear, ConstantOp::create(b, l, b.getI32IntegerAttr(5)));
      break;
    }
  }
  return e.t.add(r, DType::i32);
}

}  // namespace cutejit::detail
