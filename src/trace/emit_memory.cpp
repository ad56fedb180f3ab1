/** \file
 * Memory: pointer arithmetic with proven alignment, scalar and vector loads and stores,
 * static and dynamic shared memory, register arrays (allocas that LLVM promotes), atomics.
 */
#include <algorithm>
#include <bit>

#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/LLVMIR/LLVMDialect.h>

#include "trace/trace.hpp"

namespace cutejit::detail {

namespace {

unsigned address_space(Space s) {
  switch (s) {
    case Space::global: return 1;
    case Space::shared: return 3;
    case Space::local: return 0;  // allocas: generic, so that SROA/mem2reg promote them
  }
  return 0;
}

const ValueInfo& pointer_arg(Trace& t, ValueId id, const Where& w) {
  const ValueInfo& p = t.get(id, w);
  if (!p.pointer) trace_error("a number is used where a pointer is expected", w);
  return p;
}

int64_t lowest_set_bit(int64_t x) { return x <= 0 ? int64_t(1) << 30 : int64_t(1) << std::countr_zero(uint64_t(x)); }

}  // namespace

PointerInfo pointer_info(ValueId ptr) {
  Where here = Where::current();
  Trace& t = Trace::current(here);
  const ValueInfo& p = pointer_arg(t, ptr, here);
  return {p.space, p.known};
}

ValueId offset_pointer(ValueId ptr, ValueId offset, DType element, Where where) {
  Trace& t = Trace::current(where);
  const ValueInfo& p = pointer_arg(t, ptr, where);
  const ValueInfo& o = t.get(offset, where);
  if (o.pointer || is_float(o.type)) trace_error("a pointer offset must be an integer", where);
  int64_t alignment = std::min(p.known, lowest_set_bit(o.known * size_in_bytes(element)));
  auto make = [&, space = p.space, base = p.value, index = o.value] {
    mlir::OpBuilder& b = t.builder();
    auto gep = mlir::LLVM::GEPOp::create(b, t.loc(where), base.getType(), t.memory_type(element), base, mlir::ValueRange{index},
                                         mlir::LLVM::GEPNoWrapFlags::inbounds);
    return t.add_pointer(gep, space, alignment);
  };
  // An element of a register array at a constant index: one address for the whole kernel.
  if (p.value.getDefiningOp<mlir::LLVM::AllocaOp>() && o.value.getDefiningOp<mlir::arith::ConstantOp>())
    return t.register_element(ptr, offset, element, make);
  return make();
}

ValueId load(ValueId ptr, DType element, Where where) {
  Trace& t = Trace::current(where);
  const ValueInfo& p = pointer_arg(t, ptr, where);
  mlir::Location l = t.loc(where);
  mlir::Value v = mlir::LLVM::LoadOp::create(t.builder(), l, t.memory_type(element), p.value, size_in_bytes(element));
  return t.add(t.from_memory(v, element, l), element);
}

void store(ValueId ptr, ValueId value, Where where) {
  Trace& t = Trace::current(where);
  const ValueInfo& p = pointer_arg(t, ptr, where);
  const ValueInfo& v = t.get(value, where);
  mlir::Location l = t.loc(where);
  mlir::LLVM::StoreOp::create(t.builder(), l, t.to_memory(v.value, v.type, l), p.value, size_in_bytes(v.type));
}

void load_vector(ValueId ptr, DType element, std::span<ValueId> out, Where where) {
  Trace& t = Trace::current(where);
  const ValueInfo& p = pointer_arg(t, ptr, where);
  mlir::OpBuilder& b = t.builder();
  mlir::Location l = t.loc(where);
  auto vec = mlir::VectorType::get({int64_t(out.size())}, t.memory_type(element));
  unsigned bytes = unsigned(out.size()) * size_in_bytes(element);
  mlir::Value v = mlir::LLVM::LoadOp::create(b, l, vec, p.value, bytes);
  for (size_t i = 0; i < out.size(); ++i) {
    auto index = t.i32(int32_t(i));
    out[i] = t.add(t.from_memory(mlir::LLVM::ExtractElementOp::create(b, l, v, index), element, l), element);
  }
}

void store_vector(ValueId ptr, std::span<const ValueId> values, Where where) {
  Trace& t = Trace::current(where);
  const ValueInfo& p = pointer_arg(t, ptr, where);
  mlir::OpBuilder& b = t.builder();
  mlir::Location l = t.loc(where);
  DType element = t.get(values[0], where).type;
  auto vec_type = mlir::VectorType::get({int64_t(values.size())}, t.memory_type(element));
  mlir::Value vec = mlir::LLVM::PoisonOp::create(b, l, vec_type);
  for (size_t i = 0; i < values.size(); ++i) {
    const ValueInfo& v = t.get(values[i], where);
    if (v.type != element) trace_error("a vector store needs elements of one type", where);
    auto index = t.i32(int32_t(i));
    vec = mlir::LLVM::InsertElementOp::create(b, l, vec, t.to_memory(v.value, element, l), index);
  }
  mlir::LLVM::StoreOp::create(b, l, vec, p.value, unsigned(values.size()) * size_in_bytes(element));
}

ValueId static_shared(DType element, int64_t count, int64_t alignment, Where where) {
  Trace& t = Trace::current(where);
  if (count <= 0) trace_error("a shared array needs a positive element count, not " + std::to_string(count), where);
  if (alignment < size_in_bytes(element) || (alignment & (alignment - 1)) != 0)
    trace_error("shared array alignment must be a power of two and at least the element size", where);
  // ptxas caps static shared memory at 48 KB per block; more must be dynamic (opt-in).
  constexpr int64_t static_limit = 48 * 1024;
  int64_t bytes = count * size_in_bytes(element);
  if (t.static_shared_bytes() + bytes > static_limit)
    trace_error("static shared memory would reach " + std::to_string(t.static_shared_bytes() + bytes) +
                    " bytes, over the 48 KB (49152 bytes) a block may declare statically; use dynamic_shared<T>() and "
                    "Launch::shared_bytes for larger tiles (up to the device's opt-in limit)",
                where);
  t.add_static_shared_bytes(bytes);
  mlir::OpBuilder& b = t.builder();
  mlir::Location l = t.loc(where);
  std::string name = "__cutejit_shared_" + std::to_string(t.gpu_module().getBody()->getOperations().size());
  {
    mlir::OpBuilder::InsertionGuard guard(b);
    b.restoreInsertionPoint(t.module_point());
    auto array = mlir::LLVM::LLVMArrayType::get(t.memory_type(element), uint64_t(count));
    mlir::LLVM::GlobalOp::create(b, l, array, false, mlir::LLVM::Linkage::Internal, name, mlir::Attribute(), uint64_t(alignment), 3);
  }
  auto ptr3 = mlir::LLVM::LLVMPointerType::get(&t.context(), 3);
  return t.add_pointer(mlir::LLVM::AddressOfOp::create(b, l, ptr3, name), Space::shared, alignment);
}

ValueId dynamic_shared(Where where) {
  Trace& t = Trace::current(where);
  return t.add_pointer(t.dynamic_shared_base(), Space::shared, 16);
}

ValueId register_array(DType element, int64_t count, Where where) {
  Trace& t = Trace::current(where);
  mlir::OpBuilder& b = t.builder();
  mlir::Location l = t.loc(where);
  mlir::OpBuilder::InsertionGuard guard(b);
  b.restoreInsertionPoint(t.entry_point());
  auto one = mlir::LLVM::ConstantOp::create(b, l, b.getI32Type(), b.getI32IntegerAttr(1));
  mlir::Type elem = count == 1 ? t.memory_type(element)
                               : mlir::Type(mlir::LLVM::LLVMArrayType::get(t.memory_type(element), uint64_t(count)));
  auto ptr = mlir::LLVM::LLVMPointerType::get(&t.context(), address_space(Space::local));
  int64_t alignment = std::min<int64_t>(16, size_in_bytes(element) * std::bit_floor(uint64_t(count)));
  auto alloca = mlir::LLVM::AllocaOp::create(b, l, ptr, elem, one, unsigned(alignment));
  return t.add_pointer(alloca, Space::local, alignment);
}

ValueId not_null(ValueId ptr, Where where) {
  Trace& t = Trace::current(where);
  const ValueInfo& p = pointer_arg(t, ptr, where);
  mlir::OpBuilder& b = t.builder();
  const mlir::Location l = t.loc(where);
  mlir::Value null = mlir::LLVM::ZeroOp::create(b, l, p.value.getType());
  return t.add(mlir::LLVM::ICmpOp::create(b, l, mlir::LLVM::ICmpPredicate::ne, p.value, null), DType::i1);
}

ValueId atomic(AtomicOp op, ValueId ptr, ValueId value, Where where) {
  Trace& t = Trace::current(where);
  const ValueInfo& p = pointer_arg(t, ptr, where);
  const ValueInfo& v = t.get(value, where);
  using K = mlir::LLVM::AtomicBinOp;
  // No 8-bit atomics exist; FP8 values would need a CAS loop on the enclosing word.
  if (is_fp8(v.type)) trace_error("atomics on " + std::string(name(v.type)) + " values are not supported", where);
  bool fp = is_float(v.type), u = !is_signed(v.type);
  K kind = K::xchg;
  switch (op) {
    case AtomicOp::add: kind = fp ? K::fadd : K::add; break;
    case AtomicOp::min: kind = u ? K::umin : K::min; break;
    case AtomicOp::max: kind = u ? K::umax : K::max; break;
    case AtomicOp::exchange: kind = K::xchg; break;
  }
  if (fp && op == AtomicOp::add && v.type != DType::f32 && v.type != DType::f64 && v.type != DType::f16 && v.type != DType::bf16)
    trace_error("atomic_add on this type is not supported", where);
  if (p.space == Space::local) trace_error("atomics need global or shared memory, not a register array", where);
  auto r = mlir::LLVM::AtomicRMWOp::create(t.builder(), t.loc(where), kind, p.value, v.value, mlir::LLVM::AtomicOrdering::monotonic);
  return t.add(r, v.type);
}

ValueId atomic_cas(ValueId ptr, ValueId expected, ValueId desired, Where where) {
  Trace& t = Trace::current(where);
  const ValueInfo& p = pointer_arg(t, ptr, where);
  const ValueInfo& e = t.get(expected, where);
  const ValueInfo& d = t.get(desired, where);
  if (e.type != d.type) trace_error("atomic_cas needs expected and desired values of one type", where);
  if (is_fp8(e.type)) trace_error("atomics on " + std::string(name(e.type)) + " values are not supported", where);
  mlir::OpBuilder& b = t.builder();
  mlir::Location l = t.loc(where);
  auto pair = mlir::LLVM::AtomicCmpXchgOp::create(b, l, p.value, e.value, d.value, mlir::LLVM::AtomicOrdering::monotonic,
                                                  mlir::LLVM::AtomicOrdering::monotonic);
  auto old = mlir::LLVM::ExtractValueOp::create(b, l, pair, llvm::ArrayRef<int64_t>{0});
  return t.add(old, e.type);
}

}  // namespace cutejit::detail
