// SPDX-License-Identifier: MIT
// Every number printed in the project's founding documents (the GELU paper's notes, the GLU
// variants paper's notes, and the activation-function survey: worked tables computed with
// Python 3.9.6, printed to 6 decimals), at the printed precision: a value printed with d
// decimals must be within 0.5e-d (plus float rounding).

#include <algorithm>
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include <nonlin/nonlin.hpp>

#include "support/gradcheck.hpp"
#include "support/value_types.hpp"

namespace nonlin::test {
namespace {

template <class V>
class ReferenceTable : public ::testing::Test {};
TYPED_TEST_SUITE(ReferenceTable, value_types);

// Evaluates f on x in every lane and checks each lane against the printed value.
template <class V, class G>
void expect_printed(G const& g, double x, double printed, int decimals, char const* what) {
  using T = scalar_t<V>;
  V const result = g(V(static_cast<T>(x)));
  double const tolerance = 0.5 * std::pow(10.0, -decimals) + 4 * std::numeric_limits<T>::epsilon();
  for (std::size_t i = 0; i < lanes<V>(); ++i) {
    EXPECT_NEAR(static_cast<double>(lane(result, i)), printed, tolerance)
        << what << "(" << x << ") lane " << i;
  }
}

struct row {
  double x, step, sigmoid, dsigmoid, tanh, dtanh, relu, leaky, elu, silu;
};
// The sigmoid / tanh / ReLU family table (Leaky alpha = 0.01, ELU alpha = 1).
std::vector<row> const family_table = {
    {-3.0, 0, 0.047426, 0.045177, -0.995055, 0.009866, 0.000000, -0.030000, -0.950213, -0.142278},
    {-2.0, 0, 0.119203, 0.104994, -0.964028, 0.070651, 0.000000, -0.020000, -0.864665, -0.238406},
    {-1.0, 0, 0.268941, 0.196612, -0.761594, 0.419974, 0.000000, -0.010000, -0.632121, -0.268941},
    {-0.5, 0, 0.377541, 0.235004, -0.462117, 0.786448, 0.000000, -0.005000, -0.393469, -0.188770},
    {0.0, 0, 0.500000, 0.250000, 0.000000, 1.000000, 0.000000, 0.000000, 0.000000, 0.000000},
    {0.5, 1, 0.622459, 0.235004, 0.462117, 0.786448, 0.500000, 0.500000, 0.500000, 0.311230},
    {1.0, 1, 0.731059, 0.196612, 0.761594, 0.419974, 1.000000, 1.000000, 1.000000, 0.731059},
    {2.0, 1, 0.880797, 0.104994, 0.964028, 0.070651, 2.000000, 2.000000, 2.000000, 1.761594},
    {3.0, 1, 0.952574, 0.045177, 0.995055, 0.009866, 3.000000, 3.000000, 3.000000, 2.857722},
};

TYPED_TEST(ReferenceTable, SigmoidTanhReluFamily) {
  using V = TypeParam;
  for (row const& r : family_table) {
    expect_printed<V>([](V x) { return step{}(x); }, r.x, r.step, 6, "step");
    expect_printed<V>([](V x) { return sigmoid{}(x); }, r.x, r.sigmoid, 6, "sigmoid");
    expect_printed<V>([](V x) { return sigmoid{}.derivative(x); }, r.x, r.dsigmoid, 6, "dsigmoid");
    expect_printed<V>([](V x) { return nonlin::tanh{}(x); }, r.x, r.tanh, 6, "tanh");
    expect_printed<V>([](V x) { return nonlin::tanh{}.derivative(x); }, r.x, r.dtanh, 6, "dtanh");
    expect_printed<V>([](V x) { return relu{}(x); }, r.x, r.relu, 6, "relu");
    expect_printed<V>([](V x) { return leaky_relu{}(x); }, r.x, r.leaky, 6, "leaky_relu");
    expect_printed<V>([](V x) { return elu{}(x); }, r.x, r.elu, 6, "elu");
    expect_printed<V>([](V x) { return silu{}(x); }, r.x, r.silu, 6, "silu");
    // The same derivatives from the saved outputs, as those tables write them.
    expect_printed<V>([](V x) { return sigmoid{}.derivative_from_output(sigmoid{}(x)); }, r.x,
                      r.dsigmoid, 6, "s(1-s)");
    expect_printed<V>([](V x) { return nonlin::tanh{}.derivative_from_output(nonlin::tanh{}(x)); },
                      r.x, r.dtanh, 6, "1-t^2");
  }
}

TYPED_TEST(ReferenceTable, SigmoidSaturatesWithoutOverflow) {
  using V = TypeParam;
  V const low = sigmoid{}(V(scalar_t<V>(-1000)));
  V const high = sigmoid{}(V(scalar_t<V>(1000)));
  for (std::size_t i = 0; i < lanes<V>(); ++i) {
    EXPECT_EQ(lane(low, i), scalar_t<V>(0));
    EXPECT_EQ(lane(high, i), scalar_t<V>(1));
  }
}

TYPED_TEST(ReferenceTable, VanishingGradientAndTanhMean) {
  using V = TypeParam;
  using T = scalar_t<V>;
  V const d = sigmoid{}.derivative(V(T(0)));  // the largest sigmoid derivative, 0.25
  V const fifth = d * d * d * d * d;          // through five layers
  V const mean = (nonlin::tanh{}(V(T(1))) + nonlin::tanh{}(V(T(2)))) / V(T(2));
  for (std::size_t i = 0; i < lanes<V>(); ++i) {
    EXPECT_EQ(lane(fifth, i), T(0.0009765625));
    EXPECT_NEAR(lane(mean, i), 0.862811, 0.5e-6 + 4 * std::numeric_limits<T>::epsilon());
  }
}

struct gelu_row {
  double x, exact, tanh, quick, silu, quick_grad;
};
std::vector<gelu_row> const gelu_table = {
    {-3.0, -0.004050, -0.003637, -0.018071, -0.142278, -0.024548},
    {-2.0, -0.045500, -0.045402, -0.064341, -0.238406, -0.073815},
    {-1.0, -0.158655, -0.158808, -0.154204, -0.268941, -0.067780},
    {-0.5, -0.154269, -0.154286, -0.149612, -0.188770, 0.120778},
    {0.0, 0.000000, 0.000000, 0.000000, 0.000000, 0.500000},
    {0.5, 0.345731, 0.345714, 0.350388, 0.311230, 0.879222},
    {1.0, 0.841345, 0.841192, 0.845796, 0.731059, 1.067780},
    {2.0, 1.954500, 1.954598, 1.935659, 1.761594, 1.073815},
    {3.0, 2.995950, 2.996363, 2.981929, 2.857722, 1.024548},
};

TYPED_TEST(ReferenceTable, GeluForms) {
  using V = TypeParam;
  for (gelu_row const& r : gelu_table) {
    expect_printed<V>([](V x) { return gelu_exact{}(x); }, r.x, r.exact, 6, "gelu_exact");
    expect_printed<V>([](V x) { return gelu_tanh{}(x); }, r.x, r.tanh, 6, "gelu_tanh");
    expect_printed<V>([](V x) { return gelu_quick{}(x); }, r.x, r.quick, 6, "gelu_quick");
    expect_printed<V>([](V x) { return silu{}(x); }, r.x, r.silu, 6, "silu");
    expect_printed<V>([](V x) { return gelu_quick{}.derivative(x); }, r.x, r.quick_grad, 6,
                      "gelu_quick'");
  }
  // The GELU document, 4 decimals.
  std::vector<double> const xs = {-3, -1, -0.75, 0, 1, 3};
  std::vector<double> const exact = {-0.004, -0.1587, -0.17, 0.0, 0.8413, 2.996};
  std::vector<double> const tanh_form = {-0.0036, -0.1588, -0.17, 0.0, 0.8412, 2.9964};
  std::vector<double> const relu_form = {0, 0, 0, 0, 1, 3};
  for (std::size_t i = 0; i < xs.size(); ++i) {
    // -0.004 and -0.17 are printed with fewer decimals: each with its own precision.
    int const decimals_exact = (i == 0) ? 3 : (i == 2 ? 2 : 4);
    int const decimals_tanh = (i == 2) ? 2 : 4;
    expect_printed<V>([](V x) { return gelu_exact{}(x); }, xs[i], exact[i], decimals_exact,
                      "gelu_exact");
    expect_printed<V>([](V x) { return gelu_tanh{}(x); }, xs[i], tanh_form[i], decimals_tanh,
                      "gelu_tanh");
    expect_printed<V>([](V x) { return relu{}(x); }, xs[i], relu_form[i], 4, "relu");
  }
  // Phi(2) ~ 0.97725 = gelu(2) / 2; GELU(2) ~ 1.9545, GELU(-2) ~ -0.0455.
  expect_printed<V>([](V x) { return gelu_exact{}(x) / x; }, 2.0, 0.97725, 5, "Phi");
  expect_printed<V>([](V x) { return gelu_exact{}(x); }, 2.0, 1.9545, 4, "gelu_exact");
  expect_printed<V>([](V x) { return gelu_exact{}(x); }, -2.0, -0.0455, 4, "gelu_exact");
}

// The two grid maxima (9 decimals) and the quick-GELU gradient check are double figures.
TEST(ReferenceDouble, GeluApproximationGridMaxima) {
  double max_tanh = 0;
  double max_quick = 0;
  double max_cd = 0;
  for (int i = -500; i <= 500; ++i) {
    double const x = i * 0.01;
    double const exact = gelu_exact{}(x);
    max_tanh = std::max(max_tanh, std::abs(gelu_tanh{}(x)-exact));
    max_quick = std::max(max_quick, std::abs(gelu_quick{}(x)-exact));
    double const h = 1e-5;
    double const cd = (gelu_quick{}(x + h) - gelu_quick{}(x - h)) / (2 * h);
    max_cd = std::max(max_cd, std::abs(cd - gelu_quick{}.derivative(x)));
  }
  EXPECT_NEAR(max_tanh, 0.000473235, 0.5e-9);
  EXPECT_NEAR(max_quick, 0.020334869, 0.5e-9);
  EXPECT_LT(max_cd, 1e-8);
}

// The minima the documents state: GELU ~ -0.17 near x ~ -0.75, SiLU ~ -0.28.
TEST(ReferenceDouble, Minima) {
  double gelu_min = 1;
  double gelu_at = 0;
  double silu_min = 1;
  for (double const x : grid(-3, 0, 1e-4)) {
    if (gelu_exact{}(x) < gelu_min) {
      gelu_min = gelu_exact{}(x);
      gelu_at = x;
    }
    silu_min = std::min(silu_min, silu{}(x));
  }
  EXPECT_NEAR(gelu_min, -0.17, 0.005);
  EXPECT_NEAR(gelu_at, -0.75, 0.005);
  EXPECT_NEAR(silu_min, -0.28, 0.005);
  EXPECT_DOUBLE_EQ(gelu_exact{}.derivative(0.0), 0.5);
  EXPECT_DOUBLE_EQ(sigmoid{}.derivative(0.0), 0.25);
  EXPECT_DOUBLE_EQ(nonlin::tanh{}.derivative(0.0), 1.0);
}

}  // namespace
}  // namespace nonlin::test
