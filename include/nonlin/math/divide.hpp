// SPDX-License-Identifier: MIT
#pragma once
// Division by a small integer constant, correctly rounded, without a divide instruction (a
// vdivps costs 6 cycles alone and held hardsigmoid's forward at 0.17x the peers' multiply).

#include "../isa.hpp"
#include "ops.hpp"

namespace nonlin::math {
inline namespace NONLIN_ISA {

// t / d rounded to nearest for an integer d >= 1 (d < 2^20), where t / d is a normal number:
//   q0 = t c, c = 1/d rounded;  r = t - d q0 (one fma, exact);  q = q0 + r c (one fma).
// Why this is t / d rounded once: the fma forms q0 + r/d + r (c - 1/d) exactly and rounds it;
// q0 + r/d is t/d itself, and |r (c - 1/d)| <= d ulp(t/d) 2^-p / d = 2^-p ulp(t/d) (p = 24 / 53,
// |r| <= d ulp because q0 is within an ulp). A midpoint M between two neighbours of t/d is
// (odd) ulp/2; d M = t would need the odd product (odd part of d)(odd) of p + 2 or more bits to
// fit the p bits of t, so for d not a power of two t != d M, and since t and d M are both
// multiples of ulp/2, |t/d - M| >= ulp / (2d), far above 2^-p ulp: the rounding goes the same
// way as that of t/d. (A power-of-two d is exact anyway.) Subnormal results are not covered: on
// their fixed grid t = d M can happen, and the tie may then round the other way.
// Without an FMA unit the residual is not exact: there a division.
template <real_value V>
inline V divide_by_integer(V const& t, scalar_t<V> d) noexcept {
  if constexpr (arch::has_fma<V>) {
    V const c(scalar_t<V>(1) / d);
    V const q0 = t * c;
    V const r = math::fnma(q0, V(d), t);
    return math::fma(r, c, q0);
  } else {
    return math::divide(t, V(d));
  }
}

}  // namespace NONLIN_ISA
}  // namespace nonlin::math
