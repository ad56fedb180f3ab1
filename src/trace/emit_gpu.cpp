/** \file
 * The GPU's own instructions: barriers, fences, warp shuffles and votes, printf and traps,
 * and the target-specific ops, each checked against the target before it is emitted.
 */
#include <llvm/Support/Path.h>
#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/GPU/IR/GPUDialect.h>
#include <mlir/Dialect/LLVMIR/LLVMDialect.h>
#include <mlir/Dialect/LLVMIR/NVVMDialect.h>

#include "cutejit/dsl/control.hpp"
#include "cutejit/dsl/intrinsics.hpp"
#include "trace/trace.hpp"

namespace cutejit::detail {

namespace {
mlir::Value i32_constant(Trace& t, mlir::Location, int32_t v) {
  return t.i32(v);
}
}  // namespace

void sync_threads(Where where) {
  Trace& t = Trace::current(where);
  mlir::gpu::BarrierOp::create(t.builder(), t.loc(where));
}

void sync_warp(Where where) {
  Trace& t = Trace::current(where);
  mlir::Location l = t.loc(where);
  mlir::NVVM::SyncWarpOp::create(t.builder(), l, i32_constant(t, l, -1));
}

void memory_fence(Where where) {
  Trace& t = Trace::current(where);
  mlir::NVVM::MembarOp::create(t.builder(), t.loc(where), mlir::NVVM::MemScopeKind::GPU);
}

void memory_fence_system(Where where) {
  Trace& t = Trace::current(where);
  mlir::NVVM::MembarOp::create(t.builder(), t.loc(where), mlir::NVVM::MemScopeKind::SYS);
}

ValueId shuffle(ShuffleKind kind, ValueId value, ValueId lane_or_delta, int width, Where where) {
  Trace& t = Trace::current(where);
  if (width < 1 || width > 32 || (width & (width - 1)))
    trace_error("shuffle width must be a power of two from 1 to 32, not " + std::to_string(width), where);
  const ValueInfo& v = t.get(value, where);
  const ValueInfo& d = t.get(lane_or_delta, where);
  mlir::Location l = t.loc(where);
  // The c operand of shfl.sync: segment mask in bits 8-12, clamp lane in bits 0-4.
  int32_t segment = (32 - width) << 8;
  int32_t clamp = kind == ShuffleKind::up ? segment : segment | 0x1f;
  static constexpr mlir::NVVM::ShflKind kinds[] = {mlir::NVVM::ShflKind::idx, mlir::NVVM::ShflKind::up,
                                                   mlir::NVVM::ShflKind::down, mlir::NVVM::ShflKind::bfly};
  auto r = mlir::NVVM::ShflOp::create(t.builder(), l, v.value.getType(), i32_constant(t, l, -1), v.value, d.value,
                                      i32_constant(t, l, clamp), kinds[int(kind)], mlir::UnitAttr());
  return t.add(r, v.type);
}

ValueId vote(VoteKind kind, ValueId predicate, Where where) {
  Trace& t = Trace::current(where);
  const ValueInfo& p = t.get(predicate, where);
  if (p.pointer || p.type != DType::i1) trace_error("a warp vote needs a Bool predicate", where);
  mlir::Location l = t.loc(where);
  mlir::OpBuilder& b = t.builder();
  bool ballot = kind == VoteKind::ballot;
  mlir::Type rt = ballot ? b.getI32Type() : b.getI1Type();
  static constexpr mlir::NVVM::VoteSyncKind kinds[] = {mlir::NVVM::VoteSyncKind::any, mlir::NVVM::VoteSyncKind::all,
                                                       mlir::NVVM::VoteSyncKind::ballot};
  auto r = mlir::NVVM::VoteSyncOp::create(b, l, rt, i32_constant(t, l, -1), p.value, kinds[int(kind)]);
  return t.add(r, ballot ? DType::u32 : DType::i1);
}

ValueId elect_one(Where where) {
  Trace& t = Trace::current(where);
  t.require(Feature::sm90, "elect_one (elect.sync)", where);
  auto r = mlir::NVVM::ElectSyncOp::create(t.builder(), t.loc(where), t.builder().getI1Type(), mlir::Value());
  return t.add(r, DType::i1);
}

void set_max_registers(int count, bool increase, Where where) {
  Trace& t = Trace::current(where);
  t.require(Feature::setmaxnreg, "setmaxnreg", where);
  if (count < 24 || count > 256 || count % 8 != 0)
    trace_error("setmaxnreg needs a register count that is a multiple of 8 between 24 and 256, not " + std::to_string(count),
                where);
  mlir::NVVM::SetMaxRegisterOp::create(t.builder(), t.loc(where), uint32_t(count),
                                       increase ? mlir::NVVM::SetMaxRegisterAction::increase
                                                : mlir::NVVM::SetMaxRegisterAction::decrease);
}

void launch_bounds(int max_threads, int min_blocks_per_sm, Where where) {
  Trace& t = Trace::current(where);
  if (max_threads < 1 || max_threads > 1024 || min_blocks_per_sm < 1)
    trace_error("launch_bounds needs 1 to 1024 threads and at least one block per multiprocessor, not " +
                    std::to_string(max_threads) + " and " + std::to_string(min_blocks_per_sm),
                where);
  // Function attributes that the GPU-to-NVVM conversion carries over to the llvm.func; NVPTX
  // writes them as `.maxntid` and `.minnctapersm`.
  mlir::OpBuilder& b = t.builder();
  t.function()->setAttr(mlir::NVVM::NVVMDialect::getMaxntidAttrName(), b.getDenseI32ArrayAttr({max_threads, 1, 1}));
  t.function()->setAttr(mlir::NVVM::NVVMDialect::getMinctasmAttrName(), b.getI32IntegerAttr(min_blocks_per_sm));
}

void block_shape(int x, int y, int z, Where where) {
  Trace& t = Trace::current(where);
  if (x < 1 || y < 1 || z < 1 || x > 1024 || y > 1024 || z > 64 || x * y * z > 1024)
    trace_error("block_shape takes extents of at least 1, at most 1024 x 1024 x 64 and 1024 threads in all, not " + std::to_string(x) +
                    " x " + std::to_string(y) + " x " + std::to_string(z),
                where);
  if (const auto& b = t.block_shape())
    trace_error("block_shape is declared once per kernel, before block_dim() is read; this kernel declared it at " +
                    std::string(b->where.file_name()) + ":" + std::to_string(b->where.line()),
                where);
  t.set_block_shape({x, y, z, where});
  // NVPTX writes the attribute as `.reqntid`: the driver refuses a launch of another shape, and
  // ptxas may budget registers for exactly this many threads.
  t.function()->setAttr(mlir::NVVM::NVVMDialect::getReqntidAttrName(), t.builder().getDenseI32ArrayAttr({x, y, z}));
}

int declared_block_threads(Where where) {
  const auto& b = Trace::current(where).block_shape();
  return b ? b->count() : 0;
}

void cluster_shape(int x, int y, int z, Where where) {
  Trace& t = Trace::current(where);
  t.require(Feature::sm90, "cluster_shape (a thread-block cluster)", where);
  if (x < 1 || y < 1 || z < 1 || x * y * z > 8)
    trace_error("cluster_shape takes extents of at least 1 whose product is at most 8 (the portable cluster size), not " +
                    std::to_string(x) + " x " + std::to_string(y) + " x " + std::to_string(z),
                where);
  if (const auto& c = t.cluster_shape())
    trace_error("cluster_shape is declared once per kernel; this kernel declared it at " + std::string(c->where.file_name()) + ":" +
                    std::to_string(c->where.line()),
                where);
  t.set_cluster_shape({x, y, z, where});
  // The GPU-to-NVVM conversion carries the attribute to the llvm.func; NVPTX writes it as
  // `.reqnctapercluster` (with `.explicitcluster`).
  t.function()->setAttr(mlir::NVVM::NVVMDialect::getClusterDimAttrName(), t.builder().getDenseI32ArrayAttr({x, y, z}));
}

void cluster_arrive(Where where) {
  Trace& t = Trace::current(where);
  t.require(Feature::sm90, "cluster_arrive (barrier.cluster.arrive)", where);
  mlir::NVVM::ClusterArriveOp::create(t.builder(), t.loc(where), mlir::UnitAttr());
}

void cluster_wait(Where where) {
  Trace& t = Trace::current(where);
  t.require(Feature::sm90, "cluster_wait (barrier.cluster.wait)", where);
  mlir::NVVM::ClusterWaitOp::create(t.builder(), t.loc(where), mlir::UnitAttr());
}

void grid_dependency_control(bool wait, Where where) {
  Trace& t = Trace::current(where);
  t.require(Feature::sm90, wait ? "griddepcontrol_wait (griddepcontrol.wait)" : "griddepcontrol_launch_dependents", where);
  mlir::NVVM::GriddepcontrolOp::create(t.builder(), t.loc(where),
                                       wait ? mlir::NVVM::GridDepActionKind::wait : mlir::NVVM::GridDepActionKind::launch_dependents);
}

void wgmma_fence(Where where) {
  Trace& t = Trace::current(where);
  t.require(Feature::wgmma, "wgmma.fence", where);
  mlir::NVVM::WgmmaFenceAlignedOp::create(t.builder(), t.loc(where));
}

void wgmma_commit_group(Where where) {
  Trace& t = Trace::current(where);
  t.require(Feature::wgmma, "wgmma.commit_group", where);
  mlir::NVVM::WgmmaGroupSyncAlignedOp::create(t.builder(), t.loc(where));
}

void wgmma_wait_group(int pending, Where where) {
  Trace& t = Trace::current(where);
  t.require(Feature::wgmma, "wgmma.wait_group", where);
  if (pending < 0 || pending > 7) trace_error("wgmma.wait_group takes 0 to 7 pending groups, not " + std::to_string(pending), where);
  mlir::NVVM::WgmmaWaitGroupSyncOp::create(t.builder(), t.loc(where), uint64_t(pending));
}

namespace {
mlir::Operation* emit_printf(std::string_view format, std::span<const ValueId> args, Where where) {
  Trace& t = Trace::current(where);
  llvm::SmallVector<mlir::Value> values;
  for (ValueId a : args) values.push_back(t.value(a, where));
  return mlir::gpu::PrintfOp::create(t.builder(), t.loc(where), t.builder().getStringAttr(format), values);
}
}  // namespace

void print(std::string_view format, std::span<const ValueId> args, Where where) { emit_printf(format, args, where); }

void trap(Where where) {
  Trace& t = Trace::current(where);
  mlir::LLVM::Trap::create(t.builder(), t.loc(where));
}

}  // namespace cutejit::detail

namespace cutejit {

void device_assert(const Operand<bool>& cond, std::string_view message) {
  detail::Where w = cond.where;
  // The file by its name, as the cache key reads locations (jit/pipeline.cpp): its directory is
  // spelled as each translation unit reached the file, and the message is in the kernel, so a
  // path here would make one kernel two cache entries.
  std::string text = llvm::sys::path::filename(w.file_name()).str() + ":" + std::to_string(w.line()) + ": device assertion failed";
  if (!message.empty()) text += ": " + std::string(message);
  if_(Value<bool>(detail::unary(detail::UnaryOp::bit_not, cond.id, w)), [&] {
    detail::Trace::current(w).add_assert_message(detail::emit_printf(text + "\n", {}, w));
    detail::trap(w);
  }, w);
}

}  // namespace cutejit
