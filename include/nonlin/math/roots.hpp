// SPDX-License-Identifier: MIT
#pragma once
// Derivatives near their interior zeros. silu' (so swish' and gelu_quick'), gelu_exact',
// gelu_tanh' and mish' cross zero at some x0 < 0, where their generic formulas subtract two
// terms of size ~0.2 and lose all relative accuracy. Within a window around x0 (each caller's,
// inside -1 <= x - x0 <= 1/2, where the fits hold) they are evaluated as f'(x0 + d) = d R(d)
// instead, d = x - x0 formed exactly (x0 as hi + lo: x - x0.hi is exact by Sterbenz' lemma
// there) and R fitted (math/root_tables.hpp).

#include "../isa.hpp"
#include "double_float.hpp"
#include "ops.hpp"
#include "polynomial.hpp"
#include "root_tables.hpp"

namespace nonlin::math {
inline namespace NONLIN_ISA {

// Where the generic value is replaced: lower <= x - x0 <= upper.
struct root_window {
  double lower = -1.0;
  double upper = 0.5;
};

// The generic value of a derivative, replaced by d R(d) on the lanes within the window around
// its root x0 = root_hi + root_lo (R from the table, fitted on -1 <= d <= 1/2). The table is
// evaluated only when some lane lies in the window (a branch on the whole batch: with a narrow
// window most batches skip its ~24 operations); each lane's result is the same either way.
template <real_value V, class Table>
inline V patch_near_root(V const& generic, double_float<V> const& x, double root_hi, double root_lo,
                         Table const& ratio, root_window window = {}) noexcept {
  auto root = math::constant<V>(double_double{root_hi, root_lo});
  V const offset = x.hi - root.hi;
  auto inside = math::both(offset >= math::c<V>(window.lower), offset <= math::c<V>(window.upper));
  if (!math::any(inside)) {
    return generic;
  }
  // d as hi + lo, and d R rounded once: (d.hi + d.lo) R = fma(d.hi, R, d.lo R).
  auto d = math::two_sum(offset, x.lo - root.lo);
  V const t = math::fma(d.hi, math::c<V>(4.0 / 3.0), math::c<V>(1.0 / 3.0));
  V const ratio_value = math::horner(t, ratio[0]);
  return math::select(inside, math::fma(d.hi, ratio_value, d.lo * ratio_value), generic);
}

}  // namespace NONLIN_ISA
}  // namespace nonlin::math
