/** \file
 * The tracer's state: the MLIR module being built for one kernel specialization, the table
 * behind the public `ValueId` handles, and the insertion-point stack that dynamic control flow
 * pushes and pops. One Trace is active per thread while a kernel body runs.
 */
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include <mlir/Dialect/GPU/IR/GPUDialect.h>
#include <mlir/IR/Builders.h>
#include <mlir/IR/BuiltinOps.h>

#include "cutejit/dsl/trace_api.hpp"
#include "cutejit/core/kernel_abi.hpp"
#include "cutejit/core/target.hpp"
#include "core/target_features.hpp"

namespace cutejit::detail {

/// The largest known divisor the tracer tracks: 2^30 (no access needs more alignment).
inline constexpr int64_t max_known_divisor = int64_t(1) << 30;
/// The largest power of two dividing the integer `c` (every one divides 0), at most 2^30.
int64_t power_of_two_divisor(int64_t c);

struct ValueInfo {
  mlir::Value value;
  DType type = DType::i32;     ///< element type (for pointers: unused)
  bool pointer = false;
  Space space = Space::global;  ///< for pointers
  int64_t known = 1;            ///< integers: a known power-of-two divisor; pointers: byte alignment
};

class Trace {
 public:
  Trace(mlir::MLIRContext& context, std::string kernel, Target target, Where defined_at);
  ~Trace();
  Trace(const Trace&) = delete;
  Trace& operator=(const Trace&) = delete;

  /// The trace running on this thread; throws a clear Error when there is none.
  static Trace& current(Where where);
  static Trace* active();

  const std::string& kernel() const { return kernel_; }
  const Target& target() const { return target_; }
  mlir::MLIRContext& context() { return context_; }
  mlir::OpBuilder& builder() { return builder_; }
  mlir::ModuleOp module() { return *module_; }
  mlir::gpu::GPUModuleOp gpu_module() { return gpu_module_; }
  mlir::gpu::GPUFuncOp function() { return function_; }

  mlir::Location loc(const Where& w);
  mlir::Type type(DType t);
  /// The type a value of `t` has in memory and in LLVM ops: `type(t)`, except i8 for the FP8
  /// types, which LLVM has no type for (the lowering turns f8E4M3FN/f8E5M2 into i8 too).
  mlir::Type memory_type(DType t);
  /// A value as it is stored (FP8: its bits as i8), and a loaded value as the tracer types it.
  mlir::Value to_memory(mlir::Value v, DType t, mlir::Location l);
  mlir::Value from_memory(mlir::Value v, DType t, mlir::Location l);

  ValueId add(mlir::Value v, DType t, int64_t known_divisor = 1);
  ValueId add_pointer(mlir::Value v, Space space, int64_t alignment);
  const ValueInfo& get(ValueId id, const Where& w) const;
  ValueInfo& get_mutable(ValueId id, const Where& w);
  mlir::Value value(ValueId id, const Where& w) const { return get(id, w).value; }

  /// Creates the kernel function with these flattened parameters.
  void define_function(const std::vector<FlatParam>& params);
  mlir::Value argument(int index, const Where& w);
  DType parameter_type(int index) const { return params_.at(size_t(index)).type; }
  /// Inserts into the entry block's prologue, before every traced op, in creation order:
  /// allocas (so LLVM promotes them to registers), constants and addresses made once.
  mlir::OpBuilder::InsertPoint entry_point();
  /// The constant of `type` with these bits (an integer value, or a double's bits): made once
  /// per kernel by `make` in the prologue, where it dominates every use in every region. Every
  /// use shares the one ValueId, so what it knows (an integer's power-of-two divisor) follows
  /// from the value alone, whoever asks first.
  ValueId constant(DType type, uint64_t bits, bool is_float, const std::function<mlir::Value(mlir::OpBuilder&)>& make);
  /// The i32 constant `v` as an operand (a vector lane, a mask), made once per kernel.
  mlir::Value i32(int32_t v);
  /// The address `offset` elements into a register array, with a constant offset: made once in
  /// the prologue (each element of a register tile is addressed in many places) when both are
  /// made there, else by `make` where the builder is.
  ValueId register_element(ValueId array, ValueId offset, DType element, const std::function<ValueId()>& make);
  /// Inserts into the gpu.module body (globals).
  mlir::OpBuilder::InsertPoint module_point();

  void push_insertion();
  void pop_insertion();
  std::vector<mlir::Operation*>& if_ops() { return if_ops_; }

  /// Throws unless the target has `f`, naming the instruction, the target and the user's line.
  void require(Feature f, const char* instruction, const Where& w) const;
  /// A device_assert's printf of its message: finish() drops it from a kernel that issues
  /// wgmma (the assert then only traps), because ptxas serializes every wgmma of a function that
  /// makes any call (C7510; printf is a call to vprintf): the Hopper attention forward ran
  /// 18-30% slower with its checks of cu_seqlens printing.
  void add_assert_message(mlir::Operation* printf) { assert_messages_.push_back(printf); }
  /// Finishes the function (terminator) and hands the module over.
  mlir::OwningOpRef<mlir::ModuleOp> finish();

  /// A shape the kernel declared (block_shape, cluster_shape), and where.
  struct DeclaredShape {
    int x = 1, y = 1, z = 1;
    Where where;
    int count() const { return x * y * z; }
  };
  const std::optional<DeclaredShape>& cluster_shape() const { return cluster_shape_; }
  void set_cluster_shape(const DeclaredShape& c) { cluster_shape_ = c; }
  const std::optional<DeclaredShape>& block_shape() const { return block_shape_; }
  void set_block_shape(const DeclaredShape& b) { block_shape_ = b; }
  /// Every tcgen05 op of a kernel names the same CTA group (1, or 2 for the MMAs of a CTA
  /// pair): the first one's. Throws, naming both lines, for one that differs; a group of 2
  /// needs a declared cluster of an even number of CTAs along x (the pairs are ranks 2k, 2k + 1).
  void use_cta_group(int group, const char* instruction, const Where& w);

  uint32_t serial() const { return serial_; }
  mlir::Value dynamic_shared_base();
  int64_t static_shared_bytes() const { return static_shared_bytes_; }
  void add_static_shared_bytes(int64_t n) { static_shared_bytes_ += n; }

 private:
  mlir::MLIRContext& context_;
  std::string kernel_;
  Target target_;
  Where defined_at_;
  uint32_t serial_;
  mlir::OpBuilder builder_;
  mlir::OwningOpRef<mlir::ModuleOp> module_;
  mlir::gpu::GPUModuleOp gpu_module_;
  mlir::gpu::GPUFuncOp function_;
  std::vector<ValueInfo> values_;
  std::vector<FlatParam> params_;
  std::vector<mlir::OpBuilder::InsertPoint> saved_;
  std::vector<mlir::Operation*> if_ops_;
  std::vector<mlir::Operation*> assert_messages_;
  mlir::Operation* prologue_end_ = nullptr;
  std::map<std::tuple<int, uint64_t, bool>, ValueId> constants_;
  std::map<std::tuple<uint32_t, uint32_t, int>, ValueId> register_elements_;
  mlir::Operation* dynamic_shared_global_ = nullptr;
  int64_t static_shared_bytes_ = 0;
  std::optional<DeclaredShape> cluster_shape_;
  std::optional<DeclaredShape> block_shape_;
  std::optional<std::pair<int, Where>> cta_group_;
  Trace* previous_;
};

/// Throws an Error at the user's line, naming the kernel being traced.
[[noreturn]] void trace_error(const std::string& message, const Where& where);

/// The value of an integer constant (an arith.constant), if `v` is one.
std::optional<llvm::APInt> constant_integer(mlir::Value v);
/// x / y or x % y (`remainder`), and x << n or x >> n (`left`), with the cases LLVM leaves
/// undefined refused for constants and defined otherwise (integer_semantics.cpp).
mlir::Value integer_division(Trace& t, bool remainder, mlir::Value x, mlir::Value y, bool is_unsigned, const Where& w);
mlir::Value integer_shift(Trace& t, bool left, mlir::Value x, mlir::Value n, bool is_unsigned, const Where& w);

/// The operand checks the instruction emitters share: a pointer into shared memory (an mbarrier,
/// a TMA, wgmma, ldmatrix or cp.async tile), or a 32-bit integer, else an error naming `what`.
mlir::Value shared_pointer(Trace& t, ValueId id, const char* what, const Where& w);
mlir::Value i32_operand(Trace& t, ValueId id, const char* what, const Where& w);
/// The descriptor operand of a TMA op: a grid-constant tensor map (a TmaDescriptor parameter),
/// addressed generically.
mlir::Value descriptor_pointer(Trace& t, ValueId id, const Where& w);
/// A TMA copy's coordinates (1 to 5) as i32 values, else an error.
llvm::SmallVector<mlir::Value> tma_coordinates(Trace& t, std::span<const ValueId> coords, const Where& w);
/// A TMA copy's shared-memory tile: an error unless it is known to be 128-byte aligned.
void check_tma_tile_alignment(Trace& t, ValueId tile, const Where& w);

/// An mma.sync fragment's registers: 16- and 8-bit values packed into 32-bit registers (the
/// first value in the low bits), 32-bit values as they are, and the inline-asm constraint of each.
struct Registers {
  llvm::SmallVector<mlir::Value> values;
  std::string constraint;  ///< "r", "f" or "d", one letter for every register
};
/// `elements` (all of `type`, else an error naming `what`) as registers; `as_bits`: f32 values
/// as .b32 (TF32 operands). Defined with mma_sync in emit_sm80.cpp.
Registers pack(Trace& t, std::span<const ValueId> elements, DType type, bool as_bits, const char* what, mlir::Location l,
               const Where& w);

}  // namespace cutejit::detail
