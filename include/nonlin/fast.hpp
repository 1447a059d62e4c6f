// SPDX-License-Identifier: MIT
#pragma once
// The opt-in fast tier: the transcendental activations of the default tier with cheaper math
// (math/fast.hpp) and a looser, measured bound (README, "Fast tier"). Same interface, so the
// span kernels, gated units and gradient check take them unchanged:
//   nonlin::forward(nonlin::fast::silu{}, x, y);
// What is given up: the compensations that keep the default tier within a few ulp where a
// quantity cancels (the derivatives of silu, swish, gelu_quick and gelu_tanh near their zeros,
// the arguments of the GELU cubic and of swish's beta x rounded once). Limits at +-inf, NaN
// propagation and the no-overflow splits are kept.

#include <limits>

#include "concepts.hpp"
#include "elu.hpp"
#include "gelu.hpp"
#include "isa.hpp"
#include "math/constants.hpp"
#include "math/fast.hpp"
#include "math/ops.hpp"
#include "mish.hpp"
#include "sigmoid.hpp"
#include "silu.hpp"
#include "tanh.hpp"

namespace nonlin::fast {

namespace detail {
inline namespace NONLIN_ISA {
// x sigma(z) and its derivative d/dx = sigma(z) (1 + x z' sigma(-z)), given x z' (slope_x):
// the limits 0 and x where sigma(z) or sigma(-z) vanished, which x * 0 alone would make NaN.
//
// x sigma(z) = x / (1 + e^-z): sigmoid's one quotient with x for its numerator, wherever
// sigma(z) is normal (math::fast::times_sigmoid), which also gives the limits x = +-inf (z
// clamped) and x = +-0. Far on the left (z < -87 for float, -708 for double) the split form
// (x u / d) 2^n from e^-|z| = u 2^n, d = 1 + e^-|z|: 0 with x's sign where e^-|z| vanished
// (x * 0 would be NaN for x = -inf), x / d before u where x u could overflow (|x| > max/2).
// z is a V or z.hi + z.lo (math::fast::high: the 16-bit twins, detail/fast16.hpp).
template <real_value V, class Z>
inline V x_sigmoid(V x, Z z) noexcept {
  using T = scalar_t<V>;
  using K = math::detail::exp_constants<T>;
  return math::fast::times_sigmoid(x, z, [&] {
    auto p = math::fast::logistic<math::exp_range::value, false>(z);
    V const value = math::scale(math::divide(x * p.u, p.d), p.n);
    auto const huge = math::abs(x) > V(std::numeric_limits<T>::max() / 2);
    V const mended = math::select(huge, math::scale(math::divide(x, p.d) * p.u, p.n), value);
    return math::select(p.a == V(K::min_arg), math::sign_bit(x), mended);
  });
}
// With e = e^-z, d = 1 + e and s = x z' (slope_x): sigma(z) (1 + s sigma(-z)) = (d + s e) / d^2,
// one numerator and one division for both signs of z wherever d^2 is finite (z >= -43 for
// float, -354 for double), d^2 = 1 + e (e + 2) rounded once (d * d would carry d's rounding
// twice). On the left d's rounding enters d + s e amplified by d / |d + s e|, below 1 outside
// the windows of the zero (silu's -1.28). Far on the left, in a branch, the split form:
// e^-|z| = u 2^n, e (d + s) / d^2 = (u (1 + s) + u e) / d^2 2^n, with 1 + s exact where d + s
// would cancel. s is bounded by 2^13, which leaves it as it is wherever e^-|z| is not 0 (every
// caller's |s| is at most 3|z| + 1), so that s e is 0 and not NaN where s is infinite, and the
// left side is 0 where e^-|z| vanished. z is a V or z.hi + z.lo (as x_sigmoid's).
template <real_value V, class Z>
inline V x_sigmoid_derivative(Z const& z, V slope_x) noexcept {
  using T = scalar_t<V>;
  using K = math::detail::exp_constants<T>;
  V const bound(T(0x1p13));
  V const s = math::clamp_below(math::clamp_above(slope_x, bound), math::neg(bound));
  V const one = math::c<V>(1);
  V const square_bound(std::is_same_v<T, float> ? T(43) : T(354));
  V const upper(-K::min_arg);
  auto one_path = [&](V const& clamped) {
    V const e = math::fast::exp_minus<true>(math::fast::with_high(z, clamped)).value();
    return math::divide(math::fma(s, e, e + one), math::fma(e, e + math::c<V>(2), one));
  };
  V const h = math::fast::high(z);
  auto const below = h < math::neg(square_bound);
  if (math::any(below)) [[unlikely]] {
    auto p = math::fast::logistic(z);
    V const left = math::fma(p.e, p.u, (one + s) * p.u);
    return math::select(
        below, math::scale(math::divide(left, p.square()), p.n),
        one_path(math::clamp_below(math::clamp_above(h, upper), math::neg(square_bound))));
  }
  return one_path(math::clamp_above(h, upper));
}
// scale * (x > 0 ? x : alpha expm1(x / width)), its derivative and backward (the default tier's
// nonlin::detail::exponential_linear* with the table's expm1 and exp, scale alpha rounded once):
// scaled_x is the right side (selu's lambda x), left_scale = scale alpha / width.
template <real_value V>
inline V exponential_linear(V x, V scaled_x, V scale_alpha, double width) noexcept {
  V const a = nonlin::detail::over_width(math::clamp_above(x, V(0)), width);
  return math::select(x > V(0), scaled_x, scale_alpha * math::fast::expm1_nonpositive(a));
}
// e^(x / width) for x <= 0 (or NaN) from the table's entry alone (its error passes to the result
// once), the argument clamped at `lowest`. Where width is not a power of two, x / width as
// hi + lo (nonlin::detail::over_width_split) and e^(q + lo) = e^q (1 + lo): rounded once, x /
// width cost |x / width| / 2 ulp (fast::celu(0.3)' 106 ulp at x = -22.3).
template <real_value V>
inline math::fast::exp_parts<V> exp_over_width(V x, double width, V lowest) noexcept {
  if (nonlin::detail::width_is_power_of_two<scalar_t<V>>(width)) {
    return math::fast::exp_by_table<false>(
        math::clamp_below(nonlin::detail::over_width(x, width), lowest));
  }
  auto z = nonlin::detail::over_width_split(x, width);
  auto e = math::fast::exp_by_table<false>(math::clamp_below(z.hi, lowest));  // not const (GCC 12)
  return {math::fma(e.u, z.lo, e.u), e.n};
}
// left_scale e^a as (u left_scale) 2^n: a subnormal result rounded once.
template <real_value V>
inline V exponential_linear_derivative(V x, V scale, V left_scale, double width) noexcept {
  using K = math::detail::exp_constants<scalar_t<V>>;
  auto e = fast::detail::exp_over_width(math::clamp_above(x, V(0)), width,
                                        V(K::min_arg));  // not const (GCC 12)
  return math::select(x > V(0), scale, math::scale(e.u * left_scale, e.n));
}
// dy times the derivative, rounded once also where left_scale e^a alone is below the normal
// range (math::with_product_tail: dy goes in before the scale).
template <real_value V, class Tails = math::product_tails>
inline V exponential_linear_backward(V x, V dy, V scale, V left_scale, double width,
                                     Tails const& tails = {}) noexcept {
  V const negative = math::clamp_above(x, V(0));
  V const a = nonlin::detail::over_width(negative, width);
  V const common = dy * fast::detail::exponential_linear_derivative(x, scale, left_scale, width);
  auto tail = [](V arg, double w, V k, V factor) {
    V const lowest(math::detail::lowest_arg<math::exp_range::product, scalar_t<V>>);
    auto e = fast::detail::exp_over_width(arg, w, lowest);  // not const (GCC 12)
    return math::scale_times(e.u * k, e.n, factor);
  };
  return tails(common, a, tail, negative, width, left_scale, dy);
}

// The same with the split form on the whole left side (z < 0), branch-free: e = e^-|z| = u 2^n
// on both sides, (d + s e) / d^2 on the right, (u e + u (1 + s)) / d^2 2^n on the left (the
// other's branch formula). Three operations more than the one path, and no batch takes a second
// exp: for gelu_tanh, whose z = x (c1 + c3 x^2) is below -43 for x < -7.6 (about 40% of the batches
// of x ~ U(-8, 8) held such a lane and ran both forms).
// z is a V or z.hi + z.lo (as x_sigmoid's).
template <real_value V, class Z>
inline V x_sigmoid_derivative_split_left(Z z, V slope_x) noexcept {
  V const bound(scalar_t<V>(0x1p13));
  V const s = math::clamp_below(math::clamp_above(slope_x, bound), math::neg(bound));
  auto p = math::fast::logistic(z);  // not const (GCC 12)
  auto const left = math::fast::high(z) < V(0);
  V const left_numerator =
      math::fma(p.e, p.u, (math::c<V>(1) + s) * p.u);  // 1 + s exact near the root
  V const numerator = math::select(left, left_numerator, math::fma(s, p.e, p.d));
  V const n = math::select(left, p.n, V(0));
  return math::scale(math::divide(numerator, p.square()), n);
}

// dy times x_sigmoid_derivative(z, slope_x) = `common`, rounded once also far in the left tail
// (z a V or z.hi + z.lo).
template <real_value V, class Z, class Tails = math::product_tails>
inline V x_sigmoid_derivative_times(V common, Z z, V slope_x, V dy,
                                    Tails const& tails = {}) noexcept {
  auto tail = [](Z arg, V arg_slope, V factor) {
    auto p = math::fast::logistic<math::exp_range::product>(arg);
    V const left = math::fma(p.e, p.u, (math::c<V>(1) + arg_slope) * p.u);
    return math::scale_times(math::divide(left, p.square()), p.n, factor);
  };
  return tails(dy * common, math::fast::high(z), tail, z, slope_x, dy);
}
}  // namespace NONLIN_ISA
}  // namespace detail

// sigmoid(x) = 1 / (1 + e^-x) from e^-|x|; sigmoid' = e / (1 + e)^2, y (1 - y) from y.
// Bound: 5 ulp forward, 5 ulp derivative, float and double, for every x outside the
// windows of its row in catalog/fast.hpp (tested: tests/accuracy_test.cpp).
struct sigmoid {
  template <real_value V>
  NONLIN_ISA_TAG V operator()(V x) const noexcept {
    return math::fast::sigmoid(x);
  }
  // sigma'(x) from the default tier's table where the build has it and |x| < 16 (faster than
  // this tier's quotient, and within 0.80 ulp: math/silu_slope.hpp), the quotient elsewhere.
  template <real_value V>
  NONLIN_ISA_TAG V derivative(V x) const noexcept {
    return math::sigmoid_slope(
        x, math::c<V>(1), [](V slope) { return slope; }, [&] { return quotient_derivative(x); });
  }
  template <real_value V, class Tails = math::product_tails>
  NONLIN_ISA_TAG V backward(V x, V dy, Tails const& tails = {}) const noexcept {
    return math::sigmoid_slope(
        x, math::c<V>(1), [&](V slope) { return dy * slope; },
        [&] {
          return math::fast::slope_times(quotient_derivative(x), x, dy, math::c<V>(1), tails);
        });
  }
  // From the output the math is the default tier's (nothing there to make faster).
  template <real_value V>
  NONLIN_ISA_TAG V derivative_from_output(V y) const noexcept {
    return nonlin::sigmoid{}.derivative_from_output(y);
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward_from_output(V y, V dy) const noexcept {
    return nonlin::sigmoid{}.backward_from_output(y, dy);
  }

 private:
  template <real_value V>
  NONLIN_ISA_TAG static V quotient_derivative(V x) noexcept {
    return math::fast::logistic<math::exp_range::value, false>(x).slope();
  }
};

// tanh(x) = x P(x^2) / Q(x^2) for float (a degree 7 over 3 rational, no exp), (1 - e) / (1 + e),
// e = e^-2|x|, for double; tanh' = 4 sigmoid'(2x), (1 - y)(1 + y) from y.
// Bound: 5 ulp forward, 5 ulp derivative, float and double, for every x outside the
// windows of its row in catalog/fast.hpp (tested: tests/accuracy_test.cpp).
struct tanh {
  template <real_value V>
  NONLIN_ISA_TAG V operator()(V x) const noexcept {
    return math::fast::tanh(x);
  }
  // tanh'(x) = 4 sigma'(2x): the default tier's table where the build has it and |x| < 8, this
  // tier's quotient elsewhere (as fast::sigmoid).
  template <real_value V>
  NONLIN_ISA_TAG V derivative(V x) const noexcept {
    return math::sigmoid_slope(
        x + x, math::c<V>(4), [](V slope) { return slope; },
        [&] { return quotient_derivative(x); });
  }
  template <real_value V, class Tails = math::product_tails>
  NONLIN_ISA_TAG V backward(V x, V dy, Tails const& tails = {}) const noexcept {
    return math::sigmoid_slope(
        x + x, math::c<V>(4), [&](V slope) { return dy * slope; },
        [&] {
          return math::fast::slope_times(quotient_derivative(x), x + x, dy, math::c<V>(4), tails);
        });
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative_from_output(V y) const noexcept {
    return nonlin::tanh{}.derivative_from_output(y);
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward_from_output(V y, V dy) const noexcept {
    return nonlin::tanh{}.backward_from_output(y, dy);
  }

 private:
  template <real_value V>
  NONLIN_ISA_TAG static V quotient_derivative(V x) noexcept {
    return math::c<V>(4) * math::fast::logistic<math::exp_range::value, false>(x + x).slope();
  }
};

// elu(x) = x for x > 0, alpha (e^x - 1) otherwise (math::fast::expm1_nonpositive, alpha rounded
// once); elu'(x) = alpha e^x on the left; y + alpha from the output (the default tier's).
// Bound: 5 ulp forward, 5 ulp derivative, float and double, for every x (tested:
// tests/accuracy_test.cpp).
struct elu {
  // One batch of the forward is a long chain (kernels.hpp: elementwise_interleaved).
  static constexpr bool long_forward_chain = true;

  double alpha = 1.0;

  template <real_value V>
  NONLIN_ISA_TAG V operator()(V x) const noexcept {
    return detail::exponential_linear(x, x, math::c<V>(alpha), 1.0);
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative(V x) const noexcept {
    return detail::exponential_linear_derivative(x, math::c<V>(1), math::c<V>(alpha), 1.0);
  }
  template <real_value V, class Tails = math::product_tails>
  NONLIN_ISA_TAG V backward(V x, V dy, Tails const& tails = {}) const noexcept {
    return detail::exponential_linear_backward(x, dy, math::c<V>(1), math::c<V>(alpha), 1.0, tails);
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative_from_output(V y) const noexcept {
    return nonlin::elu{alpha}.derivative_from_output(y);
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward_from_output(V y, V dy) const noexcept {
    return nonlin::elu{alpha}.backward_from_output(y, dy);
  }
  template <real_value V>
  NONLIN_ISA_TAG math::mask_t<V> exact_backward_from_output(V y, V dy) const noexcept {
    return nonlin::elu{alpha}.exact_backward_from_output(y, dy);
  }
  NONLIN_ISA_TAG bool output_backward_defined() const noexcept { return alpha > 0.0; }
  // The default functor's (the same function): for the 16-bit kernels.
  template <real_value V>
  NONLIN_ISA_TAG V side_of_true_value(V x, V y) const noexcept {
    return nonlin::elu{alpha}.side_of_true_value(x, y);
  }
};

// selu(x) = lambda elu_alpha(x): the default tier's right side lambda x (rounded once) and
// constants, lambda alpha rounded once.
// Bound: 5 ulp forward, 5 ulp derivative, float and double, for every x (tested:
// tests/accuracy_test.cpp).
struct selu {
  template <real_value V>
  NONLIN_ISA_TAG V operator()(V x) const noexcept {
    return detail::exponential_linear(x, nonlin::selu::lambda_times(x), lambda_alpha<V>(), 1.0);
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative(V x) const noexcept {
    return detail::exponential_linear_derivative(x, nonlin::selu::lambda<V>(), lambda_alpha<V>(),
                                                 1.0);
  }
  template <real_value V, class Tails = math::product_tails>
  NONLIN_ISA_TAG V backward(V x, V dy, Tails const& tails = {}) const noexcept {
    return detail::exponential_linear_backward(x, dy, nonlin::selu::lambda<V>(), lambda_alpha<V>(),
                                               1.0, tails);
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative_from_output(V y) const noexcept {
    return nonlin::selu{}.derivative_from_output(y);
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward_from_output(V y, V dy) const noexcept {
    return nonlin::selu{}.backward_from_output(y, dy);
  }

 private:
  template <real_value V>
  NONLIN_ISA_TAG static V lambda_alpha() noexcept {
    return nonlin::selu::lambda_alpha<V>().hi;
  }
};

// celu(x) = max(0, x) + min(0, alpha (e^(x/alpha) - 1)); celu'(x) = e^(x/alpha) on the left.
// x / alpha as the default tier's (a product where alpha is a power of two). Needs alpha != 0.
// Bound: 5 ulp forward, 5 ulp derivative, float and double, for every x (tested:
// tests/accuracy_test.cpp).
struct celu {
  double alpha = 1.0;

  template <real_value V>
  NONLIN_ISA_TAG V operator()(V x) const noexcept {
    return detail::exponential_linear(x, x, math::c<V>(alpha), alpha);
  }
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
    return nonlin::celu{alpha}.derivative_from_output(y);
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward_from_output(V y, V dy) const noexcept {
    return nonlin::celu{alpha}.backward_from_output(y, dy);
  }
  template <real_value V>
  NONLIN_ISA_TAG math::mask_t<V> exact_backward_from_output(V y, V dy) const noexcept {
    return nonlin::celu{alpha}.exact_backward_from_output(y, dy);
  }
  NONLIN_ISA_TAG bool output_backward_defined() const noexcept { return alpha > 0.0; }
};

// gelu_exact(x) = x Phi(x), Phi(-a) = e^(-a^2/2) g(a) on the default tier's octaves of a = |x|
// (math::fast::normal: g to half an ulp, the table exp of a^2 rounded once, no ratio near the
// derivative's zero); derivative Phi(x) + x phi(x).
// Bound: 5 ulp forward, 5 ulp derivative, float and double, for every x outside the
// windows of its row in catalog/fast.hpp (tested: tests/accuracy_test.cpp).
struct gelu_exact {
  // One batch of the forward is a long chain (kernels.hpp: elementwise_interleaved).
  static constexpr bool long_forward_chain = true;

  template <real_value V>
  NONLIN_ISA_TAG V operator()(V x) const noexcept {
    return math::fast::normal(x).x_cdf;
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative(V x) const noexcept {
    return math::fast::normal(x).cdf_plus_x_pdf;
  }
  // Both from one evaluation (the gated units need both).
  template <real_value V>
  NONLIN_ISA_TAG value_and_slope<V> value_and_derivative(V x) const noexcept {
    auto n = math::fast::normal(x);
    return {n.x_cdf, n.cdf_plus_x_pdf};
  }
  // dy gelu_exact'(x), rounded once also far in the left tail (the default tier's product tail).
  template <real_value V, class Tails = math::product_tails>
  NONLIN_ISA_TAG V backward(V x, V dy, Tails const& tails = {}) const noexcept {
    return backward_given_derivative(x, derivative(x), dy, tails);
  }
  template <real_value V, class Tails = math::product_tails>
  NONLIN_ISA_TAG V backward_given_derivative(V x, V derivative, V dy,
                                             Tails const& tails = {}) const noexcept {
    return nonlin::gelu_exact{}.backward_given_derivative(x, derivative, dy, tails);
  }
  // The default functor's (the same function): for the 16-bit kernels.
  template <real_value V>
  NONLIN_ISA_TAG V side_of_true_value(V x, V y) const noexcept {
    return nonlin::gelu_exact{}.side_of_true_value(x, y);
  }
};

// log_sigmoid(x) = -softplus(-x) = min(x, 0) - log(1 + e^-|x|), log(1 + e) from a 16-entry
// table and a degree 4 polynomial for float (math::fast::log1p_unit; double: the default tier's
// log1p); derivative sigmoid(-x) (fast::sigmoid's quotient), -expm1(y) from the output.
// Bound: 5 ulp forward, 5 ulp derivative, float and double, for every x outside the
// windows of its row in catalog/fast.hpp (tested: tests/accuracy_test.cpp).
struct log_sigmoid {
  // One batch of the forward is a long chain (kernels.hpp: elementwise_interleaved).
  static constexpr bool long_forward_chain = true;

  template <real_value V>
  NONLIN_ISA_TAG V operator()(V x) const noexcept {
    return math::neg(math::fast::softplus(math::neg(x)));
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative(V x) const noexcept {
    return math::fast::sigmoid(math::neg(x));
  }
  template <real_value V, class Tails = math::product_tails>
  NONLIN_ISA_TAG V backward(V x, V dy, Tails const& tails = {}) const noexcept {
    return math::fast::sigmoid_times(math::neg(x), dy, tails);
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative_from_output(V y) const noexcept {
    return nonlin::log_sigmoid{}.derivative_from_output(y);
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward_from_output(V y, V dy) const noexcept {
    return nonlin::log_sigmoid{}.backward_from_output(y, dy);
  }
};

// softplus(x) = log(1 + e^z) / beta, z = beta x (log_sigmoid's math; times 1 / beta rounded,
// exact for beta = 1 and every power of two), x where z > min(threshold, 20 / 40)
// (nonlin::softplus::linear_from); derivative sigmoid(z), 1 - e^-z from the output (the default
// tier's). Needs beta > 0.
// Bound: 5 ulp forward, 5 ulp derivative, float and double, for every x outside the
// windows of its row in catalog/fast.hpp (tested: tests/accuracy_test.cpp).
struct softplus {
  double beta = 1.0;
  double threshold = std::numeric_limits<double>::infinity();

  // Where the threshold is not below exact_from (20 / 40, the default: none), the linear piece
  // changes no bit of the smooth result (its log(1 + e^-z) is below half an ulp of z there, and
  // 1 + e^-z rounds to 1), so its compare and select are left out (loop-invariant branches).
  template <real_value V>
  NONLIN_ISA_TAG V operator()(V x) const noexcept {
    if (beta == 1.0 && smooth_is_exact<V>()) {
      return math::fast::softplus(x);
    }
    V const z = x * math::c<V>(beta);
    V const smooth = math::fast::softplus(z) * math::c<V>(1.0 / beta);
    return math::select(z > nonlin::softplus::linear_from<V>(threshold), x, smooth);
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative(V x) const noexcept {
    V const z = x * math::c<V>(beta);
    V const smooth = math::fast::sigmoid(z);
    if (smooth_is_exact<V>()) {
      return smooth;
    }
    return math::select(z > nonlin::softplus::linear_from<V>(threshold), math::c<V>(1), smooth);
  }
  template <real_value V, class Tails = math::product_tails>
  NONLIN_ISA_TAG V backward(V x, V dy, Tails const& tails = {}) const noexcept {
    V const z = x * math::c<V>(beta);
    V const smooth = math::fast::sigmoid_times(z, dy, tails);
    if (smooth_is_exact<V>()) {
      return smooth;
    }
    return math::select(z > nonlin::softplus::linear_from<V>(threshold), dy, smooth);
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative_from_output(V y) const noexcept {
    return nonlin::softplus{beta, threshold}.derivative_from_output(y);
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward_from_output(V y, V dy) const noexcept {
    return nonlin::softplus{beta, threshold}.backward_from_output(y, dy);
  }

 private:
  template <real_value V>
  NONLIN_ISA_TAG bool smooth_is_exact() const noexcept {
    return threshold >= nonlin::softplus::exact_from<scalar_t<V>>();
  }
};

// swish(x) = x sigmoid(beta x); derivative sigmoid(z) (1 + z sigmoid(-z)), z = beta x.
// Bound: 5 ulp forward, 5 ulp derivative, float and double, for every x outside the
// windows of its row in catalog/fast.hpp (tested: tests/accuracy_test.cpp).
struct swish {
  double beta = 1.0;

  template <real_value V>
  NONLIN_ISA_TAG V operator()(V x) const noexcept {
    return detail::x_sigmoid(x, x * math::c<V>(beta));
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative(V x) const noexcept {
    V const z = x * math::c<V>(beta);
    return detail::x_sigmoid_derivative(z, z);
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward(V x, V dy) const noexcept {
    V const z = x * math::c<V>(beta);
    return detail::x_sigmoid_derivative_times(derivative(x), z, z, dy);
  }
  // The default functor's (the same function): for the 16-bit kernels.
  template <real_value V>
  NONLIN_ISA_TAG V side_of_true_value(V x, V y) const noexcept {
    return nonlin::swish{beta}.side_of_true_value(x, y);
  }
};

// silu(x) = x sigmoid(x) (swish with beta = 1). Its derivative is the default tier's table where
// the build has it (math/silu_slope.hpp: faster than the formula below, and within 1.6 ulp also
// at the zero), the formula beyond |x| < 16 and in other builds.
// Bound: 5 ulp forward, 5 ulp derivative, float and double, for every x outside the
// windows of its row in catalog/fast.hpp (tested: tests/accuracy_test.cpp).
struct silu {
  template <real_value V>
  NONLIN_ISA_TAG V operator()(V x) const noexcept {
    return detail::x_sigmoid(x, x);
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative(V x) const noexcept {
    return math::silu_slope(x, [&] { return detail::x_sigmoid_derivative(x, x); });
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward(V x, V dy) const noexcept {
    return math::silu_slope_times(x, dy, [&] {
      return detail::x_sigmoid_derivative_times(detail::x_sigmoid_derivative(x, x), x, x, dy);
    });
  }
  // backward(x, dy) from a derivative(x) already evaluated (or patched: detail/fast16.hpp).
  template <real_value V>
  NONLIN_ISA_TAG V backward_given_derivative(V x, V derivative, V dy) const noexcept {
    return math::within_slope_table(
        x, [&] { return dy * derivative; },
        [&] { return detail::x_sigmoid_derivative_times(derivative, x, x, dy); });
  }
  // The default functor's (the same function): for the 16-bit kernels.
  template <real_value V>
  NONLIN_ISA_TAG V side_of_true_value(V x, V y) const noexcept {
    return nonlin::silu{}.side_of_true_value(x, y);
  }
};

// gelu_quick(x) = x sigmoid(1.702 x) (CLIP).
// Bound: 5 ulp forward, 5 ulp derivative, float and double, for every x outside the
// windows of its row in catalog/fast.hpp (tested: tests/accuracy_test.cpp).
struct gelu_quick {
  template <real_value V>
  NONLIN_ISA_TAG V operator()(V x) const noexcept {
    return detail::x_sigmoid(x, x * math::c<V>(math::gelu_quick_k));
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative(V x) const noexcept {
    V const z = x * math::c<V>(math::gelu_quick_k);
    return detail::x_sigmoid_derivative(z, z);
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward(V x, V dy) const noexcept {
    V const z = x * math::c<V>(math::gelu_quick_k);
    return detail::x_sigmoid_derivative_times(derivative(x), z, z, dy);
  }
  // The default functor's (the same function): for the 16-bit kernels.
  template <real_value V>
  NONLIN_ISA_TAG V side_of_true_value(V x, V y) const noexcept {
    return nonlin::gelu_quick{}.side_of_true_value(x, y);
  }
};

// gelu_tanh(x) = 0.5 x (1 + tanh u) = x sigmoid(v), v = 2u = x (c1 + c3 x^2);
// derivative sigmoid(v) (1 + x v' sigmoid(-v)), v' = c1 + 3 c3 x^2.
// Bound: 5 ulp forward, 5 ulp derivative, float and double, for every x outside the
// windows of its row in catalog/fast.hpp (tested: tests/accuracy_test.cpp).
struct gelu_tanh {
  template <real_value V>
  NONLIN_ISA_TAG V operator()(V x) const noexcept {
    return detail::x_sigmoid(x, argument(x));
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative(V x) const noexcept {
    return detail::x_sigmoid_derivative_split_left(argument(x), slope_x(x));
  }
  template <real_value V, class Tails = math::product_tails>
  NONLIN_ISA_TAG V backward(V x, V dy, Tails const& tails = {}) const noexcept {
    return detail::x_sigmoid_derivative_times(derivative(x), argument(x), slope_x(x), dy, tails);
  }
  // x v'(x) = x (c1 + 3 c3 x^2) (also the 16-bit kernels' fast twin's: nonlin/detail/fast16.hpp).
  template <real_value V>
  NONLIN_ISA_TAG static V slope_x(V x) noexcept {
    return x * math::fma(math::c<V>(3 * c3), x * x, math::c<V>(c1));
  }

  // The default functor's (the same function): for the 16-bit kernels.
  template <real_value V>
  NONLIN_ISA_TAG V side_of_true_value(V x, V y) const noexcept {
    return nonlin::gelu_tanh{}.side_of_true_value(x, y);
  }

 private:
  // 2 sqrt(2/pi) and its product with 0.044715, the default tier's constants rounded once.
  static constexpr double c1 = math::gelu_tanh_c1.hi;
  static constexpr double c3 = math::gelu_tanh_c3.hi;
  template <real_value V>
  NONLIN_ISA_TAG static V argument(V x) noexcept {
    return x * math::fma(math::c<V>(c3), x * x, math::c<V>(c1));
  }
};

// mish(x) = x tanh(softplus x) = x N / (N + 2), N = u (u + 2), u = e^x: nonlin/mish.hpp's
// one-sided form without its hi + lo parts, with its clamps. u = u' 2^n from the table exp
// with its low column (every 7th float: 3.7 ulp with it, 4.4 without); N 2^-n = u' u + 2u' in
// one fma, x N 2^-n / (N + 2) one division at the end of the chain, then the scale, which
// rounds a subnormal result once.
// Derivative: u B / D^2, B = 4(1 + x) + u (6 + 4x + 4u + u^2), D = N + 2, one division. B
// cancels at mish's minimum x0 = -1.19 (mish' = 0), which the default tier patches from a
// fitted table and this one does not (a window in catalog/fast.hpp). No backward from the
// output: mish is not monotonic.
// Bound: 5 ulp forward, 5 ulp derivative, float and double, for every x outside the
// windows of its row in catalog/fast.hpp (tested: tests/accuracy_test.cpp).
struct mish {
  // One batch of the forward is a long chain (kernels.hpp: elementwise_interleaved).
  static constexpr bool long_forward_chain = true;

  template <real_value V>
  NONLIN_ISA_TAG V operator()(V x) const noexcept {
    using K = math::detail::exp_constants<scalar_t<V>>;
    V const saturation(nonlin::mish::forward_saturation<scalar_t<V>>);
    V const two = math::c<V>(2);
    V const xc = math::clamp_above(math::clamp_below(x, V(K::min_arg)), saturation);
    auto const e = math::fast::exp_by_table(xc);
    V const u = e.value();
    V const n_unscaled = math::fma(e.u, u, e.u + e.u);
    V const quotient = math::divide(xc * n_unscaled, math::fma(u, u + two, two));
    // mish has the sign of x, -0 included, and is 0 where u vanished.
    V const y = math::copysign(math::scale(quotient, e.n), x);
    return math::select(x > saturation, x, y);
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative(V x) const noexcept {
    using T = scalar_t<V>;
    using K = math::detail::exp_constants<T>;
    V const saturation(nonlin::mish::derivative_saturation<T>);
    V const xc = math::clamp_above(math::clamp_below(x, V(K::min_arg)), saturation);
    auto const e = math::fast::exp_by_table(xc);
    V const slope = math::scale(unscaled_slope(xc, e.u, e.value()), e.n);
    return math::select(x > saturation, math::c<V>(1), slope);
  }
  // dy mish'(x), rounded once also where mish'(x) alone is below the normal range (x < -82 for
  // float: there e^x = u' 2^n goes in as dy u' B / D^2 before the scale).
  template <real_value V>
  NONLIN_ISA_TAG V backward(V x, V dy) const noexcept {
    return backward_given_derivative(x, derivative(x), dy);
  }
  // backward(x, dy) from a derivative(x) already evaluated (or patched: detail/fast16.hpp).
  template <real_value V>
  NONLIN_ISA_TAG V backward_given_derivative(V x, V derivative, V dy) const noexcept {
    auto tail = [](V arg, V factor) {
      using T = scalar_t<V>;
      V const a = math::clamp_below(arg, V(math::detail::lowest_arg<math::exp_range::product, T>));
      auto const e = math::fast::exp_by_table(a);
      V const u = math::scale(e.u, math::value_exponent(e.n));
      return math::scale_times(unscaled_slope(a, e.u, u), e.n, factor);
    };
    return math::with_product_tail(dy * derivative, x, tail, x, dy);
  }

 private:
  // mish'(x) 2^-n = u' B / D^2 for e^x = u = u' 2^n and a finite x, D^2 = (u^2 + 2u + 2)^2 =
  // 4 + u (8 + u (8 + u (4 + u))) by Horner (its terms all positive: every float, 4.1 ulp at
  // x = 0.54 against 5.3 with D D).
  template <real_value V>
  NONLIN_ISA_TAG static V unscaled_slope(V x, V u_unscaled, V u) noexcept {
    V const four = math::c<V>(4);
    V const eight = math::c<V>(8);
    V const u_plus_4 = u + four;
    V const inner = math::fma(u_plus_4, u, math::fma(x, four, math::c<V>(6)));
    V const b = math::fma(inner, u, four * (math::c<V>(1) + x));
    V const d2 = math::fma(math::fma(math::fma(u_plus_4, u, eight), u, eight), u, four);
    return math::divide(u_unscaled * b, d2);
  }
};

}  // namespace nonlin::fast
