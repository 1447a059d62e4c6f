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
// its root x0 = root_hi + root_lo (R from the table, fitted on -1 <= d <= 1/2). Each lane's
// result is the same whether the table is evaluated on every lane or only in a branch taken when
// some lane of the batch lies in the window, so the width decides, by measurement:
//   - a window at least `unbranched_root_window` wide (gelu_exact's and mish's, 0.9 and 0.55; the
//     16-bit kernels' twins, 0.35 to 1.5) evaluates it on every lane. A lane of U(-8, 8) lies in
//     a window 0.35 wide once in 46, so 30% of batches of 16 hold one, and the branch went the
//     unpredicted way that often. The benchmarks' 4K and 256K rows repeat their inputs and the
//     predictor learns them; on 16M distinct inputs the branch cost bfloat16 silu's backward a
//     third of its speed (1.2-1.5 against 1.9-2.0 el/ns without it), gelu_exact's and mish's
//     float backward 1.12-1.19x.
//   - a narrower one (silu's default tier +-0.05, gelu_tanh's +-0.005) branches: the table's ~24
//     operations on every lane cost float silu's backward 0.69x at 4K and 0.86x at 16M even on
//     N(0, 1) inputs (1 batch in 4 has a lane in its window there), and float gelu_tanh's 0.86x
//     at 4K and 16M of the benchmarks' inputs.
// A scalar always takes the branch.
inline constexpr double unbranched_root_window = 0.3;

template <real_value V, class Table>
inline V patch_near_root(V const& generic, double_float<V> const& x, double root_hi, double root_lo,
                         Table const& ratio, root_window window = {}) noexcept {
  auto root = math::constant<V>(double_double{root_hi, root_lo});
  V const offset = x.hi - root.hi;
  auto inside = math::both(offset >= math::c<V>(window.lower), offset <= math::c<V>(window.upper));
  if (!is_batch_v<V> || window.upper - window.lower < unbranched_root_window) {
    if (!math::any(inside)) {
      return generic;
    }
  }
  // d as hi + lo, and d R rounded once: (d.hi + d.lo) R = fma(d.hi, R, d.lo R).
  auto d = math::two_sum(offset, x.lo - root.lo);
  V const t = math::fma(d.hi, math::c<V>(4.0 / 3.0), math::c<V>(1.0 / 3.0));
  V const ratio_value = math::horner(t, ratio[0]);
  return math::select(inside, math::fma(d.hi, ratio_value, d.lo * ratio_value), generic);
}

}  // namespace NONLIN_ISA
}  // namespace nonlin::math
