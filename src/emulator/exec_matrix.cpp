// The matrix instructions, by family: mma.sync, ldmatrix and stmatrix (exec_warp_matrix.cpp),
// wgmma (exec_wgmma.cpp), tcgen05 (exec_tcgen05.cpp).
#include "emulator/instruction_set.hpp"

namespace cutejit::emulator {

bool decode_warp_matrix(Instruction& in, const Opcode& op);
bool decode_wgmma(Instruction& in, const Opcode& op);
bool decode_tcgen05(Instruction& in, const Opcode& op, std::string_view opcode);

bool decode_matrix(Instruction& in, const Opcode& op) {
  return decode_warp_matrix(in, op) || decode_wgmma(in, op) || decode_tcgen05(in, op, joined(op));
}

}  // namespace cutejit::emulator
