// SPDX-License-Identifier: MIT
#pragma once
// The math of the opt-in fast tier (nonlin/fast.hpp): the same exp reduction and polynomial as
// exp.hpp, but none of the default tier's compensations (no hi + lo arguments, no exact
// 1 + e, no fitted root neighbourhoods), and a reciprocal by Newton's method from vrcp14
// instead of a division. Scalars and batches still share every line, so they agree bit for bit.
// The bounds this buys are measured by tools/accuracy.cpp and listed in the README.

#include <limits>
#include <type_traits>

#include "../isa.hpp"
#include "exp.hpp"
#include "ops.hpp"

namespace nonlin::math::fast {
inline namespace NONLIN_ISA {

// 1/d for d in [1, 2]: vrcp14 and Newton steps (one for float, two for double), within about
// 1 ulp; a division where the target has no AVX-512.
template <real_value V>
inline V reciprocal(V const& d) noexcept {
  if constexpr (arch::has_reciprocal_estimate<V>) {
    V const one = math::c<V>(1);
    V r = arch::reciprocal_estimate(d);
    r = math::fma(r, math::fma(math::neg(d), r, one), r);
    if constexpr (std::is_same_v<scalar_t<V>, double>) {
      r = math::fma(r, math::fma(math::neg(d), r, one), r);
    }
    return r;
  } else {
    return math::divide(math::c<V>(1), d);
  }
}

// The logistic pieces from e = e^-|z| = (1 + m) 2^n in (0, 1] and r = 1 / (1 + e):
// sigma(|z|) = r and sigma(-|z|) = e r, so neither tail cancels or overflows. Only the lower
// clamp of exp is needed (-|z| <= 0).
template <real_value V>
struct logistic_parts {
  V a;  // -|z|, clamped at exp's lowest argument
  V m;
  V n;
  V e;
  V r;
  V positive() const noexcept { return r; }         // sigma(|z|)
  V negative() const noexcept { return e * r; }     // sigma(-|z|)
  V slope() const noexcept { return (e * r) * r; }  // sigma'(z) = e / (1 + e)^2
  // k sigma(-|z|) = (k r) (1 + m) 2^n, rounded once also where it is subnormal; k's sign of 0
  // where e^-|z| was clamped (below it k e^-|z| is 0 for every |k| < 2^16, and the limit for
  // infinite k).
  V negative_times(V const& k) const noexcept {
    using K = math::detail::exp_constants<scalar_t<V>>;
    V const kr = k * r;
    return math::select(a == V(K::min_arg), math::sign_bit(k),
                        math::scale(math::fma(kr, m, kr), n));
  }
};

// R = product: for a backward's products far in the tails (math::with_product_tail), where
// dy sigma'(z) = scale_times((1 + m) r r, n, dy).
template <exp_range R = exp_range::value, real_value V>
inline logistic_parts<V> logistic(V const& z) noexcept {
  V const a =
      math::clamp_below(math::neg(math::abs(z)), V(math::detail::lowest_arg<R, scalar_t<V>>));
  auto reduction = math::reduce_exp_clamped(a);
  V const m = math::expm1_reduced(reduction.r);
  V const n = R == exp_range::value ? reduction.n : math::value_exponent(reduction.n);
  V const e = math::scale(m + math::c<V>(1), n);
  return {a, m, reduction.n, e, fast::reciprocal(e + math::c<V>(1))};
}

// dy c sigma'(z) for a derivative `common` = c sigma'(z) (c a power of two), rounded once also
// far in the tails.
template <real_value V>
inline V slope_times(V const& common, V const& z, V const& dy, V const& power_of_two) noexcept {
  auto tail = [](V arg, V factor, V power) {
    auto p = fast::logistic<exp_range::product>(arg);
    return math::scale_times(power * (((p.m + math::c<V>(1)) * p.r) * p.r), p.n, factor);
  };
  return math::with_product_tail(dy * common, math::neg(math::abs(z)), tail, z, dy, power_of_two);
}

// sigma(z) and sigma(-z) for the sign of z.
template <real_value V>
struct sigmoid_pair {
  V plus;   // sigma(z)
  V minus;  // sigma(-z) = 1 - sigma(z)
};

template <real_value V>
inline sigmoid_pair<V> sigmoid_both(V const& z) noexcept {
  auto p = fast::logistic(z);
  auto right = z >= V(0);
  return {math::select(right, p.positive(), p.negative()),
          math::select(right, p.negative(), p.positive())};
}

// tanh x = sign(x) (1 - e) / (1 + e), e = e^-2|x| = 2^n (1 + p): 1 - e = (1 - 2^n) - 2^n p with
// 1 - 2^n exact, so small |x| does not cancel; |x| is clamped where tanh rounds to 1.
template <real_value V>
inline V tanh(V const& x) noexcept {
  using T = scalar_t<V>;
  constexpr T saturation = std::is_same_v<T, float> ? T(9) : T(19);
  V const a = math::clamp_above(math::abs(x), V(saturation));
  auto reduction = math::reduce_exp(math::neg(a + a));
  V const p = math::expm1_reduced(reduction.r);
  V const two_n = math::scale(math::c<V>(1), reduction.n);
  V const one = math::c<V>(1);
  V const numerator = math::fma(math::neg(two_n), p, one - two_n);
  V const denominator = math::fma(two_n, p, one + two_n);
  return math::copysign(numerator * fast::reciprocal(denominator), x);
}

}  // namespace NONLIN_ISA
}  // namespace nonlin::math::fast
