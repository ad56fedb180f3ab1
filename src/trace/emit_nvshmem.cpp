/** \file
 * Calls into NVSHMEM's device API. The kernel declares each function it calls by its C name and
 * calls it; LLVM links the definitions from NVSHMEM's bitcode (lower/link_nvshmem.cpp).
 *
 * The first call records on the module which bitcode the kernel will link (its path and size),
 * so that the disk cache's key, computed from the module, changes with the NVSHMEM release, and
 * so that a missing library is an error at the user's line rather than at lowering.
 */
#include <filesystem>
#include <string>

#include <mlir/Dialect/LLVMIR/LLVMDialect.h>

#include "support/nvshmem_home.hpp"
#include "trace/trace.hpp"

namespace cutejit::detail {

namespace {

constexpr const char* library_attribute = "cutejit.nvshmem_device_library";

void record_library(Trace& t, const Where& w) {
  mlir::ModuleOp module = t.module();
  if (module->hasAttr(library_attribute)) return;
  const std::filesystem::path bc = nvshmem_device_bitcode(t.target());
  if (bc.empty())
    trace_error("this kernel calls NVSHMEM, and NVSHMEM's device library for " + t.target().name() +
                    " (libnvshmem_device_sm_XX.bc) was not found: " + nvshmem_searched(),
                w);
  std::error_code ec;
  const auto size = std::filesystem::file_size(bc, ec);
  module->setAttr(library_attribute, mlir::StringAttr::get(&t.context(), bc.string() + " " + std::to_string(ec ? 0 : size)));
}

}  // namespace

ValueId nvshmem_call(std::string_view function, LibraryResult result, std::span<const ValueId> args, Where where) {
  Trace& t = Trace::current(where);
  if (!function.starts_with("nvshmem")) trace_error("internal error: '" + std::string(function) + "' is not an NVSHMEM function", where);
  record_library(t, where);
  mlir::OpBuilder& b = t.builder();
  const mlir::Location l = t.loc(where);
  const auto generic = mlir::LLVM::LLVMPointerType::get(&t.context(), 0);

  llvm::SmallVector<mlir::Value> operands;
  int64_t first_alignment = 0;
  for (ValueId id : args) {
    const ValueInfo& v = t.get(id, where);
    mlir::Value x = t.value(id, where);
    if (v.pointer) {
      if (!first_alignment) first_alignment = v.known;
      if (mlir::cast<mlir::LLVM::LLVMPointerType>(x.getType()).getAddressSpace() != 0)
        x = mlir::LLVM::AddrSpaceCastOp::create(b, l, generic, x);
    } else if (size_in_bytes(v.type) == 8) {
      if (v.type != DType::i64 && v.type != DType::u64) trace_error("internal error: NVSHMEM takes no floats", where);
    } else if (v.type != DType::i32 && v.type != DType::u32) {
      trace_error("internal error: NVSHMEM's integer arguments are 32 or 64 bits", where);
    }
    operands.push_back(x);
  }
  mlir::Type result_type = result == LibraryResult::none      ? mlir::Type(mlir::LLVM::LLVMVoidType::get(&t.context()))
                           : result == LibraryResult::i32     ? mlir::Type(b.getI32Type())
                           : result == LibraryResult::u64     ? mlir::Type(b.getI64Type())
                                                              : mlir::Type(generic);
  llvm::SmallVector<mlir::Type> params;
  for (mlir::Value v : operands) params.push_back(v.getType());
  const auto type = mlir::LLVM::LLVMFunctionType::get(result_type, params);
  auto func = t.gpu_module().lookupSymbol<mlir::LLVM::LLVMFuncOp>(function);
  if (!func) {
    mlir::OpBuilder::InsertionGuard guard(b);
    b.restoreInsertionPoint(t.module_point());
    func = mlir::LLVM::LLVMFuncOp::create(b, l, function, type);
  } else if (func.getFunctionType() != type) {
    trace_error("internal error: " + std::string(function) + " called with two signatures", where);
  }
  auto call = mlir::LLVM::CallOp::create(b, l, func, operands);
  switch (result) {
    case LibraryResult::none: return ValueId{};
    case LibraryResult::i32: return t.add(call.getResult(), DType::i32);
    case LibraryResult::u64: return t.add(call.getResult(), DType::u64);
    case LibraryResult::pointer: {
      mlir::Value global = mlir::LLVM::AddrSpaceCastOp::create(b, l, mlir::LLVM::LLVMPointerType::get(&t.context(), 1), call.getResult());
      // The one pointer NVSHMEM returns is a peer's address of the first argument (nvshmem_ptr):
      // the same offset into the peer's heap, whose base is aligned as ours, so the alignment
      // proved for our address holds for the peer's.
      return t.add_pointer(global, Space::global, first_alignment ? first_alignment : 1);
    }
  }
  return ValueId{};
}

}  // namespace cutejit::detail
