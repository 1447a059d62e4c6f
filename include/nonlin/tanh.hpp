// SPDX-License-Identifier: MIT
#pragma once
// The odd sigmoids of range (-1, 1) with slope 1 at 0: tanh, and softsign x / (1 + |x|), which
// approaches +-1 polynomially instead of exponentially.

#include <cmath>
#include <limits>

#include "concepts.hpp"
#include "isa.hpp"
#include "math/double_float.hpp"
#include "math/logistic.hpp"
#include "math/ops.hpp"

namespace nonlin {

// tanh(x) = (e^2x - 1) / (e^2x + 1) via expm1; tanh'(x) = sech^2 x = 4 sigmoid'(2x) from x (no
// 1 - y^2 cancellation in the tails; from sigmoid's table for |x| < 8 where the build has it),
// (1 - y)(1 + y) from the output.
// Bound: 2 ulp forward, 2 ulp derivative, float and double, for every x (tested against
// MPFR: its row in catalog/, tests/accuracy_test.cpp).
struct tanh {
  // One batch of the forward is a long chain (kernels.hpp: elementwise_interleaved).
  static constexpr bool long_forward_chain = true;

  template <real_value V>
  NONLIN_ISA_TAG V operator()(V x) const noexcept {
    return math::tanh(x);
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative(V x) const noexcept {
    return math::tanh_derivative(x);
  }
  // dy tanh'(x) rounded once, also where tanh'(x) alone is below the normal range
  // (tanh.backward(89, FLT_MAX) = 6.8e-39).
  template <real_value V, class Tails = math::product_tails>
  NONLIN_ISA_TAG V backward(V x, V dy, Tails const& tails = {}) const noexcept {
    return math::tanh_derivative_times(x, dy, tails);
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative_from_output(V y) const noexcept {
    V const one = math::c<V>(1);
    return (one - y) * (one + y);
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward_from_output(V y, V dy) const noexcept {
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
  NONLIN_ISA_TAG V operator()(V x) const noexcept {
    V const a = math::abs(x);
    auto const q = math::quotient_hi_lo(a, math::two_sum(a, math::c<V>(1)));
    V const inf(std::numeric_limits<scalar_t<V>>::infinity());
    return math::copysign(math::select(a == inf, math::c<V>(1), q.hi + q.lo), x);
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative(V x) const noexcept {
    V const a = math::abs(x);
    auto const r =
        math::square_hi_lo(math::quotient_hi_lo(math::c<V>(1), math::two_sum(a, math::c<V>(1))));
    return r.hi + r.lo;
  }
  // dy / (1 + |x|)^2 rounded once also where the derivative alone is below the normal range
  // (|x| > 2^63 in float, 2^511 in double): there (dy q) q + 2 (dy q) q_lo, q = 1 / (1 + |x|).
  template <real_value V>
  NONLIN_ISA_TAG V backward(V x, V dy) const noexcept {
    V const common = dy * derivative(x);
    V const a = math::abs(x);
    if (!math::any(a > far<V>())) [[likely]] {
      return common;
    }
    return far_backward(a, dy, common);
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative_from_output(V y) const noexcept {
    V const gap = math::c<V>(1) - math::abs(y);
    return gap * gap;
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward_from_output(V y, V dy) const noexcept {
    return dy * derivative_from_output(y);
  }

 private:
  template <real_value V>
  NONLIN_ISA_TAG NONLIN_COLD static V far_backward(V a, V dy, V common) noexcept {
    auto q = math::quotient_hi_lo(math::c<V>(1), math::two_sum(a, math::c<V>(1)));
    V const p = dy * q.hi;
    return math::select(a > far<V>(), math::fma(p, q.hi, (p + p) * q.lo), common);
  }
  // 2^59 (float) / 2^507 (double): beyond, 1 / (1 + |x|)^2 < 2^-118 / 2^-1014 nears the end of
  // the normal range.
  template <real_value V>
  NONLIN_ISA_TAG static V far() noexcept {
    using T = scalar_t<V>;
    return V(std::ldexp(T(1), std::numeric_limits<T>::max_exponent / 2 - 4));
  }
};

}  // namespace nonlin
