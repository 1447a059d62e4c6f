// SPDX-License-Identifier: MIT
// Every derivative against a central difference (the shared helper in support/gradcheck.hpp),
// backward against dy * derivative, and backward_from_output(f(x)) against backward(x).

#include <cmath>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include <nonlin/nonlin.hpp>

#include "support/functors.hpp"
#include "support/gradcheck.hpp"
#include "support/value_types.hpp"

namespace nonlin::test {
namespace {

template <class T>
class Gradient : public ::testing::Test {};
using scalar_types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Gradient, scalar_types);

TYPED_TEST(Gradient, DerivativeMatchesCentralDifference) {
  using T = TypeParam;
  auto const points = grid(-10, 10, 1.0 / 128 + 1e-9);  // off the binary grid: not on kinks
  for_each_functor([&](auto const& entry) {
    SCOPED_TRACE(std::string(entry.name));
    int const checked = expect_derivative_matches<T>(entry.f, points, entry.kinks);
    EXPECT_GT(checked, 2000);
  });
}

// backward(x, dy) = dy f'(x) bit for bit wherever f'(x) is a normal number (or a hard zero of a
// piecewise-linear functor), with dy of both signs and tiny and huge where the product is
// finite. The functors write backward as their own code (the piecewise-linear family selects
// dy, squared_relu forms (dy x) 2 where 2x would overflow, the smooth ones multiply dy in before
// the final scale of their exp): the test guards that it is the same product. Where f'(x) alone
// is subnormal or rounds to 0, backward is dy f'(x) rounded once instead (accuracy_test's
// BackwardProduct rows measure it against MPFR).
TYPED_TEST(Gradient, BackwardAgreesWithDyTimesDerivative) {
  using T = TypeParam;
  int tails = 0;
  for_each_functor([&](auto const& entry) {
    SCOPED_TRACE(std::string(entry.name));
    for (double const x : grid(-12, 12, 0.37)) {
      T const derivative = entry.f.derivative(static_cast<T>(x));
      if (derivative != T(0) && std::fabs(derivative) < std::numeric_limits<T>::min()) {
        ++tails;
        continue;
      }
      for (double const dy : {1.0, -2.5, 0.125, 1e-30, -3e30}) {
        T const expected = static_cast<T>(dy) * derivative;
        T const computed = entry.f.backward(static_cast<T>(x), static_cast<T>(dy));
        if (derivative == T(0) && computed != T(0)) {
          ++tails;  // a smooth f' that rounded to 0: the product rounded once is not 0
          continue;
        }
        EXPECT_EQ(computed, expected) << x;
      }
    }
  });
  // The grid reaches the tails where f' is subnormal in float (gelu_exact, gelu_tanh at -12).
  if constexpr (std::is_same_v<T, float>) {
    EXPECT_GT(tails, 0);
  }
}

// From the saved output: equal to the from-x backward up to the rounding of y, which the
// derivative-from-output amplifies where the function saturates, so |x| <= 6 here.
TYPED_TEST(Gradient, BackwardFromOutputMatchesBackward) {
  using T = TypeParam;
  double const tolerance = std::is_same_v<T, float> ? 1e-5 : 1e-13;
  int functions = 0;
  for_each_functor([&](auto const& entry) {
    using F = std::remove_cvref_t<decltype(entry.f)>;
    if constexpr (output_differentiable<F, T>) {
      ++functions;
      SCOPED_TRACE(std::string(entry.name));
      for (double const x : grid(-6, 6, 1.0 / 64)) {
        T const xt = static_cast<T>(x);
        T const dy = static_cast<T>(0.75);
        T const from_x = entry.f.backward(xt, dy);
        T const from_y = entry.f.backward_from_output(entry.f(xt), dy);
        EXPECT_NEAR(from_y, from_x, tolerance * std::max(1.0, std::abs(double(from_x)))) << x;
      }
    }
  });
  // As many as the catalog rows declare (a row's has_output_derivative is checked against the
  // concept at compile time, catalog/catalog.hpp).
  int declared = 0;
  catalog::for_each_instance(
      [&]<class Row>(auto const&) { declared += Row::has_output_derivative ? 1 : 0; });
  EXPECT_EQ(functions, declared);
  EXPECT_GT(functions, 0);
}

// Which functors offer the from-output backward is a compile-time fact (checked for every row
// against its has_output_derivative in catalog/catalog.hpp).
static_assert(output_differentiable<relu, xsimd::batch<float>>);
static_assert(!output_differentiable<gelu_exact, xsimd::batch<double>>);

}  // namespace
}  // namespace nonlin::test
