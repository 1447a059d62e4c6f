// SPDX-License-Identifier: MIT
#pragma once
// Compensated sums (Ogita, Rump and Oishi's Sum2 and Dot2): `sum` is the plain running sum and
// `error` collects every addition's rounding (two_sum) and the low parts of exact products
// (two_product), so that terms which cancel leave the total rounded about once:
// |total - exact| <= u |exact| + gamma_n^2 sum |terms|. Where `sum` is infinite or NaN (a term
// overflowed, a NaN came in) it is the total. The sums that the span kernels reduce (PReLU's
// dalpha, softmax's <p, dp>, log_softmax's sum of dy, the cross-entropy's sums of q and of the
// loss, softmax's cross-lane totals) all go through it: plain sums were off by 9-14 ulp where
// PReLU's products cancel and by up to 886 units of u sum |terms| in softmax's strided backward
// at 10^5 classes (tools/gradient_error.cpp), drifting with the length.

#include <array>
#include <cstddef>
#include <limits>

#include <xsimd/xsimd.hpp>

#include "double_float.hpp"
#include "ops.hpp"

namespace nonlin::math {

template <real_value V>
struct compensated_sum {
  V sum = V(0);
  V error = V(0);

  // += term + term_lo (term_lo: a low part the caller has, e.g. of an exact product).
  void add(V const& term, V const& term_lo) noexcept {
    auto s = math::two_sum(sum, term);
    sum = s.hi;
    error = error + (s.lo + term_lo);
  }
  // += term (no "+ 0": the compiler may not drop it, since -0 + 0 is +0).
  void add(V const& term) noexcept {
    auto s = math::two_sum(sum, term);
    sum = s.hi;
    error = error + s.lo;
  }
  // += a * b, the product exact.
  void add_product(V const& a, V const& b) noexcept {
    auto p = math::two_product(a, b);
    add(p.hi, p.lo);
  }
  V total() const noexcept {
    return math::select(math::abs(sum) < V(std::numeric_limits<scalar_t<V>>::infinity()),
                        sum + error, sum);
  }
};

// The lanes' sums, then `rest` (a scalar sum of the elements left over), into one total.
NONLIN_INTRINSIC_DIAGNOSTICS_PUSH
template <class B, class T>
T lanes_total(compensated_sum<B> const& lanes, compensated_sum<T> rest) noexcept {
  alignas(64) std::array<T, B::size> sums;
  alignas(64) std::array<T, B::size> errors;
  lanes.sum.store_aligned(sums.data());
  lanes.error.store_aligned(errors.data());
  for (std::size_t k = 0; k < B::size; ++k) {
    rest.add(sums[k], errors[k]);
  }
  return rest.total();
}
NONLIN_INTRINSIC_DIAGNOSTICS_POP

}  // namespace nonlin::math
