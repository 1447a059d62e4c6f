// SPDX-License-Identifier: MIT
#pragma once
// Constants of the activations: each as the double nearest it, and, where a product must be
// carried beyond the precision of the type (tanh-GELU's coefficients, 1.702, SELU's lambda
// alpha), as an unevaluated double sum hi + lo (double_double below); and ln 2 split for the
// argument reductions of exp and log.

#include <numbers>

#include "../isa.hpp"

namespace nonlin::math {
inline namespace NONLIN_ISA {

// 1/sqrt(2 pi), the normal density at 0.
inline constexpr double inv_sqrt_2pi = 0.398942280401432677939946059934381868;
// sqrt(2/pi), the tanh-GELU scale.
inline constexpr double sqrt_2_over_pi = 0.797884560802865355879892119868763737;
// The cubic coefficient of the tanh-GELU (Hendrycks & Gimpel 2016).
inline constexpr double gelu_tanh_kappa = 0.044715;
// CLIP's quick-GELU slope: x * sigmoid(1.702 x).
inline constexpr double gelu_quick_k = 1.702;
// SELU (Klambauer et al. 2017).
inline constexpr double selu_alpha = 1.67326324235437728481704299167171;
inline constexpr double selu_lambda = 1.05070098735548049341933498529460;

}  // namespace NONLIN_ISA
}  // namespace nonlin::math

namespace nonlin::math {
inline namespace NONLIN_ISA {

// A real constant as an unevaluated double sum hi + lo (lo below half an ulp of hi), for the
// products that must be carried beyond double precision. Computed with mpmath at 40 digits.
struct double_double {
  double hi;
  double lo;
};

// 1/sqrt(2 pi): the normal density's factor, where its rounding would be amplified.
inline constexpr double_double inv_sqrt_2pi_split = {inv_sqrt_2pi, -0x1.cbc0d30ebfd15p-56};
// 2 sqrt(2/pi): the tanh-GELU's v = 2u = x (c1 + c3 x^2).
inline constexpr double_double gelu_tanh_c1 = {0x1.9884533d43651p+0, -0x1.cbc0d30ebfd15p-54};
// 2 sqrt(2/pi) * 0.044715
inline constexpr double_double gelu_tanh_c3 = {0x1.2444f2a4d8b4bp-4, -0x1.6c843a29d1c7p-61};
// 3 * 2 sqrt(2/pi) * 0.044715, the slope's quadratic coefficient.
inline constexpr double_double gelu_tanh_3c3 = {0x1.b6676bf7450f0p-3, 0x1.bba7351828aabp-57};
// 1.702 as a real number (the double nearest it is 2^-55 below).
inline constexpr double_double gelu_quick_slope = {0x1.b3b645a1cac08p+0, 0x1.89374bc6a7efap-55};

// selu's lambda * alpha (the negative saturation value).
inline constexpr double_double selu_lambda_alpha = {0x1.c212cc640f031p+0, 0x1.05161b045a1fep-56};

// ln 2 as head + tail for the argument reductions of exp and log: the head has trailing zero
// bits (8 in float, 11 in double), so that n * head is exact for every exponent n they meet.
template <class T>
struct ln2_split;
template <>
struct ln2_split<float> {
  static constexpr float head = 0x1.62e4p-1f;
  static constexpr float tail = 0x1.7f7d1cp-20f;
};
template <>
struct ln2_split<double> {
  static constexpr double head = 0x1.62e42fefa38p-1;
  static constexpr double tail = 0x1.ef35793c7673p-45;
};

}  // namespace NONLIN_ISA
}  // namespace nonlin::math
