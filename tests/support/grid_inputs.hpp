// SPDX-License-Identifier: MIT
#pragma once
// The fixed input set of the tests that compare builds and levels (cross_build_test,
// tests/dispatch): a grid over [-30, 30] plus the specials and the tails, in any element type.

#include <limits>
#include <vector>

#include <nonlin/nonlin.hpp>

namespace nonlin::test {

// v as a T (a 16-bit type from float, rounded to nearest even).
template <class T>
T from_float(float v) {
  if constexpr (nonlin::storage16<T>) {
    return T::from_float(v);
  } else {
    return static_cast<T>(v);
  }
}

// 6015 values: 6001 grid points and 14 specials.
template <class T>
std::vector<T> grid_inputs() {
  std::vector<T> x;
  constexpr int n = 6000;
  for (int i = 0; i <= n; ++i) {
    x.push_back(from_float<T>(static_cast<float>(-30.0 + 60.0 * i / n)));
  }
  for (float v : {0.0f, -0.0f, std::numeric_limits<float>::infinity(),
                  -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
                  -90.0f, -100.0f, -150.0f, 90.0f, 1e-30f, -1e-30f, 1e-40f, 3e38f, -3e38f}) {
    x.push_back(from_float<T>(v));
  }
  return x;
}

}  // namespace nonlin::test
