// SPDX-License-Identifier: MIT
#pragma once
// The spacing of a 16-bit type's values at |v| (one 16-bit ulp), in double, for the tests:
// bfloat16 keeps 8 significant bits down to 2^-126, float16 11 down to 2^-14; below, the
// subnormal step. Computed from frexp, independently of nonlin's bit formulas.

#include <algorithm>
#include <cmath>
#include <type_traits>

#include <nonlin/float16.hpp>

namespace nonlin::test {

template <class T>
double step16(double v) {
  int e = 0;
  (void)std::frexp(v, &e);  // v in [2^(e-1), 2^e)
  bool const bf = std::is_same_v<T, bfloat16>;
  int const lowest = bf ? -126 : -14;
  int const digits = bf ? 8 : 11;
  return std::ldexp(1.0, std::max(e - 1, lowest) - (digits - 1));
}

}  // namespace nonlin::test
