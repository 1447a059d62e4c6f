// SPDX-License-Identifier: MIT
#pragma once
// The piecewise-linear activations: step, identity, relu, relu6, hardtanh, leaky_relu and
// squared_relu.
//
// Kink policy, the same for every function in nonlin: a function is split as x <= k | x > k at
// an inner kink k, and saturation regions are closed, so the derivative at a kink is the one of
// the piece on the left (relu'(0) = 0, leaky_relu'(0) = alpha) and 0 on a saturation boundary
// (relu6'(0) = relu6'(6) = 0, hardtanh'(min) = hardtanh'(max) = 0), as in PyTorch.
// backward selects dy (no multiply), so dy = inf or NaN at a zero-gradient position gives 0;
// a NaN x gives NaN in every member.

#include <limits>

#include "concepts.hpp"
#include "isa.hpp"
#include "math/ops.hpp"
#include "math/true_side.hpp"

namespace nonlin {

// step(x) = 1 for x > 0, else 0 (step(0) = 0); derivative 0 everywhere (the impulse at 0 is
// dropped, as every framework does).
// Bound: 2 ulp forward, 2 ulp derivative, float and double, for every x (tested against
// MPFR: its row in catalog/, tests/accuracy_test.cpp).
struct step {
  // Results are arguments, 0 or small integers: exact in 16 bits (kernels.hpp).
  static constexpr bool exact_results = true;
  template <real_value V>
  NONLIN_ISA_TAG V operator()(V x) const noexcept {
    return math::where_positive(x, math::c<V>(1));
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative(V x) const noexcept {
    return math::keep_nan(x, V(0));
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward(V x, V /*dy*/) const noexcept {
    return derivative(x);
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative_from_output(V y) const noexcept {
    return math::keep_nan(y, V(0));
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward_from_output(V y, V /*dy*/) const noexcept {
    return derivative_from_output(y);
  }
};

// identity(x) = x; derivative 1.
// Bound: 2 ulp forward, 2 ulp derivative, float and double, for every x (tested against
// MPFR: its row in catalog/, tests/accuracy_test.cpp).
struct identity {
  // Results are arguments, 0 or small integers: exact in 16 bits (kernels.hpp).
  static constexpr bool exact_results = true;
  template <real_value V>
  NONLIN_ISA_TAG V operator()(V x) const noexcept {
    return x;
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative(V x) const noexcept {
    return math::keep_nan(x, math::c<V>(1));
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward(V x, V dy) const noexcept {
    return math::keep_nan(x, dy);
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative_from_output(V y) const noexcept {
    return derivative(y);
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward_from_output(V y, V dy) const noexcept {
    return math::keep_nan(y, dy);
  }
};

// hardtanh(x) = min(max(x, min), max); derivative 1 on (min, max), 0 on the closed outside.
// Bound: 2 ulp forward, 2 ulp derivative, float and double, for every x (tested against
// MPFR: its row in catalog/, tests/accuracy_test.cpp).
struct hardtanh {
  double min = -1.0;
  double max = 1.0;

  // The 16-bit kernels (kernels.hpp, exactness16): the backward's results are dy or 0, and the
  // forward's are x or a bound, exact wherever the bounds are floats; no lane is tested there.
  // Where the bounds are values of the 16-bit type T (the default -1 and 1 are), so are the
  // forward's results, and the kernel stores them as they are.
  static constexpr bool exact_backward_results = true;
  NONLIN_ISA_TAG bool exact_forward_results() const noexcept {
    return static_cast<double>(static_cast<float>(min)) == min &&
           static_cast<double>(static_cast<float>(max)) == max;
  }
  template <class T>
  NONLIN_ISA_TAG bool forward_results_are_values_of() const noexcept {
    auto const lo = static_cast<float>(min);
    auto const hi = static_cast<float>(max);
    return exact_forward_results() && static_cast<float>(T::from_float(lo)) == lo &&
           static_cast<float>(T::from_float(hi)) == hi;
  }

  template <real_value V>
  NONLIN_ISA_TAG V operator()(V x) const noexcept {
    auto const l = static_cast<scalar_t<V>>(min);
    auto const h = static_cast<scalar_t<V>>(max);
    V const lo(l);
    V const hi(h);
    // x86's max and min with the bound first are these selects, two operations instead of two
    // compares (port 5 only on Intel) and two blends, except where x and a bound are zeros of
    // opposite signs (the select gives the bound, they give x) or the bounds are out of order;
    // tested on the bounds as V holds them (a tiny double bound is a float zero).
    if (l < h && l != 0 && h != 0) {
      return math::clamp_below(math::clamp_above(x, hi), lo);
    }
    return math::select(x <= lo, lo, math::select(x >= hi, hi, x));
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative(V x) const noexcept {
    return backward(x, math::c<V>(1));
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward(V x, V dy) const noexcept {
    V const lo(static_cast<scalar_t<V>>(min));
    V const hi(static_cast<scalar_t<V>>(max));
    return math::keep_nan(x, math::select(math::both(x > lo, x < hi), dy, V(0)));
  }
  // The output is strictly inside (min, max) exactly where the input is.
  template <real_value V>
  NONLIN_ISA_TAG V derivative_from_output(V y) const noexcept {
    return derivative(y);
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward_from_output(V y, V dy) const noexcept {
    return backward(y, dy);
  }
};

// relu6(x) = min(max(x, 0), 6): hardtanh on [0, 6].
// Bound: 2 ulp forward, 2 ulp derivative, float and double, for every x (tested against
// MPFR: its row in catalog/, tests/accuracy_test.cpp).
struct relu6 {
  // Results are arguments, 0 or small integers: exact in 16 bits (kernels.hpp).
  static constexpr bool exact_results = true;
  template <real_value V>
  NONLIN_ISA_TAG V operator()(V x) const noexcept {
    // hardtanh's selects, relu's +0 for x <= 0 (-0 included), in two operations.
    return math::clamp_above(math::positive_part(x), math::c<V>(6));
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative(V x) const noexcept {
    return bounds().derivative(x);
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward(V x, V dy) const noexcept {
    return bounds().backward(x, dy);
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative_from_output(V y) const noexcept {
    return bounds().derivative_from_output(y);
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward_from_output(V y, V dy) const noexcept {
    return bounds().backward_from_output(y, dy);
  }

 private:
  NONLIN_ISA_TAG static constexpr hardtanh bounds() noexcept { return {.min = 0.0, .max = 6.0}; }
};

// relu(x) = max(x, 0), +0 for x <= 0; relu'(0) = 0.
// Bound: 2 ulp forward, 2 ulp derivative, float and double, for every x (tested against
// MPFR: its row in catalog/, tests/accuracy_test.cpp).
struct relu {
  // Results are arguments, 0 or small integers: exact in 16 bits (kernels.hpp).
  static constexpr bool exact_results = true;
  template <real_value V>
  NONLIN_ISA_TAG V operator()(V x) const noexcept {
    return math::positive_part(x);
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative(V x) const noexcept {
    return backward(x, math::c<V>(1));
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward(V x, V dy) const noexcept {
    return math::where_positive(x, dy);
  }
  // y > 0 exactly where x > 0.
  template <real_value V>
  NONLIN_ISA_TAG V derivative_from_output(V y) const noexcept {
    return derivative(y);
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward_from_output(V y, V dy) const noexcept {
    return backward(y, dy);
  }
};

// leaky_relu(x) = x for x > 0, alpha x otherwise; leaky_relu'(0) = alpha. backward_from_output
// needs alpha > 0 (the sign of y must tell the piece): the span kernel checks it.
// Bound: 2 ulp forward, 2 ulp derivative, float and double, for every x (tested against
// MPFR: its row in catalog/, tests/accuracy_test.cpp).
struct leaky_relu {
  double alpha = 0.01;

  template <real_value V>
  NONLIN_ISA_TAG V operator()(V x) const noexcept {
    return math::select(x > V(0), x, x * slope<V>());
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative(V x) const noexcept {
    return math::keep_nan(x, math::select(x > V(0), math::c<V>(1), slope<V>()));
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward(V x, V dy) const noexcept {
    return math::keep_nan(x, math::select(x > V(0), dy, dy * slope<V>()));
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative_from_output(V y) const noexcept {
    return derivative(y);
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward_from_output(V y, V dy) const noexcept {
    return backward(y, dy);
  }
  NONLIN_ISA_TAG bool output_backward_defined() const noexcept { return alpha > 0.0; }
  // For the 16-bit kernels (math/true_side.hpp): alpha x rounded in double (alpha the double
  // it is) lies on the side of the exact product that two_product shows; x itself on the right.
  template <real_value V>
  NONLIN_ISA_TAG V side_of_true_value(V x, V y) const noexcept {
    return math::select(x > V(0), V(0), math::side_of_product(math::c<V>(alpha), x, y));
  }

 private:
  template <real_value V>
  NONLIN_ISA_TAG V slope() const noexcept {
    return V(static_cast<scalar_t<V>>(alpha));
  }
};

// squared_relu(x) = max(x, 0)^2 (Primer, So et al. 2021); derivative 2 max(x, 0).
// Bound: 2 ulp forward, 2 ulp derivative, float and double, for every x (tested against
// MPFR: its row in catalog/, tests/accuracy_test.cpp).
struct squared_relu {
  // From 16-bit inputs (at most 11 significant bits each) x^2 and dy (2x) have at most 22: every
  // normal float result is exact, only a subnormal one may need the recomputation in double.
  static constexpr bool exact_normal_results = true;
  template <real_value V>
  NONLIN_ISA_TAG V operator()(V x) const noexcept {
    V const r = relu()(x);
    return r * r;
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative(V x) const noexcept {
    V const r = relu()(x);
    return r + r;
  }
  // dy (2x), 2x exact, rounded once; where 2x would overflow (x > max / 2, a branch taken only by
  // batches with such a lane) (dy x) 2 instead: dy x cannot be subnormal there, so doubling it is
  // exact. 0 where x <= 0, selected as in relu (an infinite dy gives 0, not NaN). The product is
  // formed from x itself, not from relu(x): the last select discards it wherever they differ.
  template <real_value V>
  NONLIN_ISA_TAG V backward(V x, V dy) const noexcept {
    V product = dy * (x + x);
    auto const doubling_overflows = x > V(std::numeric_limits<scalar_t<V>>::max() / 2);
    if (math::any(doubling_overflows)) [[unlikely]] {
      V const scaled = dy * x;
      product = math::select(doubling_overflows, scaled + scaled, product);
    }
    return math::where_positive(x, product);
  }
};

}  // namespace nonlin
