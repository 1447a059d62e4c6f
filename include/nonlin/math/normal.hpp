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

#include "constants.hpp"
#include "exp.hpp"
#include "log.hpp"
#include "normal_tables.hpp"
#include "ops.hpp"
#include "polynomial.hpp"

namespace nonlin::math {

// Horner's rule with the coefficient row chosen per lane: rows[piece][k] t^k.
template <real_value V, class T, std::size_t W, std::size_t P>
inline V piecewise_horner(V const& t, V const& piece,
                          std::array<std::array<T, W>, P> const& rows) noexcept {
  T const* base = rows[0].data();
  if constexpr (is_batch_v<V>) {
    V const magic(detail::exp_constants<T>::magic);
    int_t<V> const offset =
        (math::as_bits(piece + magic) - math::as_bits(magic)) * int_t<V>(static_cast<int>(W));
    V p = V::gather(base + (W - 1), offset);
    for (std::size_t k = W - 1; k-- > 0;) {
      p = math::fma(p, t, V::gather(base + k, offset));
    }
    return p;
  } else {
    auto const& row = rows[static_cast<std::size_t>(piece)];
    V p = row[W - 1];
    for (std::size_t k = W - 1; k-- > 0;) {
      p = math::fma(p, t, row[k]);
    }
    return p;
  }
}

// What GELU needs of the normal distribution at x, all from one evaluation.
template <real_value V>
struct normal_at {
  V cdf;            // Phi(x)
  V x_cdf;          // x Phi(x), rounded once also where it is subnormal
  V cdf_plus_x_pdf; // Phi(x) + x phi(x), the derivative of x Phi(x)
};

template <real_value V>
inline normal_at<V> normal(V const& x) noexcept {
  using T = scalar_t<V>;
  using Tables = tables::normal<T>;
  constexpr std::size_t octaves = Tables::mills_tail.size();
  V const one(T(1));
  V const a = math::abs(x);

  // Central piece.
  V const x2 = x * x;
  V const central_p = math::horner(math::fma(x2, math::c<V>(2), math::c<V>(-1)), Tables::phi_central[0]);
  V const central_cdf = math::fma(x, central_p, math::c<V>(0.5));

  // Tails. Beyond the last octave every tail result is 0 or 1: clamp so that a^2 stays finite.
  constexpr T last_a = T(std::size_t{1} << (octaves));
  V const at = math::clamp_above(a, V(last_a));
  V const y = one / at;
  V const exponent = math::biased_exponent<V>(math::as_bits(y));
  // y in [2^-(j+1), 2^-j) has biased exponent bias - 1 - j.
  V const j = math::clamp_above(math::clamp_below(V(T(detail::exp_constants<T>::bias - 1)) - exponent, V(0)),
                          V(T(octaves - 1)));
  V const t = math::fma(y, math::pow2(j + math::c<V>(2)), math::c<V>(-3));
  V const g = math::piecewise_horner(t, j, Tables::mills_tail);  // a m(a)
  V const h = at * at;
  V const l = math::fma(at, at, math::neg(h));                             // a^2 = h + l
  V const pdf_factor = math::c<V>(inv_sqrt_2pi) * math::fma(l, math::c<V>(-0.5), one);  // e^(-l/2) ~ 1 - l/2
  V const minus_half_h = h * math::c<V>(-0.5);
  // Phi(-a) = phi(a) g / a; a Phi(-a) = phi(a) g; phi(a) (g/a - a) = phi(a) y (g - a^2).
  V const tail = math::exp_times(minus_half_h, pdf_factor * g * y);
  V const a_tail = math::exp_times(minus_half_h, pdf_factor * g);
  V const pdf = math::exp_times(minus_half_h, pdf_factor);
  V const slope_left = math::exp_times(minus_half_h, pdf_factor * y * ((g - h) - l));

  auto const central = a <= one;
  auto const negative = x < V(0);
  normal_at<V> out;
  out.cdf = math::select(central, central_cdf, math::select(negative, tail, one - tail));
  out.x_cdf = math::select(central, x * central_cdf, math::select(negative, math::neg(a_tail), x * (one - tail)));
  // Central and right: Phi + x phi (the central pdf needs no tail clamp).
  V const pdf_central = math::exp_times(x2 * math::c<V>(-0.5), math::c<V>(inv_sqrt_2pi) * math::fma(math::fma(x, x, math::neg(x2)), math::c<V>(-0.5), one));
  V const pdf_at_x = math::select(central, pdf_central, pdf);
  // Where phi underflowed the term is 0 (x * 0 would be NaN for x = inf).
  V const right = math::select(pdf_at_x == V(0), out.cdf, math::fma(x, pdf_at_x, out.cdf));
  out.cdf_plus_x_pdf = math::select(negative & !central, slope_left, right);
  return out;
}

}  // namespace nonlin::math
