// SPDX-License-Identifier: MIT
#pragma once
// mish(x) = x tanh(softplus(x)) (Misra 2019). Not monotonic: no backward from the output.

#include <type_traits>

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
// Derivative, on one path too: with sp = softplus x, mish' = tanh(sp) + x sech^2(sp) sigma(x)
// = [N (N + 2) + 4 x u (1 + u)] / (N + 2)^2, and N (N + 2) = u^4 + 4u^3 + 6u^2 + 4u, so
//   mish'(x) = u B / D^2,  B = 4(1 + x) + u (6 + 4x + 4u + u^2),  D = N + 2 = u^2 + 2u + 2,
// whose only cancellation is B's at mish's zero (x0 = -1.19, handled by math/roots.hpp); every
// term is positive for x >= -1. x is clamped to [min_arg, 20] (float) or [min_arg, 40] (double)
// for the exp, where mish' already rounds to 1 (from x = 11 and 21), so that u^4 stays finite;
// D is carried as hi + lo, B / D^2 as a quotient's hi + lo, and u's factor goes in before exp's
// final scale, so subnormal results are rounded once. Two sides in e = e^-|x| (the form this
// replaced) took a second quotient and two divisions: backward 128 -> 118 instructions a batch
// (95 FP operations and 2 divisions -> 90 and none, the root table counted; scripts/opcount.sh),
// 1.24-1.30x faster (float, 4K and 256K), 2.44 -> 2.15 ulp (exhaustive float run).
// Bound: 2 ulp forward, 3 ulp derivative, float and double, for every x (tested against
// MPFR: its row in catalog/, tests/accuracy_test.cpp).
struct mish {
  // One batch of the forward is a long chain (kernels.hpp: elementwise_interleaved).
  static constexpr bool long_forward_chain = true;

  // The clamps of the exp's argument, shared with nonlin::fast::mish: above forward_saturation
  // mish(x) rounds to x (from 9.01 in float, 19.1 in double); above derivative_saturation
  // mish'(x) rounds to 1 (from 11 and 21), and below it u^4 stays finite.
  template <class T>
  static constexpr T forward_saturation = T(20);
  template <class T>
  static constexpr T derivative_saturation = std::is_same_v<T, float> ? T(20) : T(40);

  template <real_value V>
  NONLIN_ISA_TAG V operator()(V x) const noexcept {
    using K = math::detail::exp_constants<scalar_t<V>>;
    V const saturation(forward_saturation<scalar_t<V>>);
    V const two = math::c<V>(2);
    V const xc = math::clamp_below(x, V(K::min_arg));
    auto e = math::exp_split_nonpositive(math::clamp_above(xc, saturation));
    auto u_plus_2 = math::two_sum_nonnegative(e.value(), two);
    // (1 + m + m_lo)(s.hi + s.lo) = N 2^-k, the small cross terms first.
    V const low = math::fma(u_plus_2.hi, e.m_lo, math::fma(u_plus_2.lo, e.m, u_plus_2.lo));
    V const n_unscaled = u_plus_2.hi + math::fma(u_plus_2.hi, e.m, low);
    V const q = math::divide_hi_lo(math::two_product(xc, n_unscaled),
                                   math::two_sum_nonnegative(math::scale(n_unscaled, e.n), two));
    // mish has the sign of x, -0 included (the quotient's residual step may leave +0).
    V const y = math::copysign(math::scale(q, e.n), x);
    return math::select(x > saturation, x, y);
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative(V x) const noexcept {
    using T = scalar_t<V>;
    using K = math::detail::exp_constants<T>;
    V const saturation(derivative_saturation<T>);
    V const xc = math::clamp_above(math::clamp_below(x, V(K::min_arg)), saturation);
    // u = e^x rounded once (1 + (m + m_lo), then the scale 2^k), the same u in B, D and the
    // factor: u B(u) / D(u)^2 is then f at u's rounding, to which it is far less sensitive than
    // e^x's exact value beside B(u), D(u) would be (-0.88 against 0.12 at x = 0.7; every 16th
    // float: 3.00 -> 2.68 ulp).
    auto split = math::exp_split_nonpositive(xc);
    V const u_unscaled = math::c<V>(1) + (split.m + split.m_lo);
    auto q = over_u(xc, math::scale(u_unscaled, split.n));
    V const generic = math::scale(math::fma(u_unscaled, q.hi, u_unscaled * q.lo), split.n);
    // Where mish' rounds to 1 (x above the clamp, +inf included).
    return math::select(x > saturation, math::c<V>(1), derivative_near_zero(generic, x));
  }
  // mish'(x) from its generic value: the fitted ratio within root_window of the zero (also the
  // fast twin's of the 16-bit kernels: detail/fast16.hpp).
  template <real_value V>
  NONLIN_ISA_TAG static V derivative_near_zero(V generic, V x) noexcept {
    using R = math::tables::derivative_roots<scalar_t<V>>;
    return math::patch_near_root(generic, math::double_float<V>{x, V(0)}, R::mish_root_hi,
                                 R::mish_root_lo, R::mish_ratio, root_window);
  }
  // dy mish'(x), rounded once also where mish'(x) alone is below the normal range.
  template <real_value V, class Tails = math::product_tails>
  NONLIN_ISA_TAG V backward(V x, V dy, Tails const& tails = {}) const noexcept {
    // The tail lanes are those with x < normal_arg < 0, where e^-|x| = e^x.
    auto tail = [](V arg, V factor) {
      auto split = math::exp_split_nonpositive<math::exp_range::product>(arg);
      V const e = math::exp_split<V>{split.m, split.m_lo, math::value_exponent(split.n)}.value();
      return math::scale_times(math::unscaled_times(split, over_u(arg, e)), split.n, factor);
    };
    return tails(dy * derivative(x), x, tail, x, dy);
  }

 private:
  // Where the fitted ratio replaces u B / D^2: B's cancellation near x0 costs more than the
  // 2.15 ulp the formula keeps elsewhere (exhaustive float runs: 2.25 ulp with an upper edge of
  // +0.25); the table's whole fit range, -1..+1/2, ran it on 79% of the batches of U(-8, 8)
  // inputs, this one on 45%.
  static constexpr math::root_window root_window{-0.15, 0.4};
  // mish'(x) / u, u = e^x: B / D^2 = (4(1 + x) + u (6 + 4x + 4u + u^2)) / (u^2 + 2u + 2)^2 as
  // hi + lo, for a finite x (B is finite and D >= 2). B's last product and sum are exact (a
  // two_product, a two_sum): rounded, they left mish' at 2.68 ulp and needed the root window at
  // -1..+1/2 instead of -0.15..+0.4 around x0.
  template <real_value V>
  NONLIN_ISA_TAG static math::double_float<V> over_u(V x, V u) noexcept {
    V const inner = math::fma(u + math::c<V>(4), u, math::fma(x, math::c<V>(4), math::c<V>(6)));
    auto product = math::two_product(inner, u);
    auto sum = math::two_sum(product.hi, math::c<V>(4) * (math::c<V>(1) + x));
    return math::finite_by_square_hi_lo(math::double_float<V>{sum.hi, sum.lo + product.lo},
                                        denominator(u));
  }
  // D = u (u + 2) + 2 as hi + lo (u + 2 exact as a two_sum, the product exact as a
  // two_product; the small cross term u * lo(u + 2) is kept to first order).
  template <real_value V>
  NONLIN_ISA_TAG static math::double_float<V> denominator(V u) noexcept {
    auto u_plus_2 = math::two_sum(u, math::c<V>(2));
    auto product = math::two_product(u, u_plus_2.hi);
    auto sum = math::two_sum(math::c<V>(2), product.hi);
    return {sum.hi, sum.lo + math::fma(u, u_plus_2.lo, product.lo)};
  }
};

}  // namespace nonlin
