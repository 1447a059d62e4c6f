// SPDX-License-Identifier: MIT
// The public gradient-check helper (include/nonlin/gradient_check.hpp): it passes correct
// derivatives, catches wrong ones, skips kinks and non-finite coordinates, and never passes a
// check that checked nothing.

#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <vector>

#include <gtest/gtest.h>

#include <nonlin/nonlin.hpp>

namespace {

struct square {
  double operator()(double x) const { return x * x; }
  double derivative(double x) const { return 2 * x; }
};
struct square_wrong {
  double operator()(double x) const { return x * x; }
  double derivative(double x) const { return 2 * x + 0.1 * x * x; }
};
struct square_nan {
  double operator()(double x) const { return x * x; }
  double derivative(double) const { return std::numeric_limits<double>::quiet_NaN(); }
};

std::vector<double> const points = {-3.0, -1.0, -0.25, 0.5, 2.0, 100.0};

TEST(GradientCheck, DerivativePassesAndReportsTheWorstPoint) {
  auto const r = nonlin::check_derivative(square{}, points);
  EXPECT_TRUE(r.passed);
  EXPECT_EQ(r.checked, points.size());
  EXPECT_EQ(r.skipped, 0u);
  EXPECT_LT(r.max_error, 1e-9);
  EXPECT_EQ(r.worst_point, points[r.worst_index]);
}

TEST(GradientCheck, DerivativeCatchesAWrongOne) {
  auto const r = nonlin::check_derivative(square_wrong{}, points);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.worst_point, 100.0);  // error 0.1 x^2 / max(1, 2|x|): 5 at x = 100
  EXPECT_NEAR(r.max_error, 5.0, 1e-6);
  EXPECT_NEAR(r.analytic, 1200.0, 1e-9);
  EXPECT_NEAR(r.numeric, 200.0, 1e-6);
}

TEST(GradientCheck, NanIsAnInfiniteError) {
  auto const r = nonlin::check_derivative(square_nan{}, points);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.max_error, std::numeric_limits<double>::infinity());
}

TEST(GradientCheck, KinksAreSkippedAndNothingCheckedIsNoPass) {
  double const kinks[] = {0.0};
  nonlin::gradient_check_options opts;
  opts.kinks = kinks;
  std::vector<double> const at_kink = {0.0, 1e-6, -1e-5};
  auto const skipped = nonlin::check_derivative(nonlin::relu{}, at_kink, opts);
  EXPECT_EQ(skipped.checked, 0u);
  EXPECT_EQ(skipped.skipped, 3u);
  EXPECT_FALSE(skipped.passed);
  EXPECT_FALSE(nonlin::check_derivative(nonlin::relu{}, at_kink).passed);  // straddles the kink
  EXPECT_FALSE(nonlin::check_derivative(square{}, std::span<double const>{}).passed);
}

TEST(GradientCheck, FloatDerivativeWithinTheDefaultTolerance) {
  std::vector<double> grid;
  for (int i = -800; i <= 800; ++i) grid.push_back(i / 100.0);
  EXPECT_TRUE(nonlin::check_derivative<float>(nonlin::gelu_exact{}, grid).passed);
  EXPECT_TRUE(nonlin::check_derivative<float>(nonlin::sigmoid{}, grid).passed);
  EXPECT_TRUE(nonlin::check_derivative(nonlin::mish{}, grid).passed);
}

// L(x) = sum_i c_i x_i^2 + x_0 x_1, with x_2 = -inf left alone (it adds nothing: c_2 = 0).
double loss(std::span<double const> x) {
  double sum = x[0] * x[1];
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (std::isfinite(x[i])) sum += static_cast<double>(i + 1) * x[i] * x[i];
  }
  return sum;
}
void grad(std::span<double const> x, std::span<double> g) {
  for (std::size_t i = 0; i < x.size(); ++i) {
    g[i] = std::isfinite(x[i]) ? 2 * static_cast<double>(i + 1) * x[i] : 0.0;
  }
  g[0] += x[1];
  g[1] += x[0];
}

TEST(GradientCheck, GradientPerCoordinateAndAlongDirections) {
  std::vector<double> const x = {0.3, -1.2, -std::numeric_limits<double>::infinity(), 4.0, -7.5};
  auto const r = nonlin::check_gradient(loss, grad, x);
  EXPECT_TRUE(r.passed);
  EXPECT_EQ(r.checked, 4u);
  EXPECT_EQ(r.skipped, 1u);

  nonlin::gradient_check_options opts;
  opts.directions = 5;
  auto const d = nonlin::check_gradient(loss, grad, x, opts);
  EXPECT_TRUE(d.passed);
  EXPECT_EQ(d.checked, 5u);
  EXPECT_EQ(d.skipped, 1u);
  EXPECT_TRUE(std::isnan(d.worst_point));

  auto const wrong = [](std::span<double const> v, std::span<double> g) {
    grad(v, g);
    g[3] *= -1;
  };
  auto const w = nonlin::check_gradient(loss, wrong, x);
  EXPECT_FALSE(w.passed);
  EXPECT_EQ(w.worst_index, 3u);
  EXPECT_FALSE(nonlin::check_gradient(loss, wrong, x, opts).passed);
}

}  // namespace
