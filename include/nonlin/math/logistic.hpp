// SPDX-License-Identifier: MIT
#pragma once
// The logistic sigmoid and what is built on it, all from e = e^(-|z|), which never overflows:
//   sigma(z) = (z >= 0 ? 1 : e) / (1 + e)           (the stable split: no e^-x overflow)
//   sigma'(z) = sigma(z) sigma(-z) = q (1 - q), q = sigma(-|z|) = e / (1 + e) <= 1/2 as hi + lo
//                                                    (no 1 - sigma cancellation in the tails)
//   x sigma(z) and its derivative for a z given as hi + lo (SiLU, Swish, quick and tanh GELU).
// Where the result is e times something, the factor goes in before exp's final scale, so a
// subnormal result is rounded once instead of losing its low bits to a subnormal e.

#include <limits>

#include "../isa.hpp"
#include "double_float.hpp"
#include "exp.hpp"
#include "log.hpp"
#include "ops.hpp"
#include "polynomial.hpp"
#include "roots.hpp"
#include "silu_slope.hpp"

namespace nonlin::math {
inline namespace NONLIN_ISA {

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
  V const residual = math::fnma(hi, d.hi, n);
  V const lo = math::fnma(hi, d.lo, residual) * r;
  return {hi, math::select(math::zero_or_infinite(hi), V(0), lo)};
}

// (n.hi + n.lo) / (d.hi + d.lo) rounded once, for finite n and d > 0 with |d.lo| <= ulp(d.hi)/2
// (a two-sum's): hi = n.hi r from quotient_seed, the residual n - hi d by two fmas (the first
// exact where the seed is within 2^-14) plus n.lo, one step.
template <real_value V>
inline V divide_hi_lo(double_float<V> const& n, double_float<V> const& d) noexcept {
  V const r = math::quotient_seed(d.hi);
  V const q0 = n.hi * r;
  V const residual = math::fnma(q0, d.lo, math::fnma(q0, d.hi, n.hi)) + n.lo;
  return math::fma(residual, r, q0);
}

// (d.hi + d.lo)^2 as hi + lo to first order in d.lo: d.hi^2 exactly (two_product), plus
// 2 d.hi d.lo.
template <real_value V>
inline double_float<V> square_hi_lo(double_float<V> const& d) noexcept {
  auto product = math::two_product(d.hi, d.hi);
  return {product.hi, math::fma(d.hi + d.hi, d.lo, product.lo)};
}

// n / d^2 as hi + lo for a finite n and d >= 1, for a caller that multiplies it by e^x: rounding
// the quotient first would cost up to an ulp of the product where the two lie in different
// binades (near sigma'(0) = 1/4, the quotient just above 1/4 and the product just below). hi and
// lo as in quotient_hi_lo: from the seed, the residual n - hi d^2 by one fma, lo = residual r.
template <real_value V>
inline double_float<V> finite_by_square_hi_lo(double_float<V> const& n,
                                              double_float<V> const& d) noexcept {
  auto d2 = math::square_hi_lo(d);
  V const r = math::quotient_seed(d2.hi);
  V const hi = n.hi * r;
  V const residual = math::fnma(hi, d2.hi, n.hi) + n.lo;
  return {hi, math::fnma(hi, d2.lo, residual) * r};
}

// The same for any n: where hi is 0 or infinite, lo is 0 (not the NaN of inf - inf).
template <real_value V>
inline double_float<V> quotient_by_square_hi_lo(double_float<V> const& n,
                                                double_float<V> const& d) noexcept {
  auto q = math::finite_by_square_hi_lo(n, d);
  return {q.hi, math::select(math::zero_or_infinite(q.hi), V(0), q.lo)};
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
  V residual = math::fnma(q0, e, n - q0);
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

namespace detail {
// sigma(z) and c sigma'(z) from e = e^-|z| (the lean exp), for one exp shared by both.
template <real_value V>
inline V sigmoid_given(V const& z, exp_scaled<V> const& e) noexcept {
  V const value = e.value();
  return math::divide_by_one_plus(math::one_where_nonnegative(z, value), value);
}
// c sigma'(z) = c q (1 - q), q = sigma(-|z|) = e / (1 + e) in [0, 1/2], before e's scale 2^n:
// e = (u + u_lo) 2^n with u = 1 + m rounded and u_lo what that rounding lost, and v = u 2^n its
// value (rounded where subnormal). q = q0 + q_lo, q0 = v r from the seed r of 1 / (1 + v), the
// residual e - q0 (1 + e) = 2^n ((u - q0 2^-n) - (q0 2^-n) v + u_lo (1 - q0)) (u - q0 2^-n
// exact: q0 is within a factor 2 of v), q_lo = residual r. Then c q (1 - q) = c q0 (1 - q0) + c
// q_lo (1 - 2 q0) to 2^-28: the first term by one fma, rounded once, the second added by one
// more. Near z = 0 (q ~ 1/2) the second vanishes, and so does the error of e (d sigma' / de = 0
// at e = 1); in the tails it is a 2^-14 correction. 18 operations after the exp, where c / (1 +
// e)^2 from the squared denominator took 22.
template <real_value V>
inline V sigmoid_derivative_unscaled(exp_scaled<V> const& e, V const& value,
                                     V const& power_of_two) noexcept {
  V const one = math::c<V>(1);
  V const u = one + e.m;
  V const u_lo = (one - u) + e.m;
  V const r = math::quotient_seed(one + value);
  V const q0_unscaled = u * r;
  V const q0 = value * r;
  V const one_minus_q0 = one - q0;
  V const residual = math::fma(u_lo, one_minus_q0, math::fnma(q0_unscaled, value, u - q0_unscaled));
  V const c_q0 = q0_unscaled * power_of_two;
  V const head = math::fnma(c_q0, q0, c_q0);
  return math::fma((residual * r) * power_of_two, one_minus_q0 - q0, head);
}

template <real_value V>
inline V sigmoid_derivative_given(exp_scaled<V> const& e, V const& power_of_two) noexcept {
  return math::scale(detail::sigmoid_derivative_unscaled(e, e.value(), power_of_two), e.n);
}
}  // namespace detail

template <real_value V>
inline V sigmoid(V const& z) noexcept {
  // -|z| and the exp's clamp in one vrange where the target has it (exp_scaled_of_neg_abs); that
  // drops a NaN z, which the numerator then takes from z itself (one_where_nonnegative).
  return detail::sigmoid_given(z, math::exp_scaled_of_neg_abs(z));
}

// sigma'(z) = e / (1 + e)^2 = q (1 - q), times a power of two c (exact before the scale, so that a
// subnormal c sigma' is not the rounded sigma' scaled up: tanh' = 4 sigma'(2x)): the quotient
// form, and the one of builds without the slope tables.
template <real_value V>
inline V sigmoid_derivative_quotient_form(V const& z, V const& power_of_two) noexcept {
  return detail::sigmoid_derivative_given(math::exp_scaled_nonpositive(math::neg_abs(z)),
                                          power_of_two);
}

// inside(), sigma'(z) c from the table (math/silu_slope.hpp), where |z| < 16 in builds with the
// slope tables, quotient_form() elsewhere (math::within_slope_table: a batch with a lane outside
// computes both).
template <real_value V, class Inside, class QuotientForm>
inline V sigmoid_slope(V const& z, V const& power_of_two, Inside const& inside,
                       QuotientForm const& quotient_form) noexcept {
  if constexpr (has_slope_tables<V>) {
    return math::within_slope_table(
        z, [&] { return inside(math::sigmoid_slope_from_table(z) * power_of_two); }, quotient_form);
  } else {
    return quotient_form();
  }
}

// c sigma'(z): from the table where |z| < 16 in builds with the slope tables (about 21 operations
// a batch against 31), the quotient form elsewhere.
template <real_value V>
inline V sigmoid_derivative(V const& z, V const& power_of_two = c<V>(1)) noexcept {
  return math::sigmoid_slope(
      z, power_of_two, [](V slope) { return slope; },
      [&] { return math::sigmoid_derivative_quotient_form(z, power_of_two); });
}

// sigma(z) and sigma'(z), the same bits as sigmoid and sigmoid_derivative (the gated units need
// both at the same z): from one exp, unless the derivative comes from the table.
template <real_value V>
inline value_and_slope<V> sigmoid_and_derivative(V const& z) noexcept {
  if constexpr (has_slope_tables<V>) {
    return {math::sigmoid(z), math::sigmoid_derivative(z)};
  } else {
    auto e = math::exp_scaled_nonpositive(math::neg_abs(z));
    return {detail::sigmoid_given(z, e), detail::sigmoid_derivative_given(e, math::c<V>(1))};
  }
}

// dy c sigma'(z) rounded once, given common = dy times sigmoid_derivative(z, c)
// (math::with_product_tail).
template <real_value V, class Tails = product_tails>
inline V sigmoid_derivative_product(V const& common, V const& z, V const& dy,
                                    V const& power_of_two = c<V>(1),
                                    Tails const& tails = {}) noexcept {
  V const a = math::neg_abs(z);
  auto tail = [](V arg, V factor, V power) {
    auto e = math::exp_scaled_nonpositive<exp_range::product>(arg);
    V const value = exp_scaled<V>{e.m, math::value_exponent(e.n)}.value();
    return math::scale_times(detail::sigmoid_derivative_unscaled(e, value, power), e.n, factor);
  };
  return tails(common, a, tail, a, dy, power_of_two);
}

// dy c sigma'(z) rounded once: where the table's (|z| < 16) sigma'(z) >= 1.1e-7, dy times it
// (c sigma' exact); elsewhere with the quotient form's product tail.
template <real_value V, class Tails = product_tails>
inline V sigmoid_derivative_times(V const& z, V const& dy, V const& power_of_two = c<V>(1),
                                  Tails const& tails = {}) noexcept {
  return math::sigmoid_slope(
      z, power_of_two, [&](V slope) { return dy * slope; },
      [&] {
        return math::sigmoid_derivative_product(
            dy * math::sigmoid_derivative_quotient_form(z, power_of_two), z, dy, power_of_two,
            tails);
      });
}

// dy sigma(z) rounded once, given common = dy times a sigma(z) that is a normal number wherever
// z >= normal_arg (this one's or the fast tier's): sigma(z) = e / (1 + e) is below the normal
// range for z < -87 (float), where the product is formed again from e = u 2^n before the scale.
// The tail lanes are those where `tested` < normal_arg: tested = z (below product_min_arg too,
// common is then dy * 0), or z clamped below at a bound under normal_arg (the fast tier's
// quotient's), which sends every lane below it to the tail (0 there for every finite dy).
template <real_value V, class Tails = product_tails>
inline V sigmoid_product(V const& common, V const& z, V const& dy, V const& tested,
                         Tails const& tails = {}) noexcept {
  // On the tail lanes z < normal_arg < 0, where -|z| = z.
  auto tail = [](V arg, V factor) {
    auto e = math::exp_scaled_nonpositive<exp_range::product>(arg);
    V const unscaled = math::c<V>(1) + e.m;
    V const value = math::scale(unscaled, math::value_exponent(e.n));
    return math::scale_times(math::divide_by_one_plus(unscaled, value), e.n, factor);
  };
  return tails(common, tested, tail, math::neg_abs(z), dy);
}

// dy sigma(z) rounded once.
template <real_value V, class Tails = product_tails>
inline V sigmoid_times(V const& z, V const& dy, Tails const& tails = {}) noexcept {
  return math::sigmoid_product(dy * math::sigmoid(z), z, dy, z, tails);
}

// log(1 + e^z) without overflow: max(z, 0) + log1p(e^-|z|), e^-|z| in [0, 1]. A NaN z comes
// through max(z, 0) (positive_part keeps it), so -|z| and the exp's clamp may be one vrange
// (exp_scaled_of_neg_abs), which drops it.
template <real_value V>
inline V softplus(V const& z) noexcept {
  V const e = math::exp_scaled_of_neg_abs(z).value();
  return math::positive_part(z) + math::log1p_above_minus_one(e);
}

// -|z| for z = z.hi + z.lo as hi + lo (lo 0 where z.hi is infinite, where two_product leaves no
// finite low part and none is needed).
template <real_value V>
inline double_float<V> minus_abs(double_float<V> const& z) noexcept {
  V const lo =
      math::select(math::abs(z.hi) == V(std::numeric_limits<scalar_t<V>>::infinity()), V(0), z.lo);
  return {math::neg_abs(z.hi), math::select(z.hi >= V(0), math::neg(lo), lo)};
}

// Which exp the x sigma(z) family takes e^-|z| from: the lean one (exp_scaled), or the one
// that keeps its roundings (exp_split; see x_sigmoid_derivative).
enum class x_sigmoid_exp { lean, split };

namespace detail {
// e^-|z| from the exp X of range R.
template <x_sigmoid_exp X, exp_range R, bool with_lo, real_value V>
inline auto exp_minus_abs(double_float<V> const& z) noexcept {
  if constexpr (with_lo) {
    auto a = math::minus_abs(z);
    if constexpr (X == x_sigmoid_exp::split) {
      return math::exp_split_nonpositive<R>(a.hi, a.lo);
    } else {
      return math::exp_scaled_nonpositive<R>(a.hi, a.lo);
    }
  } else if constexpr (X == x_sigmoid_exp::split) {
    return math::exp_split_nonpositive<R>(math::neg_abs(z.hi));
  } else {
    // (-|z| and its clamp in one vrange where the target has it: that drops a NaN z, which the
    // callers of this form (an exact z = x: silu, swish(1) and the SwiGLU gate, forward and
    // derivative) carry in x itself; see exp_scaled_of_neg_abs.)
    return math::exp_scaled_of_neg_abs<R>(z.hi);
  }
}

// The value of a product-range e^x (value_exponent).
template <real_value V>
inline exp_split<V> with_value_exponent(exp_split<V> const& e) noexcept {
  return {e.m, e.m_lo, math::value_exponent(e.n)};
}
template <real_value V>
inline exp_scaled<V> with_value_exponent(exp_scaled<V> const& e) noexcept {
  return {e.m, math::value_exponent(e.n)};
}

}  // namespace detail

// x sigma(z) for z = z.hi + z.lo, on one path for both signs of z: with e = e^-|z| = (1 + m) 2^n,
//   x sigma(z) = k / (1 + e) 2^s,  k = x, s = 0 (z >= 0);  k = (x/2)(1 + m), s = n + 1 (z < 0),
// one quotient (divide_by_one_plus) and one exact scale. The halving keeps k finite for any
// finite x (1 + m is up to 1.42); it is exact except for a subnormal x with z < 0, whose result
// is subnormal too (one more rounding there, at most an ulp of 2^-149). Where z <= -|x| / 2 on
// the left, k = x (1 + m) and s = n (`unhalved`, without a branch: x_sigmoid_unhalved_given
// below; x clamped where the result is -0, so that k stays finite); two operations a batch
// fewer, and correctly rounded for tiny x too, where the halved quotient is subnormal (x in
// (-2^-124, 0) in float: up to an ulp off with the halving). silu (z = x) and gelu_tanh
// (z = x (c1 + c3 x^2), c1 > 1.5) take it; swish and gelu_quick, whose slope is a parameter
// that may be tiny, do not.
struct unhalved_left_t {};
inline constexpr unhalved_left_t unhalved_left{};

namespace detail {
// The halved path (swish, gelu_quick: z = beta x for any beta).
template <real_value V>
inline V x_sigmoid_given(V const& x, double_float<V> const& z, exp_scaled<V> const& e) noexcept {
  using K = detail::exp_constants<scalar_t<V>>;
  auto right = z.hi >= V(0);
  V const scaled_x = x * math::c<V>(0.5);
  V const left_k = math::fma(scaled_x, e.m, scaled_x);
  V const k = math::select(right, x, left_k);
  // left_k's rounding (scaled_x - left_k is exact: 1 + m is within a factor 2 of 1) goes into
  // the quotient's residual: 0.5 ulp less on the left.
  V const k_lo = math::fma_or_zero(right, scaled_x, e.m, scaled_x - left_k);
  V const q = math::divide_by_one_plus(k, e.value(), k_lo);
  V y = math::scale_unless(right, q, e.n + math::c<V>(1));
  // The limits, in a branch taken by the batches that hold a lane where one may apply: k is 0
  // or infinite only where x is 0, subnormal (x/2 may round to 0) or infinite, and e^z
  // underflows only below min_arg. Two selects at the end of the chain cost ~0.9 cycles each
  // (design.md: an operation costs by how long it waits), the test of x and z ~0.2 each.
  auto const limits_may_apply =
      math::either(math::zero_infinite_or_subnormal(x), z.hi < V(K::min_arg));
  if (math::any(limits_may_apply)) [[unlikely]] {
    // An infinite k (x = +-inf where z >= 0): the quotient's residual is NaN, k itself the
    // limit; a zero k: the residual's +0 would lose the sign of x = -0.
    y = math::select(math::zero_or_infinite(k), k, y);
    // Where e^z underflowed entirely (z < min_arg), x sigma(z) -> 0 with x's sign, also for
    // x = -inf.
    y = math::select(z.hi < V(K::min_arg), math::sign_bit(x), y);
  }
  return y;
}
}  // namespace detail

template <real_value V>
inline V x_sigmoid(V const& x, double_float<V> const& z) noexcept {
  auto e = detail::exp_minus_abs<x_sigmoid_exp::lean, exp_range::value, true>(z);
  return detail::x_sigmoid_given(x, z, e);
}

namespace detail {
// x sigma(z) on x_sigmoid_given's unhalved path without its branch, for a z of x's sign (z = x:
// silu; gelu_tanh's z): k = x_left (1 + m) on the left, where x_left is x clamped below at a
// bound under which x sigma(z) rounds to -0 (z <= x / 2 < min_arg there, so e is e^min_arg and
// |x_left| e^min_arg (1 + m) < 2^-150 (float: 2^14 e^-115 1.42 = 2^-151.4), 2^-1075 (double:
// 2^20 e^-760 1.42 = 2^-1076)): the quotient rounds to -0 by itself, x = -inf included; a zero,
// NaN or +inf x is its own limit, taken from x by one vfixupimm at the end. No branch: its test
// (a class and a compare into masks, both on port 5, and the moves out of them) cost four
// operations a batch, and it cut the four batches of an iteration into blocks that GCC's
// scheduling pass keeps apart (kernels.hpp: elementwise_interleaved). The same bits as the
// branching form it replaced (1c05cae; checked on every float and 10^7 doubles).
template <real_value V>
inline V x_sigmoid_unhalved_given(V const& x, V const& x_left, V const& z_hi,
                                  exp_scaled<V> const& e) noexcept {
  auto right = z_hi >= V(0);
  V const left_k = math::fma(x_left, e.m, x_left);
  V const k = math::select(right, x, left_k);
  V const k_lo = math::fma_or_zero(right, x_left, e.m, x_left - left_k);
  V const q = math::divide_by_one_plus(k, e.value(), k_lo);
  return math::x_where_zero_nan_or_plus_infinity(x, math::scale_unless(right, q, e.n));
}

template <class T>
inline constexpr T unhalved_floor = std::is_same_v<T, float> ? T(-0x1p14) : T(-0x1p20);

// -|x| clamped below at min_arg (one vrange where the target has it; see exp_scaled_of_neg_abs):
// for silu both the exp's argument and, on the left, x_left (min_arg's |x| e^min_arg 1.42 is
// below 2^-150 too).
template <real_value V>
inline V neg_abs_clamped(V const& x) noexcept {
  return math::neg_abs_at_least(x, V(exp_constants<scalar_t<V>>::min_arg));
}
}  // namespace detail

// The same for a z with z <= -|x| / 2 wherever z < 0 (see above) and z of x's sign.
template <real_value V>
inline V x_sigmoid(V const& x, double_float<V> const& z, unhalved_left_t /*unhalved*/) noexcept {
  auto e = detail::exp_minus_abs<x_sigmoid_exp::lean, exp_range::value, true>(z);
  V const x_left = math::clamp_below(x, V(detail::unhalved_floor<scalar_t<V>>));
  return detail::x_sigmoid_unhalved_given(x, x_left, z.hi, e);
}

// x sigma(x) (silu).
template <real_value V>
inline V x_sigmoid(V const& x) noexcept {
  V const a = detail::neg_abs_clamped(x);
  return detail::x_sigmoid_unhalved_given(x, a, x, detail::exp_scaled_clamped(a));
}

// d/dx [x sigma(z(x))] = sigma(z) (1 + x z'(x) sigma(-z)). With e = e^-|z|, d = 1 + e and the
// bracket b = 1 + x z'(x) (as hi + lo, which the caller forms as accurately as it can):
//   z >= 0:  (1 + e b) / d^2
//   z <  0:  e (b + e) / d^2
// so that near the zero of b + e it cancels with one rounding instead of amplifying the
// rounding of sigma(-z). Both sides are one numerator n = e A + C (A = b, C = 1 on the right;
// A = 1, C = b on the left): one fma, whose rounding a second one recovers (C - n is exact on
// the right, where 1 <= n <= 2.6, and on the left wherever n is within a factor 2 of C or of e,
// which covers the cancellation), one quotient by d^2 as hi + lo, and on the left the product
// with e = (1 + m) 2^n before the scale, so that a subnormal result is rounded once.
//
// e comes from one of two exps (x_sigmoid_exp). The lean one keeps nothing of m's rounding or
// of the reduction's: up to ~0.6 ulp of m, relative to e, which the left side's e (b + e)
// amplifies up to 1.6x away from the zero of b + e and without bound near it, where the callers
// take the fitted ratio instead (x_sigmoid_root_window, +-0.05 around the zero). The split one
// keeps both roundings (e to ~2^-30), 9 operations a batch more: then the ratio is needed only
// within +-0.005 (x_sigmoid_split_root_window). Measured (exhaustive float runs, catalog/): silu'
// and gelu_quick' 1.5 ulp lean; gelu_tanh' 1.8 lean but 1.05 split, so it takes the split one.
// b must be finite with |b.hi| <= bracket_bound (bounded_bracket): every caller's |b| is at most
// 3|z| + 1, so the bound (2^13) leaves b as it is wherever e^-|z| is not 0 (|z| <= 200 in
// float, 1460 in double: the product range), and e^min_arg b stays below half the smallest
// subnormal, so the left needs no select where e^z vanished from the value range.
inline constexpr root_window x_sigmoid_root_window{-0.05, 0.05};
inline constexpr root_window x_sigmoid_split_root_window{-0.005, 0.005};

template <real_value V>
inline constexpr scalar_t<V> bracket_bound = scalar_t<V>(8192);

// b clamped to +-bracket_bound, its low part 0 there (where it may be the NaN of inf - inf).
template <real_value V>
inline double_float<V> bounded_bracket(double_float<V> const& b) noexcept {
  V const bound(bracket_bound<V>);
  V const hi = math::clamp_below(math::clamp_above(b.hi, bound), math::neg(bound));
  return {hi, math::select(math::abs(b.hi) <= bound, b.lo, V(0))};
}

namespace detail {
// R = value: the derivative; R = product: dy times it on the left (z < 0), for
// with_product_tail.
template <exp_range R, real_value V, class E>
inline V x_sigmoid_derivative_given(double_float<V> const& z, double_float<V> const& bracket,
                                    E const& e, V const& dy) noexcept {
  V const one(scalar_t<V>(1));
  auto ev = math::exp_hi_lo(R == exp_range::value ? e : detail::with_value_exponent(e));
  auto right = z.hi >= V(0);
  V const a = math::select(right, bracket.hi, one);
  V const c = math::select(right, one, bracket.hi);
  V const n = math::fma(ev.hi, a, c);
  V const lo_terms = math::fma(ev.lo, a, math::select(right, ev.hi * bracket.lo, bracket.lo));
  V const n_lo = math::fma(ev.hi, a, c - n) + lo_terms;
  auto q = math::finite_by_square_hi_lo(double_float<V>{n, n_lo}, math::one_plus(ev));
  if constexpr (R == exp_range::product) {
    // Below product_min_arg the lean exp's clamped e^z times b would not vanish: dy f' is 0,
    // with the sign of dy q (a +0 there was wrong wherever f' < 0 and dy > 0).
    using K = detail::exp_constants<scalar_t<V>>;
    V const tail = math::scale_times(math::unscaled_times(e, q), e.n, dy);
    return math::select(z.hi < V(K::product_min_arg), math::sign_bit(q.hi * dy), tail);
  } else if constexpr (requires { e.vanished(); }) {
    // Where the split exp vanished (m = -1), q e^z is q - q = +0 whatever q's sign: or-ing q's
    // sign bit in gives -0 where f' < 0 (gelu_tanh' was +0 below x = -11.9 in float); elsewhere
    // q e^z has q's sign already. One vpternlog, no compare.
    return math::select(right, q.hi + q.lo, math::with_sign_of(math::times(e, q), q.hi));
  } else {
    return math::select(right, q.hi + q.lo, math::times(e, q));
  }
}

template <x_sigmoid_exp X, exp_range R, bool with_lo, real_value V>
inline V x_sigmoid_derivative(double_float<V> const& z, double_float<V> const& bracket,
                              V const& dy) noexcept {
  return detail::x_sigmoid_derivative_given<R>(z, bracket, detail::exp_minus_abs<X, R, with_lo>(z),
                                               dy);
}
}  // namespace detail

template <x_sigmoid_exp X = x_sigmoid_exp::lean, real_value V>
inline V x_sigmoid_derivative(double_float<V> const& z, double_float<V> const& bracket) noexcept {
  return detail::x_sigmoid_derivative<X, exp_range::value, true>(z, bracket, V(0));
}

// The same for an exact z (silu: z = x).
template <x_sigmoid_exp X = x_sigmoid_exp::lean, real_value V>
inline V x_sigmoid_derivative(V const& z, double_float<V> const& bracket) noexcept {
  return detail::x_sigmoid_derivative<X, exp_range::value, false>(double_float<V>{z, V(0)}, bracket,
                                                                  V(0));
}

// x sigma(x) and its derivative for an exact z = x from one exp, the same bits as x_sigmoid and
// x_sigmoid_derivative (the gated units need both at the same x).
template <real_value V>
inline value_and_slope<V> x_sigmoid_and_derivative(V const& x,
                                                   double_float<V> const& bracket) noexcept {
  double_float<V> const exact{x, V(0)};
  V const a = detail::neg_abs_clamped(x);
  auto e = detail::exp_scaled_clamped(a);
  return {detail::x_sigmoid_unhalved_given(x, a, x, e),
          detail::x_sigmoid_derivative_given<exp_range::value>(exact, bracket, e, V(0))};
}

// dy times a derivative `common` that is x_sigmoid_derivative(z, bracket) (patched near its
// root), rounded once also far in the left tail (with_product_tail).
template <x_sigmoid_exp X = x_sigmoid_exp::lean, real_value V, class Tails = product_tails>
inline V x_sigmoid_derivative_times(V const& common, double_float<V> const& z,
                                    double_float<V> const& bracket, V const& dy,
                                    Tails const& tails = {}) noexcept {
  auto tail = [](double_float<V> arg, double_float<V> b, V factor) {
    return detail::x_sigmoid_derivative<X, exp_range::product, true>(arg, b, factor);
  };
  return tails(dy * common, z.hi, tail, z, bracket, dy);
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
  auto d = math::two_sum_nonnegative(m, c<V>(2));
  V const r = math::quotient_seed(d.hi);
  V const q0 = m * r;
  V const residual = math::fnma(q0, d.lo, math::fnma(q0, d.hi, m));
  // The sign of x for every lane (tanh(-0) = -0). The quotient of m >= 0 by m + 2 has its sign
  // bit clear, NaN from a NaN x included (abs cleared it, and the operations pass it on).
  return math::with_sign_of(math::fma(residual, r, q0), x);
}

// tanh'(x) = sech^2 x = 4 e / (1 + e)^2, e = e^(-2|x|): the same as 4 sigma'(2x). sigma' takes
// -|z| itself, and -|2x| = -2|x| exactly (an infinite 2x included): no abs of its own.
template <real_value V>
inline V tanh_derivative(V const& x) noexcept {
  return math::sigmoid_derivative(x + x, c<V>(4));
}

// dy tanh'(x) rounded once.
template <real_value V, class Tails = product_tails>
inline V tanh_derivative_times(V const& x, V const& dy, Tails const& tails = {}) noexcept {
  return math::sigmoid_derivative_times(x + x, dy, c<V>(4), tails);
}

}  // namespace NONLIN_ISA
}  // namespace nonlin::math
