// SPDX-License-Identifier: MIT
#pragma once
// The logistic family: sigmoid, log_sigmoid, softplus and hardsigmoid.

#include <limits>

#include "concepts.hpp"
#include "isa.hpp"
#include "math/divide.hpp"
#include "math/exp.hpp"
#include "math/logistic.hpp"
#include "math/ops.hpp"

namespace nonlin {

// sigmoid(x) = 1 / (1 + e^-x), split at 0 so that e^-|x| never overflows;
// sigmoid'(x) = sigmoid(x) sigmoid(-x) from x (no 1 - y cancellation), y (1 - y) from y. In
// builds with the slope tables (AVX-512DQ) float sigmoid'(x) for |x| < 16 comes from a table of
// polynomial pieces (math/silu_slope.hpp): 1.7-1.8x the quotient form's backward at 4K floats.
// Bound: 2 ulp forward, 2 ulp derivative, float and double, for every x (tested against
// MPFR: its row in catalog/, tests/accuracy_test.cpp).
struct sigmoid {
  // One batch of the forward is a long chain (kernels.hpp: elementwise_interleaved).
  static constexpr bool long_forward_chain = true;

  template <real_value V>
  NONLIN_ISA_TAG V operator()(V x) const noexcept {
    return math::sigmoid(x);
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative(V x) const noexcept {
    return math::sigmoid_derivative(x);
  }
  // dy sigma'(x) rounded once, also where sigma'(x) alone is below the normal range. (tails:
  // how the product's tail is applied, math::product_tails; the span kernels pass a recorder,
  // math/exp.hpp.)
  template <real_value V, class Tails = math::product_tails>
  NONLIN_ISA_TAG V backward(V x, V dy, Tails const& tails = {}) const noexcept {
    return math::sigmoid_derivative_times(x, dy, math::c<V>(1), tails);
  }
  // Both from one exp (the gated units need both): the same bits as operator() and derivative.
  template <real_value V>
  NONLIN_ISA_TAG value_and_slope<V> value_and_derivative(V x) const noexcept {
    return math::sigmoid_and_derivative(x);
  }
  // backward(x, dy) from derivative(x) already evaluated.
  template <real_value V, class Tails = math::product_tails>
  NONLIN_ISA_TAG V backward_given_derivative(V x, V derivative, V dy,
                                             Tails const& tails = {}) const noexcept {
    return math::sigmoid_derivative_product(dy * derivative, x, dy, math::c<V>(1), tails);
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative_from_output(V y) const noexcept {
    return y * (math::c<V>(1) - y);
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward_from_output(V y, V dy) const noexcept {
    return dy * derivative_from_output(y);
  }
};

// log_sigmoid(x) = log sigmoid(x) = min(x, 0) - log1p(e^-|x|); derivative sigmoid(-x),
// = -expm1(y) from the output.
// Bound: 2 ulp forward, 2 ulp derivative, float and double, for every x (tested against
// MPFR: its row in catalog/, tests/accuracy_test.cpp).
struct log_sigmoid {
  // One batch of the forward is a long chain (kernels.hpp: elementwise_interleaved).
  static constexpr bool long_forward_chain = true;

  template <real_value V>
  NONLIN_ISA_TAG V operator()(V x) const noexcept {
    return math::neg(math::softplus(math::neg(x)));
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative(V x) const noexcept {
    return math::sigmoid(math::neg(x));
  }
  template <real_value V, class Tails = math::product_tails>
  NONLIN_ISA_TAG V backward(V x, V dy, Tails const& tails = {}) const noexcept {
    return math::sigmoid_times(math::neg(x), dy, tails);
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative_from_output(V y) const noexcept {
    return math::one_minus_exp_nonpositive(y);
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward_from_output(V y, V dy) const noexcept {
    return dy * derivative_from_output(y);
  }
};

// softplus(x) = log(1 + e^(beta x)) / beta; derivative sigmoid(beta x); from the output,
// 1 - e^(-beta y) = -expm1(-beta y). Needs beta > 0.
// The linear piece: x (derivative 1) where beta x > min(threshold, exact_from), exact_from = 20
// in float and 40 in double, the points past which log1p(e^-z) / beta is below half an ulp of
// x and sigma(z) rounds to 1 (float from 17.4, double from 37.5), so that the piece changes no
// result and beta x overflowing to inf still gives x. By default there is no other threshold:
// PyTorch's 20 (softplus{.threshold = 20}) returns x where double is still 4e5 ulp away from it
// (log1p(e^-20.27) = 1.6e-9).
// Bound: 2 ulp forward, 2 ulp derivative, float and double, for every x (tested against
// MPFR: its row in catalog/, tests/accuracy_test.cpp).
struct softplus {
  // One batch of the forward is a long chain (kernels.hpp: elementwise_interleaved).
  static constexpr bool long_forward_chain = true;

  double beta = 1.0;
  double threshold = std::numeric_limits<double>::infinity();

  // The forward at beta = 1 (the default) neither multiplies by beta nor divides by it: the same
  // values (x 1 and s / 1 are exact), one vdivps a batch fewer (one branch on the parameter, the
  // same for every element; the backward's multiplication by 1 is cheaper than that branch).
  template <real_value V>
  NONLIN_ISA_TAG V operator()(V x) const noexcept {
    if (beta == 1.0) {
      return math::select(x > linear_from<V>(threshold), x, math::softplus(x));
    }
    V const z = x * math::c<V>(beta);
    return math::select(z > linear_from<V>(threshold), x,
                        math::divide(math::softplus(z), math::c<V>(beta)));
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative(V x) const noexcept {
    V const z = x * math::c<V>(beta);
    return math::select(z > linear_from<V>(threshold), math::c<V>(1), math::sigmoid(z));
  }
  template <real_value V, class Tails = math::product_tails>
  NONLIN_ISA_TAG V backward(V x, V dy, Tails const& tails = {}) const noexcept {
    V const z = x * math::c<V>(beta);
    return math::select(z > linear_from<V>(threshold), dy, math::sigmoid_times(z, dy, tails));
  }
  // The linear piece starts at y = softplus(threshold) / beta, not at threshold / beta.
  template <real_value V>
  NONLIN_ISA_TAG V derivative_from_output(V y) const noexcept {
    V const z = y * math::c<V>(beta);
    V const smooth = math::one_minus_exp_nonpositive(math::neg(z));
    if (threshold >= exact_from<scalar_t<V>>()) {
      // The linear piece starts where the smooth derivative rounds to 1 anyway. The branch keeps
      // the constant below out of the default's loop: GCC recomputed it (a log1p, three
      // divisions) in every iteration of the four-batch loop instead of hoisting it (0.69x).
      return smooth;
    }
    // Smooth outputs are >= 0: a negative z (a threshold below 0 puts the linear piece there)
    // is the linear piece too, where the smooth form gives 0 (one_minus_exp_nonpositive).
    V const output_from = math::softplus(linear_from<V>(threshold));
    auto linear = math::either(z > output_from, z < V(0));
    return math::select(linear, math::c<V>(1), smooth);
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward_from_output(V y, V dy) const noexcept {
    return dy * derivative_from_output(y);
  }

  // Where the linear piece starts in z = beta x: the threshold, or sooner where the smooth
  // result already rounds to x (20 in float, 40 in double), which changes no bit (fast::softplus
  // too: its smooth result is within a few ulp there).
  template <real_value V>
  NONLIN_ISA_TAG static V linear_from(double threshold) noexcept {
    constexpr double from = exact_from<scalar_t<V>>();
    return V(static_cast<scalar_t<V>>(threshold < from ? threshold : from));
  }
  template <real_scalar T>
  NONLIN_ISA_TAG static constexpr double exact_from() noexcept {
    return sizeof(T) == 4 ? 20.0 : 40.0;
  }
};

// hardsigmoid(x) = relu6(x + 3) / 6: 0 for x <= -3, 1 for x >= 3, else x/6 + 1/2; derivative
// 1/6 on (-3, 3) and 0 on the closed saturation regions.
// Bound: 2 ulp forward, 2 ulp derivative, float and double, for every x (tested against
// MPFR: its row in catalog/, tests/accuracy_test.cpp).
struct hardsigmoid {
  // From a 16-bit x the forward's float result rounded once is the correctly rounded 16-bit value
  // (kernels.hpp, forward_exactness16). t = xc + 3 is exact wherever |x| >= 2^-12, and t / 6 is
  // rounded once (divide_by_integer). For the float to be a 16-bit midpoint M, t / 6 would have
  // to lie within half a float ulp of M, 2^(e - 24) with 2^e <= M < 2^(e + 1). But t is near
  // 6 M >= 4 2^e, so t - 6 M is a multiple of t's last bit (6 M's is coarser), 2^(e - 21) or
  // more, and t / 6 is at least 2^(e - 21) / 6 > 2^(e - 24) from M unless it is M itself, when
  // the float is M exactly. For |x| < 2^-12, t / 6 is within 2^-14.5 of 1/2, which the float
  // result is too, and everything there rounds to 1/2 (the nearest midpoints are 2^-13 away).
  // No result is subnormal (t = 0 or t >= 2^-9). storage16_accuracy_test checks it on every
  // input of both types, float16_test that the kernels then store what the scalar rule does.
  static constexpr bool forward_rounds_correctly16 = true;

  template <real_value V>
  NONLIN_ISA_TAG V operator()(V x) const noexcept {
    // x clamped to [-3, 3] first (NaN stays NaN): (0 + 0) / 6 = +0 and 6 / 6 = 1 are the
    // saturation values, with two min/max instead of two compares and two blends.
    V const xc = math::clamp_below(math::clamp_above(x, math::c<V>(3)), math::c<V>(-3));
    return math::divide_by_integer(xc + math::c<V>(3), scalar_t<V>(6));
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative(V x) const noexcept {
    return backward(x, math::c<V>(1));
  }
  // Selects, as the piecewise-linear family does: 0 on the saturation regions whatever dy is
  // (dy = inf there gives 0, not NaN).
  template <real_value V>
  NONLIN_ISA_TAG V backward(V x, V dy) const noexcept {
    auto inside = math::both(x > math::c<V>(-3), x < math::c<V>(3));
    return math::keep_nan(x, math::select(inside, dy * math::c<V>(1.0 / 6.0), V(0)));
  }
  // 0 < y < 1 exactly where -3 < x < 3.
  template <real_value V>
  NONLIN_ISA_TAG V derivative_from_output(V y) const noexcept {
    return backward_from_output(y, math::c<V>(1));
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward_from_output(V y, V dy) const noexcept {
    auto inside = math::both(y > V(0), y < math::c<V>(1));
    return math::keep_nan(y, math::select(inside, dy * math::c<V>(1.0 / 6.0), V(0)));
  }
};

}  // namespace nonlin
