/** \file
 * The sm_100 MMA atom with A in Tensor Memory (tcgen05.mma's [a-tmem] form, CuTe's
 * SM100_MMA_F16BF16_TS): D (M x N, in TMEM) += A (M x K, in TMEM) * B (N x K, shared memory)^T,
 * M = 128, one CTA. A operand that threads produce in registers (attention's P, a converted
 * operand of a mixed-input GEMM) goes to TMEM by tcgen05.st and is read there, without a trip
 * through shared memory.
 *
 * Where the MMA reads A (the PTX ISA's layout of A in Tensor Memory for M = 128, K-major):
 * row m in lane m, its K elements packed along 32-bit columns in order, element k in column
 * k s / 4, byte (k s) % 4, for s-byte elements. One MMA reads 32 bytes of K, 8 columns, so K
 * step j starts 8 j columns on. `TmemOperandA` is such a tile at a TMEM address, and
 * `store_rows` writes it from registers: thread i of a warpgroup holds row i (warp w the rows
 * 32 (w % 4) ...), packs its values two or four to a register, the first in the low bits, and
 * stores them with tcgen05.st.32x32b, whose register r of lane t lands in lane t, column r of
 * its warp's quarter. tests/unit/test_sm100_tmem_a.cpp checks that composition against the
 * ISA's layout for every row and element.
 */
#pragma once

#include <string>
#include <type_traits>
#include <vector>

#include "cutejit/atom/sm100/tmem.hpp"
#include "cutejit/atom/sm100/umma.hpp"

namespace cutejit {

/// tcgen05.mma with A in TMEM and B from shared memory: M = 128, N a multiple of 8 from 8 to
/// 256, A K-major (the ISA reads A from TMEM only so), B K- or MN-major (16-bit types).
template <class T, int M, int N, UmmaMajor BMajor = UmmaMajor::k>
  requires is_umma_operand_v<T>
struct Tcgen05MmaTS {
  using element_type = T;
  static constexpr int m = M, n = N, k = 32 / int(sizeof(T));
  static constexpr UmmaMajor b_major = BMajor;
  static_assert(M == 128, "this tcgen05.mma atom with A in TMEM has M = 128 (row i of A and D in TMEM lane i)");
  static_assert(N % 8 == 0 && N >= 8 && N <= 256, "tcgen05.mma has N a multiple of 8 from 8 to 256 (cta_group::1, M = 128)");
  static_assert(sizeof(T) == 2 || BMajor == UmmaMajor::k, "B of TF32, FP8 and 8-bit integers is taken K-major only");
  /// The TMEM columns one MMA's K of A takes: 32 bytes.
  static constexpr int a_columns_per_mma = 8;

  static uint32_t instruction_descriptor() { return Tcgen05MmaSS<T, M, N, UmmaMajor::k, BMajor>::instruction_descriptor(); }
  static sm100::MmaKind kind() { return Tcgen05MmaSS<T, M, N, UmmaMajor::k, BMajor>::kind(); }
};

template <class T, int M, int N, UmmaMajor BMajor = UmmaMajor::k>
using SM100_MMA_F16BF16_TS = Tcgen05MmaTS<T, M, N, BMajor>;

/// A 128 x K tile of A in TMEM from `address` (lane 0), K elements of T per row: K s / 4 columns.
template <class T>
  requires is_umma_operand_v<T>
struct TmemOperandA {
  Value<uint32_t> address;
  int k;

  static constexpr int per_register = 4 / int(sizeof(T));
  /// An element's bits as an unsigned integer of its width.
  using Bits = std::conditional_t<sizeof(T) == 1, uint8_t, std::conditional_t<sizeof(T) == 2, uint16_t, uint32_t>>;
  int columns() const { return k / per_register; }

  /// Warp `warp`'s rows (32 (warp % 4) + its lane: thread i of a warpgroup writes row i) from
  /// `row`, this thread's K values in order: packed `per_register` to a 32-bit register, the
  /// first in the low bits, and stored by one tcgen05.st.32x32b.x{K s / 4}. Warp-collective;
  /// tmem_wait_store() and a thread barrier (with the tcgen05 fences) before the MMA reads it.
  template <int Columns>
  void store_rows(const Int& warp, const Tensor<T>& row, detail::Where w = detail::Where::current()) const {
    if (Columns != columns())
      detail::fail("a row of this A tile is " + std::to_string(columns()) + " TMEM columns (" + std::to_string(k) + " elements), not " +
                       std::to_string(Columns),
                   w);
    if (size(row.layout()).value() != k)
      detail::fail("store_rows takes a row of " + std::to_string(k) + " values, not " + std::to_string(size(row.layout()).value()), w);
    std::vector<detail::ValueId> registers;
    for (int c = 0; c < Columns; ++c) {
      Value<uint32_t> r(0u);
      for (int i = 0; i < per_register; ++i) {
        Value<uint32_t> bits = cast<uint32_t>(bitcast<Bits>(Value<T>(row(IntTuple(int64_t(c * per_register + i))).read(w)), w));
        r = i == 0 ? bits : r | (bits << uint32_t(8 * int(sizeof(T)) * i));
      }
      registers.push_back(r.id());
    }
    detail::tmem_store(TmemShape::s32x32b, Columns, tmem_address(address, (warp % 4) * 32, 0, w).id(), registers, w, -1);
  }
};

/// D (TMEM at `d`) = A * B + (accumulate ? D : 0) over A's K: one tcgen05.mma per 32 bytes of
/// K, A's address 8 columns on each step, B's descriptor its K step. Called by one thread.
template <class T, int M, int N, UmmaMajor BM>
void gemm(const Tcgen05MmaTS<T, M, N, BM>& atom, const Value<uint32_t>& d, const TmemOperandA<T>& a, const UmmaOperand<T>& b,
          const Bool& accumulate, detail::Where w = detail::Where::current()) {
  using Atom = Tcgen05MmaTS<T, M, N, BM>;
  (void)atom;
  if (b.major() != BM) detail::fail("gemm's B is not the atom's (its major-ness differs)", w);
  if (a.k != b.k_steps() * Atom::k)
    detail::fail("A in TMEM covers " + std::to_string(a.k) + " elements of K, B " + std::to_string(b.k_steps() * Atom::k), w);
  const uint32_t idesc = Atom::instruction_descriptor();
  for (int s = 0; s < b.k_steps(); ++s)
    detail::tcgen05_mma_tmem_a(Atom::kind(), d.id(), (a.address + uint32_t(s * Atom::a_columns_per_mma)).id(), b.descriptor(s, w).id(),
                               idesc, (s == 0 ? accumulate : Bool(true)).id(), w);
}

}  // namespace cutejit
