// SPDX-License-Identifier: MIT
#pragma once
// The logistic sigmoid and what is built on it, all from e = e^(-|z|), which never overflows:
//   sigma(z) = (z >= 0 ? 1 : e) / (1 + e)           (the stable split: no e^-x overflow)
//   sigma'(z) = sigma(z) sigma(-z) = e / (1 + e)^2   (no 1 - sigma cancellation in the tails)
//   x sigma(z) and its derivative for a z given as hi + lo (SiLU, Swish, quick and tanh GELU).
// Where the result is e times something, the factor goes in before exp's final scale, so a
// subnormal result is rounded once instead of losing its low bits to a subnormal e.

#include <limits>

#include "double_float.hpp"
#include "exp.hpp"
#include "log.hpp"
#include "ops.hpp"
#include "polynomial.hpp"
#include "roots.hpp"

namespace nonlin::math {

// 1 + e for e in [0, 1], exactly, as hi + lo (Fast2Sum): dividing by the rounded 1 + e alone
// would cost up to an ulp (two for 1 / (1 + e)^2).
template <real_value V>
inline double_float<V> one_plus(V const& e) noexcept {
  V const one(scalar_t<V>(1));
  V const hi = one + e;
  return {hi, (one - hi) + e};
}

// 1 + e for e = e.hi + e.lo in [0, 1], as hi + lo (to 2^-48).
template <real_value V>
inline double_float<V> one_plus(double_float<V> const& e) noexcept {
  auto sum = math::one_plus(e.hi);
  sum.lo = sum.lo + e.lo;
  return sum;
}

// e^x as hi + lo: the rounded value and what its rounding lost ((1 + m) rounded once, its error
// exact by Fast2Sum, plus m_lo), both scaled exactly. A quotient with 1 + e^x in its denominator
// and e^x in front then sees the same e^x in both places: near x = 0 the two errors cancel in
// sigma' = e / (1 + e)^2 when they are the same, and add up when they differ.
template <real_value V>
inline double_float<V> exp_hi_lo(exp_split<V> const& e) noexcept {
  V const one(scalar_t<V>(1));
  V const hi = one + e.m;
  V const lo = ((one - hi) + e.m) + e.m_lo;
  return {math::scale(hi, e.n), math::scale(lo, e.n)};
}

// The same for the lean exp: 1 + m exactly as hi + lo, m's own rounding not kept.
template <real_value V>
inline double_float<V> exp_hi_lo(exp_scaled<V> const& e) noexcept {
  V const one(scalar_t<V>(1));
  V const hi = one + e.m;
  return {math::scale(hi, e.n), math::scale((one - hi) + e.m, e.n)};
}

// A seed of 1/d from which one residual step gives a quotient to the type's precision: vrcp14
// (2^-14 relative, the step squares it) for float with AVX-512, 1/d elsewhere.
template <real_value V>
inline V quotient_seed(V const& d) noexcept {
  if constexpr (std::is_same_v<scalar_t<V>, float>) {
    return math::approx_reciprocal(d);
  } else {
    return math::divide(math::c<V>(1), d);
  }
}

// n / (d.hi + d.lo) as hi + lo, for a caller that multiplies it by e^x (see
// quotient_by_square_hi_lo): hi = n r from quotient_seed (within 2^-14 in float), the residual n -
// hi d.hi by one fma (one rounding of a term 2^-14 of n), lo = (residual - hi d.lo) r, so that hi +
// lo is within 2^-28 (0 where hi is 0 or infinite).
template <real_value V>
inline double_float<V> quotient_hi_lo(V const& n, double_float<V> const& d) noexcept {
  V const r = math::quotient_seed(d.hi);
  V const hi = n * r;
  V const residual = math::fma(math::neg(hi), d.hi, n);
  V const lo = math::fma(math::neg(hi), d.lo, residual) * r;
  return {hi, math::select(math::zero_or_infinite(hi), V(0), lo)};
}

// (d.hi + d.lo)^2 as hi + lo to first order in d.lo: d.hi^2 exactly (two_product), plus
// 2 d.hi d.lo.
template <real_value V>
inline double_float<V> square_hi_lo(double_float<V> const& d) noexcept {
  auto product = math::two_product(d.hi, d.hi);
  return {product.hi, math::fma(d.hi + d.hi, d.lo, product.lo)};
}

// The same quotient as hi + lo, for a caller that multiplies it by e^x: rounding the quotient
// first would cost up to an ulp of the product where the two lie in different binades (near
// sigma'(0) = 1/4, the quotient just above 1/4 and the product just below). hi and lo as in
// quotient: from the seed, the residual n - hi d^2 by one fma, lo = residual r (0 where hi is 0
// or infinite).
template <real_value V>
inline double_float<V> quotient_by_square_hi_lo(double_float<V> const& n,
                                                double_float<V> const& d) noexcept {
  auto d2 = math::square_hi_lo(d);
  V const r = math::quotient_seed(d2.hi);
  V const hi = n.hi * r;
  V const residual = math::fma(math::neg(hi), d2.hi, n.hi) + n.lo;
  V const lo = math::fma(math::neg(hi), d2.lo, residual) * r;
  return {hi, math::select(math::zero_or_infinite(hi), V(0), lo)};
}

// c / (d.hi + d.lo)^2 as hi + lo for a constant c != 0 and d >= 1, as quotient_by_square_hi_lo
// without what that needs for a general numerator: no low part to add, and no guard for a hi
// of 0 or infinity, which cannot occur here (three operations a batch less in sigma').
template <real_value V>
inline double_float<V> constant_by_square_hi_lo(V const& c, double_float<V> const& d) noexcept {
  auto d2 = math::square_hi_lo(d);
  V const r = math::quotient_seed(d2.hi);
  V const hi = c * r;
  V const residual = math::fma(math::neg(hi), d2.hi, c);
  return {hi, math::fma(math::neg(hi), d2.lo, residual) * r};
}

// (n.hi + n.lo) / (d.hi + d.lo)^2 rounded once: quotient_by_square_hi_lo's hi + lo.
template <real_value V>
inline V divide_by_square(double_float<V> const& n, double_float<V> const& d) noexcept {
  auto q = math::quotient_by_square_hi_lo(n, d);
  return q.hi + q.lo;
}

// n / (1 + e) for e in [0, 1] and n in {1, e} (any n with n - n / (1 + e) exact), without a
// division where the target has vrcp14: q0 = n r, and the residual n - q0 (1 + e) formed as
// (n - q0) - q0 e, so that 1 + e is never rounded (n - q0 is exact: q0 is within a factor 2 of
// n), then one fma of the residual times r.
namespace detail {
template <bool with_lo, real_value V>
inline V divide_by_one_plus(V const& n, V const& e, V const& n_lo) noexcept {
  V const r = math::quotient_seed(math::c<V>(1) + e);
  V const q0 = n * r;
  V residual = math::fma(math::neg(q0), e, n - q0);
  if constexpr (with_lo) {
    residual = residual + n_lo;
  }
  return math::fma(residual, r, q0);
}
}  // namespace detail

template <real_value V>
inline V divide_by_one_plus(V const& n, V const& e) noexcept {
  return detail::divide_by_one_plus<false>(n, e, V(0));
}

// (n + n_lo) / (1 + e) for a numerator carried as hi + lo: n_lo enters the residual.
template <real_value V>
inline V divide_by_one_plus(V const& n, V const& e, V const& n_lo) noexcept {
  return detail::divide_by_one_plus<true>(n, e, n_lo);
}

template <real_value V>
inline V sigmoid(V const& z) noexcept {
  V const one(scalar_t<V>(1));
  V const e = math::exp_nonpositive(math::neg(math::abs(z)));
  return math::divide_by_one_plus(math::select(z >= V(0), one, e), e);
}

// sigma'(z) = e / (1 + e)^2, times a power of two c (exact on the quotient, so that a subnormal
// c sigma' is not the rounded sigma' scaled up: tanh' = 4 sigma'(2x)).
template <real_value V>
inline V sigmoid_derivative(V const& z, V const& power_of_two = c<V>(1)) noexcept {
  auto e = math::exp_scaled_nonpositive(math::neg(math::abs(z)));
  auto k = math::constant_by_square_hi_lo(power_of_two, math::one_plus(math::exp_hi_lo(e)));
  return math::times(e, k);
}

// dy c sigma'(z) rounded once (math::with_product_tail).
template <real_value V>
inline V sigmoid_derivative_times(V const& z, V const& dy,
                                  V const& power_of_two = c<V>(1)) noexcept {
  V const a = math::neg(math::abs(z));
  auto tail = [](V arg, V factor, V power) {
    auto e = math::exp_scaled_nonpositive<exp_range::product>(arg);
    auto value = math::exp_hi_lo(exp_scaled<V>{e.m, math::value_exponent(e.n)});
    auto k = math::constant_by_square_hi_lo(power, math::one_plus(value));
    return math::scale_times(math::unscaled_times(e, k), e.n, factor);
  };
  return math::with_product_tail(dy * math::sigmoid_derivative(z, power_of_two), a, tail, a, dy,
                                 power_of_two);
}

// dy sigma(z) rounded once: sigma(z) = e / (1 + e) is below the normal range for z < -87 (float).
template <real_value V>
inline V sigmoid_times(V const& z, V const& dy) noexcept {
  // The tail lanes are those with z < normal_arg < 0, where -|z| = z.
  auto tail = [](V arg, V factor) {
    auto e = math::exp_scaled_nonpositive<exp_range::product>(arg);
    V const unscaled = math::c<V>(1) + e.m;
    V const value = math::scale(unscaled, math::value_exponent(e.n));
    return math::scale_times(math::divide_by_one_plus(unscaled, value), e.n, factor);
  };
  return math::with_product_tail(dy * math::sigmoid(z), z, tail, math::neg(math::abs(z)), dy);
}

// log(1 + e^z) without overflow: max(z, 0) + log1p(e^-|z|), e^-|z| in [0, 1] (or NaN).
template <real_value V>
inline V softplus(V const& z) noexcept {
  V const e = math::exp_nonpositive(math::neg(math::abs(z)));
  return math::select(z > V(0), z, V(0)) + math::log1p_above_minus_one(e);
}

// -|z| for z = z.hi + z.lo as hi + lo (lo 0 where z.hi is infinite, where two_product leaves no
// finite low part and none is needed).
template <real_value V>
inline double_float<V> minus_abs(double_float<V> const& z) noexcept {
  V const lo =
      math::select(math::abs(z.hi) == V(std::numeric_limits<scalar_t<V>>::infinity()), V(0), z.lo);
  return {math::neg(math::abs(z.hi)), math::select(z.hi >= V(0), math::neg(lo), lo)};
}

// x sigma(z) for z = z.hi + z.lo, on one path for both signs of z: with e = e^-|z| = (1 + m) 2^n,
//   x sigma(z) = k / (1 + e) 2^s,  k = x, s = 0 (z >= 0);  k = (x/2)(1 + m), s = n + 1 (z < 0),
// one quotient (divide_by_one_plus) and one exact scale. The halving keeps k finite for any
// finite x (1 + m is up to 1.42); it is exact except for a subnormal x with z < 0, whose result
// is subnormal too (one more rounding there, at most an ulp of 2^-149).
namespace detail {
template <bool with_lo, real_value V>
inline V x_sigmoid(V const& x, double_float<V> const& z) noexcept {
  using K = detail::exp_constants<scalar_t<V>>;
  auto e = [&] {
    if constexpr (with_lo) {
      auto a = math::minus_abs(z);
      return math::exp_scaled_nonpositive(a.hi, a.lo);
    } else {
      return math::exp_scaled_nonpositive(math::neg(math::abs(z.hi)));
    }
  }();
  auto right = z.hi >= V(0);
  V const half_x = x * math::c<V>(0.5);
  V const left_k = math::fma(half_x, e.m, half_x);
  V const k = math::select(right, x, left_k);
  // left_k's rounding (half_x - left_k is exact: 1 + m is within a factor 2 of 1) goes into the
  // quotient's residual: 0.5 ulp less on the left.
  V const k_lo = math::select(right, V(0), math::fma(half_x, e.m, half_x - left_k));
  V const s = math::select(right, V(0), e.n + math::c<V>(1));
  V const q = math::divide_by_one_plus(k, e.value(), k_lo);
  // An infinite k (x = +-inf where z >= 0): the quotient's residual is NaN, k itself the limit;
  // a zero k: the residual's +0 would lose the sign of x = -0.
  V const y = math::select(math::zero_or_infinite(k), k, math::scale(q, s));
  // Where e^z underflowed entirely (z < min_arg), x sigma(z) -> 0 with x's sign, also for x = -inf.
  return math::select(z.hi < V(K::min_arg), math::sign_bit(x), y);
}
}  // namespace detail

template <real_value V>
inline V x_sigmoid(V const& x, double_float<V> const& z) noexcept {
  return detail::x_sigmoid<true>(x, z);
}

// x sigma(z) for an exact z (silu: z = x).
template <real_value V>
inline V x_sigmoid(V const& x, V const& z) noexcept {
  return detail::x_sigmoid<false>(x, double_float<V>{z, V(0)});
}

// d/dx [x sigma(z(x))] = sigma(z) (1 + x z'(x) sigma(-z)). With
// e = e^-|z| and d = 1 + e this is
//   z >= 0:  (1 + e (1 + x z')) / d^2
//   z <  0:  e ((1 + x z') + e) / d^2
// so that near the zero of the bracket it cancels with one rounding instead of amplifying the
// rounding of sigma(-z).
// one_plus_slope = 1 + x z'(x) as hi + lo, which the caller forms as accurately as it can.
//
// e carries its low part (exp_split_nonpositive: m's rounding kept), so the bracket's cancellation
// near its zero starts from e within ~2^-30 instead of 2^-25: then this formula is within 1.05 ulp
// wherever |d| = |z - z0| >= 0.005 (every float of -1.2 <= d <= 0.7 against long double, float
// and double), better than the fitted ratio (1.2-1.6 ulp), which its callers therefore take only
// within +-0.005 of the zero (with the lean exp they needed it on -1 <= d <= 1/2, and the fit's
// own error there left silu' at 1.86 and gelu_quick' at 2.29 ulp). So few lanes lie that close
// that the ratio runs on about one batch in a hundred (math::patch_near_root's branch).
inline constexpr root_window x_sigmoid_root_window{-0.005, 0.005};

namespace detail {
// R = value: the derivative; R = product: dy times it on the left (z < 0), for
// with_product_tail.
template <exp_range R, real_value V>
inline V x_sigmoid_derivative(double_float<V> const& z, double_float<V> const& one_plus_slope,
                              V const& dy) noexcept {
  V const one(scalar_t<V>(1));
  using K = detail::exp_constants<scalar_t<V>>;
  auto a = math::minus_abs(z);
  auto e = math::exp_split_nonpositive<R>(a.hi, a.lo);
  auto ev = math::exp_hi_lo(
      R == exp_range::value ? e : exp_split<V>{e.m, e.m_lo, math::value_exponent(e.n)});
  auto d = math::one_plus(ev);
  // e = 0 on the right: the limit 1 / d^2 = 1 also where the slope is infinite.
  // 1 + e (1 + x z') as hi + lo: e (1 + x z') <= 1.6 for every caller, so 1 - hi is exact.
  V const product_hi = math::fma(ev.hi, one_plus_slope.hi, one);
  V const product_lo = math::fma(ev.hi, one_plus_slope.hi, one - product_hi) +
                       math::fma(ev.hi, one_plus_slope.lo, ev.lo * one_plus_slope.hi);
  auto vanished_right = ev.hi == V(0);
  auto numerator = math::two_sum(one_plus_slope.hi, ev.hi);
  numerator.lo = numerator.lo + (one_plus_slope.lo + ev.lo);
  // One quotient by d^2 for both sides, its numerator chosen per lane (two quotients, one of
  // them thrown away, cost 7 more operations per batch; each lane's operations are the same).
  auto right = z.hi >= V(0);
  double_float<V> const chosen{
      math::select(right, math::select(vanished_right, one, product_hi), numerator.hi),
      math::select(right, math::select(vanished_right, V(0), product_lo), numerator.lo)};
  auto q = math::quotient_by_square_hi_lo(chosen, d);
  if constexpr (R == exp_range::product) {
    return math::scale_times(math::unscaled_times(e, q), e.n, dy);
  } else {
    V const left = math::select(a.hi < V(K::min_arg), V(0), math::times(e, q));
    return math::select(right, q.hi + q.lo, left);
  }
}
}  // namespace detail

template <real_value V>
inline V x_sigmoid_derivative(double_float<V> const& z,
                              double_float<V> const& one_plus_slope) noexcept {
  return detail::x_sigmoid_derivative<exp_range::value>(z, one_plus_slope, V(0));
}

// dy times a derivative `common` that is x_sigmoid_derivative(z, one_plus_slope) (patched near
// its root), rounded once also far in the left tail (with_product_tail).
template <real_value V>
inline V x_sigmoid_derivative_times(V const& common, double_float<V> const& z,
                                    double_float<V> const& one_plus_slope, V const& dy) noexcept {
  auto tail = [](double_float<V> arg, double_float<V> bracket, V factor) {
    return detail::x_sigmoid_derivative<exp_range::product>(arg, bracket, factor);
  };
  return math::with_product_tail(dy * common, z.hi, tail, z, one_plus_slope, dy);
}

// tanh |x| = m / (m + 2), m = e^(2|x|) - 1: no cancellation near 0, and m's error is damped
// (the quotient's sensitivity to it is 2 / (m + 2) <= 1; e^(-2|x|) - 1 would amplify it up to 2x).
// |x| is clamped where tanh rounds to 1 (10, 20 in double: above 9.01 and 18.72), so that
// n = round(2|x| / ln 2) <= 29 (58) and the one-fma expm1 applies (for n above the mantissa
// bits its 2^n - 1 rounds, by under 2^-28 of m, far below what reaches a result that rounds
// to 1 there). The quotient from a vrcp14 seed and one residual step, the residual m - q0 (m + 2)
// with m + 2 carried exactly as hi + lo, so only m's own error and the last rounding remain.
template <real_value V>
inline V tanh(V const& x) noexcept {
  using T = scalar_t<V>;
  constexpr T saturation = std::is_same_v<T, float> ? T(10) : T(20);
  V const a = math::clamp_above(math::abs(x), V(saturation));
  auto reduction = math::reduce_exp_clamped(a + a);
  V const m = math::expm1_small_n(reduction.n, math::expm1_reduced(reduction.r));
  auto d = math::two_sum_ordered(m, c<V>(2));
  V const r = math::quotient_seed(d.hi);
  V const q0 = m * r;
  V const residual = math::fma(math::neg(q0), d.lo, math::fma(math::neg(q0), d.hi, m));
  // One copysign for every lane (tanh(-0) = -0).
  return math::copysign(math::fma(residual, r, q0), x);
}

// tanh'(x) = sech^2 x = 4 e / (1 + e)^2, e = e^(-2|x|): the same as 4 sigma'(2x).
template <real_value V>
inline V tanh_derivative(V const& x) noexcept {
  V const a = math::abs(x);
  return math::sigmoid_derivative(a + a, c<V>(4));
}

// dy tanh'(x) rounded once.
template <real_value V>
inline V tanh_derivative_times(V const& x, V const& dy) noexcept {
  V const a = math::abs(x);
  return math::sigmoid_derivative_times(a + a, dy, c<V>(4));
}

}  // namespace nonlin::math
