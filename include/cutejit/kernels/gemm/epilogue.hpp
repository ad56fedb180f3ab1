// The epilogue hook of the tensor-core GEMMs (sm90.hpp, sm100.hpp, sm120.hpp): a callable
//     F32 epilogue(F32 acc, Int row, Int col)
// traced into the kernel and applied to every accumulator value; `Identity`, the default, is
// no call at all. A gated product's (Config::glu of sm90.hpp) takes the two accumulators of a
// column of C:
//     F32 epilogue(F32 w, F32 v, Int row, Int col)
#pragma once

#include <concepts>
#include <type_traits>

#include "cutejit/cutejit.hpp"

namespace cutejit::kernels {

/// The default epilogue: the accumulators are stored as they are.
struct Identity {};

template <class E>
concept Epilogue = std::is_same_v<E, Identity> || requires(const E& e, const F32& v, const Int& i) {
  { e(v, i, i) } -> std::convertible_to<F32>;
};

template <class E>
concept GluEpilogue = requires(const E& e, const F32& v, const Int& i) {
  { e(v, v, i, i) } -> std::convertible_to<F32>;
};

}  // namespace cutejit::kernels
