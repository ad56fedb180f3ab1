/** \file
 * The CuTe layout algebra on static layouts: coalesce, filter, composition, complement,
 * inverses, divides, products, tile_to_shape, common vectors and recasts.
 *
 * Every function reproduces CuTe's result *form* (not only an equal function), and throws
 * cutejit::Error where CuTe would fail to compile (a violated static assertion).
 */
#pragma once

#include <cutejit/layout/layout.hpp>

namespace cutejit {

// ---- Simplification ----
/// Flatten and merge modes while preserving the function on [0, size).
Layout coalesce(const Layout& l);
/// Coalesce by mode, following the terminals of `profile` (a leaf coalesces the whole mode).
Layout coalesce(const Layout& l, const IntTuple& profile);
/// Size-1 shape where the stride is 0.
Layout filter_zeros(const Layout& l);
/// Remove stride-0 and size-1 modes, then coalesce ("1:0" if nothing is left).
Layout filter(const Layout& l);
Layout filter(const Layout& l, const IntTuple& profile);

// ---- Composition: result(c) == lhs(rhs(c)) ----
Layout composition(const Layout& lhs, const Layout& rhs);
/// By-mode composition; modes of lhs beyond rank(tile) are dropped (as CuTe).
Layout composition(const Layout& lhs, const Tile& tile);

// ---- Complement and inverses ----
/// Layout of the offsets in [0, cotarget) not hit by l, ordered (CuTe complement).
Layout complement(const Layout& l, const IntTuple& cotarget);
Layout complement(const Layout& l);  ///< cotarget = cosize(filter(l))
/// R with l(R(i)) == i for i < size(R), as large as possible.
Layout right_inverse(const Layout& l);
/// R with R(l(i)) == i for i < size(l) (l injective).
Layout left_inverse(const Layout& l);
/// Layout of the coordinates of l that map to 0.
Layout nullspace(const Layout& l);

// ---- Divides ----
Layout logical_divide(const Layout& l, const Layout& tiler);
Layout logical_divide(const Layout& l, const Tile& tiler);
Layout zipped_divide(const Layout& l, const Layout& tiler);  ///< ((tile),(rest))
Layout zipped_divide(const Layout& l, const Tile& tiler);
Layout tiled_divide(const Layout& l, const Layout& tiler);   ///< ((tile),rest0,rest1,...)
Layout tiled_divide(const Layout& l, const Tile& tiler);
Layout flat_divide(const Layout& l, const Layout& tiler);    ///< (tile0,tile1,...,rest0,rest1,...)
Layout flat_divide(const Layout& l, const Tile& tiler);
/// The "rest" shape of a divide: shape(complement(tiler, shape(target))).
IntTuple ceil_div(const IntTuple& target, const Layout& tiler);

// ---- Products ----
Layout logical_product(const Layout& block, const Layout& tiler);
Layout logical_product(const Layout& block, const Tile& tiler);
Layout zipped_product(const Layout& block, const Layout& tiler);
Layout zipped_product(const Layout& block, const Tile& tiler);
Layout tiled_product(const Layout& block, const Layout& tiler);
Layout tiled_product(const Layout& block, const Tile& tiler);
Layout flat_product(const Layout& block, const Layout& tiler);
Layout flat_product(const Layout& block, const Tile& tiler);
Layout blocked_product(const Layout& block, const Layout& tiler);
Layout raked_product(const Layout& block, const Layout& tiler);
/// Repeat block (column-major over modes by default, or in `order`) to fill trg_shape.
Layout tile_to_shape(const Layout& block, const IntTuple& trg_shape);
Layout tile_to_shape(const Layout& block, const IntTuple& trg_shape, const IntTuple& order);
Layout tile_to_shape(const Layout& block, const IntTuple& trg_shape, LayoutRight);

// ---- Storage layouts ----
/// CuTe make_fragment_like: a compact layout of the same size for a private copy (registers).
/// With rank > 1 and a static shape, mode 0 is compact column-major (its stride-0 modes stay
/// 0) and the other modes follow it, ordered by their strides, as tiled_product(mode 0, rest):
/// (4,8):(8,1) -> (4,(8)):(1,(4)). Otherwise make_layout(shape(l)).
Layout make_fragment_like(const Layout& l);

// ---- Common vectors ----
Integer max_common_vector(const Layout& a, const Layout& b);
Layout max_common_layout(const Layout& a, const Layout& b);

// ---- Recasts between element widths ----
/// Layout over elements n times wider (CuTe upcast<N>).
Layout upcast(const Layout& l, int64_t n);
/// Layout over elements n times narrower (CuTe downcast<N>); needs a stride-1 mode.
Layout downcast(const Layout& l, int64_t n);
/// CuTe recast_layout<OldType,NewType>, with the element widths given in bits.
Layout recast_layout(const Layout& l, int64_t old_bits, int64_t new_bits);

}  // namespace cutejit
