// SPDX-License-Identifier: MIT
#pragma once
// On which side of a computed result y = f(x) the true value f(x) lies, where a functor can tell
// from the shape of f alone: the functors' side_of_true_value(x, y) members (+1: f(x) > y, -1:
// f(x) < y, 0: not known), for the 16-bit kernels (kernels.hpp, value16).
//
// Why: a 16-bit result near a rounding midpoint is recomputed in double (round16.hpp), which
// decides it unless double itself rounds f(x) onto the midpoint. That happens where f is a
// simple value plus a term below double's 53 bits: x g(x) at a bfloat16 subnormal x is
// x/2 + O(x^2) (x ~ 2^-130: the second term 2^-130 of the first), alpha expm1(x) there is
// alpha x + O(x^2), and leaky_relu's alpha x rounds to double. Those doubles are exact x/2 or
// alpha x, which lie on a midpoint wherever x's last bit is set, and their ties went to even
// (963 bfloat16 and 21 float16 results of the catalog, docs/storage16.md before this). Which
// side the dropped term lies on follows from f's shape:
//
//   side_beyond_product(a, x, y, s)  f(x) - a x has the sign s (+-1) for every x != 0 (x g(x)
//                                    with g monotonic through g(0) = a; alpha expm1(x) > alpha x):
//                                    s where y is not beyond a x on that side, else 0
//   side_of_product(a, x, y)         f(x) = a x exactly: the sign of a x - y
//
// a x is taken exactly (two_product), so the sign holds for every finite y; infinities and NaN
// give 0.

#include "../isa.hpp"
#include "double_float.hpp"
#include "ops.hpp"

namespace nonlin::math {
inline namespace NONLIN_ISA {

// a x - y with its sign exact ((hi - y) + lo of the exact product: hi - y is exact where y is
// within a factor 2 of hi, and dominates lo elsewhere); NaN where a, x or y is not finite.
template <real_value V>
inline V product_minus(V const& a, V const& x, V const& y) noexcept {
  auto const p = math::two_product(a, x);
  return (p.hi - y) + p.lo;
}

// The sign of a x - y (+1, -1, or 0 where equal or NaN).
template <real_value V>
inline V side_of_product(V const& a, V const& x, V const& y) noexcept {
  V const d = math::product_minus(a, x, y);
  return math::select(d > V(0), c<V>(1), math::select(d < V(0), c<V>(-1), V(0)));
}

// s where x != 0 and s (a x - y) >= 0, else 0 (NaN included): f(x) lies beyond a x on s's side,
// so beyond every y that does not.
template <real_value V>
inline V side_beyond_product(V const& a, V const& x, V const& y, V const& s) noexcept {
  V const d = math::product_minus(a, x, y);
  return math::select(math::both(x != V(0), d * s >= V(0)), s, V(0));
}

// The sign of a parameter (+1, -1; 0 for 0 and NaN), for side_beyond_product's s.
template <real_value V>
inline V sign_of(double p) noexcept {
  return c<V>(p > 0.0 ? 1.0 : (p < 0.0 ? -1.0 : 0.0));
}

}  // namespace NONLIN_ISA
}  // namespace nonlin::math
