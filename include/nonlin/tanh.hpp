// SPDX-License-Identifier: MIT
#pragma once
// tanh: range (-1, 1), tanh'(0) = 1.

#include "concepts.hpp"
#include "math/logistic.hpp"
#include "math/ops.hpp"

namespace nonlin {

// tanh(x) = (e^2x - 1) / (e^2x + 1) via expm1; tanh'(x) = sech^2 x from x (no 1 - y^2
// cancellation in the tails), (1 - y)(1 + y) from the output.
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

}  // namespace nonlin
