// SPDX-License-Identifier: MIT
#pragma once
// The standard normal distribution, written for GELU: Phi, phi and x Phi(x) with relative
// accuracy in both tails.
//
// |x| <= 1:  Phi(x) = 1/2 + x P(x^2), P fitted (tables::normal::phi_central).
// |x| > 1:   Phi(-a) = phi(a) m(a), a = |x|, with m the Mills ratio; a m(a) is fitted in y = 1/a
//            on binary octaves of y (tables::normal::mills_tail), so the piece is read off y's
//            exponent. Phi(x) = 1 - Phi(-a) for x > 1 cannot cancel (Phi(-a) < 0.16).
// phi(a) = e^(-a^2/2) / sqrt(2 pi) takes a^2 as hi + lo (an fma), so the rounding of a^2 does
// not turn into a relative error of a^2 eps in the tail, and the factors are folded in before
// the final scale of exp, so subnormal results are rounded once. This is why Phi is not
// erfc(-x / sqrt 2) / 2 of a rounded x / sqrt 2 (which costs ~190 ulp near x = -13).

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

// Horner's rule with the coefficient row chosen per lane: rows[piece][k] t^k, piece an integral
// value in [0, P). Scalars index the row. A 512-bit batch picks each coefficient with one
// vpermps/vpermpd from a register holding column k (the P - 1 selects of the generic path cost
// P - 1 operations a coefficient); other batches select. The same coefficients either way, so
// the same bits.
NONLIN_INTRINSIC_DIAGNOSTICS_PUSH
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
    if constexpr (arch::has_permute<V> && P <= V::size) {
      using T = scalar_t<V>;
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
      auto const index = arch::lane_indices(piece);
      V p = arch::permute<V>(index, columns[W - 1].data());
      for (std::size_t k = W - 1; k-- > 0;) {
        p = math::fma(p, t, arch::permute<V>(index, columns[k].data()));
      }
      return p;
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

// What GELU needs of the normal distribution at x, all from one evaluation.
template <real_value V>
struct normal_at {
  V cdf;             // Phi(x)
  V x_cdf;           // x Phi(x), rounded once also where it is subnormal
  V cdf_plus_x_pdf;  // Phi(x) + x phi(x), the derivative of x Phi(x)
};

namespace detail {
// The pieces of the tails at a = |x| (clamped where every tail result is 0 or 1, so that a^2
// stays finite): y = 1/a, g = a m(a) / sqrt(2 pi), a^2 = h + l exactly, and one e^(-(h + l)/2)
// of range R for all of them.
template <real_value V>
struct normal_tail {
  V y;
  V g_scaled;
  V h;
  V l;
  exp_split<V> e;

  // phi(a) y (g - a^2) = Phi(x) + x phi(x) for x = -a, before the exp's final scale.
  V slope_left_unscaled() const noexcept {
    V const inv_sqrt_2pi_v = math::c<V>(inv_sqrt_2pi);
    return e.unscaled_times(y * math::fma(math::neg(h), inv_sqrt_2pi_v,
                                          math::fma(math::neg(l), inv_sqrt_2pi_v, g_scaled)));
  }
};

template <exp_range R, real_value V>
NONLIN_ALWAYS_INLINE normal_tail<V> normal_tail_at(V const& a) noexcept {
  using T = scalar_t<V>;
  using Tables = tables::normal<T>;
  constexpr std::size_t octaves = Tables::mills_tail.size();
  constexpr T last_a = T(std::size_t{1} << (octaves));
  V const at = math::clamp_above(a, V(last_a));
  V const y = math::divide(math::c<V>(1), at);
  V const exponent = math::biased_exponent<V>(math::as_bits(y));
  // y in [2^-(j+1), 2^-j) has biased exponent bias - 1 - j.
  V const j = math::clamp_above(
      math::clamp_below(V(T(detail::exp_constants<T>::bias - 1)) - exponent, V(0)),
      V(T(octaves - 1)));
  V const t = math::fma(y, math::pow2(j + math::c<V>(2)), math::c<V>(-3));
  V const g = math::piecewise_horner<Tables::mills_tail>(t, j);  // a m(a)
  auto a2 = math::two_product(at, at);                           // a^2 = h + l exactly
  auto e = math::exp_split_nonpositive<R>(a2.hi * math::c<V>(-0.5), a2.lo * math::c<V>(-0.5));
  return {y, g * math::c<V>(inv_sqrt_2pi), a2.hi, a2.lo, e};
}
}  // namespace detail

template <real_value V>
NONLIN_ALWAYS_INLINE normal_at<V> normal(V const& x) noexcept {
  using T = scalar_t<V>;
  using Tables = tables::normal<T>;
  V const one(T(1));
  V const a = math::abs(x);

  // Central piece.
  V const central_p =
      math::horner(math::fma(x * x, math::c<V>(2), math::c<V>(-1)), Tables::phi_central[0]);
  V const central_cdf = math::fma(x, central_p, math::c<V>(0.5));

  // Tails: Phi(-a) = phi(a) g / a; a Phi(-a) = phi(a) g; phi(a) (g/a - a) = phi(a) y (g - a^2),
  // each factor folded in before the exp's final scale.
  auto tail_pieces = detail::normal_tail_at<exp_range::value>(a);
  auto const& e = tail_pieces.e;
  V const pdf = e.times(math::c<V>(inv_sqrt_2pi));  // phi(x) within the clamp (0 beyond)
  V const tail = e.times(tail_pieces.g_scaled * tail_pieces.y);
  V const a_tail = e.times(tail_pieces.g_scaled);
  V const slope_left = math::scale(tail_pieces.slope_left_unscaled(), e.n);

  auto central = a <= one;
  auto negative = x < V(0);
  normal_at<V> out;
  out.cdf = math::select(central, central_cdf, math::select(negative, tail, one - tail));
  out.x_cdf = math::select(central, x * central_cdf,
                           math::select(negative, math::neg(a_tail), x * (one - tail)));
  // Central and right: Phi + x phi. Where phi underflowed the term is 0 (x * 0 would be NaN
  // for x = inf).
  V const right = math::select(pdf == V(0), out.cdf, math::fma(x, pdf, out.cdf));
  out.cdf_plus_x_pdf = math::select(math::both(negative, !central), slope_left, right);
  return out;
}

// dy (Phi(x) + x phi(x)) for a derivative `common` that is that derivative (patched near its
// root), rounded once also far in the left tail, where the derivative alone is below the
// normal range (math::with_product_tail on the exp's argument -x^2 / 2).
template <real_value V>
inline V normal_slope_times(V const& common, V const& x, V const& dy) noexcept {
  // -x^2 / 2 on the left, > 0 on the right (whose derivative tends to 1).
  V const a = x * math::abs(x) * math::c<V>(0.5);
  auto tail = [](V arg, V factor) {
    auto tail_pieces = detail::normal_tail_at<exp_range::product>(math::abs(arg));
    return math::scale_times(tail_pieces.slope_left_unscaled(), tail_pieces.e.n, factor);
  };
  return math::with_product_tail(dy * common, a, tail, x, dy);
}

}  // namespace NONLIN_ISA
}  // namespace nonlin::math
