// SPDX-License-Identifier: MIT
#pragma once
// Gradient checks: compare an analytic derivative with a central difference, for nonlin's own
// functors and for the layers you write around them. No I/O and no test framework: both checks
// return a gradient_check_result, and you decide what to print or assert.
//
//   nonlin::check_derivative(f, points, opts)          f.derivative(x) against
//                                                       (f(x + h) - f(x - h)) / (2h)
//   nonlin::check_gradient(loss, grad, x, opts)         grad(x) against differences of loss(x),
//                                                       per coordinate or along random directions
//
// The step is h = cbrt(eps_double) * max(1, |x|) ~ 6.06e-6 max(1, |x|): it balances the
// truncation error of the difference (h^2 f'''/6) against rounding (eps |f| / h), both about
// 1e-11 relative for a function of moderate size evaluated in double. The difference is always
// taken in double, so the function you check must be evaluated in double.
//
// The error at a point is |analytic - numeric| / max(1, |numeric|): relative where the
// derivative is larger than 1, absolute below. The check passes when every point has
// error <= opts.tolerance (1e-6 by default: ~5 orders of magnitude above the difference's own
// error, and far below the O(1) error of a real mistake such as a dropped term or a wrong
// sign), and at least one point was checked. A NaN anywhere counts as an infinite error.

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "concepts.hpp"
#include "isa.hpp"

namespace nonlin {

struct gradient_check_options {
  // Pass when error <= tolerance at every point; error = |analytic - numeric| / max(1, |numeric|).
  double tolerance = 1e-6;
  // h = relative_step * max(1, |x|); the default is cbrt(2^-52), the balance point for double.
  double relative_step = 6.055454452393344e-06;
  // check_derivative: points with |x - kink| <= kink_margin * h are skipped (the difference
  // would straddle the kink there). Empty: nothing is skipped.
  std::span<double const> kinks = {};
  double kink_margin = 4.0;
  // check_gradient: 0 checks every coordinate (2 loss evaluations each); n > 0 checks n random
  // directions v with entries +-1 instead (2 evaluations each, whatever the size of x), taken
  // from a fixed generator seeded with `seed`, so a run is reproducible.
  std::size_t directions = 0;
  std::uint64_t seed = 1;
};

struct gradient_check_result {
  bool passed = false;          // every checked point within tolerance, and checked > 0
  double max_error = 0.0;       // the largest error, as defined above
  std::size_t worst_index = 0;  // the point, coordinate or direction where it occurred
  double worst_point = std::numeric_limits<double>::quiet_NaN();  // x there (NaN: a direction)
  double analytic = 0.0;  // the two derivatives at the worst point
  double numeric = 0.0;
  std::size_t checked = 0;
  std::size_t skipped = 0;  // near a kink (check_derivative), or a non-finite coordinate
};

namespace detail {
inline namespace NONLIN_ISA {

inline double gradient_check_error(double analytic, double numeric) noexcept {
  double const error = std::abs(analytic - numeric) / std::max(1.0, std::abs(numeric));
  return std::isnan(error) ? std::numeric_limits<double>::infinity() : error;
}

inline void gradient_check_record(gradient_check_result& r, std::size_t index, double point,
                                  double analytic, double numeric) noexcept {
  double const error = gradient_check_error(analytic, numeric);
  if (r.checked == 0 || error > r.max_error) {
    r.max_error = error;
    r.worst_index = index;
    r.worst_point = point;
    r.analytic = analytic;
    r.numeric = numeric;
  }
  ++r.checked;
}

inline void gradient_check_finish(gradient_check_result& r,
                                  gradient_check_options const& opts) noexcept {
  r.passed = r.checked > 0 && r.max_error <= opts.tolerance;
}

// splitmix64: a tiny generator whose sequence is the same on every platform.
inline std::uint64_t gradient_check_next(std::uint64_t& state) noexcept {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

}  // namespace NONLIN_ISA
}  // namespace detail

inline namespace NONLIN_ISA {

// Checks f.derivative(T(x)) against the central difference of f in double at every point not
// near a kink. T = float checks the float derivative against the same double difference.
// f is any type with f(double) and f.derivative(T): every nonlin functor, or one of yours.
template <real_scalar T = double, class F>
requires requires(F const& f, double x, T t) {
  { f(x) } -> std::convertible_to<double>;
  { f.derivative(t) } -> std::convertible_to<double>;
}
gradient_check_result check_derivative(F const& f, std::span<double const> points,
                                       gradient_check_options const& opts = {}) {
  gradient_check_result r;
  for (std::size_t i = 0; i < points.size(); ++i) {
    double const x = points[i];
    double const h = opts.relative_step * std::max(1.0, std::abs(x));
    bool const near_kink = std::any_of(opts.kinks.begin(), opts.kinks.end(), [&](double k) {
      return std::abs(x - k) <= opts.kink_margin * h;
    });
    if (near_kink || !std::isfinite(x)) {
      ++r.skipped;
      continue;
    }
    double const numeric =
        (static_cast<double>(f(x + h)) - static_cast<double>(f(x - h))) / (2 * h);
    double const analytic = static_cast<double>(f.derivative(static_cast<T>(x)));
    detail::gradient_check_record(r, i, x, analytic, numeric);
  }
  detail::gradient_check_finish(r, opts);
  return r;
}

// Checks the gradient of a scalar function of many variables, e.g. a loss as a function of one
// layer's weights or inputs:
//   loss(x) -> double                    evaluated at x and at x +- h in one coordinate/direction
//   grad(x, g)                           writes d loss / d x at x into g (g.size() == x.size())
// x is copied; loss and grad only ever see the copy. Coordinates that are not finite (a masked
// -inf score, say) are not perturbed and count as skipped.
// Per coordinate (opts.directions == 0): numeric_i = (loss(x + h_i e_i) - loss(x - h_i e_i)) /
// (2 h_i) with h_i = relative_step * max(1, |x_i|), against g_i; worst_point is x_i.
// Along directions: v_i = +-1 on the finite coordinates, h = relative_step * max(1, max |x_i|),
// numeric = (loss(x + h v) - loss(x - h v)) / (2h) against <g, v>; worst_index is the
// direction's number.
template <class Loss, class Grad>
requires requires(Loss const& loss, Grad const& grad, std::span<double const> x,
                  std::span<double> g) {
  { loss(x) } -> std::convertible_to<double>;
  grad(x, g);
}
gradient_check_result check_gradient(Loss const& loss, Grad const& grad, std::span<double const> x,
                                     gradient_check_options const& opts = {}) {
  gradient_check_result r;
  std::vector<double> point(x.begin(), x.end());
  std::vector<double> g(x.size());
  grad(std::span<double const>(point), std::span<double>(g));
  auto const eval = [&] { return static_cast<double>(loss(std::span<double const>(point))); };

  if (opts.directions == 0) {
    for (std::size_t i = 0; i < point.size(); ++i) {
      double const xi = x[i];
      if (!std::isfinite(xi)) {
        ++r.skipped;
        continue;
      }
      double const h = opts.relative_step * std::max(1.0, std::abs(xi));
      point[i] = xi + h;
      double const up = eval();
      point[i] = xi - h;
      double const down = eval();
      point[i] = xi;
      detail::gradient_check_record(r, i, xi, g[i], (up - down) / (2 * h));
    }
    detail::gradient_check_finish(r, opts);
    return r;
  }

  double scale = 1.0;
  std::size_t finite = 0;
  for (double const xi : x) {
    if (std::isfinite(xi)) {
      scale = std::max(scale, std::abs(xi));
      ++finite;
    }
  }
  r.skipped = x.size() - finite;
  if (finite == 0) {
    detail::gradient_check_finish(r, opts);
    return r;
  }
  double const h = opts.relative_step * scale;
  std::uint64_t state = opts.seed;
  std::vector<double> v(x.size());
  for (std::size_t d = 0; d < opts.directions; ++d) {
    double analytic = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      v[i] = !std::isfinite(x[i])                              ? 0.0
             : (detail::gradient_check_next(state) >> 63) != 0 ? 1.0
                                                               : -1.0;
      analytic += g[i] * v[i];
    }
    for (std::size_t i = 0; i < x.size(); ++i) {
      point[i] = x[i] + h * v[i];
    }
    double const up = eval();
    for (std::size_t i = 0; i < x.size(); ++i) {
      point[i] = x[i] - h * v[i];
    }
    double const down = eval();
    detail::gradient_check_record(r, d, std::numeric_limits<double>::quiet_NaN(), analytic,
                                  (up - down) / (2 * h));
  }
  std::copy(x.begin(), x.end(), point.begin());
  detail::gradient_check_finish(r, opts);
  return r;
}

}  // namespace NONLIN_ISA
}  // namespace nonlin
