#include "trace/trace.hpp"

#include <algorithm>
#include <atomic>
#include <bit>

#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/LLVMIR/LLVMDialect.h>
#include <mlir/Dialect/LLVMIR/NVVMDialect.h>

#include "cutejit/core/error.hpp"
#include "cutejit/core/kernel_abi.hpp"
#include "ir/mlir_context.hpp"

namespace cutejit::detail {

namespace {
thread_local Trace* current_trace = nullptr;
std::atomic<uint32_t> next_serial{1};
}  // namespace

void trace_error(const std::string& message, const Where& where) {
  Trace* t = Trace::active();
  std::string in = t ? "in kernel '" + t->kernel() + "' (" + t->target().name() + "): " : "";
  throw Error("error: " + in + message, where);
}

void fail(std::string_view message, Where where) { trace_error(std::string(message), where); }

mlir::Value shared_pointer(Trace& t, ValueId id, const char* what, const Where& w) {
  const ValueInfo& p = t.get(id, w);
  if (!p.pointer || p.space != Space::shared)
    trace_error(std::string(what) + " must be a pointer into shared memory (shared_array or dynamic_shared)", w);
  return p.value;
}

mlir::Value i32_operand(Trace& t, ValueId id, const char* what, const Where& w) {
  const ValueInfo& v = t.get(id, w);
  if (v.pointer || (v.type != DType::i32 && v.type != DType::u32)) trace_error(std::string(what) + " must be a 32-bit integer", w);
  return v.value;
}

int64_t power_of_two_divisor(int64_t c) {
  if (c == 0) return max_known_divisor;
  return std::min<int64_t>(int64_t(1) << std::countr_zero(uint64_t(c)), max_known_divisor);
}

void index_out_of_range(int64_t index, int64_t size, Where where) {
  trace_error("index " + std::to_string(index) + " is out of range for a register array of " + std::to_string(size) +
                  " elements (valid: 0.." + std::to_string(size - 1) + ")",
              where);
}

Trace::Trace(mlir::MLIRContext& context, std::string kernel, Target target, Where defined_at)
    : context_(context),
      kernel_(std::move(kernel)),
      target_(target),
      defined_at_(defined_at),
      serial_(next_serial++),
      builder_(&context),
      previous_(current_trace) {
  mlir::Location where = loc(defined_at);
  module_ = mlir::ModuleOp::create(where);
  builder_.setInsertionPointToEnd(module_->getBody());
  // The target attribute lets MLIR's verifier reject ops the chip lacks (e.g. tcgen05 on sm_90a).
  auto nvvm_target = mlir::NVVM::NVVMTargetAttr::get(&context, 3, "nvptx64-nvidia-cuda", target.name());
  gpu_module_ = mlir::gpu::GPUModuleOp::create(builder_, where, "cutejit", builder_.getArrayAttr({nvvm_target}));
  current_trace = this;
}

Trace::~Trace() { current_trace = previous_; }

Trace* Trace::active() { return current_trace; }

Trace& Trace::current(Where where) {
  if (!current_trace)
    throw Error(
        "error: a traced value was used outside any kernel; traced values (Value, Tensor, Var, ...) exist only while a "
        "kernel body runs. Compute host-side values with plain C++ types instead",
        where);
  return *current_trace;
}

mlir::Location Trace::loc(const Where& w) {
  return mlir::FileLineColLoc::get(&context_, w.file_name(), w.line(), w.column());
}

mlir::Type Trace::type(DType t) {
  switch (t) {
    case DType::i1: return builder_.getI1Type();
    case DType::i8:
    case DType::u8: return builder_.getI8Type();
    case DType::i16:
    case DType::u16: return builder_.getI16Type();
    case DType::i32:
    case DType::u32: return builder_.getI32Type();
    case DType::i64:
    case DType::u64: return builder_.getI64Type();
    case DType::f16: return builder_.getF16Type();
    case DType::bf16: return builder_.getBF16Type();
    case DType::f32: return builder_.getF32Type();
    case DType::f64: return builder_.getF64Type();
    case DType::f8e4m3: return builder_.getType<mlir::Float8E4M3FNType>();
    case DType::f8e5m2: return builder_.getType<mlir::Float8E5M2Type>();
  }
  return {};
}

mlir::Type Trace::memory_type(DType t) { return is_fp8(t) ? builder_.getI8Type() : type(t); }

mlir::Value Trace::to_memory(mlir::Value v, DType t, mlir::Location l) {
  if (!is_fp8(t)) return v;
  return mlir::arith::BitcastOp::create(builder_, l, builder_.getI8Type(), v);
}

mlir::Value Trace::from_memory(mlir::Value v, DType t, mlir::Location l) {
  if (!is_fp8(t)) return v;
  return mlir::arith::BitcastOp::create(builder_, l, type(t), v);
}

ValueId Trace::add(mlir::Value v, DType t, int64_t known_divisor) {
  values_.push_back({v, t, false, Space::global, known_divisor});
  return {serial_, uint32_t(values_.size() - 1)};
}

ValueId Trace::add_pointer(mlir::Value v, Space space, int64_t alignment) {
  values_.push_back({v, DType::i8, true, space, alignment});
  return {serial_, uint32_t(values_.size() - 1)};
}

const ValueInfo& Trace::get(ValueId id, const Where& w) const {
  return const_cast<Trace*>(this)->get_mutable(id, w);
}

ValueInfo& Trace::get_mutable(ValueId id, const Where& w) {
  if (id.trace == 0)
    trace_error("a traced value is used before it was given a value (a default-constructed Value, Tensor or Pointer)", w);
  if (id.trace != serial_ || id.index >= values_.size())
    trace_error(
        "this value belongs to another trace (a different kernel, or an earlier specialization); traced values cannot "
        "cross kernels: pass it as a kernel argument instead",
        w);
  return values_[id.index];
}

void Trace::define_function(const std::vector<FlatParam>& params) {
  params_ = params;
  llvm::SmallVector<mlir::Type> types;
  llvm::SmallVector<int32_t> grid_constants;
  for (const FlatParam& p : params) {
    // A grid constant is addressed in place in the parameter space, through a generic pointer.
    if (p.grid_constant_bytes) grid_constants.push_back(int32_t(types.size()));
    types.push_back(p.grid_constant_bytes ? mlir::Type(mlir::LLVM::LLVMPointerType::get(&context_, 0))
                    : p.pointer           ? mlir::Type(mlir::LLVM::LLVMPointerType::get(&context_, 1))
                                          : type(p.type));
  }
  builder_.setInsertionPointToEnd(gpu_module_.getBody());
  function_ = mlir::gpu::GPUFuncOp::create(builder_, loc(defined_at_), kernel_, builder_.getFunctionType(types, {}));
  function_->setAttr(mlir::gpu::GPUDialect::getKernelFuncAttrName(), builder_.getUnitAttr());
  // Kernel pointers never alias in cutejit's model of a launch: each tensor is its own buffer.
  for (unsigned i = 0; i < types.size(); ++i)
    if (params[i].pointer && !params[i].grid_constant_bytes)
      function_.setArgAttr(i, mlir::LLVM::LLVMDialect::getNoAliasAttrName(), builder_.getUnitAttr());
  // gpu.func cannot carry llvm.byval / nvvm.grid_constant (the conversion to llvm.func drops
  // the one and the verifier refuses the other): the lowering adds both from this list.
  if (!grid_constants.empty()) {
    function_->setAttr(grid_constant_attribute, builder_.getDenseI32ArrayAttr(grid_constants));
    for (int32_t i : grid_constants)
      function_.setArgAttr(unsigned(i), mlir::LLVM::LLVMDialect::getAlignAttrName(), builder_.getI64IntegerAttr(64));
  }
  // From here on, traced ops go into the kernel's entry block, after a prologue that ends at
  // a placeholder (an unused constant, which canonicalization drops).
  builder_.setInsertionPointToStart(&function_.getBody().front());
  prologue_end_ = mlir::arith::ConstantOp::create(builder_, loc(defined_at_), builder_.getI32IntegerAttr(0));
  builder_.setInsertionPointAfter(prologue_end_);
}

mlir::Value Trace::argument(int index, const Where& w) {
  if (!function_) trace_error("kernel arguments are read before the kernel's parameters were defined", w);
  return function_.getArgument(unsigned(index));
}

mlir::OpBuilder::InsertPoint Trace::entry_point() {
  mlir::Block& entry = function_.getBody().front();
  return mlir::OpBuilder::InsertPoint(&entry, prologue_end_ ? mlir::Block::iterator(prologue_end_) : entry.begin());
}

ValueId Trace::constant(DType type, uint64_t bits, bool is_float, const std::function<mlir::Value(mlir::OpBuilder&)>& make) {
  const int64_t known = is_float ? 1 : power_of_two_divisor(int64_t(bits));
  if (!prologue_end_) return add(make(builder_), type, known);
  auto key = std::make_tuple(int(type), bits, is_float);
  if (auto it = constants_.find(key); it != constants_.end()) return it->second;
  mlir::OpBuilder::InsertionGuard guard(builder_);
  builder_.restoreInsertionPoint(entry_point());
  ValueId id = add(make(builder_), type, known);
  constants_.emplace(key, id);
  return id;
}

mlir::Value Trace::i32(int32_t v) {
  ValueId id = constant(DType::i32, uint64_t(int64_t(v)), false, [&](mlir::OpBuilder& b) -> mlir::Value {
    return mlir::arith::ConstantOp::create(b, loc(defined_at_), b.getI32IntegerAttr(v));
  });
  return value(id, defined_at_);
}

ValueId Trace::register_element(ValueId array, ValueId offset, DType element, const std::function<ValueId()>& make) {
  // Only operands made in the prologue can be used there.
  auto in_prologue = [&](ValueId id) {
    mlir::Operation* op = value(id, Where::current()).getDefiningOp();
    return prologue_end_ && op && op->getBlock() == prologue_end_->getBlock() && op->isBeforeInBlock(prologue_end_);
  };
  if (!in_prologue(array) || !in_prologue(offset)) return make();
  auto key = std::make_tuple(array.index, offset.index, int(element));
  if (auto it = register_elements_.find(key); it != register_elements_.end()) return it->second;
  mlir::OpBuilder::InsertionGuard guard(builder_);
  builder_.restoreInsertionPoint(entry_point());
  ValueId id = make();
  register_elements_.emplace(key, id);
  return id;
}

mlir::OpBuilder::InsertPoint Trace::module_point() {
  mlir::Block* body = gpu_module_.getBody();
  return mlir::OpBuilder::InsertPoint(body, body->begin());
}

void Trace::push_insertion() { saved_.push_back(builder_.saveInsertionPoint()); }

void Trace::pop_insertion() {
  builder_.restoreInsertionPoint(saved_.back());
  saved_.pop_back();
}

void Trace::require(Feature f, const char* instruction, const Where& w) const {
  if (!target_has(target_, f))
    trace_error(std::string(instruction) + " is not available on " + target_.name() + "; it needs " +
                    std::string(targets_with(f)),
                w);
}

void Trace::use_cta_group(int group, const char* instruction, const Where& w) {
  auto line = [](const Where& at) { return std::string(at.file_name()) + ":" + std::to_string(at.line()); };
  if (cta_group_ && cta_group_->first != group)
    trace_error(std::string(instruction) + " uses cta_group::" + std::to_string(group) + ", but this kernel's first tcgen05 op (at " +
                    line(cta_group_->second) + ") uses cta_group::" + std::to_string(cta_group_->first) +
                    "; every tcgen05 op of a kernel uses the same CTA group",
                w);
  if (group == 2 && (!cluster_shape_ || cluster_shape_->x % 2 != 0))
    trace_error(std::string(instruction) + " works on a pair of CTAs (cta_group::2), so the kernel needs a cluster of an even number "
                    "of CTAs along x: declare cluster_shape(2) (or 4, 6, 8) before it" +
                    (cluster_shape_ ? "; the kernel declared " + std::to_string(cluster_shape_->x) + " x " +
                                          std::to_string(cluster_shape_->y) + " x " + std::to_string(cluster_shape_->z) + " at " +
                                          line(cluster_shape_->where)
                                    : std::string("; it declared none")),
                w);
  if (!cta_group_) cta_group_ = std::pair{group, w};
}

namespace {
/// Whether the function issues wgmma: the NVVM ops (A from shared memory) or inline PTX (A from
/// registers, or the user's own).
bool issues_wgmma(mlir::gpu::GPUFuncOp f) {
  bool found = false;
  f.walk([&](mlir::Operation* op) {
    if (op->getName().getStringRef().starts_with("nvvm.wgmma.mma_async")) found = true;
    if (auto asm_op = mlir::dyn_cast<mlir::LLVM::InlineAsmOp>(op); asm_op && asm_op.getAsmString().contains("wgmma.mma_async")) found = true;
    return found ? mlir::WalkResult::interrupt() : mlir::WalkResult::advance();
  });
  return found;
}
}  // namespace

mlir::OwningOpRef<mlir::ModuleOp> Trace::finish() {
  if (!saved_.empty()) trace_error("a control-flow region was left open (an if_/for_/while_ body threw?)", defined_at_);
  builder_.setInsertionPointToEnd(&function_.getBody().back());
  mlir::gpu::ReturnOp::create(builder_, loc(defined_at_));
  if (!assert_messages_.empty() && issues_wgmma(function_))
    for (mlir::Operation* printf : assert_messages_) printf->erase();
  assert_messages_.clear();
  return std::move(module_);
}

mlir::Value Trace::dynamic_shared_base() {
  auto ptr3 = mlir::LLVM::LLVMPointerType::get(&context_, 3);
  if (!dynamic_shared_global_) {
    mlir::OpBuilder::InsertionGuard guard(builder_);
    builder_.restoreInsertionPoint(module_point());
    auto array = mlir::LLVM::LLVMArrayType::get(builder_.getI8Type(), 0);
    auto global = mlir::LLVM::GlobalOp::create(builder_, loc(defined_at_), array, false, mlir::LLVM::Linkage::External,
                                               "__cutejit_dynamic_shared", mlir::Attribute(), 16, 3);
    dynamic_shared_global_ = global;
  }
  return mlir::LLVM::AddressOfOp::create(builder_, builder_.getUnknownLoc(), ptr3, "__cutejit_dynamic_shared");
}

}  // namespace cutejit::detail

namespace cutejit::detail {

void define_parameters(const std::vector<FlatParam>& params) {
  Trace::current(Where::current()).define_function(params);
}

ValueId argument(int flat_index, Where where) {
  Trace& t = Trace::current(where);
  mlir::Value v = t.argument(flat_index, where);
  if (mlir::isa<mlir::LLVM::LLVMPointerType>(v.getType())) return t.add_pointer(v, Space::global, 1);
  return t.add(v, t.parameter_type(flat_index));
}

ValueId assume_pointer_alignment(ValueId ptr, int64_t alignment) {
  Where here = Where::current();
  Trace& t = Trace::current(here);
  t.get_mutable(ptr, here).known = alignment;
  return ptr;
}

}  // namespace cutejit::detail
