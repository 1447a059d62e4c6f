// SPDX-License-Identifier: MIT
#pragma once
// The odd sigmoids of range (-1, 1) with slope 1 at 0: tanh, and softsign x / (1 + |x|), which
// approaches +-1 polynomially instead of exponentially.

#include <limits>

#include "concepts.hpp"
#include "math/double_float.hpp"
#include "math/logistic.hpp"
#include "math/ops.hpp"

namespace nonlin {

// tanh(x) = (e^2x - 1) / (e^2x + 1) via expm1; tanh'(x) = sech^2 x from x (no 1 - y^2
// cancellation in the tails), (1 - y)(1 + y) from the output.
// Bound: 2 ulp forward, 2 ulp derivative, float and double, for every x (tested against
// MPFR: its row in catalog/, tests/accuracy_test.cpp).
struct tanh {
  template <real_value V>
  V operator()(V x) const noexcept {
    return math::tanh(x);
  }
  template <real_value V>
  V derivative(V x) const noexcept {
    return math::tanh_derivative(x);
  }
  template <real_value V>
  V backward(V x, V dy) const noexcept {
    return dy * derivative(x);
  }
  template <real_value V>
  V derivative_from_output(V y) const noexcept {
    V const one = math::c<V>(1);
    return (one - y) * (one + y);
  }
  template <real_value V>
  V backward_from_output(V y, V dy) const noexcept {
    return dy * derivative_from_output(y);
  }
};

// softsign(x) = x / (1 + |x|); softsign'(x) = 1 / (1 + |x|)^2, (1 - |y|)^2 from the output.
// 1 + |x| as hi + lo (two_sum: rounding it would cost up to an ulp) and one residual step of the
// quotient (math::quotient) round the results about once. The derivative is (1 / (1 + |x|))^2,
// not 1 / (1 + |x|)^2: the square overflows above |x| = 2^64 in float while its reciprocal is
// still a normal or subnormal number (2^-140 at |x| = 2^70).
// Bound: 2 ulp forward, 2 ulp derivative, float and double, for every x (tested against
// MPFR: its row in catalog/, tests/accuracy_test.cpp).
struct softsign {
  template <real_value V>
  V operator()(V x) const noexcept {
    V const a = math::abs(x);
    auto const q = math::quotient_hi_lo(a, math::two_sum(a, math::c<V>(1)));
    V const inf(std::numeric_limits<scalar_t<V>>::infinity());
    return math::copysign(math::select(a == inf, math::c<V>(1), q.hi + q.lo), x);
  }
  template <real_value V>
  V derivative(V x) const noexcept {
    V const a = math::abs(x);
    auto const r =
        math::square_hi_lo(math::quotient_hi_lo(math::c<V>(1), math::two_sum(a, math::c<V>(1))));
    return r.hi + r.lo;
  }
  template <real_value V>
  V backward(V x, V dy) const noexcept {
    return dy * derivative(x);
  }
  template <real_value V>
  V derivative_from_output(V y) const noexcept {
    V const gap = math::c<V>(1) - math::abs(y);
    return gap * gap;
  }
  template <real_value V>
  V backward_from_output(V y, V dy) const noexcept {
    return dy * derivative_from_output(y);
  }
};

}  // namespace nonlin
