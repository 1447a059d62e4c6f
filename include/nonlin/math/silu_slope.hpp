// SPDX-License-Identifier: MIT
#pragma once
// silu'(x) = sigma(x) (1 + x sigma(-x)) for float |x| < 8 from a table of polynomial pieces, in
// builds where a float batch looks a coefficient up with one vpermt2ps (AVX-512): about 27
// operations a batch, nine of them lookups, where the quotient form (math/logistic.hpp:
// x_sigmoid_derivative, with its root patch) takes about 57.
//
// g(t) = silu'(-t), t = |x|: silu'(x) = g(t) for x <= 0 and 1 - g(t) for x > 0 (silu'(x) +
// silu'(-x) = 1), which cannot cancel: g <= 1/2 there, so an ulp of g is at most half an ulp of
// 1 - g. On piece i = floor(4t) of [0, 8), g = c + (u + e) q(u) with u = t - a exact (a within
// the piece, or 0) and q of degree <= 5, evaluated as fma(u, q, fma(e, q, c)). The piece holding
// g's zero t0 = 1.2785 has a = t0 rounded, e = -(t0 - a) rounded and c = 0, so that g = (t - t0) q
// keeps its relative accuracy as it crosses 0 (no fitted patch, no branch); every other piece has
// e = 0 and c = g(a) rounded, at an a where that rounding is below 2^-11 ulp (Gal's accurate
// tables). Coefficients: tables/silu_slope_table.hpp (tools/fit_coefficients.py).
//
// Measured over every float with |x| < 8 against MPFR (tools/accuracy.cpp --exhaustive): see
// docs/accuracy.md; the pieces next to the zero are the worst (1.38 ulp at x = -1.041 in the
// prototype's scan against long double), every other piece within 0.85 ulp.
//
// Where |x| >= 8 or x is NaN, the caller's generic value: a batch with such a lane computes both
// and selects (the benchmarks' U(-8, 8) inputs never do; |x| >= 8 is where silu' is within
// 0.0023 of 0 or 1, the tails of the generic form).

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../isa.hpp"
#include "arch.hpp"
#include "ops.hpp"
#include "silu_slope_table.hpp"

namespace nonlin::math {
inline namespace NONLIN_ISA {

// Whether float silu' comes from the table in this build: where the build's float batch holds a
// 32-entry column in the two registers of one vpermt2ps. Then every float type does (scalars, and
// narrower batches by a gather), so that scalar and SIMD keep the same bits; double and other
// builds keep the quotient form (the x86-64-v3, aarch64 and v2 builds: eight lanes to a register,
// where a lookup would cost a gather a coefficient).
template <real_value V>
inline constexpr bool has_silu_slope_table =
    std::is_same_v<scalar_t<V>, float>&& arch::has_permute<xsimd::batch<float>>;

namespace detail {
using silu_slope_columns = decltype(tables::silu_slope::columns);

// Column k of the table at the pieces: one vpermt2ps on a 512-bit batch, a gather on a narrower
// one, an index for a scalar.
template <std::size_t k, real_value V, class I>
inline V silu_slope_entry(I const& piece) noexcept {
  auto const& column = tables::silu_slope::columns[k];
  if constexpr (!is_batch_v<V>) {
    return column[static_cast<std::size_t>(piece)];
  } else if constexpr (arch::has_permute<V>) {
    return arch::permute_pair<V>(piece, column.data());
  } else {
    return V::gather(column.data(), piece);
  }
}

// The pieces' indices floor(4 |x|): the permute reads the low five bits of each (a NaN converts
// to 0x80000000, piece 0); a gather's are masked to them, a scalar's are in range (the caller
// takes the table only where |x| < 8).
template <real_value V>
inline auto silu_slope_pieces(V const& four_t) noexcept {
  if constexpr (!is_batch_v<V>) {
    return static_cast<std::int32_t>(four_t);
  } else if constexpr (arch::has_permute<V>) {
    return arch::lane_indices(four_t);
  } else {
    return xsimd::batch_cast<std::int32_t>(four_t) & int_t<V>(31);
  }
}
}  // namespace detail

// The table's silu'(x) on every lane; meaningful where |x| < 8.
template <real_value V>
requires has_silu_slope_table<V>
inline V silu_slope_from_table(V const& x) noexcept {
  V const t = math::abs(x);
  auto const piece = detail::silu_slope_pieces(t * c<V>(4));
  V const u = t - detail::silu_slope_entry<0, V>(piece);
  V q = detail::silu_slope_entry<8, V>(piece);
  q = math::fma(q, u, detail::silu_slope_entry<7, V>(piece));
  q = math::fma(q, u, detail::silu_slope_entry<6, V>(piece));
  q = math::fma(q, u, detail::silu_slope_entry<5, V>(piece));
  q = math::fma(q, u, detail::silu_slope_entry<4, V>(piece));
  q = math::fma(q, u, detail::silu_slope_entry<3, V>(piece));
  V const base =
      math::fma(detail::silu_slope_entry<1, V>(piece), q, detail::silu_slope_entry<2, V>(piece));
  V const g = math::fma(u, q, base);
  return math::select(x > V(0), c<V>(1) - g, g);
}

// inside() where |x| < 8, the table's range, outside() elsewhere (a NaN x included); a batch
// calls outside() only when one of its lanes is outside, a scalar calls one of them.
template <real_value V, class Inside, class Outside>
inline V within_silu_slope_table(V const& x, Inside const& inside,
                                 Outside const& outside) noexcept {
  auto const within = math::abs(x) < c<V>(8);
  if constexpr (!is_batch_v<V>) {
    return within ? inside() : outside();
  } else {
    V const value = inside();
    if (math::all(within)) {
      return value;
    }
    return math::select(within, value, outside());
  }
}

// silu'(x): the table's where |x| < 8, generic() elsewhere.
template <real_value V, class Generic>
requires has_silu_slope_table<V>
inline V silu_slope(V const& x, Generic const& generic) noexcept {
  return math::within_silu_slope_table(
      x, [&] { return math::silu_slope_from_table(x); }, generic);
}

// dy silu'(x) from the table's silu'(x) where |x| < 8, generic() elsewhere. No product tail is
// needed there: silu'(x) is a normal float for every float |x| < 8, the smallest 2.8e-9 at the
// float nearest its zero (1.3e-8 away), so dy silu'(x) is the product of two floats, rounded once.
template <real_value V, class Generic>
requires has_silu_slope_table<V>
inline V silu_slope_times(V const& x, V const& dy, Generic const& generic) noexcept {
  return math::within_silu_slope_table(
      x, [&] { return dy * math::silu_slope_from_table(x); }, generic);
}

}  // namespace NONLIN_ISA
}  // namespace nonlin::math
