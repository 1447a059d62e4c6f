// SPDX-License-Identifier: MIT
#pragma once
// The standard normal distribution, written for GELU: x Phi(x) and its derivative with relative
// accuracy in both tails.
//
// Phi(-a) = e^(-a^2/2) g(a), a = |x|, for every a: g(a) = Phi(-a) e^(a^2/2) (erfcx(a / sqrt 2)
// / 2) is fitted on binary octaves of a (tables::normal::scaled_tail; [0, 1) is the first), so
// the piece is read off a's exponent and one polynomial serves every lane. Phi(x) = 1 - Phi(-a)
// for x > 0 cannot cancel (Phi(-a) <= 1/2). e^(-a^2/2) takes a^2 as hi + lo (an fma), so the
// rounding of a^2 does not turn into a relative error of a^2 eps in the tail, and the factors are
// folded in before the final scale of exp, so subnormal results are rounded once. This is why
// Phi is not erfc(-x / sqrt 2) / 2 of a rounded x / sqrt 2 (which costs ~190 ulp near x = -13).

#include <array>
#include <cstddef>
#include <limits>

#include "../isa.hpp"
#include "constants.hpp"
#include "double_float.hpp"
#include "exp.hpp"
#include "log.hpp"
#include "normal_tables.hpp"
#include "ops.hpp"
#include "polynomial.hpp"

namespace nonlin::math {
inline namespace NONLIN_ISA {

NONLIN_INTRINSIC_DIAGNOSTICS_PUSH
// Whether V picks a coefficient of rows with one vpermps/vpermpd (512-bit, the P rows fit one
// register).
template <auto const& rows, class V>
inline constexpr bool has_permuted_rows = [] {
  if constexpr (arch::has_permute<V>) {
    return rows.size() <= V::size;
  } else {
    return false;
  }
}();

// piecewise_horner (below) where has_permuted_rows, with the piece given as the permutes' integer
// lane indices (a caller that has the piece as an integer saves the conversion).
template <auto const& rows, real_value V, class I>
requires has_permuted_rows<rows, V>
inline V piecewise_horner_at_index(V const& t, I const& index) noexcept {
  using T = scalar_t<V>;
  constexpr std::size_t P = rows.size();
  constexpr std::size_t W = rows[0].size();
  // columns[k][j] = rows[j][k], padded to a register.
  alignas(64) static constexpr auto columns = [] {
    std::array<std::array<T, V::size>, W> c{};
    for (std::size_t k = 0; k < W; ++k) {
      for (std::size_t j = 0; j < P; ++j) {
        c[k][j] = rows[j][k];
      }
    }
    return c;
  }();
  V p = arch::permute<V>(index, columns[W - 1].data());
  for (std::size_t k = W - 1; k-- > 0;) {
    p = math::fma(p, t, arch::permute<V>(index, columns[k].data()));
  }
  return p;
}

// Horner's rule with the coefficient row chosen per lane: rows[piece][k] t^k, piece an integral
// value in [0, P). Scalars index the row. A 512-bit batch picks each coefficient with one
// vpermps/vpermpd from a register holding column k (the P - 1 selects of the generic path cost
// P - 1 operations a coefficient); other batches select. The same coefficients either way, so
// the same bits.
template <auto const& rows, real_value V>
inline V piecewise_horner(V const& t, V const& piece) noexcept {
  constexpr std::size_t P = rows.size();
  constexpr std::size_t W = rows[0].size();
  if constexpr (!is_batch_v<V>) {
    auto const& row = rows[static_cast<std::size_t>(piece)];
    V p = row[W - 1];
    for (std::size_t k = W - 1; k-- > 0;) {
      p = math::fma(p, t, row[k]);
    }
    return p;
  } else {
    if constexpr (has_permuted_rows<rows, V>) {
      return math::piecewise_horner_at_index<rows>(t, arch::lane_indices(piece));
    }
    std::array<mask_t<V>, P> is_piece{};
    for (std::size_t j = 1; j < P; ++j) {
      is_piece[j] = piece == V(static_cast<scalar_t<V>>(j));
    }
    auto const coefficient = [&](std::size_t k) {
      V c(rows[0][k]);
      for (std::size_t j = 1; j < P; ++j) {
        c = math::select(is_piece[j], V(rows[j][k]), c);
      }
      return c;
    };
    V p = coefficient(W - 1);
    for (std::size_t k = W - 1; k-- > 0;) {
      p = math::fma(p, t, coefficient(k));
    }
    return p;
  }
}
NONLIN_INTRINSIC_DIAGNOSTICS_POP

// What GELU needs of the normal distribution at x, both from one evaluation.
template <real_value V>
struct normal_at {
  V x_cdf;           // x Phi(x), rounded once also where it is subnormal
  V cdf_plus_x_pdf;  // Phi(x) + x phi(x), the derivative of x Phi(x)
};

namespace detail {
// Phi(-a) = e^(-a^2/2) g(a) and its pieces at a = |x| (clamped where every result is 0 or 1, so
// that a^2 stays finite): g from its table, a^2 = h + l exactly, and one e^(-(h + l)/2) of
// range R.
template <real_value V>
struct normal_tail {
  V a;
  V g;
  exp_split<V> e;

  // phi(a) (g(a) sqrt(2 pi) - a) = e^(-a^2/2) (g - a / sqrt(2 pi)), which is Phi(x) + x phi(x)
  // at x = -a, before the exp's final scale. 1/sqrt(2 pi) as hi + lo: its rounding alone would
  // be a relative error of 2^-24 a / |g - a c| on the left, ~1 ulp.
  V slope_left_unscaled() const noexcept {
    auto c = math::constant<V>(inv_sqrt_2pi_split);
    return e.unscaled_times(math::fnma(a, c.hi, math::fnma(a, c.lo, g)));
  }
};

// a clamped where every result is 0 or 1 (so that a^2 stays finite), and g(a) from `table`
// (tables::normal's scaled_tail or the fast tier's fast_scaled_tail, on the same octaves).
template <real_value V>
struct scaled_tail_value {
  V a;
  V g;
};

NONLIN_INTRINSIC_DIAGNOSTICS_PUSH
template <auto const& table, real_value V>
NONLIN_ALWAYS_INLINE scaled_tail_value<V> scaled_tail(V const& a) noexcept {
  using T = scalar_t<V>;
  using Tables = tables::normal<T>;
  constexpr std::size_t octaves = Tables::scaled_tail_variable.size();
  static_assert(table.size() == octaves, "g's pieces are the octaves of a");
  constexpr T last_a = T(std::size_t{1} << (octaves - 1));
  V const at = math::clamp_above(a, V(last_a));
  // a in [2^(j-1), 2^j) has biased exponent bias + j - 1; a < 1 is piece 0.
  constexpr auto first = detail::exp_constants<T>::bias - 1;
  if constexpr (has_permuted_rows<table, V>) {
    // The same j as below, as the permutes' index: four integer operations on the exponent
    // field (at >= 0, or a NaN without its sign) where the float route takes seven, a
    // conversion among them (the same bits; fast::gelu_exact 1.2x, gelu_exact 1.07-1.10x).
    using I = int_t<V>;
    using S = typename I::value_type;
    using U = xsimd::batch<std::make_unsigned_t<S>, typename V::arch_type>;
    // A logical shift (g++ 12 warns in its header for the arithmetic one on 64-bit lanes).
    auto const field = xsimd::bitwise_cast<I>(xsimd::bitwise_cast<U>(math::as_bits(at)) >>
                                              detail::exp_constants<T>::mantissa_bits);
    I const index = xsimd::min(xsimd::max(field - I(S(first)), I(S(0))), I(S(octaves - 1)));
    V const t = math::piecewise_horner_at_index<Tables::scaled_tail_variable>(at, index);
    return {at, math::piecewise_horner_at_index<table>(t, index)};
  }
  V const exponent = math::biased_exponent<V>(math::as_bits(at));
  V const j = math::clamp_above(math::clamp_below(exponent - V(T(first)), V(0)), V(T(octaves - 1)));
  V const t = math::piecewise_horner<Tables::scaled_tail_variable>(at, j);
  return {at, math::piecewise_horner<table>(t, j)};
}
NONLIN_INTRINSIC_DIAGNOSTICS_POP

template <exp_range R, real_value V>
NONLIN_ALWAYS_INLINE normal_tail<V> normal_tail_at(V const& a) noexcept {
  auto tail = detail::scaled_tail<tables::normal<scalar_t<V>>::scaled_tail>(a);
  auto a2 = math::two_product(tail.a, tail.a);  // a^2 = h + l exactly
  auto e = math::exp_split_nonpositive<R>(a2.hi * math::c<V>(-0.5), a2.lo * math::c<V>(-0.5));
  return {tail.a, tail.g, e};
}
}  // namespace detail

namespace detail {
// Both results at x from q = a Phi(-a) and s = Phi(-a) - a phi(a) (also the fast tier's).
template <real_value V>
NONLIN_ALWAYS_INLINE normal_at<V> normal_from_left(V const& x, V const& q, V const& s) noexcept {
  auto negative = x < V(0);
  return {math::select(negative, math::neg(q), x - q),
          math::select(negative, s, math::c<V>(1) - s)};
}
}  // namespace detail

// x Phi(x) and Phi(x) + x phi(x) from Phi(-a) = e^(-a^2/2) g(a), a = |x|, for every x: with
// q = a Phi(-a), x Phi(x) = -q on the left and x - q on the right (q <= x/2 there: nothing
// cancels); with s = Phi(-a) - a phi(a), the derivative is s on the left and 1 - s on the right
// (s <= 1/2 where it is positive). Each factor is folded in before the exp's final scale, so
// subnormal results are rounded once. One piece for every x, no central polynomial beside the
// tails: the table's first octave covers [0, 1).
template <real_value V>
NONLIN_ALWAYS_INLINE normal_at<V> normal(V const& x) noexcept {
  V const a = math::abs(x);
  auto tail = detail::normal_tail_at<exp_range::value>(a);
  V const q = math::times(tail.e, math::two_product(tail.a, tail.g));  // a g unrounded
  V s = math::scale(tail.slope_left_unscaled(), tail.e.n);
  // Where e^(-a^2/2) vanished (|x| above 15.2 in float, 38.6 in double) its unscaled product is
  // k - k = +0, but s is negative there (a > 0.75) and rounds to -0. In a branch: no batch of
  // the benchmarks' inputs takes it.
  auto const vanished = tail.e.vanished();
  if (math::any(vanished)) [[unlikely]] {
    s = math::select(vanished, math::neg(V(0)), s);
  }
  return detail::normal_from_left(x, q, s);
}

// dy (Phi(x) + x phi(x)) for a derivative `common` that is that derivative (patched near its
// root), rounded once also far in the left tail, where the derivative alone is below the
// normal range (math::with_product_tail on the exp's argument -x^2 / 2).
template <real_value V, class Tails = product_tails>
inline V normal_slope_times(V const& common, V const& x, V const& dy,
                            Tails const& tails = {}) noexcept {
  // -x^2 / 2 on the left, > 0 on the right (whose derivative tends to 1).
  V const a = x * math::abs(x) * math::c<V>(0.5);
  auto tail = [](V arg, V factor) {
    auto tail_pieces = detail::normal_tail_at<exp_range::product>(math::abs(arg));
    return math::scale_times(tail_pieces.slope_left_unscaled(), tail_pieces.e.n, factor);
  };
  return tails(dy * common, a, tail, x, dy);
}

}  // namespace NONLIN_ISA
}  // namespace nonlin::math
