// SPDX-License-Identifier: MIT
#pragma once
// Derivatives near their interior zeros. silu' (so swish' and gelu_quick'), gelu_exact',
// gelu_tanh' and mish' cross zero at some x0 < 0, where their generic formulas subtract two
// terms of size ~0.2 and lose all relative accuracy. Within -1 <= x - x0 <= 1/2 they are
// evaluated as f'(x0 + d) = d R(d) instead, d = x - x0 formed exactly (x0 as hi + lo: x - x0.hi
// is exact by Sterbenz' lemma there) and R fitted (math/root_tables.hpp).

#include "double_float.hpp"
#include "ops.hpp"
#include "polynomial.hpp"
#include "root_tables.hpp"

namespace nonlin::math {

template <real_value V>
struct near_root {
  mask_t<V> inside;
  V value;
};

// x (as hi + lo) against a root x0 = root_hi + root_lo and its ratio table R.
template <real_value V, class Table>
inline near_root<V> derivative_near_root(double_float<V> const& x, double root_hi, double root_lo,
                                         Table const& ratio) noexcept {
  auto root = math::constant<V>(double_double{root_hi, root_lo});
  // d as hi + lo, and d R rounded once: (d.hi + d.lo) R = fma(d.hi, R, d.lo R).
  auto d = math::two_sum(x.hi - root.hi, x.lo - root.lo);
  V const t = math::fma(d.hi, math::c<V>(4.0 / 3.0), math::c<V>(1.0 / 3.0));
  V const ratio_value = math::horner(t, ratio[0]);
  V const value = math::fma(d.hi, ratio_value, d.lo * ratio_value);
  return {math::both(d.hi >= math::c<V>(-1), d.hi <= math::c<V>(0.5)), value};
}

}  // namespace nonlin::math
