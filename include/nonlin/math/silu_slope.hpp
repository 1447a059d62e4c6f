// SPDX-License-Identifier: MIT
#pragma once
// silu'(z) = sigma(z) (1 + z sigma(-z)) for float |z| < 16 from a table of polynomial pieces, in
// builds where a float batch looks a coefficient up with one vpermt2ps (AVX-512): about 30
// operations a batch, ten of them lookups, where the quotient form (math/logistic.hpp:
// x_sigmoid_derivative, with its root patch) takes about 57. silu and swish take it at z = x,
// swish (beta != 1) and gelu_quick at z = beta x as hi + lo.
//
// g(t) = silu'(-t), t = |z|: silu'(z) = g(t) for z <= 0 and 1 - g(t) for z > 0 (silu'(z) +
// silu'(-z) = 1), which cannot cancel: g <= 1/2 there, so an ulp of g is at most half an ulp of
// 1 - g. On piece i = floor(2t) of [0, 16), g = c + (u + e) q(u) with u = t - a exact (a within
// the piece, or 0) and q of degree <= 6, evaluated as fma(u, q, fma(e, q, c)). The piece holding
// g's zero t0 = 1.2785 has a = t0 rounded, e = -(t0 - a) rounded and c = 0, so that g = (t - t0) q
// keeps its relative accuracy as it crosses 0 (no fitted patch, no branch); every other piece has
// e = 0 and c = g(a) rounded, at an a where that rounding is below 2^-10 ulp (Gal's accurate
// tables). Coefficients: tables/silu_slope_table.hpp (tools/fit_coefficients.py). The range
// reaches 16 so that gelu_quick's z = 1.702 x stays inside for |x| < 9.4 (the benchmarks' U(-8, 8)
// inputs); pieces of 1/4 up to 8 needed degree 5 instead of 6 (silu's backward 7% faster) but sent
// 41% of gelu_quick's lanes to the quotient form, every batch through both (0.67x).
//
// Measured against long double over every float z with |z| < 20: max 1.57 ulp (z = -1.0337, where
// g = u q with q's rounding just above 1/4 against g's just below 1/16); over every 5th float x,
// gelu_quick' 1.66 ulp, swish' 1.64 (beta = 1.5, 20), 1.60 (0.7) (z's low part through
// g' = q + u q1, below). MPFR figures: docs/accuracy.md.
//
// Where |z| >= 16 or z is NaN, the caller's generic value: a batch with such a lane computes both
// and selects.
//
// The same pieces serve two more tables: sigma'(z) = g(|z|) (tables::sigmoid_slope, no zero and
// no side: about 21 operations a batch against the quotient form's 31, sigmoid' and tanh' =
// 4 sigma'(2x)), and R(t) = gelu_tanh'(-t) e^v(t) (tables::gelu_tanh_scaled_slope, gelu.hpp).

#include <array>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include "../isa.hpp"
#include "arch.hpp"
#include "double_float.hpp"
#include "gelu_tanh_slope_table.hpp"
#include "ops.hpp"
#include "sigmoid_slope_table.hpp"
#include "silu_slope_table.hpp"

namespace nonlin::math {
inline namespace NONLIN_ISA {

// Whether float silu' (and gelu_tanh', gelu.hpp) comes from a table in this build: where the
// build's float batch holds a 32-entry column in the two registers of one vpermt2ps. Then every
// float type does (scalars, and narrower batches by a gather), so that scalar and SIMD keep the
// same bits; double and other builds keep the quotient form (the x86-64-v3, aarch64 and v2 builds:
// eight lanes to a register, where a lookup would cost a gather a coefficient).
template <real_value V>
inline constexpr bool has_slope_tables =
    std::is_same_v<scalar_t<V>, float>&& arch::has_permute<xsimd::batch<float>>;

// The table's range, |x| < silu_slope_limit, in pieces of width 1 / pieces_per_unit.
inline constexpr double silu_slope_limit = 16;
inline constexpr double pieces_per_unit = 2;

namespace detail {
// Column k of a table (tables::silu_slope, gelu_tanh_scaled_slope, sigmoid_slope: 32 pieces of
// width 1 / pieces_per_unit, columns a, e, c, q0 up to q's highest degree; e is 0 throughout
// in a table without has_root) at the pieces: one vpermt2ps on a 512-bit batch,
// a gather on a narrower one, an index for a scalar.
template <class Table, std::size_t k, real_value V, class I>
inline V slope_entry(I const& piece) noexcept {
  auto const& column = Table::columns[k];
  if constexpr (!is_batch_v<V>) {
    return column[static_cast<std::size_t>(piece)];
  } else if constexpr (arch::has_permute<V>) {
    return arch::permute_pair<V>(piece, column.data());
  } else {
    return V::gather(column.data(), piece);
  }
}

// The pieces' indices floor(2 t) for 0 <= t < 16 or NaN: the permute reads the low five bits of
// each (a NaN converts to 0x80000000, piece 0); a gather's are masked to them; a scalar NaN
// takes piece 0 too (converting it would be undefined).
template <real_value V>
inline auto slope_pieces(V const& scaled_t) noexcept {
  if constexpr (!is_batch_v<V>) {
    return scaled_t < V(32) ? static_cast<std::int32_t>(scaled_t) : std::int32_t(0);
  } else if constexpr (arch::has_permute<V>) {
    return arch::lane_indices(scaled_t);
  } else {
    return xsimd::batch_cast<std::int32_t>(scaled_t) & int_t<V>(31);
  }
}

// A table's g at t + l (l = 0 unless with_lo), for 0 <= t < 16: c + (u + e) q(u), u = t - a,
// evaluated fma(u, q, fma(e, q, c)). exact_q: q's last Horner step's rounding recovered (q0 - q
// is exact where q is within a factor 2 of q0) and added as u q_lo to c, three operations: a
// caller that rounds g again (gelu_tanh's e^-v g) keeps gelu_tanh' at 1.72 ulp, 2.27 without.
template <class Table, bool with_lo, real_value V, bool exact_q = false>
inline V slope_table_value(V const& t, V const& l) noexcept {
  constexpr std::size_t last = std::tuple_size_v<std::remove_cvref_t<decltype(Table::columns)>> - 1;
  auto const piece = detail::slope_pieces(t * c<V>(pieces_per_unit));
  V const u = t - detail::slope_entry<Table, 0, V>(piece);
  V const q1 = detail::slope_entry<Table, 4, V>(piece);
  // q's Horner steps from its top coefficient down to q1, then q0.
  V q = detail::slope_entry<Table, last, V>(piece);
  [&]<std::size_t... k>(std::index_sequence<k...>) {
    ((q = math::fma(q, u, detail::slope_entry<Table, last - 1 - k, V>(piece))), ...);
  }
  (std::make_index_sequence<last - 5>{});
  q = math::fma(q, u, q1);
  V const q0 = detail::slope_entry<Table, 3, V>(piece);
  V const upper = q;
  q = math::fma(upper, u, q0);
  V value_at_a = detail::slope_entry<Table, 2, V>(piece);
  if constexpr (exact_q) {
    value_at_a = math::fma(u, math::fma(upper, u, q0 - q), value_at_a);
  }
  if constexpr (with_lo) {
    // g(t + l) = g(t) + g'(t) l to first order (|l| <= ~ulp(t)), g' = q + u q' (and + e q' in
    // the zero's piece, negligible), q' = q1 to within 2 q2 u: a few percent of a term below ~6
    // ulp of g (gelu_quick, swish).
    value_at_a = math::fma(l, math::fma(u, q1, q), value_at_a);
  }
  if constexpr (Table::has_root) {
    value_at_a = math::fma(detail::slope_entry<Table, 1, V>(piece), q, value_at_a);
  }
  return math::fma(u, q, value_at_a);
}

// The table's silu'(z) at z = x + lo (lo = 0 unless with_lo); meaningful where |x| < 16.
template <bool with_lo, real_value V>
inline V silu_slope_from_table(V const& x, V const& lo) noexcept {
  // |z| = t + l, l = lo where x > 0, -lo where x < 0.
  V const l =
      with_lo ? math::from_bits<V>(math::as_bits(lo) ^ math::as_bits(math::sign_bit(x))) : V(0);
  V const g = detail::slope_table_value<tables::silu_slope, with_lo>(math::abs(x), l);
  return math::select(x > V(0), c<V>(1) - g, g);
}

template <real_value V>
inline V leading_part(V const& x) noexcept {
  return x;
}
template <real_value V>
inline V leading_part(double_float<V> const& z) noexcept {
  return z.hi;
}
}  // namespace detail

// The table's silu'(x) on every lane; meaningful where |x| < 16.
template <real_value V>
requires has_slope_tables<V>
inline V silu_slope_from_table(V const& x) noexcept {
  return detail::silu_slope_from_table<false>(x, V(0));
}

// The same at z = hi + lo (swish's beta x, gelu_quick's 1.702 x); meaningful where |hi| < 16.
template <real_value V>
requires has_slope_tables<V>
inline V silu_slope_from_table(double_float<V> const& z) noexcept {
  return detail::silu_slope_from_table<true>(z.hi, z.lo);
}

// The table's sigma'(z) = g(|z|) (tables::sigmoid_slope; sigma' is even and has no zero: no
// side, no e); meaningful where |z| < 16, where sigma'(z) >= 1.1e-7. Max 0.80 ulp over every
// float (long double; tanh' = 4 sigma'(2x) too), the quotient form's (math/logistic.hpp) 1.44.
template <real_value V>
requires has_slope_tables<V>
inline V sigmoid_slope_from_table(V const& z) noexcept {
  return detail::slope_table_value<tables::sigmoid_slope, false>(math::abs(z), V(0));
}

// inside() where |z| < 16 (the leading part of a z as hi + lo), the table's range, outside()
// elsewhere (a NaN z included) and in builds without the table, so that callers name both forms
// once and need no test of their own; a batch calls outside() only when one of its lanes is
// outside, a scalar calls one of them.
template <class Z, class Inside, class Outside>
inline auto within_slope_table(Z const& z, Inside const& inside, Outside const& outside) noexcept {
  auto const x = detail::leading_part(z);
  using V = std::remove_cvref_t<decltype(x)>;
  auto const within = math::abs(x) < c<V>(silu_slope_limit);
  if constexpr (!has_slope_tables<V>) {
    return outside();
  } else if constexpr (!is_batch_v<V>) {
    return within ? inside() : outside();
  } else {
    V const value = inside();
    if (math::all(within)) {
      return value;
    }
    return math::select(within, value, outside());
  }
}

// silu'(z): the table's where |z| < 16, generic() elsewhere and in builds without it.
template <class Z, class Generic>
inline auto silu_slope(Z const& z, Generic const& generic) noexcept {
  using V = std::remove_cvref_t<decltype(detail::leading_part(z))>;
  if constexpr (has_slope_tables<V>) {
    return math::within_slope_table(
        z, [&] { return math::silu_slope_from_table(z); }, generic);
  } else {
    return generic();
  }
}

// dy silu'(z) from the table's silu'(z) where |z| < 16, generic() elsewhere and in builds without
// it. No product tail is
// needed there: silu'(z) is a normal float for every float |z| < 16, the smallest 2.8e-9 at the
// float nearest its zero (1.3e-8 away), so dy silu'(z) is the product of two floats, rounded once.
template <class Z, real_value V, class Generic>
inline V silu_slope_times(Z const& z, V const& dy, Generic const& generic) noexcept {
  if constexpr (has_slope_tables<V>) {
    return math::within_slope_table(
        z, [&] { return dy * math::silu_slope_from_table(z); }, generic);
  } else {
    return generic();
  }
}

}  // namespace NONLIN_ISA
}  // namespace nonlin::math
