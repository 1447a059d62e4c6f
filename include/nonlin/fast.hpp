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
#include "isa.hpp"
#include "math/constants.hpp"
#include "math/fast.hpp"
#include "math/ops.hpp"
#include "sigmoid.hpp"
#include "tanh.hpp"

namespace nonlin::fast {

namespace detail {
inline namespace NONLIN_ISA {
// x sigma(z) and its derivative d/dx = sigma(z) (1 + x z' sigma(-z)), given x z' (slope_x):
// the limits 0 and x where sigma(z) or sigma(-z) vanished, which x * 0 alone would make NaN.
//
// x sigma(z) on one path: x r (1 + m) 2^n on the left, and on the right the same with m = n = 0,
// which is x r exactly; the two selects sit early in the chain (m and n are ready long before
// x r), where a select of the two results at its end cost ~0.9 cycles (design.md: an operation
// costs by how long it waits). The batches with a lane where e^-|z| was clamped or x is
// infinite (x r (1 + 0) would be inf * 0) take the two-path form in a branch.
template <real_value V>
inline V x_sigmoid(V x, V z) noexcept {
  using K = math::detail::exp_constants<scalar_t<V>>;
  auto p = math::fast::logistic(z);
  auto const right = z >= V(0);
  auto const limits_may_apply = math::either(
      p.a == V(K::min_arg), math::abs(x) == V(std::numeric_limits<scalar_t<V>>::infinity()));
  if (math::any(limits_may_apply)) [[unlikely]] {
    return math::select(right, x * p.positive(), p.negative_times(x));
  }
  V const kr = x * p.r;
  return math::scale(math::fma(kr, math::select(right, V(0), p.m), kr),
                     math::select(right, V(0), p.n));
}
template <real_value V>
inline V x_sigmoid_derivative(V z, V slope_x) noexcept {
  auto p = math::fast::logistic(z);
  auto right = z >= V(0);
  V const plus = math::select(right, p.positive(), p.negative());
  V const minus = math::select(right, p.negative(), p.positive());
  V const bracket = math::fma(slope_x, minus, math::c<V>(1));
  // Left: bracket e r rounded once (subnormal in the far tail); right: sigma(-z) = 0 leaves 1.
  V const left = p.negative_times(bracket);
  V const right_value = math::select(minus == V(0), plus, bracket * plus);
  return math::select(right, right_value, left);
}
// dy times x_sigmoid_derivative(z, slope_x) = `common`, rounded once also far in the left tail.
template <real_value V>
inline V x_sigmoid_derivative_times(V common, V z, V slope_x, V dy) noexcept {
  auto tail = [](V arg, V arg_slope, V factor) {
    auto p = math::fast::logistic<math::exp_range::product>(arg);
    V const kr = math::fma(arg_slope, p.positive(), math::c<V>(1)) * p.r;
    return math::scale_times(math::fma(kr, p.m, kr), p.n, factor);
  };
  return math::with_product_tail(dy * common, z, tail, z, slope_x, dy);
}
}  // namespace NONLIN_ISA
}  // namespace detail

// sigmoid(x) = 1 / (1 + e^-x) from e^-|x|; sigmoid' = e / (1 + e)^2, y (1 - y) from y.
// Bound: 5 ulp forward, 5 ulp derivative, float and double, for every x outside the
// windows of its row in catalog/fast.hpp (tested: tests/accuracy_test.cpp).
struct sigmoid {
  template <real_value V>
  NONLIN_ISA_TAG V operator()(V x) const noexcept {
    return math::fast::sigmoid_both(x).plus;
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative(V x) const noexcept {
    return math::fast::logistic(x).slope();
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward(V x, V dy) const noexcept {
    return math::fast::slope_times(derivative(x), x, dy, math::c<V>(1));
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
};

// tanh(x) = (1 - e) / (1 + e), e = e^-2|x|; tanh' = 4 sigmoid'(2x), (1 - y)(1 + y) from y.
// Bound: 5 ulp forward, 5 ulp derivative, float and double, for every x outside the
// windows of its row in catalog/fast.hpp (tested: tests/accuracy_test.cpp).
struct tanh {
  template <real_value V>
  NONLIN_ISA_TAG V operator()(V x) const noexcept {
    return math::fast::tanh(x);
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative(V x) const noexcept {
    return math::c<V>(4) * math::fast::logistic(x + x).slope();
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward(V x, V dy) const noexcept {
    return math::fast::slope_times(derivative(x), x + x, dy, math::c<V>(4));
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative_from_output(V y) const noexcept {
    return nonlin::tanh{}.derivative_from_output(y);
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward_from_output(V y, V dy) const noexcept {
    return nonlin::tanh{}.backward_from_output(y, dy);
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
};

// silu(x) = x sigmoid(x) (swish with beta = 1).
// Bound: 5 ulp forward, 5 ulp derivative, float and double, for every x outside the
// windows of its row in catalog/fast.hpp (tested: tests/accuracy_test.cpp).
struct silu {
  template <real_value V>
  NONLIN_ISA_TAG V operator()(V x) const noexcept {
    return detail::x_sigmoid(x, x);
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative(V x) const noexcept {
    return detail::x_sigmoid_derivative(x, x);
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward(V x, V dy) const noexcept {
    return detail::x_sigmoid_derivative_times(derivative(x), x, x, dy);
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
    V const x2 = x * x;
    V const slope = math::fma(math::c<V>(3 * c3), x2, math::c<V>(c1));
    return detail::x_sigmoid_derivative(argument(x), x * slope);
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward(V x, V dy) const noexcept {
    V const slope = math::fma(math::c<V>(3 * c3), x * x, math::c<V>(c1));
    return detail::x_sigmoid_derivative_times(derivative(x), argument(x), x * slope, dy);
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

}  // namespace nonlin::fast
