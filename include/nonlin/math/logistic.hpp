// SPDX-License-Identifier: MIT
#pragma once
// The logistic sigmoid and what is built on it, all from e = e^(-|z|), which never overflows:
//   sigma(z) = (z >= 0 ? 1 : e) / (1 + e)           (the stable split of the documents)
//   sigma'(z) = sigma(z) sigma(-z) = e / (1 + e)^2   (no 1 - sigma cancellation in the tails)
//   x sigma(z) and its derivative for a z given as hi + lo (SiLU, Swish, quick and tanh GELU).
// Where the result is e times something, the factor goes in before exp's final scale, so a
// subnormal result is rounded once instead of losing its low bits to a subnormal e.

#include <limits>

#include "double_float.hpp"
#include "exp.hpp"
#include "log.hpp"
#include "ops.hpp"

namespace nonlin::math {

template <real_value V>
inline V sigmoid(V const& z) noexcept {
  V const one(scalar_t<V>(1));
  V const e = math::exp(math::neg(math::abs(z)));
  return math::select(z >= V(0), one, e) / (one + e);
}

// sigma'(z) = e / (1 + e)^2.
template <real_value V>
inline V sigmoid_derivative(V const& z) noexcept {
  V const one(scalar_t<V>(1));
  auto const e = math::exp_parts(math::neg(math::abs(z)));
  V const d = one + e.value();
  return e.times(one / (d * d));
}

// log(1 + e^z) without overflow: max(z, 0) + log1p(e^-|z|).
template <real_value V>
inline V softplus(V const& z) noexcept {
  V const e = math::exp(math::neg(math::abs(z)));
  return math::select(z > V(0), z, V(0)) + math::log1p(e);
}

// e^-|z| for z = z.hi + z.lo, with the low part kept (0 where z.hi is infinite, where two_product
// leaves no finite low part and none is needed).
template <real_value V>
inline exp_split<V> exp_minus_abs(double_float<V> const& z) noexcept {
  V const lo = math::select(math::abs(z.hi) == V(std::numeric_limits<scalar_t<V>>::infinity()),
                            V(0), z.lo);
  return math::exp_parts(math::neg(math::abs(z.hi)),
                         math::select(z.hi >= V(0), math::neg(lo), lo));
}

// x sigma(z) for z = z.hi + z.lo: x / (1 + e) for z >= 0, e x / (1 + e) below.
template <real_value V>
inline V x_sigmoid(V const& x, double_float<V> const& z) noexcept {
  V const one(scalar_t<V>(1));
  auto const e = math::exp_minus_abs(z);
  V const x_over_d = x / (one + e.value());
  // Where e^z underflowed entirely, x sigma(z) -> 0 with x's sign, also for x = -inf.
  V const left = math::select(e.vanished(), math::sign_bit(x), e.times(x_over_d));
  return math::select(z.hi >= V(0), x_over_d, left);
}

// d/dx [x sigma(z(x))] = sigma(z) (1 + x z'(x) sigma(-z)), with x_slope = x z'(x).
template <real_value V>
inline V x_sigmoid_derivative(double_float<V> const& z, V const& x_slope) noexcept {
  V const one(scalar_t<V>(1));
  auto const e = math::exp_minus_abs(z);
  V const ev = e.value();
  V const d = one + ev;
  auto const positive = z.hi >= V(0);
  V const sigma_minus = math::select(positive, ev, one) / d;
  // sigma(-z) = 0: the limit 1 also where x z' is infinite.
  V const factor =
      math::select(sigma_minus == V(0), one, math::fma(x_slope, sigma_minus, one));
  V const right = factor / d;
  V const left = math::select(e.vanished(), V(0), e.times(factor / d));
  return math::select(positive, right, left);
}

// tanh x = sign(x) m / (m + 2), m = e^(2|x|) - 1: no cancellation near 0; |x| is clamped
// where tanh rounds to 1 so that m stays finite.
template <real_value V>
inline V tanh(V const& x) noexcept {
  using T = scalar_t<V>;
  constexpr T saturation = std::is_same_v<T, float> ? T(10) : T(20);
  V const a = math::clamp_above(math::abs(x), V(saturation));
  V const m = math::expm1(a + a);
  return math::copysign(m / (m + c<V>(2)), x);
}

// tanh'(x) = sech^2 x = 4 e / (1 + e)^2, e = e^(-2|x|): the same as 4 sigma'(2x).
template <real_value V>
inline V tanh_derivative(V const& x) noexcept {
  V const a = math::abs(x);
  return c<V>(4) * math::sigmoid_derivative(a + a);
}

}  // namespace nonlin::math
