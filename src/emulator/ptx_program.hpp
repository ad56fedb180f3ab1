/** \file
 * A PTX module as the emulated device runs it: every function's instructions decoded once, at
 * load, into operands that name register slots, immediates and resolved branch targets, each
 * bound to the function that executes it. Executing never looks at PTX text again; the text
 * is kept only to name an instruction in a report.
 */
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <string>
#include <unordered_map>
#include <vector>

namespace cutejit::emulator {

struct Instruction;
struct ExecContext;
using Execute = void (*)(const Instruction&, ExecContext&);

/// The state spaces of PTX; addresses in each are kept apart (see machine.hpp for the windows
/// a generic address falls into).
enum class Space : uint8_t { generic, global, shared_cta, shared_cluster, local, param, constant };

/// The special registers a kernel can read.
enum class Special : uint8_t {
  tid_x, tid_y, tid_z, ntid_x, ntid_y, ntid_z, ctaid_x, ctaid_y, ctaid_z, nctaid_x, nctaid_y, nctaid_z,
  laneid, warpid, nwarpid, smid, nsmid, gridid, lanemask_eq, lanemask_le, lanemask_lt, lanemask_ge, lanemask_gt,
  clock, clock64, globaltimer, dynamic_smem_size, total_smem_size,
  cluster_ctaid_x, cluster_ctaid_y, cluster_ctaid_z, cluster_nctaid_x, cluster_nctaid_y, cluster_nctaid_z,
  clusterid_x, clusterid_y, clusterid_z, nclusterid_x, nclusterid_y, nclusterid_z, cluster_ctarank, cluster_nctarank,
  is_explicit_cluster,
};

struct Operand {
  enum class Kind : uint8_t { none, reg, imm, special, address, vector, label, sink, symbol };
  Kind kind = Kind::none;
  bool negated = false;   ///< `!%p` as a predicate source
  Special special{};
  uint32_t reg = 0;       ///< register slot (reg, address base when has_base)
  bool has_base = false;  ///< address: [reg + imm] rather than [imm]
  uint64_t imm = 0;       ///< immediate bits; address offset (symbol address folded in); label target
  uint32_t first = 0;     ///< vector: first element in Function::vector_elements
  uint32_t count = 0;     ///< vector: element count
  std::string symbol;     ///< call targets and symbols kept by name
  /// imm is an address in the function's local memory (a .local variable, a parameter of a
  /// .func or of a call): linking the function into a kernel's code moves it with the function.
  bool local = false;
};

/// A source position from the PTX's `.loc` line info.
struct SourceLine {
  uint32_t file = 0;  ///< index into Module::files; 0 = unknown
  uint32_t line = 0;
};

/// A PTX value type, as an instruction's type suffix names it.
enum class Type : uint8_t {
  none, pred, b8, b16, b32, b64, b128, u8, u16, u32, u64, s8, s16, s32, s64, f16, f16x2, bf16, bf16x2, f32, f64, tf32,
  e4m3, e5m2, e2m3, e3m2, e2m1, ue8m0, ue4m3, e4m3x2, e5m2x2, e2m3x2, e3m2x2, e2m1x2, ue8m0x2, s4, u4,
};
int type_bits(Type t);
bool is_signed(Type t);
bool is_float(Type t);
Type parse_type(std::string_view s);  ///< Type::none when `s` is not a type name

struct Instruction {
  Execute execute = nullptr;
  int32_t guard = -1;          ///< predicate slot guarding it, or -1
  bool guard_negated = false;
  Type type = Type::none;      ///< the (last) type suffix
  Type type2 = Type::none;     ///< a second type suffix (cvt's source, setp's comparison type…)
  Space space = Space::generic;
  uint8_t width = 1;           ///< .v2/.v4/.v8 of loads and stores
  uint16_t op = 0;             ///< a family's sub-operation
  uint32_t flags = 0;          ///< a family's modifiers
  std::vector<Operand> operands;
  std::shared_ptr<const void> decoded;  ///< a family's own decoded form (an MMA shape, a conversion…)
  SourceLine where;
  std::string text;            ///< the instruction as written, for reports

  template <class T>
  const T& as() const { return *static_cast<const T*>(decoded.get()); }
};

/// A kernel's parameter lies at `offset` in its parameter space; a .func's parameter or return
/// value is a slot of its local memory, and `offset` is that slot's generic address.
struct Parameter {
  std::string name;
  uint64_t offset = 0;
  uint32_t bytes = 0;
};

struct Function {
  std::string name;
  bool entry = false;
  bool visible = false;        ///< .visible or .weak: other modules may call it
  std::vector<Parameter> params;
  std::vector<Parameter> returns;  ///< a .func's return values
  uint32_t param_bytes = 0;
  uint32_t registers = 0;      ///< register slots (every register, predicates included)
  uint32_t local_bytes = 0;    ///< per-thread .local storage
  uint32_t static_shared_bytes = 0;  ///< .shared variables, laid out from shared_base
  uint32_t dynamic_shared_offset = 0;  ///< where the extern .shared array starts
  bool names_dynamic_shared = false;   ///< its code takes the extern .shared array's address
  uint32_t max_threads = 1024; ///< .maxntid / .reqntid
  uint32_t required_block[3] = {0, 0, 0};    ///< .reqntid, 0 = not declared
  uint32_t required_cluster[3] = {0, 0, 0};  ///< .reqnctapercluster, 0 = not declared
  bool explicit_cluster = false;
  std::vector<Instruction> code;
  std::vector<Operand> vector_elements;
  /// A linked entry (link_ptx): the functions it calls, whose code follows its own, each with
  /// the pc where it starts, in that order.
  std::vector<std::pair<uint32_t, std::string>> callees;
  /// The name of the function whose code holds `pc`: the entry's, or a callee's.
  std::string_view function_at(uint32_t pc) const;
};

/// A `call` of a .func once linked (its Instruction::decoded): where the callee's code starts,
/// and its parameters and return values, whose slots lie in the caller's local memory.
struct CallTarget {
  std::string name;
  uint32_t pc = 0;
  std::vector<Parameter> params, returns;
};

struct GlobalVariable {
  std::string name;
  Space space = Space::global;
  uint32_t align = 1;
  std::vector<uint8_t> init;   ///< initial bytes (zeros when not initialised)
};

struct Module {
  std::string target;          ///< `.target` (sm_90a…)
  std::vector<std::string> files = {"?"};  ///< `.file` names; index 0 is unknown
  std::vector<GlobalVariable> globals;     ///< .global and .const variables
  std::vector<Function> functions;
  const Function* find(std::string_view name) const;
  std::string where(const SourceLine& s) const;  ///< "file:line", or "" when unknown
};

/// Where generic addresses of shared, local and parameter memory lie (global memory is everything else);
/// a shared::cluster address names another CTA of the cluster by its rank + 1 in bits 24..31.
constexpr uint64_t shared_window = uint64_t(1) << 48;
constexpr uint64_t local_window = uint64_t(2) << 48;
constexpr uint64_t param_window = uint64_t(3) << 48;  ///< a kernel's parameters (cvta.param)
constexpr uint64_t window_size = uint64_t(1) << 32;
constexpr uint32_t cluster_rank_shift = 24;

/// The address at which a CTA's shared variables start: shared::cta addresses below it are
/// never valid, so a null or small stray pointer faults (the hardware reserves 1 KB there too).
constexpr uint32_t shared_base = 1024;

/// Parses PTX text and decodes every instruction; throws Fault naming the line of any
/// construct or instruction the emulated device does not cover. `place_global` gives each
/// .global and .const variable its address (and copies its initial bytes there).
std::unique_ptr<Module> parse_ptx(std::string_view text, const std::function<uint64_t(const GlobalVariable&)>& place_global);

/// Parses a program's PTX modules (a kernel's, then those linked with it, as nvJitLink is given
/// them) and links them into one Module: each entry carries, after its own code, the code of
/// every function it calls, each call resolved to a definition of its own module or to a
/// .visible one of another, with its own registers and local memory. Throws Fault naming a
/// call no module defines, a recursive call, or a callee the emulated device cannot place.
std::unique_ptr<Module> link_ptx(const std::vector<std::string_view>& texts,
                                 const std::function<uint64_t(const GlobalVariable&)>& place_global);

}  // namespace cutejit::emulator
