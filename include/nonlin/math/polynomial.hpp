// SPDX-License-Identifier: MIT
#pragma once
// Polynomial evaluation shared by the math layer: Horner's rule with one rounding per step.

#include <array>
#include <cstddef>

#include "../isa.hpp"
#include "ops.hpp"

namespace nonlin::math {
inline namespace NONLIN_ISA {

// c[0] + c[1] t + ... + c[n-1] t^(n-1), coefficients in ascending order.
template <real_value V, class T, std::size_t N>
inline V horner(V const& t, std::array<T, N> const& c) noexcept {
  static_assert(N >= 1);
  V p(static_cast<scalar_t<V>>(c[N - 1]));
  for (std::size_t k = N - 1; k-- > 0;) {
    p = math::fma(p, t, V(static_cast<scalar_t<V>>(c[k])));
  }
  return p;
}

}  // namespace NONLIN_ISA
}  // namespace nonlin::math
