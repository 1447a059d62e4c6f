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
// In e = e^-|x| (never overflows):
//   x >= 0: tanh(sp) = (1 + 2e) / P = 1 - 2e^2 / P,  P = 1 + 2e + 2e^2,
//           mish' = tanh(sp) + 4x e^2 (1 + e) / P^2
//   x <  0: tanh(sp) = e (e + 2) / N,  N = e^2 + 2e + 2,
//           mish' = e ((e+2) N + 4x (1+e)) / N^2 = e (4(1 + x) + e (6 + 4x + 4e + e^2)) / N^2
// The last form has no cancellation but at mish's zero (handled by math/roots.hpp). N is carried
// as hi + lo, and the x < 0 results carry the factor e, folded in before exp's final scale so
// that subnormal results are rounded once.
// Bound: 3 ulp forward, 4 ulp derivative, float and double, for every x (tested against
// MPFR: its row in catalog/, tests/accuracy_test.cpp).
struct mish {
  template <real_value V>
  NONLIN_ISA_TAG V operator()(V x) const noexcept {
    auto split = math::exp_split_nonpositive(math::neg(math::abs(x)));
    V const e = split.value();
    V const one = math::c<V>(1);
    V const two_e = e + e;
    // x tanh(sp) = x - x q, q = 2e^2 / P <= 2/5: the roundings of the small q hardly count
    // (x (1 + 2e) / P rounds four times at full weight); q = 0 leaves x, also x = +inf.
    V const q = math::divide(two_e * e, math::fma(two_e, one + e, one));
    // q = 0 also leaves x = +-0 as it is: mish keeps the sign of zero, as silu and the GELUs.
    V const right =
        math::select(math::either(q == V(0), x == V(0)), x, math::fma(math::neg(x), q, x));
    auto e_plus_2 = math::two_sum(math::c<V>(2), e);
    V const x_e_plus_2 = math::fma(x, e_plus_2.hi, x * e_plus_2.lo);
    V const left = math::times(split, math::quotient_hi_lo(x_e_plus_2, denominator_left(e)));
    return math::select(x >= V(0), right, math::select(split.vanished(), math::sign_bit(x), left));
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
