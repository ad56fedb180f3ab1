/** \file
 * The warp-level tensor-core instructions of sm_80 and newer: mma.sync (inline PTX, so every
 * kind the ISA has is one table row), ldmatrix and cp.async (NVVM ops). Each is checked against
 * the target before it is emitted; the NVVM op names are on the allow-list
 * (core/target_features.cpp).
 */
#include <string>

#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/LLVMIR/LLVMDialect.h>
#include <mlir/Dialect/LLVMIR/NVVMDialect.h>

#include "cutejit/arch/sm80.hpp"
#include "trace/trace.hpp"

namespace cutejit::detail {

namespace {

/// One row of the PTX ISA's mma.sync table (the shapes and types it has for sm_80 and newer).
struct MmaKind {
  int m, n, k;
  DType d, a, b, c;
  bool tf32;
  Feature feature;
};

bool is_int8(DType t) { return t == DType::i8 || t == DType::u8; }
bool is_fp8_operand(DType t) { return t == DType::f8e4m3 || t == DType::f8e5m2; }

/// The kind `m, n, k, types` names, or nothing when the ISA has no such mma.sync.
std::optional<MmaKind> find_kind(int m, int n, int k, const MmaSyncTypes& t) {
  auto kind = [&](Feature f) { return MmaKind{m, n, k, t.d, t.a, t.b, t.c, t.tf32, f}; };
  bool half = t.a == t.b && (t.a == DType::bf16 || t.a == DType::f16) && !t.tf32;
  bool f32_acc = t.d == DType::f32 && t.c == DType::f32;
  bool f16_acc = t.d == DType::f16 && t.c == DType::f16;
  bool s32_acc = t.d == DType::i32 && t.c == DType::i32;
  bool tf32 = t.tf32 && t.a == DType::f32 && t.b == DType::f32 && f32_acc;
  if (m == 16 && n == 8 && (k == 16 || k == 8)) {
    if (half && (f32_acc || (f16_acc && t.a == DType::f16))) return kind(Feature::baseline);
    if (k == 8 && tf32) return kind(Feature::baseline);
  }
  if (m == 16 && n == 8 && k == 4 && tf32) return kind(Feature::baseline);
  if (m == 16 && n == 8 && (k == 32 || k == 16) && is_int8(t.a) && is_int8(t.b) && s32_acc && !t.tf32) return kind(Feature::baseline);
  if (m == 16 && n == 8 && k == 32 && is_fp8_operand(t.a) && is_fp8_operand(t.b) && f32_acc) return kind(Feature::fp8_mma);
  if (m == 8 && n == 8 && k == 4 && t.a == DType::f64 && t.b == DType::f64 && t.c == DType::f64 && t.d == DType::f64)
    return kind(Feature::baseline);
  return std::nullopt;
}

const char* ptx_type(DType t, bool tf32) {
  switch (t) {
    case DType::bf16: return "bf16";
    case DType::f16: return "f16";
    case DType::f32: return tf32 ? "tf32" : "f32";
    case DType::f64: return "f64";
    case DType::i8: return "s8";
    case DType::u8: return "u8";
    case DType::i32: return "s32";
    case DType::f8e4m3: return "e4m3";
    case DType::f8e5m2: return "e5m2";
    default: return "?";
  }
}

std::string shape_name(int m, int n, int k) { return "m" + std::to_string(m) + "n" + std::to_string(n) + "k" + std::to_string(k); }
/// ".d.a.b.c", the PTX spelling of the kind's types.
std::string type_names(const MmaSyncTypes& t) {
  return std::string(".") + ptx_type(t.d, false) + "." + ptx_type(t.a, t.tf32) + "." + ptx_type(t.b, t.tf32) + "." + ptx_type(t.c, false);
}

}  // namespace

Registers pack(Trace& t, std::span<const ValueId> elements, DType type, bool as_bits, const char* what, mlir::Location l,
               const Where& w) {
  mlir::OpBuilder& b = t.builder();
  Registers r;
  int per_register = type == DType::f64 ? 1 : 4 / size_in_bytes(type);
  for (size_t i = 0; i < elements.size(); i += size_t(per_register)) {
    llvm::SmallVector<mlir::Value> group;
    for (int j = 0; j < per_register; ++j) {
      const ValueInfo& v = t.get(elements[i + size_t(j)], w);
      if (v.pointer || v.type != type)
        trace_error(std::string(what) + " holds " + std::string(name(type)) + " values, not " +
                        (v.pointer ? std::string("a pointer") : std::string(name(v.type))),
                    w);
      group.push_back(t.to_memory(v.value, type, l));
    }
    if (per_register == 1) {
      mlir::Value x = group[0];
      // TF32 operands are read as bits (.b32 registers).
      if (as_bits) x = mlir::LLVM::BitcastOp::create(b, l, b.getI32Type(), x);
      r.values.push_back(x);
      r.constraint += type == DType::f64 ? 'd' : type == DType::f32 && !as_bits ? 'f' : 'r';
      continue;
    }
    auto vector_type = mlir::VectorType::get({per_register}, t.memory_type(type));
    mlir::Value v = mlir::LLVM::PoisonOp::create(b, l, vector_type);
    for (int j = 0; j < per_register; ++j) {
      mlir::Value at = t.i32(j);
      v = mlir::LLVM::InsertElementOp::create(b, l, v, group[size_t(j)], at);
    }
    r.values.push_back(mlir::LLVM::BitcastOp::create(b, l, b.getI32Type(), v));
    r.constraint += 'r';
  }
  return r;
}

namespace {

void check_count(std::span<const ValueId> values, int expected, const char* what, const std::string& kind, const Where& w) {
  if (int(values.size()) != expected)
    trace_error("mma.sync." + kind + " takes " + std::to_string(expected) + " values of " + what + " per thread, not " +
                    std::to_string(values.size()),
                w);
}

}  // namespace

std::vector<ValueId> mma_sync(int m, int n, int k, MmaSyncTypes types, std::span<const ValueId> a, std::span<const ValueId> b,
                              std::span<const ValueId> c, Where where) {
  Trace& t = Trace::current(where);
  const std::string shape = shape_name(m, n, k), name = shape + type_names(types);
  std::optional<MmaKind> kind = find_kind(m, n, k, types);
  if (!kind)
    trace_error("the PTX ISA has no mma.sync." + name +
                    "; it has m16n8k16 and m16n8k8 (bf16/f16 with f32, f16 with f16 accumulators), m16n8k8 and m16n8k4 tf32, "
                    "m16n8k32 and m16n8k16 s8/u8 with s32, m16n8k32 e4m3/e5m2 with f32, and m8n8k4 f64",
                where);
  t.require(kind->feature, ("mma.sync." + name).c_str(), where);
  check_count(a, m * k / 32, "A", name, where);
  check_count(b, n * k / 32, "B", name, where);
  check_count(c, m * n / 32, "C", name, where);
  mlir::OpBuilder& builder = t.builder();
  mlir::Location l = t.loc(where);
  Registers ra = pack(t, a, types.a, types.tf32, "mma.sync's A fragment", l, where);
  Registers rb = pack(t, b, types.b, types.tf32, "mma.sync's B fragment", l, where);
  Registers rc = pack(t, c, types.c, false, "mma.sync's C fragment", l, where);

  // D has C's registers; the asm's outputs come first ($0 ...), then A, B and C.
  const size_t nd = rc.values.size();
  std::string constraints, ptx = "mma.sync.aligned." + shape + ".row.col" + type_names(types);
  size_t operand = 0;
  auto group = [&](size_t count, const std::string& letters, bool output) {
    ptx += operand ? ", {" : " {";
    for (size_t i = 0; i < count; ++i, ++operand) {
      ptx += (i ? ", $" : "$") + std::to_string(operand);
      constraints += std::string(constraints.empty() ? "" : ",") + (output ? "=" : "") + letters[i];
    }
    ptx += "}";
  };
  group(nd, rc.constraint, true);
  group(ra.values.size(), ra.constraint, false);
  group(rb.values.size(), rb.constraint, false);
  group(nd, rc.constraint, false);
  ptx += ";";

  llvm::SmallVector<mlir::Type> fields;
  for (mlir::Value v : rc.values) fields.push_back(v.getType());
  llvm::SmallVector<mlir::Value> operands(ra.values);
  operands.append(rb.values.begin(), rb.values.end());
  operands.append(rc.values.begin(), rc.values.end());
  auto asm_op = mlir::LLVM::InlineAsmOp::create(builder, l, mlir::LLVM::LLVMStructType::getLiteral(&t.context(), fields), operands,
                                                ptx, constraints, /*has_side_effects=*/true, false, mlir::LLVM::TailCallKind::None,
                                                mlir::LLVM::AsmDialectAttr(), mlir::ArrayAttr());

  // Unpack D into values of its element type, in C's order.
  std::vector<ValueId> d;
  const int per_register = types.d == DType::f16 ? 2 : 1;
  for (size_t i = 0; i < nd; ++i) {
    mlir::Value r = mlir::LLVM::ExtractValueOp::create(builder, l, asm_op.getResult(0), llvm::ArrayRef<int64_t>{int64_t(i)});
    if (per_register == 1) {
      d.push_back(t.add(r, types.d));
      continue;
    }
    mlir::Value pair = mlir::LLVM::BitcastOp::create(builder, l, mlir::VectorType::get({2}, builder.getF16Type()), r);
    for (int j = 0; j < 2; ++j) {
      mlir::Value at = t.i32(j);
      d.push_back(t.add(mlir::LLVM::ExtractElementOp::create(builder, l, pair, at), DType::f16));
    }
  }
  return d;
}

namespace {
/// One ldmatrix of `count` matrices of `rows` x `columns` from this lane's 16-byte-aligned row
/// address, `name` naming it in errors; its 32-bit registers, one per lane for each 8-row
/// matrix, two for each 16-row one.
std::vector<ValueId> emit_ldmatrix(Trace& t, ValueId row, int count, const std::string& name, mlir::NVVM::MMALayout layout, int rows,
                                   int columns, mlir::NVVM::LdStMatrixEltType element, Where where) {
  if (rows == 16 && count != 1 && count != 2)
    trace_error(name + " loads 1 or 2 matrices (two 32-bit registers each), not " + std::to_string(count), where);
  if (count != 1 && count != 2 && count != 4)
    trace_error(name + " loads 1, 2 or 4 matrices (one 32-bit register each), not " + std::to_string(count), where);
  const int registers = count * rows / 8;
  mlir::Value p = shared_pointer(t, row, "ldmatrix's row address", where);
  if (t.get(row, where).known < 16)
    trace_error(name + " reads 16-byte rows: its row address must be 16-byte aligned, and is known to be only " +
                    std::to_string(t.get(row, where).known) + "-byte aligned",
                where);
  mlir::OpBuilder& b = t.builder();
  mlir::Location l = t.loc(where);
  mlir::Type result = registers == 1
                          ? mlir::Type(b.getI32Type())
                          : mlir::LLVM::LLVMStructType::getLiteral(&t.context(), llvm::SmallVector<mlir::Type>(registers, b.getI32Type()));
  auto op = mlir::NVVM::LdMatrixOp::create(b, l, result, p, uint32_t(count), layout,
                                           mlir::NVVM::LdStMatrixShapeAttr::get(&t.context(), rows, columns), element);
  if (registers == 1) return {t.add(op.getResult(), DType::u32)};
  std::vector<ValueId> out;
  for (int i = 0; i < registers; ++i)
    out.push_back(t.add(mlir::LLVM::ExtractValueOp::create(b, l, op.getResult(), llvm::ArrayRef<int64_t>{i}), DType::u32));
  return out;
}
}  // namespace

std::vector<ValueId> ldmatrix(ValueId row, int count, bool transpose, Where where) {
  Trace& t = Trace::current(where);
  t.require(Feature::baseline, "ldmatrix", where);
  return emit_ldmatrix(t, row, count, "ldmatrix", transpose ? mlir::NVVM::MMALayout::col : mlir::NVVM::MMALayout::row, 8, 8,
                       mlir::NVVM::LdStMatrixEltType::B16, where);
}

std::vector<ValueId> ldmatrix_unpacked(ValueId row, int count, int bits, Where where) {
  Trace& t = Trace::current(where);
  if (bits != 4 && bits != 6) trace_error("ldmatrix unpacks rows of 4- or 6-bit values, not " + std::to_string(bits) + "-bit ones", where);
  const std::string name = std::string("ldmatrix.m8n16.b8x16.") + (bits == 4 ? "b4x16_p64" : "b6x16_p32");
  // ptxas calls it "ldmatrix with format conversion": the FP4/FP6 unpacking the cvt family has.
  t.require(Feature::narrow_convert, name.c_str(), where);
  return emit_ldmatrix(t, row, count, name, mlir::NVVM::MMALayout::row, 8, 16,
                       bits == 4 ? mlir::NVVM::LdStMatrixEltType::B8X16_B4X16_P64 : mlir::NVVM::LdStMatrixEltType::B8X16_B6X16_P32, where);
}

std::vector<ValueId> ldmatrix_transposed_bytes(ValueId row, int count, int bits, Where where) {
  Trace& t = Trace::current(where);
  if (bits != 8 && bits != 4 && bits != 6)
    trace_error("ldmatrix.m16n16 loads rows of 8-bit values or unpacks rows of 4- or 6-bit ones, not " + std::to_string(bits) + "-bit ones",
                where);
  const std::string name = std::string("ldmatrix.m16n16.trans.") + (bits == 8 ? "b8" : bits == 4 ? "b8x16.b4x16_p64" : "b8x16.b6x16_p32");
  t.require(Feature::narrow_convert, name.c_str(), where);
  return emit_ldmatrix(t, row, count, name, mlir::NVVM::MMALayout::col, 16, 16,
                       bits == 8   ? mlir::NVVM::LdStMatrixEltType::B8
                       : bits == 4 ? mlir::NVVM::LdStMatrixEltType::B8X16_B4X16_P64
                                   : mlir::NVVM::LdStMatrixEltType::B8X16_B6X16_P32,
                       where);
}

std::vector<ValueId> unpack_registers(std::span<const ValueId> registers, DType element, Where where) {
  Trace& t = Trace::current(where);
  mlir::OpBuilder& b = t.builder();
  mlir::Location l = t.loc(where);
  const int bytes = size_in_bytes(element);
  if (bytes > 4 || 4 % bytes != 0)
    trace_error("unpack_registers splits registers into 8-, 16- or 32-bit values, not " + std::string(name(element)), where);
  const int per_register = 4 / bytes;
  std::vector<ValueId> out;
  for (ValueId r : registers) {
    mlir::Value packed = i32_operand(t, r, "a packed register", where);
    if (per_register == 1) {  // a 32-bit value (TF32 operands): the register's bits as it
      out.push_back(t.add(t.from_memory(mlir::LLVM::BitcastOp::create(b, l, t.memory_type(element), packed), element, l), element));
      continue;
    }
    auto vector_type = mlir::VectorType::get({per_register}, t.memory_type(element));
    mlir::Value v = mlir::LLVM::BitcastOp::create(b, l, vector_type, packed);
    for (int j = 0; j < per_register; ++j) {
      mlir::Value at = t.i32(j);
      out.push_back(t.add(t.from_memory(mlir::LLVM::ExtractElementOp::create(b, l, v, at), element, l), element));
    }
  }
  return out;
}

void cp_async(ValueId dst, ValueId src, int bytes, ValueId src_bytes, Where where) {
  Trace& t = Trace::current(where);
  t.require(Feature::baseline, "cp.async", where);
  if (bytes != 4 && bytes != 8 && bytes != 16) trace_error("cp.async copies 4, 8 or 16 bytes, not " + std::to_string(bytes), where);
  mlir::Value d = shared_pointer(t, dst, "cp.async's destination", where);
  const ValueInfo& s = t.get(src, where);
  if (!s.pointer || s.space != Space::global) trace_error("cp.async's source must be a pointer into global memory", where);
  for (const auto& [side, known] : {std::pair{"destination", t.get(dst, where).known}, std::pair{"source", s.known}})
    if (known < bytes)
      trace_error(std::string("cannot prove that this ") + std::to_string(bytes) + "-byte cp.async's " + side +
                      " is aligned: its address is known to be only " + std::to_string(known) +
                      "-byte aligned; copy fewer bytes at a time, or align the tile and its offsets",
                  where);
  mlir::Value size = src_bytes.trace != 0 ? i32_operand(t, src_bytes, "cp.async's source byte count", where) : mlir::Value();
  // .cg (L2 only) exists for 16-byte copies; smaller ones go through L1 (.ca).
  auto modifier = bytes == 16 ? mlir::NVVM::LoadCacheModifierKind::CG : mlir::NVVM::LoadCacheModifierKind::CA;
  mlir::NVVM::CpAsyncOp::create(t.builder(), t.loc(where), d, s.value, uint32_t(bytes), modifier, size);
}

void cp_async_commit_group(Where where) {
  Trace& t = Trace::current(where);
  t.require(Feature::baseline, "cp.async.commit_group", where);
  mlir::NVVM::CpAsyncCommitGroupOp::create(t.builder(), t.loc(where));
}

void cp_async_mbarrier_arrive(ValueId barrier, Where where) {
  Trace& t = Trace::current(where);
  t.require(Feature::baseline, "cp.async.mbarrier.arrive", where);
  mlir::Value bar = shared_pointer(t, barrier, "cp.async.mbarrier.arrive's mbarrier", where);
  mlir::NVVM::CpAsyncMBarrierArriveOp::create(t.builder(), t.loc(where), bar, /*noinc=*/true);
}

void cp_async_wait_group(int pending, Where where) {
  Trace& t = Trace::current(where);
  t.require(Feature::baseline, "cp.async.wait_group", where);
  if (pending < 0) trace_error("cp.async.wait_group waits for a count of pending groups, not " + std::to_string(pending), where);
  mlir::NVVM::CpAsyncWaitGroupOp::create(t.builder(), t.loc(where), uint32_t(pending));
}

}  // namespace cutejit::detail
