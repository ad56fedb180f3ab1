/** \file
 * Hopper's building blocks: mbarriers, proxy fences, named barriers, TMA bulk tensor copies and
 * wgmma. Every op is checked against the target (Trace::require) before it is emitted, and its
 * NVVM name is on the verifier's allow-list (core/target_features.cpp).
 */
#include <optional>
#include <string>

#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/LLVMIR/LLVMDialect.h>
#include <mlir/Dialect/LLVMIR/NVVMDialect.h>
#include <mlir/Dialect/SCF/IR/SCF.h>

#include "cutejit/arch/sm90.hpp"
#include "trace/trace.hpp"

namespace cutejit::detail {

namespace {

mlir::Value i32_constant(Trace& t, mlir::Location, int32_t v) {
  return t.i32(v);
}


mlir::NVVM::MemScopeKindAttr cta_scope(Trace& t) {
  return mlir::NVVM::MemScopeKindAttr::get(&t.context(), mlir::NVVM::MemScopeKind::CTA);
}

}  // namespace

// ---- mbarriers and fences ----

mlir::Value descriptor_pointer(Trace& t, ValueId id, const Where& w) {
  const ValueInfo& d = t.get(id, w);
  auto type = mlir::dyn_cast<mlir::LLVM::LLVMPointerType>(d.value.getType());
  if (!d.pointer || !type || type.getAddressSpace() != 0 || d.space != Space::global)
    trace_error("a TMA copy needs a TmaDescriptor kernel parameter as its descriptor", w);
  return d.value;
}

void mbarrier_init(ValueId bar, ValueId count, Where where) {
  Trace& t = Trace::current(where);
  mlir::Value b = shared_pointer(t, bar, "an mbarrier", where);
  mlir::NVVM::MBarrierInitOp::create(t.builder(), t.loc(where), b, i32_operand(t, count, "an mbarrier's arrival count", where),
                                     mlir::Value());
}

void mbarrier_arrive(ValueId bar, Where where) {
  Trace& t = Trace::current(where);
  mlir::Value b = shared_pointer(t, bar, "an mbarrier", where);
  mlir::NVVM::MBarrierArriveOp::create(t.builder(), t.loc(where), t.builder().getI64Type(), b, mlir::Value(), cta_scope(t));
}

void mbarrier_arrive_cluster(ValueId bar, ValueId cta, Where where) {
  Trace& t = Trace::current(where);
  t.require(Feature::sm90, "mbarrier_arrive_cluster (mapa, mbarrier.arrive.shared::cluster)", where);
  mlir::Value b = shared_pointer(t, bar, "an mbarrier", where);
  mlir::Location l = t.loc(where);
  mlir::Value remote = mlir::NVVM::MapaOp::create(t.builder(), l, mlir::LLVM::LLVMPointerType::get(&t.context(), 7), b,
                                                  i32_operand(t, cta, "a CTA rank in the cluster", where));
  // CTA scope, not cluster: see mbarrier.hpp.
  mlir::NVVM::MBarrierArriveOp::create(t.builder(), l, mlir::Type(), remote, mlir::Value(), cta_scope(t));
}

void mbarrier_arrive_expect_tx(ValueId bar, ValueId bytes, Where where) {
  Trace& t = Trace::current(where);
  t.require(Feature::sm90, "mbarrier.arrive.expect_tx", where);
  mlir::Value b = shared_pointer(t, bar, "an mbarrier", where);
  mlir::NVVM::MBarrierArriveExpectTxOp::create(t.builder(), t.loc(where), t.builder().getI64Type(), b,
                                               i32_operand(t, bytes, "a transaction byte count", where), cta_scope(t),
                                               t.builder().getBoolAttr(false), mlir::Value());
}

ValueId mbarrier_try_wait(ValueId bar, ValueId parity, Where where) {
  Trace& t = Trace::current(where);
  t.require(Feature::sm90, "mbarrier.try_wait.parity", where);
  mlir::Value b = shared_pointer(t, bar, "an mbarrier", where);
  // A 32-bit state operand selects the .parity form of the instruction.
  auto r = mlir::NVVM::MBarrierTryWaitOp::create(t.builder(), t.loc(where), t.builder().getI1Type(), b,
                                                 i32_operand(t, parity, "a phase parity", where), mlir::Value(), cta_scope(t));
  return t.add(r, DType::i1);
}

/// mbarrier.test_wait.parity (sm_80 and newer, non-blocking): whether the phase has completed.
mlir::Value mbarrier_test_wait(Trace& t, ValueId bar, ValueId parity, Where where) {
  mlir::OpBuilder& b = t.builder();
  mlir::Location l = t.loc(where);
  mlir::Value address = mlir::LLVM::PtrToIntOp::create(b, l, b.getI64Type(), shared_pointer(t, bar, "an mbarrier", where));
  mlir::Value phase = i32_operand(t, parity, "a phase parity", where);
  const char* ptx = "{ .reg .pred p; mbarrier.test_wait.parity.shared.b64 p, [$1], $2; selp.u32 $0, 1, 0, p; }";
  mlir::Value done = mlir::LLVM::InlineAsmOp::create(b, l, b.getI32Type(), mlir::ValueRange{address, phase}, ptx, "=r,l,r,~{memory}",
                                                     /*has_side_effects=*/true, false, mlir::LLVM::TailCallKind::None,
                                                     mlir::LLVM::AsmDialectAttr(), mlir::ArrayAttr())
                         .getResult(0);
  return mlir::arith::CmpIOp::create(b, l, mlir::arith::CmpIPredicate::ne, done, t.i32(0));
}

void mbarrier_wait(ValueId bar, ValueId parity, Where where) {
  Trace& t = Trace::current(where);
  mlir::OpBuilder& b = t.builder();
  mlir::Location l = t.loc(where);
  // try_wait may time out before the phase completes: probe until it reports completion.
  // Before sm_90 there is no try_wait; test_wait is the same probe without the suspension.
  const bool try_wait = target_has(t.target(), Feature::sm90);
  auto loop = mlir::scf::WhileOp::create(b, l, mlir::TypeRange{}, mlir::ValueRange{});
  mlir::OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(b.createBlock(&loop.getBefore()));
  mlir::Value done = try_wait ? t.value(mbarrier_try_wait(bar, parity, where), where) : mbarrier_test_wait(t, bar, parity, where);
  mlir::Value pending = mlir::arith::XOrIOp::create(b, l, done, mlir::arith::ConstantOp::create(b, l, b.getBoolAttr(true)));
  mlir::scf::ConditionOp::create(b, l, pending, mlir::ValueRange{});
  b.setInsertionPointToStart(b.createBlock(&loop.getAfter()));
  mlir::scf::YieldOp::create(b, l);
}

void fence_mbarrier_init(Where where) {
  Trace& t = Trace::current(where);
  t.require(Feature::sm90, "fence.mbarrier_init", where);
  mlir::NVVM::FenceMbarrierInitOp::create(t.builder(), t.loc(where));
}

void fence_proxy_async_shared(Where where) {
  Trace& t = Trace::current(where);
  t.require(Feature::sm90, "fence.proxy.async.shared::cta", where);
  auto kind = mlir::NVVM::ProxyKindAttr::get(&t.context(), mlir::NVVM::ProxyKind::async_shared);
  auto space = mlir::NVVM::SharedSpaceAttr::get(&t.context(), mlir::NVVM::SharedSpace::shared_cta);
  mlir::NVVM::FenceProxyOp::create(t.builder(), t.loc(where), kind, space);
}

namespace {
void check_named_barrier(Trace& t, ValueId id, ValueId count, const Where& w) {
  // Static operands are checked here; dynamic ones are the caller's promise, as in CUDA.
  auto constant = [&](ValueId v) -> std::optional<int64_t> {
    if (auto c = t.value(v, w).getDefiningOp<mlir::arith::ConstantIntOp>()) return c.value();
    return std::nullopt;
  };
  if (auto i = constant(id); i && (*i < 0 || *i > 15))
    trace_error("a named barrier id must be 0 to 15, not " + std::to_string(*i), w);
  if (auto n = constant(count); n && (*n <= 0 || *n % 32 != 0))
    trace_error("a named barrier's thread count must be a positive multiple of 32 (whole warps), not " + std::to_string(*n), w);
}
}  // namespace

void named_barrier_sync(ValueId id, ValueId count, Where where) {
  Trace& t = Trace::current(where);
  check_named_barrier(t, id, count, where);
  mlir::NVVM::BarrierOp::create(t.builder(), t.loc(where), mlir::TypeRange{}, i32_operand(t, id, "a barrier id", where),
                                i32_operand(t, count, "a barrier thread count", where), {}, mlir::Value());
}

void named_barrier_arrive(ValueId id, ValueId count, Where where) {
  Trace& t = Trace::current(where);
  check_named_barrier(t, id, count, where);
  mlir::NVVM::BarrierArriveOp::create(t.builder(), t.loc(where), i32_operand(t, id, "a barrier id", where),
                                      i32_operand(t, count, "a barrier thread count", where));
}

ValueId shared_address(ValueId ptr, Where where) {
  Trace& t = Trace::current(where);
  mlir::Value p = shared_pointer(t, ptr, "the operand of shared_address", where);
  auto r = mlir::LLVM::PtrToIntOp::create(t.builder(), t.loc(where), t.builder().getI32Type(), p);
  return t.add(r, DType::u32, t.get(ptr, where).known);
}

// ---- TMA ----

ValueId tensor_map_argument(int flat_index, Where where) {
  Trace& t = Trace::current(where);
  return t.add_pointer(t.argument(flat_index, where), Space::global, 64);
}

llvm::SmallVector<mlir::Value> tma_coordinates(Trace& t, std::span<const ValueId> coords, const Where& w) {
  if (coords.empty() || coords.size() > 5) trace_error("a TMA copy takes 1 to 5 coordinates, not " + std::to_string(coords.size()), w);
  llvm::SmallVector<mlir::Value> out;
  for (ValueId c : coords) out.push_back(i32_operand(t, c, "a TMA coordinate", w));
  return out;
}
void check_tma_tile_alignment(Trace& t, ValueId tile, const Where& w) {
  // The copy engine reads and writes shared memory in 128-byte lines.
  if (t.get(tile, w).known < 128)
    trace_error("a TMA shared-memory tile must be 128-byte aligned; its address is known to be only " +
                    std::to_string(t.get(tile, w).known) + "-byte aligned",
                w);
}

namespace {
/// A TMA tile load; `multicast` (an i16 CTA mask) or null for this CTA only.
void emit_tma_load(ValueId descriptor, ValueId shared_dst, ValueId bar, std::span<const ValueId> coords, Where where,
                   mlir::Value multicast) {
  Trace& t = Trace::current(where);
  t.require(Feature::sm90, "cp.async.bulk.tensor (TMA load)", where);
  mlir::Value d = descriptor_pointer(t, descriptor, where);
  mlir::Value dst = shared_pointer(t, shared_dst, "a TMA load's destination", where);
  mlir::Value b = shared_pointer(t, bar, "a TMA load's mbarrier", where);
  check_tma_tile_alignment(t, shared_dst, where);
  auto c = tma_coordinates(t, coords, where);
  mlir::OpBuilder& builder = t.builder();
  mlir::Location l = t.loc(where);
  // A multicast names shared::cluster (address space 7) windows; a load into this CTA alone
  // names its shared::cta window, which ptxas then knows is local (on the sm_120 family,
  // whose clusters are of one CTA, a shared::cluster destination costs a call that checks it).
  mlir::Value destination =
      multicast ? mlir::LLVM::AddrSpaceCastOp::create(builder, l, mlir::LLVM::LLVMPointerType::get(&t.context(), 7), dst) : dst;
  mlir::NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
      builder, l, destination, d, c, b, mlir::ValueRange{}, multicast, mlir::Value(),
      mlir::NVVM::TMALoadModeAttr::get(&t.context(), mlir::NVVM::TMALoadMode::TILE), builder.getBoolAttr(!multicast),
      mlir::NVVM::CTAGroupKindAttr(), mlir::Value());
}
}  // namespace

void tma_load_multicast(ValueId descriptor, ValueId shared_dst, ValueId bar, std::span<const ValueId> coords, ValueId cta_mask,
                        Where where) {
  Trace& t = Trace::current(where);
  t.require(Feature::sm90, "cp.async.bulk.tensor with .multicast::cluster (TMA multicast load)", where);
  mlir::Value mask = i32_operand(t, cta_mask, "a multicast CTA mask", where);
  mlir::Value mask16 = mlir::arith::TruncIOp::create(t.builder(), t.loc(where), t.builder().getI16Type(), mask);
  emit_tma_load(descriptor, shared_dst, bar, coords, where, mask16);
}

void tma_load(ValueId descriptor, ValueId shared_dst, ValueId bar, std::span<const ValueId> coords, Where where) {
  emit_tma_load(descriptor, shared_dst, bar, coords, where, mlir::Value());
}

namespace {
/// A TMA tile store, shared -> global; `add`: adding into what is there (a reduce-store).
void emit_tma_store(ValueId descriptor, ValueId shared_src, std::span<const ValueId> coords, bool add, Where where) {
  Trace& t = Trace::current(where);
  t.require(Feature::sm90, add ? "cp.reduce.async.bulk.tensor (TMA reduce-store)" : "cp.async.bulk.tensor (TMA store)", where);
  mlir::Value d = descriptor_pointer(t, descriptor, where);
  mlir::Value src = shared_pointer(t, shared_src, add ? "a TMA reduce-store's source" : "a TMA store's source", where);
  check_tma_tile_alignment(t, shared_src, where);
  auto c = tma_coordinates(t, coords, where);
  if (add)
    mlir::NVVM::CpAsyncBulkTensorReduceOp::create(t.builder(), t.loc(where), d, src, mlir::NVVM::TMAReduxKind::ADD,
                                                  mlir::NVVM::TMAStoreMode::TILE, c, mlir::Value());
  else
    mlir::NVVM::CpAsyncBulkTensorSharedCTAToGlobalOp::create(
        t.builder(), t.loc(where), d, src, c, mlir::Value(),
        mlir::NVVM::TMAStoreModeAttr::get(&t.context(), mlir::NVVM::TMAStoreMode::TILE), mlir::Value());
}
}  // namespace

void tma_store(ValueId descriptor, ValueId shared_src, std::span<const ValueId> coords, Where where) {
  emit_tma_store(descriptor, shared_src, coords, /*add=*/false, where);
}

void tma_reduce_add(ValueId descriptor, ValueId shared_src, std::span<const ValueId> coords, Where where) {
  emit_tma_store(descriptor, shared_src, coords, /*add=*/true, where);
}

void tma_store_commit(Where where) {
  Trace& t = Trace::current(where);
  t.require(Feature::sm90, "cp.async.bulk.commit_group", where);
  mlir::NVVM::CpAsyncBulkCommitGroupOp::create(t.builder(), t.loc(where));
}

void tma_store_wait(int pending, bool read_only, Where where) {
  Trace& t = Trace::current(where);
  t.require(Feature::sm90, "cp.async.bulk.wait_group", where);
  if (pending < 0 || pending > 63) trace_error("cp.async.bulk.wait_group takes 0 to 63 pending groups, not " + std::to_string(pending), where);
  mlir::NVVM::CpAsyncBulkWaitGroupOp::create(t.builder(), t.loc(where), t.builder().getI32IntegerAttr(pending),
                                             read_only ? t.builder().getUnitAttr() : mlir::UnitAttr());
}

void tma_prefetch_descriptor(ValueId descriptor, Where where) {
  Trace& t = Trace::current(where);
  t.require(Feature::sm90, "prefetch.tensormap", where);
  mlir::NVVM::PrefetchOp::create(t.builder(), t.loc(where), mlir::NVVM::PrefetchCacheLevelAttr(),
                                 mlir::NVVM::CacheEvictionPriorityAttr(), descriptor_pointer(t, descriptor, where), mlir::Value(),
                                 t.builder().getUnitAttr());
}

// ---- stmatrix ----

void stmatrix(ValueId row, std::span<const ValueId> registers, bool transpose, Where where) {
  Trace& t = Trace::current(where);
  t.require(Feature::sm90, "stmatrix", where);
  if (registers.size() != 1 && registers.size() != 2 && registers.size() != 4)
    trace_error("stmatrix stores 1, 2 or 4 matrices (one 32-bit register each), not " + std::to_string(registers.size()), where);
  mlir::Value p = shared_pointer(t, row, "stmatrix's row address", where);
  if (t.get(row, where).known < 16)
    trace_error("stmatrix writes 16-byte rows: its row address must be 16-byte aligned, and is known to be only " +
                    std::to_string(t.get(row, where).known) + "-byte aligned",
                where);
  llvm::SmallVector<mlir::Value> r;
  for (ValueId v : registers) r.push_back(i32_operand(t, v, "a stmatrix register (two packed 16-bit values)", where));
  mlir::NVVM::StMatrixOp::create(t.builder(), t.loc(where), p, r, transpose ? mlir::NVVM::MMALayout::col : mlir::NVVM::MMALayout::row,
                                 mlir::NVVM::LdStMatrixShapeAttr::get(&t.context(), 8, 8), mlir::NVVM::LdStMatrixEltType::B16);
}

// ---- wgmma ----

ValueId wgmma_descriptor(ValueId ptr, int swizzle_bytes, int64_t leading_bytes, int64_t stride_bytes, Where where) {
  Trace& t = Trace::current(where);
  t.require(Feature::wgmma, "a wgmma shared-memory descriptor", where);
  int mode = 0;
  switch (swizzle_bytes) {
    case 0: mode = 0; break;
    case 128: mode = 1; break;
    case 64: mode = 2; break;
    case 32: mode = 3; break;
    default: trace_error("a wgmma operand's swizzle is 0, 32, 64 or 128 bytes, not " + std::to_string(swizzle_bytes), where);
  }
  // A swizzled tile repeats its pattern every 8 rows of `swizzle_bytes`; the descriptor's base
  // offset is 0 only when the tile starts on such a boundary.
  int64_t atom = swizzle_bytes ? 8 * swizzle_bytes : 16;
  if (t.get(ptr, where).known < atom)
    trace_error("a wgmma operand tile with a " + std::to_string(swizzle_bytes) + "-byte swizzle must be " + std::to_string(atom) +
                    "-byte aligned; its address is known to be only " + std::to_string(t.get(ptr, where).known) + "-byte aligned",
                where);
  for (int64_t bytes : {leading_bytes, stride_bytes})
    if (bytes < 0 || bytes % 16 != 0 || bytes >= (int64_t(1) << 18))
      trace_error("wgmma descriptor byte offsets are multiples of 16 below 2^18, not " + std::to_string(bytes), where);
  mlir::OpBuilder& b = t.builder();
  mlir::Location l = t.loc(where);
  // Bits 0-13: address >> 4; 16-29: leading byte offset >> 4; 32-45: stride byte offset >> 4;
  // 62-63: swizzle mode (PTX ISA, "Matrix Descriptor Format").
  mlir::Value address = t.value(shared_address(ptr, where), where);
  mlir::Value field = mlir::arith::AndIOp::create(b, l, mlir::arith::ShRUIOp::create(b, l, address, i32_constant(t, l, 4)),
                                                  i32_constant(t, l, 0x3fff));
  mlir::Value wide = mlir::arith::ExtUIOp::create(b, l, b.getI64Type(), field);
  uint64_t fixed = uint64_t(leading_bytes >> 4) << 16 | uint64_t(stride_bytes >> 4) << 32 | uint64_t(mode) << 62;
  auto constant = mlir::arith::ConstantOp::create(b, l, b.getI64IntegerAttr(int64_t(fixed)));
  return t.add(mlir::arith::OrIOp::create(b, l, wide, constant), DType::u64);
}

namespace {
const ValueInfo& accumulator_array(Trace& t, ValueId id, const Where& w) {
  const ValueInfo& acc = t.get(id, w);
  if (!acc.pointer || acc.space != Space::local) trace_error("wgmma's accumulators must be a register array", w);
  return acc;
}
mlir::Value accumulator_slot(Trace& t, const ValueInfo& acc, int i, mlir::Location l) {
  mlir::OpBuilder& b = t.builder();
  return mlir::LLVM::GEPOp::create(b, l, acc.value.getType(), b.getF32Type(), acc.value, llvm::ArrayRef<mlir::LLVM::GEPArg>{i},
                                   mlir::LLVM::GEPNoWrapFlags::inbounds);
}
/// The accumulators as one struct value (the register array is allocas SROA turns back into registers).
mlir::Value load_accumulators(Trace& t, const ValueInfo& acc, int count, mlir::Location l) {
  mlir::OpBuilder& b = t.builder();
  llvm::SmallVector<mlir::Type> fields(count, b.getF32Type());
  mlir::Value s = mlir::LLVM::PoisonOp::create(b, l, mlir::LLVM::LLVMStructType::getLiteral(&t.context(), fields));
  for (int i = 0; i < count; ++i)
    s = mlir::LLVM::InsertValueOp::create(b, l, s, mlir::LLVM::LoadOp::create(b, l, b.getF32Type(), accumulator_slot(t, acc, i, l), 4),
                                          llvm::ArrayRef<int64_t>{i});
  return s;
}
void store_accumulators(Trace& t, const ValueInfo& acc, mlir::Value s, int count, mlir::Location l) {
  mlir::OpBuilder& b = t.builder();
  for (int i = 0; i < count; ++i)
    mlir::LLVM::StoreOp::create(b, l, mlir::LLVM::ExtractValueOp::create(b, l, s, llvm::ArrayRef<int64_t>{i}),
                                accumulator_slot(t, acc, i, l), 4);
}
/// Inline PTX that reads and rewrites the `count` accumulators: they are its operands $0 ..
/// $count-1, outputs tied to inputs; `more` follow them with `more_constraints` (",r,l", ...).
void accumulators_through_asm(Trace& t, const ValueInfo& acc, int count, const std::string& ptx, const std::string& more_constraints,
                              llvm::ArrayRef<mlir::Value> more, mlir::Location l) {
  mlir::Value in = load_accumulators(t, acc, count, l);
  std::string constraints;
  for (int i = 0; i < count; ++i) constraints += (i ? ",=f" : "=f");
  for (int i = 0; i < count; ++i) constraints += "," + std::to_string(i);
  constraints += more_constraints;
  llvm::SmallVector<mlir::Value> operands;
  for (int i = 0; i < count; ++i) operands.push_back(mlir::LLVM::ExtractValueOp::create(t.builder(), l, in, llvm::ArrayRef<int64_t>{i}));
  operands.append(more.begin(), more.end());
  auto op = mlir::LLVM::InlineAsmOp::create(t.builder(), l, in.getType(), operands, ptx, constraints, /*has_side_effects=*/true,
                                            false, mlir::LLVM::TailCallKind::None, mlir::LLVM::AsmDialectAttr(), mlir::ArrayAttr());
  store_accumulators(t, acc, op.getResult(0), count, l);
}
}  // namespace

void wgmma_fence_operands(ValueId accumulators, int count, Where where) {
  Trace& t = Trace::current(where);
  accumulators_through_asm(t, accumulator_array(t, accumulators, where), count, "", "", {}, t.loc(where));
}

void wgmma_mma_register_a(DType ab, int n, std::span<const ValueId> a_registers, ValueId desc_b, ValueId accumulators,
                          bool b_mn_major, Where where) {
  Trace& t = Trace::current(where);
  t.require(Feature::wgmma, "wgmma.mma_async with A in registers", where);
  if (ab != DType::bf16 && ab != DType::f16)
    trace_error("wgmma with A in registers supports bf16 and f16 operands here, not " + std::string(name(ab)), where);
  if (n < 8 || n > 256 || n % 8 != 0) trace_error("wgmma's N is a multiple of 8 from 8 to 256, not " + std::to_string(n), where);
  if (a_registers.size() != 4) trace_error("wgmma's register A is four 32-bit registers per thread", where);
  llvm::SmallVector<mlir::Value> a;
  for (ValueId r : a_registers) a.push_back(i32_operand(t, r, "a register of wgmma's A fragment", where));
  if (t.get(desc_b, where).type != DType::u64 || t.get(desc_b, where).pointer)
    trace_error("wgmma's B operand is a 64-bit shared-memory descriptor (wgmma_descriptor)", where);
  const ValueInfo& acc = accumulator_array(t, accumulators, where);
  mlir::Location l = t.loc(where);
  // Inline PTX: the NVVM op takes A as a descriptor only. The accumulators are tied operands
  // (read and written); the scale-d predicate is true: D += A * B.
  const int count = n / 2;
  const std::string type = ab == DType::bf16 ? "bf16" : "f16";
  std::string ptx = "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\nwgmma.mma_async.sync.aligned.m64n" + std::to_string(n) + "k16.f32." +
                    type + "." + type + " {";
  for (int i = 0; i < count; ++i) ptx += (i ? ", $" : "$") + std::to_string(i);
  ptx += "}, {";
  for (int i = 0; i < 4; ++i) ptx += (i ? ", $" : "$") + std::to_string(2 * count + i);
  ptx += "}, $" + std::to_string(2 * count + 4) + ", p, 1, 1, " + (b_mn_major ? "1" : "0") + ";\n}";
  a.push_back(t.value(desc_b, where));
  accumulators_through_asm(t, acc, count, ptx, ",r,r,r,r,l", a, l);
}

void wgmma_mma(DType ab, int n, ValueId desc_a, ValueId desc_b, ValueId accumulators, bool a_mn_major, bool b_mn_major,
               Where where) {
  Trace& t = Trace::current(where);
  t.require(Feature::wgmma, "wgmma.mma_async", where);
  if (ab != DType::bf16 && ab != DType::f16 && !is_fp8(ab))
    trace_error("wgmma with A and B from shared memory supports bf16, f16, f8e4m3 and f8e5m2 operands here, not " +
                    std::string(name(ab)),
                where);
  // PTX has transpose bits only for the 16-bit types; the FP8 instruction reads K-major tiles.
  if ((a_mn_major || b_mn_major) && is_fp8(ab))
    trace_error("wgmma with " + std::string(name(ab)) + " operands reads them K-major only; an MN-major (transposed) " +
                    (a_mn_major ? "A" : "B") + " needs bf16 or f16",
                where);
  if (n < 8 || n > 256 || n % 8 != 0) trace_error("wgmma's N is a multiple of 8 from 8 to 256, not " + std::to_string(n), where);
  const ValueInfo& acc = accumulator_array(t, accumulators, where);
  for (ValueId d : {desc_a, desc_b})
    if (t.get(d, where).type != DType::u64 || t.get(d, where).pointer)
      trace_error("wgmma's A and B operands are 64-bit shared-memory descriptors (wgmma_descriptor)", where);
  mlir::OpBuilder& b = t.builder();
  mlir::Location l = t.loc(where);
  mlir::MLIRContext* ctx = &t.context();
  // The op takes and returns the accumulators as one struct.
  int count = n / 2;
  mlir::Value in = load_accumulators(t, acc, count, l);
  auto type = [&](mlir::NVVM::WGMMATypes x) { return mlir::NVVM::WGMMATypesAttr::get(ctx, x); };
  mlir::NVVM::WGMMATypes operand_type = mlir::NVVM::WGMMATypes::f16;
  switch (ab) {
    case DType::bf16: operand_type = mlir::NVVM::WGMMATypes::bf16; break;
    case DType::f8e4m3: operand_type = mlir::NVVM::WGMMATypes::e4m3; break;
    case DType::f8e5m2: operand_type = mlir::NVVM::WGMMATypes::e5m2; break;
    default: break;
  }
  auto operand = type(operand_type);
  // One MMA covers 32 bytes of K: k16 for 2-byte operands, k32 for FP8.
  int k = 32 / size_in_bytes(ab);
  auto one = mlir::NVVM::WGMMAScaleInAttr::get(ctx, mlir::NVVM::WGMMAScaleIn::one);
  // The op speaks of A (M x K) and B (K x N) as matrices: a row-major A and a column-major B
  // are K-major in shared memory (transpose bits 0); a column-major A or a row-major B is
  // MN-major (transpose bit 1). FP8 has no transpose bits and takes only the first pair.
  auto layout = [&](bool row_major) {
    return mlir::NVVM::MMALayoutAttr::get(ctx, row_major ? mlir::NVVM::MMALayout::row : mlir::NVVM::MMALayout::col);
  };
  auto out = mlir::NVVM::WgmmaMmaAsyncOp::create(
      b, l, in.getType(), in, t.value(desc_a, where), t.value(desc_b, where), mlir::NVVM::MMAShapeAttr::get(ctx, 64, n, k), operand,
      operand, type(mlir::NVVM::WGMMATypes::f32), mlir::NVVM::WGMMAScaleOutAttr::get(ctx, mlir::NVVM::WGMMAScaleOut::one), one,
      one, layout(!a_mn_major), layout(b_mn_major), mlir::NVVM::MMAIntOverflowAttr());
  store_accumulators(t, acc, out, count, l);
}

}  // namespace cutejit::detail
