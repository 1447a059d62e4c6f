// SPDX-License-Identifier: MIT
#pragma once
// mish(x) = x tanh(softplus(x)) (Misra 2019). Not monotonic: no backward from the output.

#include "concepts.hpp"
#include "isa.hpp"
#include "math/double_float.hpp"
#include "math/exp.hpp"
#include "math/logistic.hpp"
#include "math/ops.hpp"
#include "math/roots.hpp"

namespace nonlin {

// With w = (1 + e^x)^2, tanh(softplus x) = (w - 1)/(w + 1) and sech^2(softplus x) = 4w/(w+1)^2.
//
// Forward, on one path for every x: with u = e^x and N = u (u + 2), tanh(softplus x) = N / (N + 2)
// and mish(x) = x N / (N + 2): no cancellation and no overflow (x is clamped at 20 for the exp,
// where mish(x) already rounds to x). u = (1 + m + m_lo) 2^k from the exp that keeps its own
// roundings (exp_split), u + 2 exact as hi + lo, so N 2^-k = (1 + m + m_lo)(u + 2) is rounded
// once; x N 2^-k exact (two_product) and N + 2 exact (two-sum), one quotient from a seed and a
// residual, then the scale 2^k, which rounds a subnormal result once. Measured over all 2^32
// floats: 1.70 ulp (the two-sided form it replaced, in e^-|x|: 2.15); 46 FP operations a batch
// and no division (before: 64 and a division; scripts/opcount.sh); 1.09-1.17x faster.
//
// Derivative, in e = e^-|x| (never overflows):
//   x >= 0: tanh(sp) = (1 + 2e) / P = 1 - 2e^2 / P,  P = 1 + 2e + 2e^2,
//           mish' = tanh(sp) + 4x e^2 (1 + e) / P^2
//   x <  0: tanh(sp) = e (e + 2) / N,  N = e^2 + 2e + 2,
//           mish' = e ((e+2) N + 4x (1+e)) / N^2 = e (4(1 + x) + e (6 + 4x + 4e + e^2)) / N^2
// The last form has no cancellation but at mish's zero (handled by math/roots.hpp). N is carried
// as hi + lo, and the x < 0 results carry the factor e, folded in before exp's final scale so
// that subnormal results are rounded once.
// Bound: 2 ulp forward, 4 ulp derivative, float and double, for every x (tested against
// MPFR: its row in catalog/, tests/accuracy_test.cpp).
struct mish {
  template <real_value V>
  NONLIN_ISA_TAG V operator()(V x) const noexcept {
    using K = math::detail::exp_constants<scalar_t<V>>;
    V const saturation(scalar_t<V>(20));  // mish(x) rounds to x from 9.01 (float), 19.1 (double)
    V const two = math::c<V>(2);
    V const xc = math::clamp_below(x, V(K::min_arg));
    auto e = math::exp_split_nonpositive(math::clamp_above(xc, saturation));
    auto u_plus_2 = math::two_sum_ordered(e.value(), two);
    // (1 + m + m_lo)(s.hi + s.lo) = N 2^-k, the small cross terms first.
    V const low = math::fma(u_plus_2.hi, e.m_lo, math::fma(u_plus_2.lo, e.m, u_plus_2.lo));
    V const n_unscaled = u_plus_2.hi + math::fma(u_plus_2.hi, e.m, low);
    V const q = math::divide_hi_lo(math::two_product(xc, n_unscaled),
                                   math::two_sum_ordered(math::scale(n_unscaled, e.n), two));
    // mish has the sign of x, -0 included (the quotient's residual step may leave +0).
    V const y = math::copysign(math::scale(q, e.n), x);
    return math::select(x > saturation, x, y);
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative(V x) const noexcept {
    auto split = math::exp_split_nonpositive(math::neg(math::abs(x)));
    V const e = split.value();
    V const one = math::c<V>(1);
    V const four_x = x * math::c<V>(4);
    V const two_e = e + e;
    V const d_right = math::fma(two_e, one + e, one);
    V const right = math::fma(four_x * e * e, math::divide(one + e, d_right * d_right),
                              math::divide(one + two_e, d_right));
    V const left = math::times(split, left_over_e(x, e));
    // Limits where e^-|x| underflowed: mish' -> 1 on the right, 0 on the left.
    V const generic = math::select(x >= V(0), math::select(e == V(0), one, right),
                                   math::select(split.vanished(), V(0), left));
    using R = math::tables::derivative_roots<scalar_t<V>>;
    return math::patch_near_root(generic, math::double_float<V>{x, V(0)}, R::mish_root_hi,
                                 R::mish_root_lo, R::mish_ratio);
  }
  // dy mish'(x), rounded once also where mish'(x) alone is below the normal range.
  template <real_value V>
  NONLIN_ISA_TAG V backward(V x, V dy) const noexcept {
    // The tail lanes are those with x < normal_arg < 0, where e^-|x| = e^x.
    auto tail = [](V arg, V factor) {
      auto split = math::exp_split_nonpositive<math::exp_range::product>(arg);
      V const e = math::exp_split<V>{split.m, split.m_lo, math::value_exponent(split.n)}.value();
      return math::scale_times(math::unscaled_times(split, left_over_e(arg, e)), split.n, factor);
    };
    return math::with_product_tail(dy * derivative(x), x, tail, x, dy);
  }

 private:
  // mish'(x) / e for x < 0, e = e^x: (4(1 + x) + e (6 + 4x + 4e + e^2)) / N^2 as hi + lo.
  template <real_value V>
  NONLIN_ISA_TAG static math::double_float<V> left_over_e(V x, V e) noexcept {
    V const four_x = x * math::c<V>(4);
    V const inner = math::fma(e + math::c<V>(4), e, math::c<V>(6) + four_x);  // 6 + 4x + 4e + e^2
    V const bracket = math::fma(inner, e, math::c<V>(4) * (math::c<V>(1) + x));
    return math::quotient_by_square_hi_lo(math::double_float<V>{bracket, V(0)},
                                          denominator_left(e));
  }
  // N = e (e + 2) + 2 as hi + lo (e + 2 exact as a two_sum, the product exact as a
  // two_product; the small cross term e * lo(e + 2) is kept to first order).
  template <real_value V>
  NONLIN_ISA_TAG static math::double_float<V> denominator_left(V e) noexcept {
    auto e_plus_2 = math::two_sum(e, math::c<V>(2));
    auto product = math::two_product(e, e_plus_2.hi);
    auto sum = math::two_sum(math::c<V>(2), product.hi);
    return {sum.hi, sum.lo + math::fma(e, e_plus_2.lo, product.lo)};
  }
};

}  // namespace nonlin
