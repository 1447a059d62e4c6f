// SPDX-License-Identifier: MIT
#pragma once
// Unevaluated sums hi + lo for the few places where one rounding of an argument would cost
// tens of ulps downstream (the tanh-GELU cubic, a scaled sigmoid argument, x^2 in the normal
// density). Every product is exact through fma (Dekker's two-product).
//
// Names say the form of the result: a function whose result is such a pair ends in _hi_lo
// (quotient_hi_lo, square_hi_lo, exp_hi_lo); divide_* and the rest return one rounded value;
// two_sum and two_product are the classic names of the exact pairs. times(e, k) is always
// e^x times k (exp.hpp), for a k given as one value or as hi + lo.

#include <limits>
#include <type_traits>

#include "../isa.hpp"
#include "constants.hpp"
#include "ops.hpp"

namespace nonlin::math {
inline namespace NONLIN_ISA {

template <real_value V>
struct double_float {
  V hi;
  V lo;
};

// a * b exactly as hi + lo: one fma where the target has an FMA unit, Dekker's product of
// Veltkamp-split halves where it has none (large inputs split scaled down, so any a, b whose
// product is finite).
template <real_value V>
inline double_float<V> two_product(V const& a, V const& b) noexcept {
  V const hi = a * b;
  if constexpr (arch::has_fma<V>) {
    return {hi, math::fms(a, b, hi)};
  } else {
    using T = scalar_t<V>;
    constexpr bool is_float = std::is_same_v<T, float>;
    constexpr T splitter = is_float ? T(4097) : T(134217729);  // 2^s + 1
    // x * splitter overflows above 2^(emax - s): split x 2^-s there and scale the halves back
    // (powers of two: exact).
    constexpr T limit = is_float ? T(0x1p+110) : T(0x1p+990);
    constexpr T down = is_float ? T(0x1p-13) : T(0x1p-28);
    constexpr T up = is_float ? T(0x1p+13) : T(0x1p+28);
    auto split = [&](V const& x) {
      auto big = math::abs(x) > V(limit);
      V const xs = math::select(big, x * V(down), x);
      V const c = xs * V(splitter);
      V const high_scaled = c - (c - xs);
      V const high = math::select(big, high_scaled * V(up), high_scaled);
      return double_float<V>{high, x - high};
    };
    auto sa = split(a);
    auto sb = split(b);
    V const err = ((sa.hi * sb.hi - hi) + sa.hi * sb.lo + sa.lo * sb.hi) + sa.lo * sb.lo;
    // Where the product overflows or is not finite there is no low part to speak of.
    return {hi, math::select(math::abs(hi) < V(std::numeric_limits<T>::max()), err, V(0))};
  }
}

// a + b exactly as hi + lo, for any a, b (Knuth's two-sum).
template <real_value V>
inline double_float<V> two_sum(V const& a, V const& b) noexcept {
  V s = a + b;  // not const: GCC 12 kept a const local that goes into the result in memory
  V const bb = s - a;
  V const err = (a - (s - bb)) + (b - bb);
  return {s, err};
}

// |p| at least 2^(digits + 2) times the smallest normal number: there a product's low part, a
// multiple of about 2^-(2 digits) of it, cannot have underflowed to 0 (it did at dy (1 - 2^-24)
// near 2^-125: elu's backward from the output). False for 0 and NaN.
template <real_value V>
inline mask_t<V> above_product_underflow(V const& p) noexcept {
  using T = scalar_t<V>;
  constexpr T lowest =
      std::numeric_limits<T>::min() * T(1ULL << (std::numeric_limits<T>::digits + 2));
  return math::abs(p) >= V(lowest);
}
// True where a b rounded is exact: two_product's low part is 0 and the product above the
// underflow. Zero, NaN and infinite products: false (an infinite or NaN product has an infinite or
// NaN low part).
template <real_value V>
inline mask_t<V> product_is_exact(double_float<V> const& product) noexcept {
  return math::both(product.lo == V(0), math::above_product_underflow(product.hi));
}

// big + small exactly as hi + lo for |big| >= |small| (Dekker's fast two-sum): s - big is exact,
// so nothing overflows where the sum is finite. The callers order the operands by a min and a
// max where their signs decide the order (two_sum_nonnegative; softmax's difference to the
// maximum): a compare of magnitudes feeding two blends is three operations more, and a compare
// into a mask feeding a blend is among the slowest steps of a chain.
template <real_value V>
inline double_float<V> fast_two_sum(V const& big, V const& small) noexcept {
  V s = big + small;  // not const: GCC 12 kept a const local that goes into the result in memory
  return {s, small - (s - big)};
}

// True where k (big + small), rounded after the sum and after the product, is exact: both
// roundings lost nothing (for the 16-bit kernels, kernels.hpp: an exact float result needs no
// test against the midpoints). The sum's low part by fast_two_sum, so only where
// |big| >= |small|: the caller's `ordered` (false lanes: false). Both low parts at once: their
// bits or'ed are a zero's only where both are +-0 (an or and one compare where two compares and a
// mask and were; the 16-bit kernels run this on every lane). An infinite or NaN product has an
// infinite or NaN low part, so only the underflow is tested apart.
template <real_value V>
inline mask_t<V> sum_times_is_exact(V const& k, V const& big, V const& small,
                                    mask_t<V> const& ordered) noexcept {
  auto sum = math::fast_two_sum(big, small);    // not const: see two_sum
  auto product = math::two_product(k, sum.hi);  // not const, as sum
  V const low_parts = math::from_bits<V>(math::as_bits(sum.lo) | math::as_bits(product.lo));
  return math::both(math::both(ordered, low_parts == V(0)),
                    math::above_product_underflow(product.hi));
}

// a + b exactly as hi + lo for a, b >= 0 (or NaN, which gives a NaN hi): the larger by one max.
template <real_value V>
inline double_float<V> two_sum_nonnegative(V const& a, V const& b) noexcept {
  // b > a ? b : a (a where either is NaN), and b < a ? b : a.
  return math::fast_two_sum(math::clamp_below(a, b), math::clamp_above(a, b));
}

// A constant as the nearest scalar_t<V> plus its remainder (0 in double).
template <real_value V>
inline double_float<V> constant(double value) noexcept {
  using T = scalar_t<V>;
  T const hi = static_cast<T>(value);
  T const lo = static_cast<T>(value - static_cast<double>(hi));
  return {V(hi), V(lo)};
}

// Whether constant<V>(value) has no remainder (value is a scalar_t<V>; always in double).
template <real_value V>
inline bool constant_is_exact(double value) noexcept {
  using T = scalar_t<V>;
  return static_cast<T>(value - static_cast<double>(static_cast<T>(value))) == T(0);
}

// A double_double constant in V: hi rounded to scalar_t<V>, the rest in lo.
template <real_value V>
inline double_float<V> constant(double_double value) noexcept {
  using T = scalar_t<V>;
  T const hi = static_cast<T>(value.hi);
  T const lo = static_cast<T>((value.hi - static_cast<double>(hi)) + value.lo);
  return {V(hi), V(lo)};
}

}  // namespace NONLIN_ISA
}  // namespace nonlin::math
