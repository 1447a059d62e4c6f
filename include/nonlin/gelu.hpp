// SPDX-License-Identifier: MIT
#pragma once
// GELU (Hendrycks & Gimpel 2016), exact and tanh; the third, gelu_quick(x) = x sigmoid(1.702 x)
// (CLIP), is an x sigma(z) like silu and lives with it in silu.hpp. There is no bare `gelu`:
// frameworks disagree on which one that name means (PyTorch: exact; oneDNN's gelu: tanh).
//   gelu_exact(x) = x Phi(x), Phi via the normal tails, not 1 + erf (no cancellation for x < 0)
//   gelu_tanh(x)  = x sigmoid(2u), u = sqrt(2/pi)(x + 0.044715 x^3) — the same as
//                   0.5 x (1 + tanh u) without 1 + tanh cancelling for x < 0
// GELU is not monotonic, so there is no backward from the output.

#include "concepts.hpp"
#include "isa.hpp"
#include "math/constants.hpp"
#include "math/double_float.hpp"
#include "math/logistic.hpp"
#include "math/normal.hpp"
#include "math/ops.hpp"
#include "math/roots.hpp"
#include "math/silu_slope.hpp"
#include "math/true_side.hpp"

namespace nonlin {

// gelu_exact(x) = x Phi(x); derivative Phi(x) + x phi(x) (0.5 at 0, minimum near x = -0.75).
// Bound: 3 ulp forward, 2.5 ulp derivative, float and double, for every x (tested against
// MPFR: its row in catalog/, tests/accuracy_test.cpp).
struct gelu_exact {
  // One batch of the forward is a long chain (kernels.hpp: elementwise_interleaved).
  static constexpr bool long_forward_chain = true;

  template <real_value V>
  NONLIN_ISA_TAG V operator()(V x) const noexcept {
    return math::normal(x).x_cdf;
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative(V x) const noexcept {
    return value_and_derivative(x).derivative;
  }
  // Both from one evaluation of the normal distribution (the gated units need both).
  template <real_value V>
  NONLIN_ISA_TAG value_and_slope<V> value_and_derivative(V x) const noexcept {
    auto n = math::normal(x);
    return {n.x_cdf, derivative_near_zero(n.cdf_plus_x_pdf, x)};
  }
  // gelu_exact'(x) from its generic value: the fitted ratio within root_window of the zero (also
  // the fast twin's of the 16-bit kernels: detail/fast16.hpp).
  template <real_value V>
  NONLIN_ISA_TAG static V derivative_near_zero(V generic, V x) noexcept {
    using R = math::tables::derivative_roots<scalar_t<V>>;
    return math::patch_near_root(generic, math::double_float<V>{x, V(0)}, R::gelu_exact_root_hi,
                                 R::gelu_exact_root_lo, R::gelu_exact_ratio, root_window);
  }
  // dy gelu_exact'(x), rounded once also where gelu_exact'(x) alone is below the normal range.
  template <real_value V, class Tails = math::product_tails>
  NONLIN_ISA_TAG V backward(V x, V dy, Tails const& tails = {}) const noexcept {
    return backward_given_derivative(x, derivative(x), dy, tails);
  }
  // backward(x, dy) from derivative(x) already evaluated (the gated units' single evaluation).
  template <real_value V, class Tails = math::product_tails>
  NONLIN_ISA_TAG V backward_given_derivative(V x, V derivative, V dy,
                                             Tails const& tails = {}) const noexcept {
    return math::normal_slope_times(derivative, x, dy, tails);
  }
  // For the 16-bit kernels (math/true_side.hpp): x Phi(x) > x/2 for x != 0.
  template <real_value V>
  NONLIN_ISA_TAG V side_of_true_value(V x, V y) const noexcept {
    return math::side_beyond_product(math::c<V>(0.5), x, y, math::c<V>(1));
  }

 private:
  // Where Phi(-a) - a phi(a) cancels enough to need the root's ratio. The generic form is 3.2
  // ulp off just outside x0 +- 0.3 (x = -1.067 and -0.43, float; 3.27 in double), 11.6 at x0 -
  // 0.07; the ratio is the worse one below x0 - 0.4 (2.7 ulp at x0 - 0.89, its Horner sum in
  // float). From x0 - 0.4 to x0 + 1/2, the fit's upper end: 2.12 ulp at most (every float; x =
  // -0.0024, the generic form just below 1/2) and 2.03 in double (4 10^6 samples). Any window
  // this wide runs the ratio on every lane, without a branch (math/roots.hpp): the width costs
  // nothing.
  static constexpr math::root_window root_window{-0.4, 0.5};
};

// gelu_tanh(x) = x sigmoid(v), v = 2u = x (c1 + c3 x^2), c1 = 2 sqrt(2/pi), c3 = 0.044715 c1;
// derivative sigmoid(v) (1 + x v'(x) sigmoid(-v)), v' = c1 + 3 c3 x^2. v is formed as hi + lo:
// rounding it alone would cost |v| ulp in the left tail (~160 ulp in float near x = -10).
// Bound: 2 ulp forward, 2 ulp derivative, float and double, for every x (tested against
// MPFR: its row in catalog/, tests/accuracy_test.cpp). The float derivative of the builds with
// the slope tables (math/silu_slope.hpp: 512-bit AVX-512DQ) is e^-v R(t) from a table of R
// (below: 1.6x the quotient form's speed, max 1.72 ulp over every float against its 1.36).
struct gelu_tanh {
  // One batch of the forward is a long chain (kernels.hpp: elementwise_interleaved).
  static constexpr bool long_forward_chain = true;

  template <real_value V>
  NONLIN_ISA_TAG V operator()(V x) const noexcept {
    return math::x_sigmoid(x, argument(x), math::unhalved_left);
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative(V x) const noexcept {
    if constexpr (math::has_slope_tables<V>) {
      auto const v = minus_argument(x);
      return from_table(x, scaled_slope(x), math::exp_split_nonpositive(v.hi, v.lo));
    } else {
      return derivative_near_zero(
          math::x_sigmoid_derivative<split>(argument(x), one_plus_x_slope(x)), x);
    }
  }
  // gelu_tanh'(x) from its generic value: the fitted ratio within `window` of the zero (also the
  // 16-bit kernels' fast twin's, over a wider window: detail/fast16.hpp).
  template <real_value V>
  NONLIN_ISA_TAG static V derivative_near_zero(
      V generic, V x, math::root_window window = math::x_sigmoid_split_root_window) noexcept {
    using R = math::tables::derivative_roots<scalar_t<V>>;
    return math::patch_near_root(generic, math::double_float<V>{x, V(0)}, R::gelu_tanh_root_hi,
                                 R::gelu_tanh_root_lo, R::gelu_tanh_ratio, window);
  }
  // dy gelu_tanh'(x), rounded once also where gelu_tanh'(x) alone is below the normal range.
  template <real_value V, class Tails = math::product_tails>
  NONLIN_ISA_TAG V backward(V x, V dy, Tails const& tails = {}) const noexcept {
    if constexpr (math::has_slope_tables<V>) {
      // Where gelu_tanh'(x) is below the normal range (x < -9.9), dy is multiplied in before
      // the scale 2^n (math::scale_times): the exp of the product range.
      auto const v = minus_argument(x);
      V const r = scaled_slope(x);
      auto tail = [](V at, V factor, math::double_float<V> arg, V d) {
        auto e = math::exp_split_nonpositive<math::exp_range::product>(arg.hi, arg.lo);
        V const below = math::scale_times(signed_product(e, factor), e.n, d);
        return math::select(at > V(0), d, below);  // 1 - gelu_tanh'(-|x|) rounds to 1 there
      };
      return tails(dy * from_table(x, r, math::exp_split_nonpositive(v.hi, v.lo)), v.hi, tail, x, r,
                   v, dy);
    } else {
      return math::x_sigmoid_derivative_times<split>(derivative(x), argument(x),
                                                     one_plus_x_slope(x), dy, tails);
    }
  }
  // For the 16-bit kernels (math/true_side.hpp): x sigmoid(v(x)) > x/2 for x != 0 (v rises
  // through 0 at 0).
  template <real_value V>
  NONLIN_ISA_TAG V side_of_true_value(V x, V y) const noexcept {
    return math::side_beyond_product(math::c<V>(0.5), x, y, math::c<V>(1));
  }
  // v(x) = x (c1 + c3 x^2) as hi + lo (also the 16-bit kernels' fast twin's: detail/fast16.hpp).
  template <real_value V>
  NONLIN_ISA_TAG static math::double_float<V> argument(V x) noexcept {
    auto c1 = math::constant<V>(math::gelu_tanh_c1);
    auto c3 = math::constant<V>(math::gelu_tanh_c3);
    auto x2 = math::two_product(x, x);
    auto cubic = math::two_product(c3.hi, x2.hi);  // c3 x^2
    V const cubic_lo = math::fma(c3.hi, x2.lo, math::fma(c3.lo, x2.hi, cubic.lo));
    auto sum = math::two_sum(c1.hi, cubic.hi);  // c1 + c3 x^2
    V const sum_lo = sum.lo + (c1.lo + cubic_lo);
    auto v = math::two_product(x, sum.hi);
    return {v.hi, math::fma(x, sum_lo, v.lo)};
  }

 private:
  // Builds with the slope tables (math/silu_slope.hpp): gelu_tanh'(-t) = e^-v(t) R(t), t = |x|,
  // R = sigma(v) (1 - t v' sigma(v)) from tables::gelu_tanh_scaled_slope (smooth, tending to the
  // cubic 1 - t v' where gelu_tanh'(-t) decays like e^-v; t clamped below 16, where e^-v is 0
  // in either exp range), e^-v from v as hi + lo; gelu_tanh'(x) = 1 - gelu_tanh'(-|x|) for
  // x > 0. No root patch and no branch: the table's piece at the zero t0 = 0.7525 keeps R's
  // relative accuracy through it. Measured over every float: see the bound above.
  template <real_value V>
  NONLIN_ISA_TAG static math::double_float<V> minus_argument(V x) noexcept {
    auto const v = argument(math::abs(x));
    return {math::neg(v.hi), math::neg(v.lo)};
  }
  template <real_value V>
  NONLIN_ISA_TAG static V scaled_slope(V x) noexcept {
    constexpr auto last_piece = scalar_t<V>(15.75);
    V const t = math::clamp_above(math::abs(x), V(last_piece));
    return math::detail::slope_table_value<math::tables::gelu_tanh_scaled_slope, false, V, true>(
        t, V(0));
  }
  // e^-v R before the scale 2^n, with R's sign also where e^-v vanishes (-0 there, as the true
  // value's rounding).
  template <real_value V>
  NONLIN_ISA_TAG static V signed_product(math::exp_split<V> const& e, V r) noexcept {
    return math::with_sign_of(e.unscaled_times(r), r);
  }
  template <real_value V>
  NONLIN_ISA_TAG static V from_table(V x, V r, math::exp_split<V> const& e) noexcept {
    V const g = math::scale(signed_product(e, r), e.n);
    return math::select(x > V(0), math::c<V>(1) - g, g);
  }
  // The exp that keeps its roundings: with the lean one this derivative reached 1.8 ulp (next to
  // its zero, where b + e amplifies e's error 1.6x), 1.05 with this one (math/logistic.hpp).
  static constexpr auto split = math::x_sigmoid_exp::split;
  // 1 + x v'(x) = 1 + x (c1 + 3 c3 x^2) as hi + lo: its rounding is what the derivative's
  // bracket would amplify.
  template <real_value V>
  NONLIN_ISA_TAG static math::double_float<V> one_plus_x_slope(V x) noexcept {
    auto c1 = math::constant<V>(math::gelu_tanh_c1);
    auto c3x3 = math::constant<V>(math::gelu_tanh_3c3);
    auto x2 = math::two_product(x, x);
    auto quadratic = math::two_product(c3x3.hi, x2.hi);
    V const quadratic_lo = math::fma(c3x3.hi, x2.lo, math::fma(c3x3.lo, x2.hi, quadratic.lo));
    auto sum = math::two_sum(c1.hi, quadratic.hi);
    V const sum_lo = sum.lo + (c1.lo + quadratic_lo);
    auto slope = math::two_product(x, sum.hi);
    V const slope_lo = math::fma(x, sum_lo, slope.lo);
    auto total = math::two_sum(math::c<V>(1), slope.hi);
    return math::bounded_bracket(math::double_float<V>{total.hi, total.lo + slope_lo});
  }
};

}  // namespace nonlin
