// SPDX-License-Identifier: MIT
// Special values for every function, forward and derivative, on every value type: NaN in gives
// NaN out; +-inf give the mathematical limits; finite inputs give finite results (but where the
// true result overflows); the kink policy.

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <nonlin/nonlin.hpp>

#include "support/functors.hpp"
#include "support/inputs.hpp"
#include "support/value_types.hpp"

namespace nonlin::test {
namespace {

// selu's lambda alpha (its limit at -inf and its derivative at the kink): the two constants'
// product rounded once to T (math::selu_lambda_alpha), not the product of the rounded constants.
template <class T>
T selu_lambda_alpha() {
  return static_cast<T>(math::selu_lambda_alpha.hi);
}

template <class V>
class SpecialValues : public ::testing::Test {};
TYPED_TEST_SUITE(SpecialValues, value_types);

TYPED_TEST(SpecialValues, NanPropagatesThroughEveryMember) {
  using V = TypeParam;
  using T = scalar_t<V>;
  V const nan(std::numeric_limits<T>::quiet_NaN());
  for_each_functor([&](auto const& entry) {
    SCOPED_TRACE(std::string(entry.name));
    auto const& f = entry.f;
    EXPECT_TRUE(std::isnan(lane(f(nan), 0)));
    EXPECT_TRUE(std::isnan(lane(f.derivative(nan), 0)));
    EXPECT_TRUE(std::isnan(lane(f.backward(nan, V(T(1))), 0)));
    // From the output: a NaN y (the output of a NaN x) gives NaN, also where no keep_nan
    // select guards it (the ELU family's y + alpha carries it).
    using F = std::remove_cvref_t<decltype(f)>;
    if constexpr (output_differentiable<F, V>) {
      EXPECT_TRUE(std::isnan(lane(f.derivative_from_output(nan), 0)));
      EXPECT_TRUE(std::isnan(lane(f.backward_from_output(nan, V(T(1))), 0)));
    }
  });
}

TYPED_TEST(SpecialValues, FiniteInputsGiveFiniteResults) {
  using V = TypeParam;
  using T = scalar_t<V>;
  using L = std::numeric_limits<T>;
  std::vector<T> const xs = {T(0),      -T(0),    L::denorm_min(), -L::denorm_min(), L::min(),
                             -L::min(), T(1e-30), T(-1e-30),       T(-50),           T(50),
                             T(-700),   T(700),   -L::max()};
  for_each_functor([&](auto const& entry) {
    SCOPED_TRACE(std::string(entry.name));
    auto const& f = entry.f;
    for (T const x : xs) {
      T const y = lane(f(V(x)), 0);
      T const d = lane(f.derivative(V(x)), 0);
      EXPECT_TRUE(std::isfinite(y)) << x << " -> " << y;
      EXPECT_TRUE(std::isfinite(d)) << x << " -> " << d;
    }
    // Growing functions reach FLT_MAX without NaN.
    T const big = lane(f(V(L::max())), 0);
    EXPECT_FALSE(std::isnan(big));
  });
}

// selu(x) = lambda x stays finite up to the largest x whose lambda x rounds below the overflow
// threshold (the exhaustive accuracy run found inf at x = 3.239e38: lambda rounded to float
// first made the product overflow).
TYPED_TEST(SpecialValues, SeluNearTheOverflowThreshold) {
  using V = TypeParam;
  using T = scalar_t<V>;
  using L = std::numeric_limits<T>;
  long double const lambda = 1.05070098735548049341933498529460L;
  T x = static_cast<T>(static_cast<long double>(L::max()) / lambda);
  for (int step = 0; step < 4; ++step, x = std::nextafter(x, T(0))) {
    T const want = static_cast<T>(lambda * static_cast<long double>(x));
    T const got = lane(selu{}(V(x)), 0);
    // Within an ulp (exact with FMA; without it the sum rounds twice), and finite where the
    // correctly rounded result is.
    EXPECT_EQ(std::isinf(got), std::isinf(want)) << x;
    EXPECT_TRUE(got == want || got == std::nextafter(want, T(0)) ||
                got == std::nextafter(want, L::infinity()))
        << x << ": " << got << " vs " << want;
  }
}

// The limits at +-inf, forward and derivative: every instance of every catalog row, against the
// row's at_infinity.
TYPED_TEST(SpecialValues, InfinityGivesTheLimit) {
  using V = TypeParam;
  using T = scalar_t<V>;
  T const inf = std::numeric_limits<T>::infinity();
  for_each_functor([&](auto const& entry) {
    SCOPED_TRACE(std::string(entry.name));
    auto const& f = entry.f;
    catalog::limits const& l = entry.at_infinity;
    EXPECT_EQ(lane(f(V(-inf)), 0), static_cast<T>(l.at_minus_inf));
    EXPECT_EQ(lane(f(V(inf)), 0), static_cast<T>(l.at_plus_inf));
    EXPECT_EQ(lane(f.derivative(V(-inf)), 0), static_cast<T>(l.derivative_at_minus_inf));
    EXPECT_EQ(lane(f.derivative(V(inf)), 0), static_cast<T>(l.derivative_at_plus_inf));
  });
}

// Far out, where the exps clamp and the backward's product tails end: backward(x, dy) for |dy| <= 1
// is dy f'(x) wherever f'(x) is a normal number or 0 (a product rounded once cannot leave 0
// there), at +-inf, +-max and arguments beyond every clamp (the fast softplus' backward once gave
// dy sigma(-87) for z < -200, where the default tier's tail ends).
TYPED_TEST(SpecialValues, BackwardFarOutIsDyTimesTheDerivative) {
  using V = TypeParam;
  using T = scalar_t<V>;
  using L = std::numeric_limits<T>;
  std::vector<T> xs = {L::infinity(), L::max(), T(1e30), T(1e4), T(2000), T(800), T(250), T(150)};
  for (std::size_t i = 0, n = xs.size(); i < n; ++i) {
    xs.push_back(-xs[i]);
  }
  for_each_functor([&](auto const& entry) {
    SCOPED_TRACE(std::string(entry.name));
    auto const& f = entry.f;
    for (T const x : xs) {
      T const d = lane(f.derivative(V(x)), 0);
      if (d != T(0) && !std::isnormal(d)) {
        continue;  // subnormal or infinite: the product is rounded once instead
      }
      for (T const dy : {T(1), T(-0.5)}) {
        EXPECT_EQ(lane(f.backward(V(x), V(dy)), 0), dy * d) << x << ", " << dy;
      }
    }
  });
}

// -0 is kept where the function is odd or passes x through near 0.
TYPED_TEST(SpecialValues, SignedZero) {
  using V = TypeParam;
  using T = scalar_t<V>;
  V const minus_zero(-T(0));
  EXPECT_TRUE(std::signbit(lane(nonlin::tanh{}(minus_zero), 0)));
  EXPECT_TRUE(std::signbit(lane(identity{}(minus_zero), 0)));
  EXPECT_TRUE(std::signbit(lane(gelu_exact{}(minus_zero), 0)));
  EXPECT_TRUE(std::signbit(lane(silu{}(minus_zero), 0)));
  EXPECT_FALSE(std::signbit(lane(relu{}(minus_zero), 0)));  // relu(x <= 0) = +0
  EXPECT_FALSE(std::signbit(lane(relu6{}(minus_zero), 0)));
  EXPECT_TRUE(std::signbit(lane(hardtanh{}(minus_zero), 0)));  // inside: x itself
  // At a zero bound the closed saturation gives the bound's zero, whatever x's sign; also where
  // the bound is a double that V holds as a zero (its min/max form would give x's).
  EXPECT_FALSE(std::signbit(lane(hardtanh{.min = 0.0, .max = 1.0}(minus_zero), 0)));
  EXPECT_TRUE(std::signbit(lane(hardtanh{.min = -0.0, .max = 1.0}(V(T(0))), 0)));
  EXPECT_TRUE(std::signbit(lane(hardtanh{.min = -1.0, .max = -0.0}(V(T(0))), 0)));
  T const tiny_bound = static_cast<T>(-1e-300);  // -0 in float
  EXPECT_EQ(std::signbit(lane(hardtanh{.min = -1e-300, .max = 1.0}(V(T(0))), 0)),
            tiny_bound == T(0));
  // hardswish'(-1.5) = 0, and dy times it has dy's sign (in double too, where dy (2x + 3) is
  // divided by 6, whose residual step gives +0 for -0).
  EXPECT_TRUE(std::signbit(lane(hardswish{}.backward(V(T(-1.5)), V(T(-3))), 0)));
  EXPECT_FALSE(std::signbit(lane(hardswish{}.backward(V(T(-1.5)), V(T(3))), 0)));
  EXPECT_EQ(lane(sigmoid{}(minus_zero), 0), T(0.5));
  // A negative derivative that underflows is -0, also where its exp vanished (gelu_exact' below
  // x = -15.2 in float, -38.6 in double, was +0) and at -inf; so is dy times it for dy > 0.
  for (T const x : {T(-40), T(-1000), -std::numeric_limits<T>::infinity()}) {
    EXPECT_TRUE(std::signbit(lane(gelu_exact{}.derivative(V(x)), 0))) << x;
    EXPECT_TRUE(std::signbit(lane(gelu_exact{}.backward(V(x), V(T(3))), 0))) << x;
    EXPECT_TRUE(std::signbit(lane(silu{}.derivative(V(x)), 0))) << x;
    EXPECT_TRUE(std::signbit(lane(mish{}.derivative(V(x)), 0))) << x;
    EXPECT_TRUE(std::signbit(lane(silu{}.backward(V(x), V(T(3))), 0))) << x;
    EXPECT_TRUE(std::signbit(lane(gelu_tanh{}.derivative(V(x)), 0))) << x;
    EXPECT_TRUE(std::signbit(lane(gelu_tanh{}.backward(V(x), V(T(3))), 0))) << x;
    EXPECT_TRUE(std::signbit(lane(gelu_quick{}.derivative(V(x)), 0))) << x;
    EXPECT_TRUE(std::signbit(lane(swish{1.5}.derivative(V(x)), 0))) << x;
    EXPECT_TRUE(std::signbit(lane(nonlin::fast::gelu_tanh{}.derivative(V(x)), 0))) << x;
  }
  // Tiny inputs: tanh(x) = x, sigmoid'(x) = 1/4, gelu(x) = x/2.
  T const tiny = std::numeric_limits<T>::denorm_min() * T(64);
  EXPECT_EQ(lane(nonlin::tanh{}(V(tiny)), 0), tiny);
  EXPECT_EQ(lane(gelu_exact{}(V(tiny)), 0), tiny / 2);
  EXPECT_EQ(lane(sigmoid{}.derivative(V(tiny)), 0), T(0.25));
}

// softplus' and log_sigmoid' from an output they never give (y < 0 and y > 0): the range's edge,
// derivative 0; the edge itself 0 too, and the linear piece of a finite threshold still 1.
TYPED_TEST(SpecialValues, OutputsOutsideTheRangeCountAsTheEdge) {
  using V = TypeParam;
  using T = scalar_t<V>;
  T const inf = std::numeric_limits<T>::infinity();
  T const max = std::numeric_limits<T>::max();
  for (T const y : {T(0.5), T(1), T(100), max, inf}) {
    // -expm1(0): -0, as at the edge itself.
    EXPECT_EQ(lane(log_sigmoid{}.derivative_from_output(V(y)), 0), T(0)) << y;
    EXPECT_EQ(lane(softplus{}.derivative_from_output(V(-y)), 0), T(0)) << -y;
    EXPECT_EQ(lane(softplus{.beta = 2.0, .threshold = 10.0}.derivative_from_output(V(-y)), 0), T(1))
        << -y;
  }
  EXPECT_EQ(lane(log_sigmoid{}.derivative_from_output(V(T(0))), 0), T(0));
  EXPECT_EQ(lane(softplus{}.derivative_from_output(V(T(0))), 0), T(0));
  // Inside the range, sigma(x) from y: log_sigmoid(x) = log(1/4) at sigma(x) = 1/4, so
  // sigma(-x) = 3/4; softplus(x) = log 2 at x = 0, sigma(0) = 1/2.
  T const quarter = lane(log_sigmoid{}.derivative_from_output(V(std::log(T(0.25)))), 0);
  EXPECT_NEAR(quarter, T(0.75), T(4) * std::numeric_limits<T>::epsilon());
  T const half = lane(softplus{}.derivative_from_output(V(std::log(T(2)))), 0);
  EXPECT_NEAR(half, T(0.5), T(4) * std::numeric_limits<T>::epsilon());
}

// The kink policy, one rule for all: the left piece's derivative at an inner kink, 0 on a
// closed saturation boundary.
TYPED_TEST(SpecialValues, KinkPolicy) {
  using V = TypeParam;
  using T = scalar_t<V>;
  auto d = [](auto const& f, double x) { return lane(f.derivative(V(static_cast<T>(x))), 0); };
  EXPECT_EQ(d(relu{}, 0), T(0));
  EXPECT_EQ(d(step{}, 0), T(0));
  EXPECT_EQ(lane(step{}(V(T(0))), 0), T(0));
  EXPECT_EQ(d(leaky_relu{.alpha = 0.2}, 0), T(0.2));
  EXPECT_EQ(d(elu{.alpha = 0.5}, 0), T(0.5));
  EXPECT_EQ(d(selu{}, 0), selu_lambda_alpha<T>());
  EXPECT_EQ(d(celu{.alpha = 3}, 0), T(1));
  EXPECT_EQ(d(relu6{}, 0), T(0));
  EXPECT_EQ(d(relu6{}, 6), T(0));
  EXPECT_EQ(d(hardtanh{}, -1), T(0));
  EXPECT_EQ(d(hardtanh{}, 1), T(0));
  EXPECT_EQ(d(hardsigmoid{}, -3), T(0));
  EXPECT_EQ(d(hardsigmoid{}, 3), T(0));
  EXPECT_EQ(d(hardswish{}, -3), T(0));
  EXPECT_EQ(d(hardswish{}, 3), T(1));
  EXPECT_EQ(d(squared_relu{}, 0), T(0));
  // backward selects: an infinite dy at a zero-gradient position gives 0, not NaN.
  T const inf = std::numeric_limits<T>::infinity();
  EXPECT_EQ(lane(relu{}.backward(V(T(-1)), V(inf)), 0), T(0));
  EXPECT_EQ(lane(relu6{}.backward(V(T(7)), V(inf)), 0), T(0));
  // The same in every zero-gradient region of the family, hard sigmoid and swish included.
  for (T const x : {T(-5), T(-3), T(3), T(5)}) {
    EXPECT_TRUE(same_bits(lane(hardsigmoid{}.backward(V(x), V(inf)), 0), T(0))) << x;
    EXPECT_TRUE(same_bits(lane(hardsigmoid{}.backward(V(x), V(T(-1))), 0), T(0))) << x;
  }
  for (T const y : {T(0), T(1)}) {
    EXPECT_TRUE(same_bits(lane(hardsigmoid{}.backward_from_output(V(y), V(inf)), 0), T(0))) << y;
  }
  EXPECT_TRUE(same_bits(lane(hardswish{}.backward(V(T(-5)), V(inf)), 0), T(0)));
  EXPECT_TRUE(same_bits(lane(hardswish{}.backward(V(T(-3)), V(T(-2))), 0), T(0)));
  EXPECT_EQ(lane(hardswish{}.backward(V(T(5)), V(inf)), 0), inf);  // slope 1: dy itself
  EXPECT_TRUE(same_bits(lane(squared_relu{}.backward(V(T(-1)), V(inf)), 0), T(0)));
  EXPECT_TRUE(same_bits(lane(squared_relu{}.backward(V(T(0)), V(T(-2))), 0), T(0)));
}

}  // namespace
}  // namespace nonlin::test
