// SPDX-License-Identifier: MIT
#pragma once
// The exponential linear units: elu, selu, celu. The negative side is expm1 (no cancellation
// near 0), evaluated on min(x, 0) so exp never sees a positive argument that could overflow.
// At x = 0 the derivative is the left one (alpha for elu, lambda alpha for selu, 1 for celu).

#include <bit>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "concepts.hpp"
#include "isa.hpp"
#include "math/arch.hpp"
#include "math/constants.hpp"
#include "math/double_float.hpp"
#include "math/exp.hpp"
#include "math/ops.hpp"
#include "math/true_side.hpp"

namespace nonlin {

namespace detail {
inline namespace NONLIN_ISA {
// x / width for the negative part: one multiplication by 1 / width where width is a power of
// two in the normal range (1 / width is then exact and x (1 / width) rounds as x / width does,
// subnormal and overflowing results included), a division otherwise. elu and selu (width 1) fold
// it away; celu with alpha = 1 (its default) or any 2^k pays no vdivps (backward 1.13-1.16x).
// The test is loop-invariant; written as one condition (& of the three, not &&) GCC keeps one
// well-predicted branch a batch (three with &&) and unswitches the backward from the output.
template <class T>
inline bool width_is_power_of_two(double width) noexcept {
  using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  constexpr U mantissa = (U(1) << (std::numeric_limits<T>::digits - 1)) - 1;
  T const w = static_cast<T>(width);
  // Bit tests, not frexp: a library call is not hoisted out of the kernels' loops.
  return static_cast<bool>(static_cast<int>((std::bit_cast<U>(w) & mantissa) == 0) &
                           static_cast<int>(std::isnormal(w)) &
                           static_cast<int>(std::isnormal(T(1) / w)));
}
template <real_value V>
inline V over_width(V const& x, double width) noexcept {
  using T = scalar_t<V>;
  T const w = static_cast<T>(width);
  return detail::width_is_power_of_two<T>(width) ? x * V(T(1) / w) : math::divide(x, V(w));
}

// x / width for a width that is not a power of two, as hi + lo: q = x / w.hi rounded, whose
// remainder x - q w.hi an fma (or two_product: x - p.hi is exact by Sterbenz' lemma, and so is the
// remainder) gives exactly, and lo = (remainder - q w.lo) / width, width =
// w.hi + w.lo the double it is (w.lo is 0 in double). Rounded once, x / width passed its
// rounding to e^(x / width) amplified by |x / width|: celu(0.3)' was 106 ulp off at x = -22.3
// in float and 450 at x = -204 in double (and the float alpha's own rounding added as much).
// lo is 0 below the exps' lowest argument, where nothing depends on it and the remainder of an
// infinite q is NaN.
template <real_value V>
inline math::double_float<V> over_width_split(V const& x, double width) noexcept {
  using T = scalar_t<V>;
  auto const w = math::constant<V>(width);
  V const q = math::divide(x, w.hi);
  // Without an FMA unit (x86-64-v2) the remainder from two_product's exact pair.
  V remainder;
  if constexpr (math::arch::has_fma<V>) {
    remainder = math::fnma(q, w.hi, x);
  } else {
    auto const p = math::two_product(q, w.hi);
    remainder = (x - p.hi) - p.lo;
  }
  V const lo = math::fnma(q, w.lo, remainder) * V(static_cast<T>(1.0 / width));
  V const lowest(math::detail::lowest_arg<math::exp_range::product, T>);
  return {q, math::select(q >= lowest, lo, V(0))};
}

// alpha (e^(x / width) - 1) for x <= 0 (or NaN), scale alpha as hi + lo: the constant's own
// rounding (lambda alpha in selu) does not count. x / width as hi + lo where width is not a power
// of two, its low part taken in as e^(q + lo) - 1 = (e^q - 1) + lo e^q, beside alpha's low part
// (one rounding less than adding it to e^q - 1 first: celu(0.3) 2.02 -> 1.56 ulp, every 7th
// float against double).
template <real_value V>
inline V scaled_expm1_over_width(V x, math::double_float<V> scale_alpha, double width) {
  if (detail::width_is_power_of_two<scalar_t<V>>(width)) {
    V const e_minus_1 = math::expm1_nonpositive(detail::over_width(x, width));
    return math::fma(scale_alpha.hi, e_minus_1, scale_alpha.lo * e_minus_1);
  }
  auto z = detail::over_width_split(x, width);
  V const m = math::expm1_nonpositive(z.hi);
  V const low = math::fma(scale_alpha.hi, z.lo * (m + math::c<V>(1)), scale_alpha.lo * m);
  return math::fma(scale_alpha.hi, m, low);
}

// e^(x / width) for x <= 0 (or NaN) as exp_scaled of range R; x / width as hi + lo where width
// is not a power of two (the exp folds lo into its reduced argument).
template <math::exp_range R = math::exp_range::value, real_value V>
inline math::exp_scaled<V> exp_over_width(V x, double width) {
  if (detail::width_is_power_of_two<scalar_t<V>>(width)) {
    return math::exp_scaled_nonpositive<R>(detail::over_width(x, width));
  }
  auto z = detail::over_width_split(x, width);
  return math::exp_scaled_nonpositive<R>(z.hi, z.lo);
}

// scale * (x > 0 ? x : alpha expm1(x / width)) and its derivative; elu, selu and celu are this
// with (scale, alpha, width) = (1, alpha, 1), (lambda, alpha_selu, 1) and (1, alpha, alpha).
// The forward takes the right side scale * x from the caller (selu rounds it once).
template <real_value V>
inline V exponential_linear(V x, V scaled_x, math::double_float<V> scale_alpha, double width) {
  V const left = detail::scaled_expm1_over_width(math::clamp_above(x, V(0)), scale_alpha, width);
  return math::select(x > V(0), scaled_x, left);
}
// left_scale = scale alpha / width, as hi + lo (a double_float<V>) or, where it is a V itself,
// as one V (two operations fewer: elu with alpha = 1 or any other float alpha, celu),
// multiplied into e^(x / width) before its scale.
template <class K, class V>
concept left_scale_of = std::same_as<K, V> || std::same_as<K, math::double_float<V>>;

template <real_value V, left_scale_of<V> K>
inline V exponential_linear_derivative(V x, V scale, K left_scale, double width) {
  // A NaN x stays NaN through the clamp and the exp, and takes the left side.
  V const left = math::times(detail::exp_over_width(math::clamp_above(x, V(0)), width), left_scale);
  return math::select(x > V(0), scale, left);
}
// dy times the derivative, rounded once also where alpha e^(x / width) alone is below the
// normal range (math::with_product_tail on x / width, its low part aside).
template <real_value V, left_scale_of<V> K>
inline V exponential_linear_backward(V x, V dy, V scale, K left_scale, double width) {
  V const negative = math::clamp_above(x, V(0));
  V const negative_part = detail::over_width(negative, width);
  V const common = dy * exponential_linear_derivative(x, scale, left_scale, width);
  auto tail = [](V arg, double w, K k, V factor) {
    auto e = detail::exp_over_width<math::exp_range::product>(arg, w);
    return math::scale_times(math::unscaled_times(e, k), e.n, factor);
  };
  return math::with_product_tail(common, negative_part, tail, negative, width, left_scale, dy);
}
}  // namespace NONLIN_ISA
}  // namespace detail

// elu(x) = x for x > 0, alpha (e^x - 1) otherwise; elu'(x) = alpha e^x = y + alpha on the left.
// Bound: 2 ulp forward, 2 ulp derivative, float and double, for every x (tested against
// MPFR: its row in catalog/, tests/accuracy_test.cpp).
struct elu {
  double alpha = 1.0;

  template <real_value V>
  NONLIN_ISA_TAG V operator()(V x) const noexcept {
    return detail::exponential_linear(x, x, math::constant<V>(alpha), 1.0);
  }
  // alpha as one V where it is one (the default 1 and every float alpha; every alpha in double):
  // a branch on the parameter, the same in the scalar and the batch code.
  template <real_value V>
  NONLIN_ISA_TAG V derivative(V x) const noexcept {
    math::double_float<V> k = math::constant<V>(alpha);  // not const: GCC 12 would store it
    if (math::constant_is_exact<V>(alpha)) {
      return detail::exponential_linear_derivative(x, math::c<V>(1), k.hi, 1.0);
    }
    return detail::exponential_linear_derivative(x, math::c<V>(1), k, 1.0);
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward(V x, V dy) const noexcept {
    math::double_float<V> k = math::constant<V>(alpha);  // not const: GCC 12 would store it
    if (math::constant_is_exact<V>(alpha)) {
      return detail::exponential_linear_backward(x, dy, math::c<V>(1), k.hi, 1.0);
    }
    return detail::exponential_linear_backward(x, dy, math::c<V>(1), k, 1.0);
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative_from_output(V y) const noexcept {
    return math::one_where_positive(y, y + math::c<V>(alpha));  // NaN: y + alpha
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward_from_output(V y, V dy) const noexcept {
    return dy * derivative_from_output(y);
  }
  // For the 16-bit kernels (kernels.hpp, exact lanes): where backward_from_output(y, dy) is exact
  // (dy on the right; dy (y + alpha) with neither rounding losing anything, alpha a float, y >=
  // -alpha as every output is), its rounding once is the correctly rounded value and no midpoint
  // test is needed. From 16-bit y and dy most results are exact, and lie on a midpoint often.
  template <real_value V>
  NONLIN_ISA_TAG math::mask_t<V> exact_backward_from_output(V y, V dy) const noexcept {
    if (!math::constant_is_exact<V>(alpha)) {
      return math::mask_t<V>(false);
    }
    V const a = math::c<V>(alpha);
    // Right of 0 the result is dy itself, a 16-bit value that no midpoint test flags: those lanes
    // may be named or not.
    return math::sum_times_is_exact(dy, a, y, y >= math::neg(a));
  }
  NONLIN_ISA_TAG bool output_backward_defined() const noexcept { return alpha > 0.0; }
  // For the 16-bit kernels (math/true_side.hpp): alpha expm1(x) - alpha x has the sign of
  // alpha for x < 0 (expm1(x) > x); x itself on the right.
  template <real_value V>
  NONLIN_ISA_TAG V side_of_true_value(V x, V y) const noexcept {
    return math::select(x < V(0),
                        math::side_beyond_product(math::c<V>(alpha), x, y, math::sign_of<V>(alpha)),
                        V(0));
  }
};

// selu(x) = lambda elu_alpha(x), alpha = 1.6732632..., lambda = 1.0507009... (Klambauer 2017).
// Bound: 2 ulp forward, 2 ulp derivative, float and double, for every x (tested against
// MPFR: its row in catalog/, tests/accuracy_test.cpp).
struct selu {
  template <real_value V>
  NONLIN_ISA_TAG V operator()(V x) const noexcept {
    return detail::exponential_linear(x, lambda_times(x), lambda_alpha<V>(), 1.0);
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative(V x) const noexcept {
    return detail::exponential_linear_derivative(x, lambda<V>(), lambda_alpha<V>(), 1.0);
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward(V x, V dy) const noexcept {
    return detail::exponential_linear_backward(x, dy, lambda<V>(), lambda_alpha<V>(), 1.0);
  }
  // y <= 0: f' = lambda alpha e^x = y + lambda alpha, with lambda alpha carried as hi + lo:
  // y + hi is exact where y saturates towards -lambda alpha, so only y's own rounding remains.
  template <real_value V>
  NONLIN_ISA_TAG V derivative_from_output(V y) const noexcept {
    auto la = lambda_alpha<V>();
    return math::select(y > V(0), lambda<V>(), (y + la.hi) + la.lo);  // NaN: the sum
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward_from_output(V y, V dy) const noexcept {
    return dy * derivative_from_output(y);
  }

  // The constants and the right side, shared with fast::selu.
  template <real_value V>
  NONLIN_ISA_TAG static V lambda() noexcept {
    return math::c<V>(math::selu_lambda);
  }
  template <real_value V>
  NONLIN_ISA_TAG static math::double_float<V> lambda_alpha() noexcept {
    return math::constant<V>(math::selu_lambda_alpha);
  }
  // lambda x as x + (lambda - 1) x: one rounding with FMA (two without, the second at most
  // 0.05 ulp), and no overflow before that rounding. lambda x with lambda rounded to float
  // costs up to 0.3 ulp, and overflowed to inf for x just below FLT_MAX / lambda (found by the
  // exhaustive accuracy run).
  template <real_value V>
  NONLIN_ISA_TAG static V lambda_times(V x) noexcept {
    return math::fma(math::c<V>(math::selu_lambda - 1.0), x, x);
  }
};

// celu(x) = max(0, x) + min(0, alpha (e^(x/alpha) - 1)) (Barron 2017); celu'(x) = e^(x/alpha)
// = 1 + y/alpha on the left. Needs alpha != 0.
// Bound: 2 ulp forward, 2 ulp derivative, float and double, for every x (tested against
// MPFR: its row in catalog/, tests/accuracy_test.cpp).
struct celu {
  double alpha = 1.0;

  template <real_value V>
  NONLIN_ISA_TAG V operator()(V x) const noexcept {
    return detail::exponential_linear(x, x, math::constant<V>(alpha), alpha);
  }
  // alpha / alpha = 1 on the left: e^(x / alpha) alone.
  template <real_value V>
  NONLIN_ISA_TAG V derivative(V x) const noexcept {
    return detail::exponential_linear_derivative(x, math::c<V>(1), math::c<V>(1), alpha);
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward(V x, V dy) const noexcept {
    return detail::exponential_linear_backward(x, dy, math::c<V>(1), math::c<V>(1), alpha);
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative_from_output(V y) const noexcept {
    V const left = math::c<V>(1) + detail::over_width(y, alpha);
    return math::one_where_positive(y, left);  // NaN: left
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward_from_output(V y, V dy) const noexcept {
    return dy * derivative_from_output(y);
  }
  // As elu's: exact where y / alpha, 1 + that and dy times it lose nothing (alpha a float).
  template <real_value V>
  NONLIN_ISA_TAG math::mask_t<V> exact_backward_from_output(V y, V dy) const noexcept {
    if (!math::constant_is_exact<V>(alpha)) {
      return math::mask_t<V>(false);
    }
    V const q = detail::over_width(y, alpha);
    // Right of 0 the result is dy itself (named or not, as elu's).
    return math::both(quotient_is_exact(q, y),
                      math::sum_times_is_exact(dy, math::c<V>(1), q, q >= math::c<V>(-1)));
  }
  NONLIN_ISA_TAG bool output_backward_defined() const noexcept { return alpha > 0.0; }

 private:
  // q = y / alpha (over_width) lost nothing. Where alpha is a normal power of two q is y times
  // 2^-k, and q alpha, exact, gives y back exactly where q did not underflow: one compare
  // (celu's default alpha = 1); otherwise the product q alpha must be exact and y.
  template <real_value V>
  NONLIN_ISA_TAG math::mask_t<V> quotient_is_exact(V q, V y) const noexcept {
    if (detail::width_is_power_of_two<scalar_t<V>>(alpha)) {
      return q * math::c<V>(alpha) == y;
    }
    auto back = math::two_product(q, math::c<V>(alpha));  // not const: GCC 12 would store it
    return math::both(back.hi == y, math::product_is_exact(back));
  }
};

}  // namespace nonlin
