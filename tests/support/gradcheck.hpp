// SPDX-License-Identifier: MIT
#pragma once
// The shared gradient check: a functor's analytic derivative against a central difference.
//
// The difference is always taken on the double instantiation of the same functor,
//   cd(x) = (f(x + h) - f(x - h)) / (2h),  h = cbrt(eps_double) * max(1, |x|) ~ 6e-6 max(1,|x|),
// which balances truncation (h^2 f'''/6) against rounding (eps f / h): both ~1e-11 relative.
// The analytic derivative, computed in T, must satisfy
//   |f'(x) - cd(x)| <= tolerance<T> * max(1, |cd(x)|),  tolerance = 2e-6 (float), 1e-8 (double).
// Points within 4h of a kink are skipped (the difference straddles it there).

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include <nonlin/concepts.hpp>

namespace nonlin::test {

template <class T>
constexpr double gradcheck_tolerance = std::is_same_v<T, float> ? 2e-6 : 1e-8;

inline double gradcheck_step(double x) {
  return std::cbrt(std::numeric_limits<double>::epsilon()) * std::max(1.0, std::abs(x));
}

template <class F>
double central_difference(F const& f, double x) {
  double const h = gradcheck_step(x);
  return (f(x + h) - f(x - h)) / (2 * h);
}

inline bool near_kink(double x, std::vector<double> const& kinks) {
  double const h = gradcheck_step(x);
  return std::any_of(kinks.begin(), kinks.end(),
                     [&](double k) { return std::abs(x - k) <= 4 * h; });
}

// Checks f.derivative(T(x)) against the central difference at every x of the grid that is not
// near a kink; returns the number of points checked.
template <real_scalar T, class F>
int expect_derivative_matches(F const& f, std::vector<double> const& grid,
                              std::vector<double> const& kinks = {}) {
  int checked = 0;
  for (double const x : grid) {
    if (near_kink(x, kinks)) {
      continue;
    }
    double const cd = central_difference(f, x);
    double const analytic = static_cast<double>(f.derivative(static_cast<T>(x)));
    double const bound = gradcheck_tolerance<T> * std::max(1.0, std::abs(cd));
    EXPECT_LE(std::abs(analytic - cd), bound)
        << "x = " << x << ", derivative " << analytic << ", central difference " << cd;
    ++checked;
  }
  return checked;
}

inline std::vector<double> grid(double lo, double hi, double step) {
  std::vector<double> points;
  for (double x = lo; x <= hi + step / 2; x += step) {
    points.push_back(x);
  }
  return points;
}

}  // namespace nonlin::test
