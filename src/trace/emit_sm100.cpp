/** \file
 * The sm_100 family's tcgen05 instructions, as inline PTX: every op is checked against the
 * target first (Trace::require). Inline PTX rather than the NVVM ops: in a gpu.module with its
 * target, MLIR 22 verifies most of those for sm_100a and sm_101a only (not sm_100f, sm_103a/f or
 * sm_110f), and one statement holds a load and its wait, so the compiler cannot move a use of
 * the loaded registers above the wait.
 */
#include <bit>
#include <string>

#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/LLVMIR/LLVMDialect.h>
#include <mlir/Dialect/LLVMIR/NVVMDialect.h>

#include "cutejit/arch/sm100/tcgen05.hpp"
#include "trace/trace.hpp"

namespace cutejit::detail {

namespace {

/// Side-effecting inline PTX with `results` i32 outputs (none: no result).
mlir::LLVM::InlineAsmOp emit_ptx(Trace& t, const Where& w, int results, mlir::ValueRange operands, const std::string& ptx,
                                 const std::string& constraints) {
  mlir::OpBuilder& b = t.builder();
  mlir::Type type;
  if (results == 1) type = b.getI32Type();
  if (results > 1)
    type = mlir::LLVM::LLVMStructType::getLiteral(&t.context(), llvm::SmallVector<mlir::Type>(size_t(results), b.getI32Type()));
  return mlir::LLVM::InlineAsmOp::create(b, t.loc(w), type ? mlir::TypeRange{type} : mlir::TypeRange{}, operands, ptx,
                                         constraints.empty() ? "~{memory}" : constraints + ",~{memory}", /*has_side_effects=*/true, false,
                                         mlir::LLVM::TailCallKind::None, mlir::LLVM::AsmDialectAttr(), mlir::ArrayAttr());
}

void check_columns(int columns, const char* what, const Where& w) {
  if (columns < 32 || columns > 512 || !std::has_single_bit(unsigned(columns)))
    trace_error(std::string(what) + " takes a power of two from 32 to 512 TMEM columns, not " + std::to_string(columns), w);
}

mlir::Value u64_operand(Trace& t, ValueId id, const char* what, const Where& w) {
  const ValueInfo& v = t.get(id, w);
  if (v.pointer || v.value.getType() != t.builder().getI64Type())
    trace_error(std::string(what) + " is a 64-bit integer (a shared-memory matrix descriptor)", w);
  return v.value;
}

/// A shared-memory pointer as the 32-bit shared-window address inline PTX's "r" operands take.
mlir::Value shared_u32(Trace& t, ValueId p, const char* what, const Where& w) {
  return mlir::LLVM::PtrToIntOp::create(t.builder(), t.loc(w), t.builder().getI32Type(), shared_pointer(t, p, what, w));
}

/// The group's PTX qualifier, once the trace has checked that the kernel may use it.
std::string cta_group(Trace& t, sm100::CtaGroup group, const char* instruction, const Where& w) {
  t.use_cta_group(int(group), instruction, w);
  return group == sm100::CtaGroup::two ? ".cta_group::2" : ".cta_group::1";
}

std::string register_list(int first, int count) {
  std::string s = "{";
  for (int i = 0; i < count; ++i) s += (i ? ", $" : "$") + std::to_string(first + i);
  return s + "}";
}

const char* shape_name(TmemShape s) {
  switch (s) {
    case TmemShape::s32x32b: return "32x32b";
    case TmemShape::s16x64b: return "16x64b";
    case TmemShape::s16x128b: return "16x128b";
    case TmemShape::s16x256b: return "16x256b";
    case TmemShape::s16x32bx2: return "16x32bx2";
  }
  return "?";
}

}  // namespace

void tmem_alloc(ValueId slot, int columns, sm100::CtaGroup group, Where where) {
  Trace& t = Trace::current(where);
  t.require(Feature::tcgen05, "tcgen05.alloc (TMEM allocation)", where);
  const std::string g = cta_group(t, group, "tcgen05.alloc", where);
  check_columns(columns, "tcgen05.alloc", where);
  mlir::Value address = shared_u32(t, slot, "the shared-memory word tcgen05.alloc writes the TMEM address to", where);
  if (t.get(slot, where).known < 4) trace_error("tcgen05.alloc's shared-memory word must be 4-byte aligned", where);
  emit_ptx(t, where, 0, address, "tcgen05.alloc" + g + ".sync.aligned.shared::cta.b32 [$0], " + std::to_string(columns) + ";", "r");
}

void tmem_relinquish_alloc_permit(sm100::CtaGroup group, Where where) {
  Trace& t = Trace::current(where);
  t.require(Feature::tcgen05, "tcgen05.relinquish_alloc_permit", where);
  emit_ptx(t, where, 0, {}, "tcgen05.relinquish_alloc_permit" + cta_group(t, group, "tcgen05.relinquish_alloc_permit", where) + ".sync.aligned;",
           "");
}

void tmem_dealloc(ValueId address, int columns, sm100::CtaGroup group, Where where) {
  Trace& t = Trace::current(where);
  t.require(Feature::tcgen05, "tcgen05.dealloc (TMEM deallocation)", where);
  const std::string g = cta_group(t, group, "tcgen05.dealloc", where);
  check_columns(columns, "tcgen05.dealloc", where);
  emit_ptx(t, where, 0, i32_operand(t, address, "a TMEM address", where),
           "tcgen05.dealloc" + g + ".sync.aligned.b32 $0, " + std::to_string(columns) + ";", "r");
}

namespace {
/// tcgen05.mma.cta_group::1.kind::`kind` with A either from a shared-memory descriptor (a u64)
/// or at a TMEM address (a u32, written [a] in the PTX).
void dense_mma(sm100::MmaKind kind, ValueId d, ValueId a, bool a_in_tmem, ValueId desc_b, uint32_t idesc, ValueId accumulate,
               sm100::CtaGroup group, Where where) {
  Trace& t = Trace::current(where);
  t.require(Feature::tcgen05, a_in_tmem ? "tcgen05.mma with A in TMEM" : "tcgen05.mma", where);
  if (kind == sm100::MmaKind::i8) t.require(Feature::tcgen05_i8, "tcgen05.mma .kind::i8", where);
  const std::string g = cta_group(t, group, "tcgen05.mma", where);
  // A pair's MMA has M = 128 or 256 (64 or 128 rows of A in each CTA); one CTA's 64 or 128.
  const int m = sm100::InstrDescriptor::decode(idesc, kind).m;
  if (group == sm100::CtaGroup::two ? (m != 128 && m != 256) : (m != 64 && m != 128))
    trace_error("tcgen05.mma" + g + " has M = " + (group == sm100::CtaGroup::two ? "128 or 256" : "64 or 128") +
                    "; the instruction descriptor says " + std::to_string(m),
                where);
  // A read from TMEM has no transpose: the ISA takes it K-major only.
  if (a_in_tmem && sm100::InstrDescriptor::decode(idesc, kind).a_major != sm100::Major::k)
    trace_error("tcgen05.mma with A in TMEM reads A K-major; the instruction descriptor says MN-major (bit 15, transpose A)", where);
  const ValueInfo& acc = t.get(accumulate, where);
  if (acc.pointer || acc.type != DType::i1) trace_error("tcgen05.mma's accumulate flag is a Bool", where);
  mlir::Value operands[] = {i32_operand(t, d, "tcgen05.mma's D (a TMEM address)", where),
                            a_in_tmem ? i32_operand(t, a, "tcgen05.mma's A (a TMEM address)", where)
                                      : u64_operand(t, a, "tcgen05.mma's A descriptor", where),
                            u64_operand(t, desc_b, "tcgen05.mma's B descriptor", where), t.i32(int32_t(idesc)),
                            mlir::arith::ExtUIOp::create(t.builder(), t.loc(where), t.builder().getI32Type(), acc.value)};
  emit_ptx(t, where, 0, operands,
           "{\n.reg .pred p;\nsetp.ne.b32 p, $4, 0;\ntcgen05.mma" + g + "." + sm100::to_string(kind) + " [$0], " +
               (a_in_tmem ? "[$1]" : "$1") + ", $2, $3, p;\n}",
           a_in_tmem ? "r,r,l,r,r" : "r,l,l,r,r");
}
}  // namespace

void tcgen05_mma(sm100::MmaKind kind, ValueId d, ValueId desc_a, ValueId desc_b, uint32_t idesc, ValueId accumulate, sm100::CtaGroup group,
                 Where where) {
  dense_mma(kind, d, desc_a, /*a_in_tmem=*/false, desc_b, idesc, accumulate, group, where);
}

void tcgen05_mma_tmem_a(sm100::MmaKind kind, ValueId d, ValueId a, ValueId desc_b, uint32_t idesc, ValueId accumulate, Where where) {
  dense_mma(kind, d, a, /*a_in_tmem=*/true, desc_b, idesc, accumulate, sm100::CtaGroup::one, where);
}

void tcgen05_mma_block_scaled(sm100::BlockScaledKind kind, int vector, ValueId d, ValueId desc_a, ValueId desc_b, uint32_t idesc,
                              ValueId scale_a, ValueId scale_b, ValueId accumulate, Where where) {
  Trace& t = Trace::current(where);
  const std::string k = sm100::to_string(kind);
  t.require(Feature::tcgen05, ("tcgen05.mma ." + k + ".block_scale").c_str(), where);
  if (vector != 32 && !(vector == 16 && kind == sm100::BlockScaledKind::mxf4nvf4))
    trace_error(k + " scales every 32 elements of K" + std::string(kind == sm100::BlockScaledKind::mxf4nvf4 ? " or every 16" : "") +
                    ", not " + std::to_string(vector),
                where);
  // The PTX 8.8 spelling of the vector size, which every target of the family takes
  // (.scale_vec::NX is sm_100a's only).
  const std::string size = ".block" + std::to_string(vector);
  cta_group(t, sm100::CtaGroup::one, "tcgen05.mma .block_scale", where);
  const ValueInfo& acc = t.get(accumulate, where);
  if (acc.pointer || acc.type != DType::i1) trace_error("tcgen05.mma's accumulate flag is a Bool", where);
  mlir::Value operands[] = {i32_operand(t, d, "tcgen05.mma's D (a TMEM address)", where),
                            u64_operand(t, desc_a, "tcgen05.mma's A descriptor", where),
                            u64_operand(t, desc_b, "tcgen05.mma's B descriptor", where), t.i32(int32_t(idesc)),
                            i32_operand(t, scale_a, "A's scale factors (a TMEM address)", where),
                            i32_operand(t, scale_b, "B's scale factors (a TMEM address)", where),
                            mlir::arith::ExtUIOp::create(t.builder(), t.loc(where), t.builder().getI32Type(), acc.value)};
  emit_ptx(t, where, 0, operands,
           "{\n.reg .pred p;\nsetp.ne.b32 p, $6, 0;\ntcgen05.mma.cta_group::1." + k + ".block_scale" + size +
               " [$0], $1, $2, $3, [$4], [$5], p;\n}",
           "r,l,l,r,r,r,r");
}

void tcgen05_cp(const char* shape, ValueId address, ValueId desc, Where where) {
  Trace& t = Trace::current(where);
  t.require(Feature::tcgen05, "tcgen05.cp", where);
  const std::string s = shape;
  if (s != "128x256b" && s != "4x256b" && s != "128x128b" && s != "64x128b.warpx2::02_13" && s != "64x128b.warpx2::01_23" &&
      s != "32x128b.warpx4")
    trace_error("tcgen05.cp copies 128x256b, 4x256b, 128x128b, 64x128b.warpx2::02_13, 64x128b.warpx2::01_23 or 32x128b.warpx4, not " + s,
                where);
  cta_group(t, sm100::CtaGroup::one, "tcgen05.cp", where);
  mlir::Value operands[] = {i32_operand(t, address, "a TMEM address", where), u64_operand(t, desc, "tcgen05.cp's source descriptor", where)};
  emit_ptx(t, where, 0, operands, "tcgen05.cp.cta_group::1." + s + " [$0], $1;", "r,l");
}

void tcgen05_commit(ValueId bar, Where where) {
  Trace& t = Trace::current(where);
  t.require(Feature::tcgen05, "tcgen05.commit", where);
  cta_group(t, sm100::CtaGroup::one, "tcgen05.commit", where);
  mlir::Value address = shared_u32(t, bar, "tcgen05.commit's mbarrier", where);
  emit_ptx(t, where, 0, address, "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [$0];", "r");
}

void tcgen05_commit_multicast(ValueId bar, ValueId cta_mask, Where where) {
  Trace& t = Trace::current(where);
  t.require(Feature::tcgen05, "tcgen05.commit .multicast::cluster", where);
  cta_group(t, sm100::CtaGroup::two, "tcgen05.commit .multicast::cluster", where);
  mlir::Value operands[] = {shared_u32(t, bar, "tcgen05.commit's mbarrier", where),
                            mlir::arith::TruncIOp::create(t.builder(), t.loc(where), t.builder().getI16Type(),
                                                          i32_operand(t, cta_mask, "a multicast CTA mask", where))};
  emit_ptx(t, where, 0, operands, "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [$0], $1;",
           "r,h");
}

void tma_load_pair(ValueId descriptor, ValueId shared_dst, ValueId bar, std::span<const ValueId> coords, ValueId cta_mask, Where where) {
  Trace& t = Trace::current(where);
  const bool multicast = cta_mask.trace != 0;
  const char* what = multicast ? "cp.async.bulk.tensor .multicast::cluster.cta_group::2 (a TMA multicast load for CTA pairs)"
                               : "cp.async.bulk.tensor .cta_group::2 (a TMA load for a CTA pair)";
  t.require(Feature::tcgen05, what, where);
  cta_group(t, sm100::CtaGroup::two, what, where);
  check_tma_tile_alignment(t, shared_dst, where);
  llvm::SmallVector<mlir::Value> c = tma_coordinates(t, coords, where);
  mlir::OpBuilder& b = t.builder();
  mlir::Location l = t.loc(where);
  mlir::Value map = mlir::LLVM::PtrToIntOp::create(b, l, b.getI64Type(), descriptor_pointer(t, descriptor, where));
  // The barrier's address in the even CTA of the pair (mapa: the documented way to name
  // another CTA's shared memory). A multicast box completes, in each destination pair, on the
  // barrier at this offset in that pair's even CTA.
  mlir::Value rank = mlir::NVVM::ClusterId::create(b, l, b.getI32Type());
  mlir::Value even = mlir::arith::AndIOp::create(b, l, rank, t.i32(~1));
  mlir::Value leader_bar = mlir::NVVM::MapaOp::create(b, l, mlir::LLVM::LLVMPointerType::get(&t.context(), 7),
                                                      shared_pointer(t, bar, "a TMA load's mbarrier", where), even);
  llvm::SmallVector<mlir::Value> operands = {shared_u32(t, shared_dst, "a TMA load's destination", where), map,
                                             mlir::LLVM::PtrToIntOp::create(b, l, b.getI32Type(), leader_bar)};
  operands.append(c.begin(), c.end());
  std::string constraints = "r,l,r";
  for (size_t i = 0; i < c.size(); ++i) constraints += ",r";
  std::string mask_operand;
  if (multicast) {
    operands.push_back(mlir::arith::TruncIOp::create(b, l, b.getI16Type(), i32_operand(t, cta_mask, "a multicast CTA mask", where)));
    constraints += ",h";
    mask_operand = ", $" + std::to_string(3 + c.size());
  }
  emit_ptx(t, where, 0, operands,
           "cp.async.bulk.tensor." + std::to_string(coords.size()) + "d.shared::cluster.global.mbarrier::complete_tx::bytes" +
               (multicast ? ".multicast::cluster" : "") + ".cta_group::2 [$0], [$1, " + register_list(3, int(coords.size())) + "], [$2]" +
               mask_operand + ";",
           constraints);
}

void clc_try_cancel(ValueId response, ValueId bar, Where where) {
  Trace& t = Trace::current(where);
  t.require(Feature::cluster_launch_control, "clusterlaunchcontrol.try_cancel", where);
  if (t.get(response, where).known < 16) trace_error("clusterlaunchcontrol.try_cancel's response must be 16-byte aligned", where);
  emit_ptx(t, where, 0,
           mlir::ValueRange{shared_u32(t, response, "clusterlaunchcontrol.try_cancel's response", where),
                            shared_u32(t, bar, "clusterlaunchcontrol.try_cancel's mbarrier", where)},
           "clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128 [$0], [$1];", "r,r");
}

namespace {
/// One query of the 16-byte answer at `response`, loaded into a 128-bit register inside the
/// statement (inline PTX has no 128-bit operands).
ValueId clc_query(ValueId response, const std::string& query, const char* what, Where where) {
  Trace& t = Trace::current(where);
  t.require(Feature::cluster_launch_control, what, where);
  mlir::Value address = shared_u32(t, response, "the cluster launch control response", where);
  auto op = emit_ptx(t, where, 1, address, "{\n.reg .b128 answer;\nld.shared.b128 answer, [$1];\n" + query + "\n}", "=r,r");
  return t.add(op.getResult(0), DType::i32);
}
}  // namespace

ValueId clc_is_canceled(ValueId response, Where where) {
  return clc_query(response, ".reg .pred canceled;\nclusterlaunchcontrol.query_cancel.is_canceled.pred.b128 canceled, answer;\n"
                             "selp.b32 $0, 1, 0, canceled;",
                   "clusterlaunchcontrol.query_cancel", where);
}

ValueId clc_first_ctaid_x(ValueId response, Where where) {
  // get_first_ctaid is undefined for an answer that cancelled nothing: it is asked only after
  // is_canceled, and the value is 0 otherwise.
  return clc_query(response,
                   ".reg .pred canceled;\nclusterlaunchcontrol.query_cancel.is_canceled.pred.b128 canceled, answer;\n"
                   "mov.b32 $0, 0;\n@canceled clusterlaunchcontrol.query_cancel.get_first_ctaid::x.b32.b128 $0, answer;",
                   "clusterlaunchcontrol.query_cancel", where);
}

int tmem_registers(TmemShape shape, int num) {
  // Per access, the warp moves lanes x bits: 32x32b and 16x64b are one register per thread,
  // 16x128b two, 16x256b four.
  const int per = shape == TmemShape::s16x256b ? 4 : shape == TmemShape::s16x128b ? 2 : 1;
  return per * num;
}

namespace {
void check_access(TmemShape shape, int num, int half_offset, const char* op, const Where& w) {
  const int max_num = shape == TmemShape::s16x256b ? 32 : shape == TmemShape::s16x128b ? 64 : 128;
  if (num < 1 || num > max_num || !std::has_single_bit(unsigned(num)))
    trace_error(std::string(op) + "." + shape_name(shape) + " repeats a power of two from 1 to " + std::to_string(max_num) +
                    " times (.x1 ... .x" + std::to_string(max_num) + "), not " + std::to_string(num),
                w);
  if (shape == TmemShape::s16x32bx2 && (half_offset < 0 || half_offset > 511))
    trace_error(std::string(op) + ".16x32bx2 takes the column offset of its second half, 0 to 511, not " + std::to_string(half_offset), w);
  if (shape != TmemShape::s16x32bx2 && half_offset != -1)
    trace_error(std::string(op) + "." + shape_name(shape) + " takes no half offset (only .16x32bx2 does)", w);
}
/// 16x32bx2's immediate operand, with its comma; nothing for the other shapes.
std::string half_operand(TmemShape shape, int half_offset) {
  return shape == TmemShape::s16x32bx2 ? ", " + std::to_string(half_offset) : "";
}
}  // namespace

std::vector<ValueId> tmem_load(TmemShape shape, int num, ValueId address, Where where, int half_offset) {
  Trace& t = Trace::current(where);
  t.require(Feature::tcgen05, "tcgen05.ld (TMEM load)", where);
  check_access(shape, num, half_offset, "tcgen05.ld", where);
  const int n = tmem_registers(shape, num);
  std::string constraints;
  for (int i = 0; i < n; ++i) constraints += "=r,";
  constraints += "r";
  const std::string ptx = std::string("tcgen05.ld.sync.aligned.") + shape_name(shape) + ".x" + std::to_string(num) + ".b32 " +
                          register_list(0, n) + ", [$" + std::to_string(n) + "]" + half_operand(shape, half_offset) +
                          ";\ntcgen05.wait::ld.sync.aligned;";
  auto op = emit_ptx(t, where, n, i32_operand(t, address, "a TMEM address", where), ptx, constraints);
  std::vector<ValueId> out;
  if (n == 1) return {t.add(op.getResult(0), DType::u32)};
  for (int i = 0; i < n; ++i)
    out.push_back(t.add(mlir::LLVM::ExtractValueOp::create(t.builder(), t.loc(where), op.getResult(0), llvm::ArrayRef<int64_t>{i}),
                        DType::u32));
  return out;
}

void tmem_store(TmemShape shape, int num, ValueId address, const std::vector<ValueId>& registers, Where where, int half_offset) {
  Trace& t = Trace::current(where);
  t.require(Feature::tcgen05, "tcgen05.st (TMEM store)", where);
  check_access(shape, num, half_offset, "tcgen05.st", where);
  const int n = tmem_registers(shape, num);
  if (int(registers.size()) != n)
    trace_error(std::string("tcgen05.st.") + shape_name(shape) + ".x" + std::to_string(num) + " stores " + std::to_string(n) +
                    " registers per thread, not " + std::to_string(registers.size()),
                where);
  llvm::SmallVector<mlir::Value> operands{i32_operand(t, address, "a TMEM address", where)};
  std::string constraints = "r";
  for (ValueId r : registers) {
    const ValueInfo& v = t.get(r, where);
    mlir::Value x = v.value;
    if (!v.pointer && v.type == DType::f32) x = mlir::arith::BitcastOp::create(t.builder(), t.loc(where), t.builder().getI32Type(), x);
    else x = i32_operand(t, r, "a tcgen05.st register (32 bits)", where);
    operands.push_back(x);
    constraints += ",r";
  }
  emit_ptx(t, where, 0, operands,
           std::string("tcgen05.st.sync.aligned.") + shape_name(shape) + ".x" + std::to_string(num) + ".b32 [$0]" +
               half_operand(shape, half_offset) + ", " + register_list(1, n) + ";",
           constraints);
}

void tmem_wait_store(Where where) {
  Trace& t = Trace::current(where);
  t.require(Feature::tcgen05, "tcgen05.wait::st", where);
  emit_ptx(t, where, 0, {}, "tcgen05.wait::st.sync.aligned;", "");
}

// The fences as inline PTX too: MLIR 22's nvvm.tcgen05.fence accepts only sm_100a and sm_101a.
void tcgen05_fence_before_thread_sync(Where where) {
  Trace& t = Trace::current(where);
  t.require(Feature::tcgen05, "tcgen05.fence::before_thread_sync", where);
  emit_ptx(t, where, 0, {}, "tcgen05.fence::before_thread_sync;", "");
}

void tcgen05_fence_after_thread_sync(Where where) {
  Trace& t = Trace::current(where);
  t.require(Feature::tcgen05, "tcgen05.fence::after_thread_sync", where);
  emit_ptx(t, where, 0, {}, "tcgen05.fence::after_thread_sync;", "");
}

}  // namespace cutejit::detail
