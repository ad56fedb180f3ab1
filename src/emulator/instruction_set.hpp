/** \file
 * From an opcode to the function that executes it. Each family of instructions (arithmetic,
 * memory, synchronisation, warp collectives, matrix and asynchronous operations) has a file of
 * its own with a decoder that reads the opcode's modifiers once and binds its executor; an
 * opcode no family takes is refused here, by name.
 */
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "emulator/ptx_program.hpp"

namespace cutejit::emulator {

/// The dotted opcode split at its dots: "mma.sync.aligned.m16n8k16…" -> {"mma", "sync", …}.
using Opcode = std::vector<std::string_view>;

bool has(const Opcode& op, std::string_view modifier);
/// The opcode as written: its parts joined by dots.
std::string joined(const Opcode& op);
/// The types named in the opcode, in order.
std::vector<Type> types_of(const Opcode& op);
/// The state space an opcode names (.global, .shared, .shared::cta, .shared::cluster, .local,
/// .param, .const), or generic.
Space space_of(const Opcode& op);

/// Binds `in.execute` (and the family's decoded fields); throws Fault naming the opcode when
/// the emulated device does not cover it.
void decode_instruction(Instruction& in, const Opcode& op, std::string_view opcode_text);

struct Cta;
/// What the families check when a CTA has ended (tensor memory left allocated…); throws Fault.
void check_cta_end(Cta& cta);

// The families, each in its own file; a decoder returns false when the opcode is not its own.
bool decode_arithmetic(Instruction& in, const Opcode& op);
bool decode_float(Instruction& in, const Opcode& op);
bool decode_conversion(Instruction& in, const Opcode& op);
bool decode_control(Instruction& in, const Opcode& op);
bool decode_call(Instruction& in, const Opcode& op);
/// True for a call of a .func (not vprintf): link_ptx resolves its callee.
bool is_function_call(const Instruction& in);
bool decode_memory(Instruction& in, const Opcode& op);
bool decode_sync(Instruction& in, const Opcode& op);
bool decode_warp(Instruction& in, const Opcode& op);
bool decode_async(Instruction& in, const Opcode& op);
bool decode_matrix(Instruction& in, const Opcode& op);
bool decode_cluster_launch_control(Instruction& in, const Opcode& op);

}  // namespace cutejit::emulator
