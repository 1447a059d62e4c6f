// SPDX-License-Identifier: MIT
// softmax, log_softmax and softmax + cross-entropy: the survey's worked numbers, gradients
// against central differences, masking, both layouts, bad arguments.

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <nonlin/softmax.hpp>

#include "support/accuracy_stride.hpp"
#include "support/gradient_error.hpp"
#include "support/step16.hpp"

namespace nonlin::test {
namespace {

template <class T>
class Softmax : public ::testing::Test {};
using scalar_types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Softmax, scalar_types);

template <class T>
std::vector<T> softmax_of(std::vector<T> const& x, double temperature, std::size_t cols) {
  std::vector<T> y(x.size());
  forward(softmax{.temperature = temperature}, std::span<T const>(x), std::span<T>(y), cols);
  return y;
}

template <class T>
std::vector<T> log_softmax_of(std::vector<T> const& x, double temperature, std::size_t cols) {
  std::vector<T> y(x.size());
  forward(log_softmax{.temperature = temperature}, std::span<T const>(x), std::span<T>(y), cols);
  return y;
}

template <class T>
constexpr double printed = 0.5e-6 + 4 * std::numeric_limits<T>::epsilon();

TYPED_TEST(Softmax, DocumentValues) {
  using T = TypeParam;
  auto expect_row = [](std::vector<T> const& got, std::vector<double> const& want) {
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      EXPECT_NEAR(got[i], want[i], printed<T>) << i;
    }
  };
  expect_row(softmax_of<T>({2, 1, T(0.1)}, 1, 3), {0.659001, 0.242433, 0.098566});
  expect_row(softmax_of<T>({1000, 1001, 999}, 1, 3), {0.244728, 0.665241, 0.090031});
  std::vector<T> const z = {3, 1, T(0.5)};
  expect_row(softmax_of<T>(z, 0.1, 3), {1.0, 0.0, 0.0});
  expect_row(softmax_of<T>(z, 0.5, 3), {0.975559, 0.017868, 0.006573});
  expect_row(softmax_of<T>(z, 1.0, 3), {0.821409, 0.111166, 0.067425});
  expect_row(softmax_of<T>(z, 2.0, 3), {0.604455, 0.222366, 0.173179});
  expect_row(softmax_of<T>(z, 10.0, 3), {0.384981, 0.315196, 0.299823});
  expect_row(softmax_of<T>({3, 3, T(0.5)}, 0.01, 3), {0.5, 0.5, 0.0});  // tied maxima share
  expect_row(softmax_of<T>({1000, 0}, 1, 2), {1.0, 0.0});
  std::vector<T> const log_p = log_softmax_of<T>({1000, 0}, 1, 2);
  EXPECT_EQ(log_p[0], T(0));
  EXPECT_EQ(log_p[1], T(-1000));  // finite where the probability underflows
  for (std::vector<T> const& row :
       {softmax_of<T>({2, 1, T(0.1)}, 1, 3), softmax_of<T>({1000, 1001, 999}, 1, 3)}) {
    EXPECT_NEAR(row[0] + row[1] + row[2], 1.0, 4 * std::numeric_limits<T>::epsilon());
  }
}

TEST(SoftmaxDouble, CrossEntropyGradientOfTheDocuments) {
  std::vector<double> const z = {2, 1, 0.1};
  std::vector<std::int64_t> const target = {0};
  std::vector<double> dz(3);
  double const loss =
      softmax_cross_entropy(softmax{}, std::span<double const>(z),
                            std::span<std::int64_t const>(target), std::span<double>(dz), 3);
  EXPECT_NEAR(dz[0], -0.340999, 0.5e-6);
  EXPECT_NEAR(dz[1], 0.242433, 0.5e-6);
  EXPECT_NEAR(dz[2], 0.098566, 0.5e-6);
  EXPECT_LT(std::abs(dz[0] + dz[1] + dz[2]), 1e-12);
  EXPECT_NEAR(loss, -std::log(0.659001), 1e-6);
}

// The range overloads (std::vector, std::array, spans of mutable elements) give the span
// overloads' results, in both layouts, forward and backward from the output.
TYPED_TEST(Softmax, RangesAsSpans) {
  using T = TypeParam;
  std::vector<T> x(24);
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<T>(i % 7) * T(0.75) - T(2);
  }
  std::vector<T> const dy(x.rbegin(), x.rend());
  axis_layout const shape{2, 4, 3};
  for (bool const strided : {false, true}) {
    for (bool const log : {false, true}) {
      SCOPED_TRACE(std::string(log ? "log_softmax" : "softmax") + (strided ? " strided" : " rows"));
      std::vector<T> y_span(x.size()), y_range(x.size()), dx_span(x.size()), dx_range(x.size());
      std::array<T, 24> y_array{};
      auto run = [&](auto const& f) {
        if (strided) {
          forward(f, std::span<T const>(x), std::span<T>(y_span), shape);
          forward(f, x, y_range, shape);
          forward(f, std::span<T>(x), y_array, shape);  // a mutable span is an input too
          backward_from_output(f, std::span<T const>(y_span), std::span<T const>(dy),
                               std::span<T>(dx_span), shape);
          backward_from_output(f, y_range, dy, dx_range, shape);
        } else {
          forward(f, std::span<T const>(x), std::span<T>(y_span), std::size_t{6});
          forward(f, x, y_range, 6);
          forward(f, std::span<T>(x), y_array, 6);
          backward_from_output(f, std::span<T const>(y_span), std::span<T const>(dy),
                               std::span<T>(dx_span), std::size_t{6});
          backward_from_output(f, y_range, dy, dx_range, 6);
        }
      };
      if (log) {
        run(log_softmax{.temperature = 0.5});
      } else {
        run(softmax{.temperature = 0.5});
      }
      for (std::size_t i = 0; i < x.size(); ++i) {
        EXPECT_EQ(y_range[i], y_span[i]) << i;
        EXPECT_EQ(y_array[i], y_span[i]) << i;
        EXPECT_EQ(dx_range[i], dx_span[i]) << i;
      }
    }
  }
}

TYPED_TEST(Softmax, TemperatureMustBeFiniteAndPositive) {
  using T = TypeParam;
  T const nan = std::numeric_limits<T>::quiet_NaN();
  std::vector<T> const x = {1, 2, 3};
  for (double t : {0.0, -1.0, std::numeric_limits<double>::infinity(),
                   std::numeric_limits<double>::quiet_NaN()}) {
    std::vector<T> y(3, nan);
    try {
      forward(softmax{.temperature = t}, std::span<T const>(x), std::span<T>(y), 3);
      FAIL() << "no exception for T = " << t;
    } catch (std::invalid_argument const& e) {
      EXPECT_NE(std::string(e.what()).find("temperature"), std::string::npos) << e.what();
    }
    EXPECT_THROW(forward(log_softmax{.temperature = t}, std::span<T const>(x), std::span<T>(y), 3),
                 std::invalid_argument);
    for (T v : y) {
      EXPECT_TRUE(std::isnan(v));
    }
  }
}

// The documented bound on a row's sum, for any length: the sum of exp is compensated, so what is
// left is each probability's own rounding (exp, 1/s, the product), which can be alike for every
// entry and then adds up coherently.
template <class T>
constexpr double row_sum_bound = 5 * std::numeric_limits<T>::epsilon();

// Random rows, some long: the sum of each row is 1 within 5 eps, and log_softmax agrees with
// log(softmax) where the probability is not tiny.
TYPED_TEST(Softmax, RowsSumToOne) {
  using T = TypeParam;
  std::mt19937 rng(7);
  std::normal_distribution<double> normal(0, 8);
  for (std::size_t cols : {1u, 2u, 7u, 16u, 17u, 100u, 1000u, 4099u, 65536u}) {
    std::size_t const rows = cols > 10000 ? 1 : 3;
    std::vector<T> x(rows * cols);
    for (T& v : x) {
      v = static_cast<T>(normal(rng));
    }
    for (double t : {0.5, 1.0, 3.0}) {
      std::vector<T> const p = softmax_of(x, t, cols);
      std::vector<T> const lp = log_softmax_of(x, t, cols);
      for (std::size_t r = 0; r < rows; ++r) {
        long double sum = 0;  // the check's own sum must not add rounding
        for (std::size_t i = 0; i < cols; ++i) {
          sum += p[r * cols + i];
          if (p[r * cols + i] > T(1e-3)) {
            EXPECT_NEAR(std::exp(double(lp[r * cols + i])), p[r * cols + i],
                        8 * std::numeric_limits<T>::epsilon() * p[r * cols + i]);
          }
        }
        EXPECT_LE(std::abs(sum - 1), row_sum_bound<T>) << "cols " << cols << " T " << t;
      }
    }
  }
}

// The worst case for an uncompensated sum: one large logit and many equal small ones, so that
// every addition onto the sum (about 1) rounds the same way; in the axis layout each lane
// accumulates the whole row. Before the compensation: up to 11519 eps (float, 32000 entries).
TYPED_TEST(Softmax, RowsOfOneLargeAndManyEqualSumToOne) {
  using T = TypeParam;
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> small(-10, 10);
  std::uniform_real_distribution<double> large(0, 300);
  std::uniform_real_distribution<double> temperature(0.2, 30);
  for (std::size_t cols : {2u, 11u, 100u, 1000u, 4099u, 32000u}) {
    for (std::size_t inner : {1u, 3u}) {
      for (int trial = 0; trial < 4; ++trial) {
        std::vector<T> x(cols * inner, static_cast<T>(small(rng)));
        std::size_t const big_at = static_cast<std::size_t>(trial) * cols / 4;
        for (std::size_t j = 0; j < inner; ++j) {
          x[big_at * inner + j] = static_cast<T>(large(rng));
        }
        double const t = temperature(rng);
        std::vector<T> p(x.size());
        forward(softmax{.temperature = t}, std::span<T const>(x), std::span<T>(p),
                axis_layout{1, cols, inner});
        for (std::size_t j = 0; j < inner; ++j) {
          long double sum = 0;
          for (std::size_t a = 0; a < cols; ++a) {
            sum += p[a * inner + j];
          }
          EXPECT_LE(std::abs(sum - 1), row_sum_bound<T>)
              << "cols " << cols << " inner " << inner << " T " << t;
        }
      }
    }
  }
}

TYPED_TEST(Softmax, MaskingPolicy) {
  using T = TypeParam;
  T const inf = std::numeric_limits<T>::infinity();
  T const nan = std::numeric_limits<T>::quiet_NaN();
  // Row 0 partly masked, row 1 fully masked, row 2 has a NaN, row 3 a +inf, row 4 is plain.
  std::vector<T> const x = {1, -inf, 2, -inf, -inf, -inf, -inf, -inf, 1, nan,
                            2, 3,    1, inf,  2,    3,    0,    0,    0, 0};
  std::vector<T> const p = softmax_of(x, 1, 4);
  std::vector<T> const lp = log_softmax_of(x, 1, 4);
  EXPECT_EQ(p[1], T(0));
  EXPECT_EQ(lp[1], -inf);
  EXPECT_NEAR(p[0] + p[2], 1.0, 4 * std::numeric_limits<T>::epsilon());
  for (std::size_t i = 4; i < 8; ++i) {
    EXPECT_EQ(p[i], T(0));
    EXPECT_EQ(lp[i], -inf);
  }
  for (std::size_t i = 8; i < 16; ++i) {
    EXPECT_TRUE(std::isnan(p[i])) << i;
    EXPECT_TRUE(std::isnan(lp[i])) << i;
  }
  for (std::size_t i = 16; i < 20; ++i) {
    EXPECT_EQ(p[i], T(0.25));
  }
  // Gradients: 0 at masked positions and on the fully masked row.
  std::vector<T> dy = {1, 5, 2, 7, 1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4};
  std::vector<T> dx(20);
  backward_from_output(softmax{}, std::span<T const>(p), std::span<T const>(dy), std::span<T>(dx),
                       4);
  EXPECT_EQ(dx[1], T(0));
  EXPECT_EQ(dx[3], T(0));
  for (std::size_t i = 4; i < 8; ++i) {
    EXPECT_EQ(dx[i], T(0));
  }
  backward_from_output(log_softmax{}, std::span<T const>(lp), std::span<T const>(dy),
                       std::span<T>(dx), 4);
  EXPECT_EQ(dx[1], T(0));
  EXPECT_EQ(dx[3], T(0));
  for (std::size_t i = 4; i < 8; ++i) {
    EXPECT_EQ(dx[i], T(0));
  }
  // The unmasked entries: dy_i - p_i sum(dy) with the sum over the whole row, masked dy (5 and
  // 7) included (PyTorch's; the derivative of sum_j dy_j log p_j), not over the unmasked ones.
  double const p0 = 1 / (1 + std::exp(1.0));  // softmax of (1, 2) at 1
  double const row_sum = 1 + 5 + 2 + 7;
  double const tolerance = 8 * double(std::numeric_limits<T>::epsilon()) * row_sum;
  EXPECT_NEAR(dx[0], 1 - p0 * row_sum, tolerance);
  EXPECT_NEAR(dx[2], 2 - (1 - p0) * row_sum, tolerance);
  // Cross-entropy on a fully masked row: zero loss and zero gradient.
  std::vector<T> const logits(x.begin() + 4, x.begin() + 8);
  std::vector<std::int64_t> const target = {2};
  std::vector<T> dz(4, nan);
  T const loss = softmax_cross_entropy(softmax{}, std::span<T const>(logits),
                                       std::span<std::int64_t const>(target), std::span<T>(dz), 4);
  EXPECT_EQ(loss, T(0));
  for (T v : dz) {
    EXPECT_EQ(v, T(0));
  }
}

// Directional derivatives: <dx, v> against (L(x + h v) - L(x - h v)) / 2h for L = <dy, f(x)>.
template <class F>
void expect_directional(F const& f, std::size_t cols, double t) {
  std::mt19937 rng(11);
  std::normal_distribution<double> normal(0, 2);
  std::size_t const rows = 2;
  std::vector<double> x(rows * cols), v(rows * cols), dy(rows * cols);
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = normal(rng);
    v[i] = normal(rng);
    dy[i] = normal(rng);
  }
  auto loss = [&](double step) {
    std::vector<double> moved(x.size()), y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      moved[i] = x[i] + step * v[i];
    }
    forward(f, std::span<double const>(moved), std::span<double>(y), cols);
    double l = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      l += dy[i] * y[i];
    }
    return l;
  };
  std::vector<double> y(x.size()), dx(x.size());
  forward(f, std::span<double const>(x), std::span<double>(y), cols);
  backward_from_output(f, std::span<double const>(y), std::span<double const>(dy),
                       std::span<double>(dx), cols);
  double const h = 1e-5;
  double const cd = (loss(h) - loss(-h)) / (2 * h);
  double analytic = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    analytic += dx[i] * v[i];
  }
  EXPECT_NEAR(analytic, cd, 1e-7 * std::max(1.0, std::abs(cd))) << "cols " << cols << " T " << t;
}

TEST(SoftmaxDouble, BackwardsMatchCentralDifferences) {
  for (std::size_t cols : {1u, 3u, 8u, 33u}) {
    for (double t : {0.5, 1.0, 2.5}) {
      expect_directional(softmax{.temperature = t}, cols, t);
      expect_directional(log_softmax{.temperature = t}, cols, t);
    }
  }
}

// The directional derivative of a cross-entropy loss along v, central differences against
// <dz, v>: loss(moved, dz) returns the loss at `moved` and writes its gradient into dz.
template <class Loss>
void expect_directional_gradient(std::vector<double> const& x, std::vector<double> const& v,
                                 Loss const& loss, std::string const& what) {
  auto loss_at = [&](double step, std::vector<double>& dz) {
    std::vector<double> moved(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      moved[i] = x[i] + step * v[i];
    }
    return loss(moved, dz);
  };
  std::vector<double> dz(x.size()), scratch(x.size());
  loss_at(0, dz);
  double const h = 1e-5;
  double const cd = (loss_at(h, scratch) - loss_at(-h, scratch)) / (2 * h);
  double analytic = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    analytic += dz[i] * v[i];
  }
  EXPECT_NEAR(analytic, cd, 1e-7 * std::max(1.0, std::abs(cd))) << what;
}

TEST(SoftmaxDouble, CrossEntropyGradientMatchesCentralDifferences) {
  std::mt19937 rng(3);
  std::normal_distribution<double> normal(0, 2);
  std::size_t const rows = 4;
  std::size_t const cols = 11;
  std::vector<double> x(rows * cols), v(rows * cols), q(rows * cols, 0.0);
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = normal(rng);
    v[i] = normal(rng);
  }
  for (std::size_t r = 0; r < rows; ++r) {
    double total = 0;
    for (std::size_t i = 0; i < cols; ++i) {
      q[r * cols + i] = std::abs(normal(rng));
      total += q[r * cols + i];
    }
    for (std::size_t i = 0; i < cols; ++i) {
      q[r * cols + i] /= total;
    }
  }
  std::vector<std::int64_t> const targets = {3, -100, 0, 10};  // one ignored row
  for (double t : {0.7, 1.0, 2.0}) {
    for (reduction red : {reduction::sum, reduction::mean}) {
      for (bool soft : {false, true}) {
        auto loss = [&](std::vector<double> const& moved, std::vector<double>& dz) {
          return soft ? softmax_cross_entropy(
                            softmax{.temperature = t}, std::span<double const>(moved),
                            std::span<double const>(q), std::span<double>(dz), cols, red)
                      : softmax_cross_entropy(softmax{.temperature = t},
                                              std::span<double const>(moved),
                                              std::span<std::int64_t const>(targets),
                                              std::span<double>(dz), cols, red);
        };
        expect_directional_gradient(x, v, loss,
                                    "T " + std::to_string(t) + " soft " + std::to_string(soft));
      }
    }
  }
  // The temperature factor: dz at T is (p_T - q) / T.
  std::vector<double> dz(cols);
  std::vector<std::int64_t> const one = {4};
  softmax_cross_entropy(softmax{.temperature = 2.0}, std::span<double const>(x.data(), cols),
                        std::span<std::int64_t const>(one), std::span<double>(dz), cols);
  std::vector<double> const p =
      softmax_of(std::vector<double>(x.begin(), x.begin() + cols), 2.0, cols);
  for (std::size_t i = 0; i < cols; ++i) {
    EXPECT_NEAR(dz[i], (p[i] - (i == 4 ? 1.0 : 0.0)) / 2.0, 1e-15);
  }
}

// The (outer, axis, inner) layout against the rows layout on transposed data, and the result
// of a row independent of the rows around it.
TYPED_TEST(Softmax, AxisLayoutMatchesRowsOnTransposedData) {
  using T = TypeParam;
  std::mt19937 rng(5);
  std::normal_distribution<double> normal(0, 4);
  for (std::size_t inner : {2u, 5u, 16u, 37u}) {
    std::size_t const outer = 2;
    std::size_t const axis = 9;
    axis_layout const shape{outer, axis, inner};
    std::vector<T> x(shape.size());
    for (T& v : x) {
      v = static_cast<T>(normal(rng));
    }
    x[3] = -std::numeric_limits<T>::infinity();
    std::vector<T> transposed(x.size());  // (outer, inner, axis)
    for (std::size_t o = 0; o < outer; ++o) {
      for (std::size_t a = 0; a < axis; ++a) {
        for (std::size_t j = 0; j < inner; ++j) {
          transposed[(o * inner + j) * axis + a] = x[(o * axis + a) * inner + j];
        }
      }
    }
    for (bool log : {false, true}) {
      std::vector<T> y(x.size()), yt(x.size());
      if (log) {
        forward(log_softmax{}, std::span<T const>(x), std::span<T>(y), shape);
        forward(log_softmax{}, std::span<T const>(transposed), std::span<T>(yt), axis);
      } else {
        forward(softmax{}, std::span<T const>(x), std::span<T>(y), shape);
        forward(softmax{}, std::span<T const>(transposed), std::span<T>(yt), axis);
      }
      for (std::size_t o = 0; o < outer; ++o) {
        for (std::size_t a = 0; a < axis; ++a) {
          for (std::size_t j = 0; j < inner; ++j) {
            T const got = y[(o * axis + a) * inner + j];
            T const want = yt[(o * inner + j) * axis + a];
            if (std::isinf(want)) {
              EXPECT_EQ(got, want);
            } else {
              EXPECT_NEAR(got, want,
                          8 * std::numeric_limits<T>::epsilon() * std::max(T(1), std::abs(want)));
            }
          }
        }
      }
    }
    // Backward in both layouts.
    std::vector<T> p(x.size()), pt(x.size()), dy(x.size()), dyt(x.size()), dx(x.size()),
        dxt(x.size());
    for (std::size_t i = 0; i < dy.size(); ++i) {
      dy[i] = static_cast<T>(normal(rng));
    }
    for (std::size_t o = 0; o < outer; ++o) {
      for (std::size_t a = 0; a < axis; ++a) {
        for (std::size_t j = 0; j < inner; ++j) {
          dyt[(o * inner + j) * axis + a] = dy[(o * axis + a) * inner + j];
        }
      }
    }
    forward(softmax{}, std::span<T const>(x), std::span<T>(p), shape);
    forward(softmax{}, std::span<T const>(transposed), std::span<T>(pt), axis);
    backward_from_output(softmax{}, std::span<T const>(p), std::span<T const>(dy), std::span<T>(dx),
                         shape);
    backward_from_output(softmax{}, std::span<T const>(pt), std::span<T const>(dyt),
                         std::span<T>(dxt), axis);
    for (std::size_t o = 0; o < outer; ++o) {
      for (std::size_t a = 0; a < axis; ++a) {
        for (std::size_t j = 0; j < inner; ++j) {
          EXPECT_NEAR(dx[(o * axis + a) * inner + j], dxt[(o * inner + j) * axis + a],
                      64 * std::numeric_limits<T>::epsilon());
        }
      }
    }
  }
  // One row alone gives the same bits as the same row inside a batch, and in place.
  std::vector<T> batch(5 * 23);
  for (T& v : batch) {
    v = static_cast<T>(normal(rng));
  }
  std::vector<T> const all = softmax_of(batch, 1.5, 23);
  std::vector<T> const third(batch.begin() + 46, batch.begin() + 69);
  std::vector<T> const alone = softmax_of(third, 1.5, 23);
  std::vector<T> in_place(batch);
  forward(softmax{.temperature = 1.5}, std::span<T const>(in_place), std::span<T>(in_place), 23);
  for (std::size_t i = 0; i < 23; ++i) {
    EXPECT_EQ(alone[i], all[46 + i]);
  }
  EXPECT_EQ(in_place, all);
}

// The same rows through narrower SIMD widths: only the order of the sum changes, so the results
// agree to the sum's rounding, (4 + cols / 16) eps relative.
TYPED_TEST(Softmax, NarrowerArchitecturesAgree) {
  using T = TypeParam;
  std::mt19937 rng(9);
  std::normal_distribution<double> normal(0, 6);
  std::size_t const cols = 203;
  std::vector<T> x(4 * cols);
  for (T& v : x) {
    v = static_cast<T>(normal(rng));
  }
  std::vector<T> const wide = softmax_of(x, 0.8, cols);
  std::vector<T> fast_wide(x.size());
  forward(fast::softmax{.temperature = 0.8}, std::span<T const>(x), std::span<T>(fast_wide), cols);
  auto check = [&](auto arch) {
    using Arch = decltype(arch);
    std::vector<T> y(x.size());
    forward<Arch>(softmax{.temperature = 0.8}, std::span<T const>(x), std::span<T>(y), cols);
    for (std::size_t i = 0; i < y.size(); ++i) {
      EXPECT_NEAR(y[i], wide[i],
                  (4.0 + double(cols) / 16) * std::numeric_limits<T>::epsilon() * wide[i])
          << Arch::name() << " " << i;
    }
    // The fast tier: its table exp on every architecture (a gather where there is no vpermps),
    // its sums grouped by the batch width.
    std::vector<T> fast_y(x.size());
    forward<Arch>(fast::softmax{.temperature = 0.8}, std::span<T const>(x), std::span<T>(fast_y),
                  cols);
    for (std::size_t i = 0; i < y.size(); ++i) {
      EXPECT_NEAR(fast_y[i], fast_wide[i], 8 * std::numeric_limits<T>::epsilon() * fast_wide[i])
          << "fast " << Arch::name() << " " << i;
    }
  };
#if XSIMD_WITH_SSE4_2
  check(xsimd::sse4_2{});
#endif
#if XSIMD_WITH_AVX2
  check(xsimd::avx2{});
#endif
  check(xsimd::default_arch{});
}

// Three contract breaks the fuzzers found (fuzz/README.md), pinned.
TEST(SoftmaxFuzzerFindings, TemperatureMustFitTheElementType) {
  std::vector<float> const x = {1, 0};
  std::vector<float> y(2, std::numeric_limits<float>::quiet_NaN());
  for (double t : {1e-300, 1e39}) {
    EXPECT_THROW(
        forward(softmax{.temperature = t}, std::span<float const>(x), std::span<float>(y), 2),
        std::invalid_argument);
  }
  EXPECT_TRUE(std::isnan(y[0]) && std::isnan(y[1]));
  std::vector<double> const xd = {1, 0};
  std::vector<double> yd(2);
  EXPECT_NO_THROW(forward(softmax{.temperature = 1e-300}, std::span<double const>(xd),
                          std::span<double>(yd), 2));
}

TEST(SoftmaxFuzzerFindings, NanWithMaskedEntriesIsANanRow) {
  float const inf = std::numeric_limits<float>::infinity();
  std::vector<float> const x = {std::numeric_limits<float>::quiet_NaN(), -inf};
  std::vector<float> const p = softmax_of(x, 1, 2);
  std::vector<float> const lp = log_softmax_of(x, 1, 2);
  EXPECT_TRUE(std::isnan(p[0]));
  EXPECT_TRUE(std::isnan(lp[0]));
  std::vector<std::int64_t> const target = {0};
  std::vector<float> dz(2);
  float const loss =
      softmax_cross_entropy(softmax{}, std::span<float const>(x),
                            std::span<std::int64_t const>(target), std::span<float>(dz), 2);
  EXPECT_TRUE(std::isnan(loss));
}

TEST(SoftmaxFuzzerFindings, LogitsFartherApartThanTheLargestDouble) {
  double const big = std::numeric_limits<double>::max();
  std::vector<double> const x = {big, -big / 2};
  std::vector<double> const lp = log_softmax_of(x, 4, 2);
  EXPECT_EQ(lp[0], 0.0);
  EXPECT_NEAR(lp[1] / big, -0.375, 1e-12);
}

// z - m with z and m of opposite signs near the largest float: the exact-difference step (two
// sum) formed s - z, which overflowed although z - m itself is finite; the CI fuzz run found it.
TEST(SoftmaxFuzzerFindings, ExactDifferenceNearTheLargestFloat) {
  float const big = std::numeric_limits<float>::max();
  float const z = 0x1.47d8cp+121F;
  std::vector<float> const lp = log_softmax_of<float>({z, big}, 20, 2);
  EXPECT_EQ(lp[1], 0.0F);
  EXPECT_TRUE(std::isfinite(lp[0]));
  double const expected = (static_cast<double>(z) - static_cast<double>(big)) / 20;
  EXPECT_NEAR(lp[0] / expected, 1.0, 1e-6);
  std::vector<double> const lpd =
      log_softmax_of<double>({0x1.47d8cp+1017, std::numeric_limits<double>::max()}, 20, 2);
  EXPECT_TRUE(std::isfinite(lpd[0]));
  // At T = 1: Knuth's branch-free two-sum forms s - z, which rounds to -inf for this z (z - big
  // is finite), and its low part is NaN; the difference must be exact here too. Every length, so
  // that the row's sum and its outputs run in full batches and in the tail.
  float const near = 0x1.c60856p+126F;
  for (std::size_t n = 2; n <= 40; ++n) {
    std::vector<float> x(n, near);
    x[n / 2] = big;
    std::vector<float> const row = log_softmax_of<float>(x, 1, n);
    EXPECT_EQ(row[n / 2], 0.0F) << n;
    EXPECT_EQ(row[0], near - big) << n;
  }
}

// Logits farther apart than the largest finite value, at temperatures that bring (z - m) / T
// back into range: the cross-entropy's scalar loss must be log_softmax's SIMD lane, bit for bit.
// Under clang (-ffp-contract=on) the scalar z / T - m / T was contracted into an fma and the
// lane was not: they differed by an ulp on 23% of such rows (the CI fuzz run found it).
TYPED_TEST(Softmax, LossIsLogSoftmaxWhereTheDifferenceOverflows) {
  using T = TypeParam;
  T const big = std::numeric_limits<T>::max();
  int const digits = std::numeric_limits<T>::max_exponent10;
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<T> magnitude(T(0.5), T(1));
  std::uniform_real_distribution<double> exponent(digits * 0.6, digits * 0.98);
  int mismatches = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    double const t = std::pow(10.0, exponent(rng));
    std::vector<T> const x = {-magnitude(rng) * big, magnitude(rng) * big, T(0)};
    std::vector<T> const lp = log_softmax_of(x, t, 3);
    std::vector<std::int64_t> const target = {0};
    std::vector<T> dz(3);
    T const loss = softmax_cross_entropy(softmax{.temperature = t}, std::span<T const>(x),
                                         std::span<std::int64_t const>(target), std::span<T>(dz), 3,
                                         reduction::sum);
    ASSERT_TRUE(std::isfinite(loss)) << "T = " << t;
    mismatches += loss == -lp[0] ? 0 : 1;
  }
  EXPECT_EQ(mismatches, 0);
}

// The loss of a row is -log_softmax at its target, bit for bit, on ordinary rows too: at T = 1
// the rows layout's forward has a formula of its own ((z - c.hi) - c.lo, c = m + log s), which
// the scalar loss must use as well.
TYPED_TEST(Softmax, LossIsLogSoftmaxAtTheTarget) {
  using T = TypeParam;
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<T> logit(T(-12), T(12));
  int mismatches = 0;
  for (double const t : {1.0, 0.7}) {
    for (std::size_t const cols : {1u, 2u, 7u, 16u, 33u, 100u}) {
      for (int trial = 0; trial < 20; ++trial) {
        std::vector<T> x(cols);
        for (T& v : x) {
          v = logit(rng);
        }
        if (cols > 2 && trial % 4 == 0) {
          x[1] = -std::numeric_limits<T>::infinity();  // a masked entry
        }
        std::vector<T> const lp = log_softmax_of(x, t, cols);
        for (std::size_t target = 0; target < cols; target += (cols + 2) / 3) {
          std::vector<std::int64_t> const targets = {static_cast<std::int64_t>(target)};
          std::vector<T> dz(cols);
          T const loss = softmax_cross_entropy(softmax{.temperature = t}, std::span<T const>(x),
                                               std::span<std::int64_t const>(targets),
                                               std::span<T>(dz), cols, reduction::sum);
          mismatches += loss == -lp[target] ? 0 : 1;
        }
      }
    }
  }
  EXPECT_EQ(mismatches, 0);
}

TYPED_TEST(Softmax, BadArgumentsThrowBeforeWriting) {
  using T = TypeParam;
  T const nan = std::numeric_limits<T>::quiet_NaN();
  std::vector<T> x(12, T(1));
  std::vector<T> y(12, nan);
  EXPECT_THROW(forward(softmax{}, std::span<T const>(x), std::span<T>(y), 5),
               std::invalid_argument);
  EXPECT_THROW(forward(softmax{}, std::span<T const>(x), std::span<T>(y), axis_layout{2, 3, 3}),
               std::invalid_argument);
  std::vector<T> short_y(11, nan);
  EXPECT_THROW(forward(softmax{}, std::span<T const>(x), std::span<T>(short_y), 4),
               std::invalid_argument);
  std::vector<std::int64_t> const bad = {0, 4, 1};  // 4 is not a class of 4 columns
  try {
    softmax_cross_entropy(softmax{}, std::span<T const>(x), std::span<std::int64_t const>(bad),
                          std::span<T>(y), 4);
    FAIL() << "no exception";
  } catch (std::invalid_argument const& e) {
    EXPECT_NE(std::string(e.what()).find("targets[1] = 4"), std::string::npos) << e.what();
  }
  std::vector<std::int64_t> const two = {0, 1};
  EXPECT_THROW(softmax_cross_entropy(softmax{}, std::span<T const>(x),
                                     std::span<std::int64_t const>(two), std::span<T>(y), 4),
               std::invalid_argument);
  std::vector<std::int64_t> const good = {0, 1, 2};
  std::vector<T> losses(2, nan);
  EXPECT_THROW(
      softmax_cross_entropy(softmax{}, std::span<T const>(x), std::span<std::int64_t const>(good),
                            std::span<T>(y), 4, reduction::none, -100, std::span<T>(losses)),
      std::invalid_argument);
  for (T v : y) {
    EXPECT_TRUE(std::isnan(v));
  }
  for (T v : losses) {
    EXPECT_TRUE(std::isnan(v));
  }
  // Per-row losses with reduction none; ignore_index rows give 0.
  std::vector<std::int64_t> const with_ignored = {0, -100, 3};
  std::vector<T> row_losses(3, nan);
  T const total = softmax_cross_entropy(
      softmax{}, std::span<T const>(x), std::span<std::int64_t const>(with_ignored),
      std::span<T>(y), 4, reduction::none, -100, std::span<T>(row_losses));
  EXPECT_NEAR(row_losses[0], std::log(4.0), 1e-6);
  EXPECT_EQ(row_losses[1], T(0));
  EXPECT_NEAR(total, 2 * std::log(4.0), 1e-5);
  for (std::size_t i = 4; i < 8; ++i) {
    EXPECT_EQ(y[i], T(0));
  }
}

// The gradients within 4 units of u * (the sum of the magnitudes that make up each element)
// (issue 10, item 9), the fast tier's too (its rounded products, four batches combined in the
// element type: up to 3.15 measured), at 10 to 10^5 classes (10^5 only where NONLIN_ACCURACY_STRIDE
// is 1), T = 0.1, 1, 10, both layouts; tools/gradient_error prints the table (1-3.4 measured).
// Before: <p, dp> and sum dy plain sums (up to 886 units in the strided layout at 10^5), the
// cross-entropy gradient from exp(log p) and a plain sum of q (up to 100 units).
TYPED_TEST(Softmax, GradientsWithinFourUnitsOfTheirCondition) {
  using T = TypeParam;
  namespace ge = gradient_error;
  for (ge::op o : {ge::op::softmax_backward, ge::op::log_softmax_backward, ge::op::cross_entropy}) {
    for (std::size_t inner : {std::size_t{1}, std::size_t{3}}) {
      if (o == ge::op::cross_entropy && inner != 1) {
        continue;
      }
      for (std::size_t cols : {std::size_t{10}, std::size_t{1000}, std::size_t{100000}}) {
        if (cols > 1000 && accuracy_stride() > 1) {
          continue;  // 85 s of the aarch64 stage: binary128 long double emulated under qemu
        }
        for (double t : {0.1, 1.0, 10.0}) {
          for (bool fast : {false, true}) {
            if (fast && o == ge::op::cross_entropy) {
              continue;  // no fast tier of the loss
            }
            ge::setup const s{o, cols, t, inner, cols >= 100000 ? 1u : 4u, 7, fast};
            EXPECT_LE(ge::worst<T>(s), 4.0) << (fast ? "fast::" : "") << ge::name(o)
                                            << " inner=" << inner << " cols=" << cols << " T=" << t;
          }
        }
      }
    }
  }
}

// A row's maximum m and the sum of exp((z - m) / T) over it, exactly (then rounded to long
// double).
template <class T>
std::pair<long double, long double> exact_row_statistics(T const* z, std::size_t cols,
                                                         long double inv_t) {
  long double const m = *std::max_element(z, z + cols);
  gradient_error::exact_sum s;
  for (std::size_t i = 0; i < cols; ++i) {
    s.add(std::exp((z[i] - m) * inv_t));
  }
  return {m, s.value()};
}

// The spacing of T's values at v (subnormal steps included): an ulp of a result near v.
template <class T>
long double spacing_at(long double v) {
  T const t = static_cast<T>(v);
  return static_cast<long double>(std::nextafter(t, std::numeric_limits<T>::infinity())) -
         static_cast<long double>(t);
}

// The fast tier (fast::softmax, fast::log_softmax) against long double over random rows (normal
// and uniform logits, 1 to 32000 columns, T = 0.5, 1, 3): p within 4 + 3 |d| ulp, d = (z - m) / T
// (the difference and its product with 1 / T rounded, as the peers form them: 2.8 ulp where
// |d| <= 1 and 1 + 2.2 |d| beyond measured; 3 + 3 |d| failed by 0.4% in double on aarch64),
// log p within 3 ulp or 3 eps absolute (1.3 / 1.5 measured), rows summing to 1 as
// the default tier's do.
TYPED_TEST(Softmax, FastTierWithinItsBounds) {
  using T = TypeParam;
  constexpr long double eps = std::numeric_limits<T>::epsilon();
  auto ulp_at = [](long double v) { return spacing_at<T>(v); };
  std::mt19937_64 rng(3);
  std::normal_distribution<double> normal(0, 8);
  std::uniform_real_distribution<double> uniform(-8, 8);
  double worst_p = 0;
  double worst_log_p = 0;
  for (int dist = 0; dist < 2; ++dist) {
    for (std::size_t cols : {1u, 3u, 17u, 64u, 1000u, 4099u, 32000u}) {
      for (double t : {0.5, 1.0, 3.0}) {
        std::size_t const rows = cols > 5000 ? 1 : 4;
        std::vector<T> x(rows * cols);
        for (T& v : x) {
          v = static_cast<T>(dist == 0 ? normal(rng) : uniform(rng));
        }
        std::vector<T> p(x.size());
        std::vector<T> lp(x.size());
        forward(fast::softmax{.temperature = t}, std::span<T const>(x), std::span<T>(p), cols);
        forward(fast::log_softmax{.temperature = t}, std::span<T const>(x), std::span<T>(lp), cols);
        long double const inv_t = 1.0L / static_cast<long double>(static_cast<T>(t));
        for (std::size_t r = 0; r < rows; ++r) {
          T const* z = x.data() + r * cols;
          auto const [m, sum_of_terms] = exact_row_statistics(z, cols, inv_t);
          long double sum = 0;
          for (std::size_t i = 0; i < cols; ++i) {
            long double const d = (z[i] - m) * inv_t;
            long double const exact = std::exp(d) / sum_of_terms;
            long double const exact_log = d - std::log(sum_of_terms);
            T const got = p[r * cols + i];
            sum += got;
            double const e = static_cast<double>(std::fabs(got - exact) / ulp_at(exact));
            worst_p = std::max(worst_p, e / (4 + 3 * static_cast<double>(-d)));
            long double const err_log = std::fabs(lp[r * cols + i] - exact_log);
            double const e_log = static_cast<double>(
                std::min(err_log / ulp_at(std::fabs(exact_log)), err_log / eps));
            worst_log_p = std::max(worst_log_p, e_log / 3);
          }
          EXPECT_LE(std::abs(sum - 1), row_sum_bound<T>) << "cols " << cols << " T " << t;
        }
      }
    }
  }
  EXPECT_LE(worst_p, 1.0);      // as a fraction of the bound
  EXPECT_LE(worst_log_p, 1.0);  // as a fraction of the bound
}

// Rows with far entries (masked with -inf or -1e30, alone or in a stretch, or (m - z) / T beyond
// the normal range of exp): their terms are formed without an underflowing operation
// (math::scale_without_underflow, the same bits without Intel's microcode assist), subnormal
// probabilities included. Each p within 3 ulp (the spacing of T's values at p, subnormal steps
// included) and each log p within 3 ulp or 3 eps of the exact value, for both tiers (the fast
// tier's p bound grows with -d, as in FastTierWithinItsBounds); masked entries give exactly 0 and
// -inf.
TYPED_TEST(Softmax, FarEntriesWithinTheirBounds) {
  using T = TypeParam;
  constexpr long double eps = std::numeric_limits<T>::epsilon();
  auto ulp_at = [](long double v) { return spacing_at<T>(v); };
  std::mt19937_64 rng(11);
  std::normal_distribution<double> spread(0, std::is_same_v<T, float> ? 40 : 300);
  double worst[2][2] = {};  // [tier][p, log p] as fractions of their bounds
  for (std::size_t cols : {5u, 17u, 100u, 1000u, 4099u}) {
    for (double t : {0.7, 1.0}) {
      std::size_t const rows = 3;
      std::vector<T> x(rows * cols);
      for (std::size_t i = 0; i < x.size(); ++i) {
        x[i] = i % 8 == 3    ? -std::numeric_limits<T>::infinity()
               : i % 16 == 6 ? T(-1e30)
                             : static_cast<T>(spread(rng));
      }
      // The first row: its second half masked in one stretch (whole batches skip the exp).
      std::fill(x.begin() + static_cast<std::ptrdiff_t>(cols / 2),
                x.begin() + static_cast<std::ptrdiff_t>(cols), -std::numeric_limits<T>::infinity());
      for (int tier = 0; tier < 2; ++tier) {
        std::vector<T> p(x.size());
        std::vector<T> lp(x.size());
        if (tier == 0) {
          forward(softmax{.temperature = t}, std::span<T const>(x), std::span<T>(p), cols);
          forward(log_softmax{.temperature = t}, std::span<T const>(x), std::span<T>(lp), cols);
        } else {
          forward(fast::softmax{.temperature = t}, std::span<T const>(x), std::span<T>(p), cols);
          forward(fast::log_softmax{.temperature = t}, std::span<T const>(x), std::span<T>(lp),
                  cols);
        }
        long double const inv_t = 1.0L / static_cast<long double>(static_cast<T>(t));
        for (std::size_t r = 0; r < rows; ++r) {
          T const* z = x.data() + r * cols;
          auto const [m, sum_of_terms] = exact_row_statistics(z, cols, inv_t);
          for (std::size_t i = 0; i < cols; ++i) {
            T const got = p[r * cols + i];
            T const got_log = lp[r * cols + i];
            if (z[i] == -std::numeric_limits<T>::infinity()) {
              EXPECT_EQ(got, T(0));
              EXPECT_EQ(got_log, -std::numeric_limits<T>::infinity());
              continue;
            }
            long double const d = (z[i] - m) * inv_t;
            long double const exact = std::exp(d) / sum_of_terms;
            long double const exact_log = d - std::log(sum_of_terms);
            double const e = static_cast<double>(std::fabs(got - exact) / ulp_at(exact));
            double const p_bound = tier == 0 ? 3 : 4 + 3 * static_cast<double>(-d);
            worst[tier][0] = std::max(worst[tier][0], e / p_bound);
            long double const err_log = std::fabs(got_log - exact_log);
            worst[tier][1] = std::max(
                worst[tier][1], static_cast<double>(std::min(err_log / ulp_at(std::fabs(exact_log)),
                                                             err_log / eps)) /
                                    3);
          }
        }
      }
    }
  }
  EXPECT_LE(worst[0][0], 1.0);
  EXPECT_LE(worst[0][1], 1.0);
  EXPECT_LE(worst[1][0], 1.0);
  EXPECT_LE(worst[1][1], 1.0);
}

// The fast tier keeps the masking policy: rows with a NaN or +inf and fully masked rows take the
// default tier's path (the same bits), masked entries of a finite row give 0 / -inf, and their
// gradients 0.
TYPED_TEST(Softmax, FastTierMaskingPolicy) {
  using T = TypeParam;
  T const inf = std::numeric_limits<T>::infinity();
  T const nan = std::numeric_limits<T>::quiet_NaN();
  std::vector<T> const x = {1, -inf, 2, -inf, -inf, -inf, -inf, -inf, 1, nan,
                            2, 3,    1, inf,  2,    3,    0,    0,    0, 0};
  std::vector<T> p(20);
  std::vector<T> lp(20);
  forward(fast::softmax{}, std::span<T const>(x), std::span<T>(p), 4);
  forward(fast::log_softmax{}, std::span<T const>(x), std::span<T>(lp), 4);
  std::vector<T> const p_default = softmax_of(x, 1, 4);
  std::vector<T> const lp_default = log_softmax_of(x, 1, 4);
  EXPECT_EQ(p[1], T(0));
  EXPECT_EQ(p[3], T(0));
  EXPECT_EQ(lp[1], -inf);
  EXPECT_EQ(lp[3], -inf);
  EXPECT_NEAR(p[0] + p[2], 1.0, 4 * std::numeric_limits<T>::epsilon());
  using bits = std::array<unsigned char, sizeof(T)>;
  for (std::size_t i = 4; i < 16; ++i) {
    EXPECT_EQ(std::bit_cast<bits>(p[i]), std::bit_cast<bits>(p_default[i])) << i;
    EXPECT_EQ(std::bit_cast<bits>(lp[i]), std::bit_cast<bits>(lp_default[i])) << i;
  }
  for (std::size_t i = 16; i < 20; ++i) {
    EXPECT_EQ(p[i], T(0.25));
  }
  std::vector<T> const dy = {1, 5, 2, 7, 1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4};
  std::vector<T> dx(20);
  for (int log = 0; log < 2; ++log) {
    if (log == 0) {
      backward_from_output(fast::softmax{}, std::span<T const>(p), std::span<T const>(dy),
                           std::span<T>(dx), 4);
    } else {
      backward_from_output(fast::log_softmax{}, std::span<T const>(lp), std::span<T const>(dy),
                           std::span<T>(dx), 4);
    }
    EXPECT_EQ(dx[1], T(0));
    EXPECT_EQ(dx[3], T(0));
    for (std::size_t i = 4; i < 8; ++i) {
      EXPECT_EQ(dx[i], T(0));
    }
  }
}

TEST(SoftmaxDouble, FastTierBackwardsMatchCentralDifferences) {
  for (std::size_t cols : {1u, 3u, 8u, 33u, 100u}) {
    for (double t : {0.5, 1.0, 2.5}) {
      expect_directional(fast::softmax{.temperature = t}, cols, t);
      expect_directional(fast::log_softmax{.temperature = t}, cols, t);
    }
  }
}

TYPED_TEST(Softmax, FastTierBadArgumentsThrowBeforeWriting) {
  using T = TypeParam;
  T const nan = std::numeric_limits<T>::quiet_NaN();
  std::vector<T> const x(12, T(1));
  std::vector<T> y(12, nan);
  try {
    forward(fast::log_softmax{.temperature = -1}, std::span<T const>(x), std::span<T>(y), 4);
    FAIL() << "no exception";
  } catch (std::invalid_argument const& e) {
    EXPECT_NE(std::string(e.what()).find("fast::log_softmax"), std::string::npos) << e.what();
  }
  EXPECT_THROW(forward(fast::softmax{}, std::span<T const>(x), std::span<T>(y), 5),
               std::invalid_argument);
  std::vector<T> dx(12, nan);
  EXPECT_THROW(backward_from_output(fast::softmax{}, std::span<T const>(x),
                                    std::span<T const>(x).first(11), std::span<T>(dx), 4),
               std::invalid_argument);
  EXPECT_THROW(backward_from_output(fast::log_softmax{.temperature = 0}, std::span<T const>(x),
                                    std::span<T const>(x), std::span<T>(dx), 4),
               std::invalid_argument);
  for (T v : y) {
    EXPECT_TRUE(std::isnan(v));
  }
  for (T v : dx) {
    EXPECT_TRUE(std::isnan(v));
  }
}

// PyTorch's label_smoothing and class weights (cross_entropy_options), against values worked
// out from PyTorch's definition in mpmath at 40 digits (the script is this comment's formula):
//   hard: loss_n = (1 - e) w_k (-log p_k) + e / C sum_c w_c (-log p_c); mean / sum of w_k over
//         the rows not ignored (the ignored row is left out of both terms: PyTorch issue 73205)
//   soft: loss_n = sum_c w_c ((1 - e) q_c + e / C) (-log p_c); mean / rows
// z = {{.3, -1, 2}, {1.5, .25, -.5}, {0, 4, 1}}, targets {2, 0, ignored}, w = {.5, 2, 1.25},
// e = 0.1, q = {{.2, .3, .5}, {.6, .4, 0}, {.1, .1, .8}}.
TEST(SoftmaxDouble, CrossEntropyLabelSmoothingAndWeightsAsPyTorch) {
  std::vector<double> const z = {0.3, -1, 2, 1.5, 0.25, -0.5, 0, 4, 1};
  std::vector<std::int64_t> const targets = {2, 0, -100};
  std::vector<double> const w = {0.5, 2, 1.25};
  std::vector<double> const q = {0.2, 0.3, 0.5, 0.6, 0.4, 0, 0.1, 0.1, 0.8};
  struct worked {
    char const* name;
    bool soft;
    bool weighted;
    double smoothing;
    std::array<double, 3> losses;
    double sum;
    double mean;
  };
  std::vector<worked> const cases = {
      {"hard, smoothing",
       false,
       false,
       0.1,
       {0.36568743321172695, 0.46028519713613501, 0},
       0.82597263034786196,
       0.41298631517393098},
      {"hard, weights",
       false,
       true,
       0,
       {0.26127595818132536, 0.17597593190140084, 0},
       0.4372518900827262,
       0.24985822290441497},
      {"hard, both",
       false,
       true,
       0.1,
       {0.48960929151465869, 0.36903898835327763, 0},
       0.85864827986793632,
       0.49065615992453504},
      {"soft, both",
       true,
       true,
       0.1,
       {2.2767181932564503, 1.4590929948067905, 3.1540215463634531},
       6.8898327344266939,
       2.2966109114755646},
  };
  for (worked const& c : cases) {
    for (reduction red : {reduction::none, reduction::sum, reduction::mean}) {
      std::vector<double> dz(z.size()), losses(3);
      cross_entropy_options<double> const o{
          .reduce = red,
          .label_smoothing = c.smoothing,
          .weight = c.weighted ? std::span<double const>(w) : std::span<double const>(),
          .losses = std::span<double>(losses)};
      double const loss =
          c.soft ? softmax_cross_entropy(softmax{}, std::span<double const>(z),
                                         std::span<double const>(q), std::span<double>(dz), 3, o)
                 : softmax_cross_entropy(softmax{}, std::span<double const>(z),
                                         std::span<std::int64_t const>(targets),
                                         std::span<double>(dz), 3, o);
      for (std::size_t r = 0; r < 3; ++r) {
        EXPECT_NEAR(losses[r], c.losses[r], 4e-16 * std::max(1.0, c.losses[r])) << c.name;
      }
      double const expected = red == reduction::mean ? c.mean : c.sum;
      if (red != reduction::none) {
        EXPECT_NEAR(loss, expected, 4e-16 * expected) << c.name;
      }
      if (!c.soft) {  // the ignored row: gradient 0
        for (std::size_t i = 6; i < 9; ++i) {
          EXPECT_EQ(dz[i], 0.0) << c.name;
        }
      }
    }
  }
}

// The gradient is that of the loss returned, with weights and smoothing, hard (one row ignored)
// and soft targets, sum and mean, several temperatures: central differences along a direction.
TEST(SoftmaxDouble, CrossEntropyWeightedSmoothedGradientMatchesCentralDifferences) {
  std::mt19937 rng(5);
  std::normal_distribution<double> normal(0, 2);
  std::size_t const rows = 4;
  std::size_t const cols = 7;
  std::vector<double> x(rows * cols), v(rows * cols), q(rows * cols), w(cols);
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = normal(rng);
    v[i] = normal(rng);
    q[i] = std::abs(normal(rng)) / 5;  // rows that do not sum to 1
  }
  for (double& wc : w) {
    wc = std::abs(normal(rng));
  }
  std::vector<std::int64_t> const targets = {3, -100, 0, 6};
  for (double t : {0.7, 1.0, 2.0}) {
    for (reduction red : {reduction::sum, reduction::mean}) {
      for (bool soft : {false, true}) {
        cross_entropy_options<double> const o{
            .reduce = red, .label_smoothing = 0.2, .weight = std::span<double const>(w)};
        auto loss = [&](std::vector<double> const& moved, std::vector<double>& dz) {
          return soft ? softmax_cross_entropy(
                            softmax{.temperature = t}, std::span<double const>(moved),
                            std::span<double const>(q), std::span<double>(dz), cols, o)
                      : softmax_cross_entropy(
                            softmax{.temperature = t}, std::span<double const>(moved),
                            std::span<std::int64_t const>(targets), std::span<double>(dz), cols, o);
        };
        expect_directional_gradient(x, v, loss,
                                    "T " + std::to_string(t) + " soft " + std::to_string(soft));
      }
    }
  }
}

// Bad weights and smoothing throw before anything is written; without them the new overloads
// give the old ones' bits.
TEST(SoftmaxDouble, CrossEntropyOptionsAreChecked) {
  std::vector<double> const z = {0.3, -1, 2, 1.5, 0.25, -0.5};
  std::vector<std::int64_t> const targets = {2, 0};
  std::vector<double> dz(6, 7.0);
  auto call = [&](cross_entropy_options<double> const& o) {
    return softmax_cross_entropy(softmax{}, std::span<double const>(z),
                                 std::span<std::int64_t const>(targets), std::span<double>(dz), 3,
                                 o);
  };
  double const nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> const short_w = {1, 1};
  std::vector<double> const negative_w = {1, -0.5, 1};
  std::vector<double> const nan_w = {1, nan, 1};
  std::vector<double> const inf_w = {1, 1, std::numeric_limits<double>::infinity()};
  for (auto const& [o, message] :
       std::vector<std::pair<cross_entropy_options<double>, std::string>>{
           {{.label_smoothing = -0.1}, "label_smoothing must be in [0, 1], got -0.1"},
           {{.label_smoothing = 1.5}, "got 1.5"},
           {{.label_smoothing = nan}, "got nan"},
           {{.weight = std::span<double const>(short_w)}, "weight has 2 elements but there are 3"},
           {{.weight = std::span<double const>(negative_w)}, "weight[1] = -0.5"},
           {{.weight = std::span<double const>(nan_w)}, "weight[1] = nan"},
           {{.weight = std::span<double const>(inf_w)}, "weight[2] = inf"},
       }) {
    try {
      call(o);
      ADD_FAILURE() << "no exception for " << message;
    } catch (std::invalid_argument const& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
    for (double d : dz) {
      EXPECT_EQ(d, 7.0) << message;
    }
  }
  // dz over the weights is rejected.
  std::vector<double> both(9, 1.0);
  EXPECT_THROW(
      softmax_cross_entropy(
          softmax{}, std::span<double const>(z), std::span<std::int64_t const>(targets),
          std::span<double>(both).subspan(0, 6), 3,
          cross_entropy_options<double>{.weight = std::span<double const>(both).subspan(4, 3)}),
      std::invalid_argument);
  // No weights, no smoothing: the same bits as the plain overload.
  std::vector<double> dz_plain(6), dz_options(6);
  double const plain = softmax_cross_entropy(softmax{}, std::span<double const>(z),
                                             std::span<std::int64_t const>(targets),
                                             std::span<double>(dz_plain), 3, reduction::mean);
  double const options = softmax_cross_entropy(
      softmax{}, std::span<double const>(z), std::span<std::int64_t const>(targets),
      std::span<double>(dz_options), 3, cross_entropy_options<double>{});
  EXPECT_EQ(plain, options);
  EXPECT_EQ(dz_plain, dz_options);
}

// PyTorch's (N, C, d1, ...) layout: the same bits as the rows overloads on the transposed array,
// hard (ignored positions, weights, smoothing) and soft targets, all three reductions, in place.
TEST(SoftmaxDouble, CrossEntropyOverTheClassAxisEqualsTheTransposedRows) {
  std::size_t const outer = 3, classes = 5, inner = 7, positions = outer * inner;
  std::mt19937 rng(9);
  std::normal_distribution<double> normal(0, 3);
  std::vector<double> z(outer * classes * inner), q(z.size()), w(classes);
  for (double& v : z) v = normal(rng);
  for (double& v : q) v = std::abs(normal(rng));
  for (double& v : w) v = std::abs(normal(rng));
  std::vector<std::int64_t> targets(positions);
  for (std::size_t k = 0; k < positions; ++k) {
    targets[k] = k % 5 == 3 ? -100 : static_cast<std::int64_t>(rng() % classes);
  }
  // (n, c, d) -> (n d, c)
  auto transpose = [&](std::vector<double> const& a) {
    std::vector<double> t(a.size());
    for (std::size_t n = 0; n < outer; ++n) {
      for (std::size_t c = 0; c < classes; ++c) {
        for (std::size_t d = 0; d < inner; ++d) {
          t[(n * inner + d) * classes + c] = a[(n * classes + c) * inner + d];
        }
      }
    }
    return t;
  };
  std::vector<double> const zt = transpose(z), qt = transpose(q);
  for (bool soft : {false, true}) {
    for (reduction red : {reduction::none, reduction::sum, reduction::mean}) {
      std::vector<double> dz(z.size()), dz_rows(z.size()), losses(positions),
          losses_rows(positions);
      cross_entropy_options<double> o{.reduce = red,
                                      .label_smoothing = 0.05,
                                      .weight = std::span<double const>(w),
                                      .losses = std::span<double>(losses)};
      cross_entropy_options<double> o_rows = o;
      o_rows.losses = std::span<double>(losses_rows);
      axis_layout const shape{outer, classes, inner};
      double const loss =
          soft ? softmax_cross_entropy(softmax{.temperature = 0.8}, std::span<double const>(z),
                                       std::span<double const>(q), std::span<double>(dz), shape, o)
               : softmax_cross_entropy(softmax{.temperature = 0.8}, std::span<double const>(z),
                                       std::span<std::int64_t const>(targets),
                                       std::span<double>(dz), shape, o);
      double const loss_rows =
          soft ? softmax_cross_entropy(softmax{.temperature = 0.8}, std::span<double const>(zt),
                                       std::span<double const>(qt), std::span<double>(dz_rows),
                                       classes, o_rows)
               : softmax_cross_entropy(softmax{.temperature = 0.8}, std::span<double const>(zt),
                                       std::span<std::int64_t const>(targets),
                                       std::span<double>(dz_rows), classes, o_rows);
      EXPECT_EQ(loss, loss_rows) << soft;
      EXPECT_EQ(losses, losses_rows) << soft;
      EXPECT_EQ(transpose(dz), dz_rows) << soft;
      // In place: dz over the logits.
      std::vector<double> in_place = z;
      cross_entropy_options<double> o_in_place = o;
      o_in_place.losses = {};
      if (red != reduction::none) {
        double const again =
            soft ? softmax_cross_entropy(
                       softmax{.temperature = 0.8}, std::span<double const>(in_place),
                       std::span<double const>(q), std::span<double>(in_place), shape, o_in_place)
                 : softmax_cross_entropy(softmax{.temperature = 0.8},
                                         std::span<double const>(in_place),
                                         std::span<std::int64_t const>(targets),
                                         std::span<double>(in_place), shape, o_in_place);
        EXPECT_EQ(again, loss);
        EXPECT_EQ(in_place, dz);
      }
    }
  }
  // Targets of the wrong count, and a class out of range, throw before anything is written.
  std::vector<double> dz(z.size(), 7.0);
  std::vector<std::int64_t> bad = targets;
  bad[4] = 5;
  for (auto const& t : {std::vector<std::int64_t>(positions - 1, 0), bad}) {
    EXPECT_THROW(
        softmax_cross_entropy(softmax{}, std::span<double const>(z),
                              std::span<std::int64_t const>(t), std::span<double>(dz),
                              axis_layout{outer, classes, inner}, cross_entropy_options<double>{}),
        std::invalid_argument);
  }
  EXPECT_TRUE(std::all_of(dz.begin(), dz.end(), [](double v) { return v == 7.0; }));
}

}  // namespace
}  // namespace nonlin::test

namespace nonlin::test {
namespace {

// ---- 16-bit arrays ------------------------------------------------------------------------
// softmax and log_softmax on bfloat16 and float16: bit for bit the float driver's result on the
// widened values rounded once (any layout, in place); each p within one 16-bit ulp of the true
// value (long double); rows summing to 1 within half an ulp of 1 per entry's rounding,
// 2^-8 (bf16) and 2^-11 (fp16), plus the float error.

template <class T>
class Softmax16 : public ::testing::Test {};
using storage_types = ::testing::Types<bfloat16, float16>;
TYPED_TEST_SUITE(Softmax16, storage_types);

template <class T>
std::vector<T> logits16(std::size_t n, std::uint64_t seed, float spread) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<float> u(-spread, spread);
  std::vector<T> v(n);
  for (auto& e : v) {
    e = T::from_float(u(gen));
  }
  return v;
}

template <class T>
std::vector<float> widened(std::vector<T> const& v) {
  std::vector<float> out(v.size());
  std::transform(v.begin(), v.end(), out.begin(), [](T e) { return static_cast<float>(e); });
  return out;
}

// One 16-bit ulp at |p| (the spacing of T's values at p, subnormal steps included).

TYPED_TEST(Softmax16, EqualsTheFloatDriverRoundedOnceInEveryLayout) {
  using T = TypeParam;
  // Both tiers: the 16-bit path runs the same float driver, fast or not.
  auto check = [&]<class S, class L>(S, L) {
    for (axis_layout const shape : {axis_layout{7, 33, 1}, axis_layout{3, 17, 5},
                                    axis_layout{1, 2000, 1}, axis_layout{40, 1, 3}}) {
      std::vector<T> const x = logits16<T>(shape.size(), 11, 12.0F);
      std::vector<T> const dy = logits16<T>(shape.size(), 12, 1.0F);
      for (double const t : {1.0, 0.5, 3.0}) {
        std::vector<float> xf = widened(x);
        std::vector<float> yf(xf.size());
        std::vector<T> y(x.size());
        forward(S{t}, std::span<float const>(xf), std::span<float>(yf), shape);
        forward(S{t}, std::span<T const>(x), std::span<T>(y), shape);
        for (std::size_t i = 0; i < y.size(); ++i) {
          ASSERT_EQ(y[i].bits, T::from_float(yf[i]).bits) << "softmax i=" << i;
        }
        // backward from that y
        std::vector<float> dxf(xf.size());
        std::vector<T> dx(x.size());
        std::vector<float> const ywf = widened(y);
        std::vector<float> const dyf = widened(dy);
        backward_from_output(S{t}, std::span<float const>(ywf), std::span<float const>(dyf),
                             std::span<float>(dxf), shape);
        backward_from_output(S{t}, std::span<T const>(y), std::span<T const>(dy), std::span<T>(dx),
                             shape);
        for (std::size_t i = 0; i < dx.size(); ++i) {
          ASSERT_EQ(dx[i].bits, T::from_float(dxf[i]).bits) << "softmax backward i=" << i;
        }
        // log_softmax, in place
        std::vector<T> in_place(x);
        forward(L{t}, std::span<T const>(in_place), std::span<T>(in_place), shape);
        forward(L{t}, std::span<float const>(xf), std::span<float>(yf), shape);
        for (std::size_t i = 0; i < y.size(); ++i) {
          ASSERT_EQ(in_place[i].bits, T::from_float(yf[i]).bits) << "log_softmax i=" << i;
        }
        std::vector<T> grad(dy);
        std::vector<float> const lwf = widened(in_place);
        backward_from_output(L{t}, std::span<float const>(lwf), std::span<float const>(dyf),
                             std::span<float>(dxf), shape);
        backward_from_output(L{t}, std::span<T const>(in_place), std::span<T const>(grad),
                             std::span<T>(grad), shape);
        for (std::size_t i = 0; i < dx.size(); ++i) {
          ASSERT_EQ(grad[i].bits, T::from_float(dxf[i]).bits) << "log_softmax backward i=" << i;
        }
      }
    }
  };
  check(softmax{}, log_softmax{});
  check(fast::softmax{}, fast::log_softmax{});
}

TYPED_TEST(Softmax16, WithinOneUlpAndRowsSumToOne) {
  using T = TypeParam;
  double const sum_bound = std::is_same_v<T, bfloat16> ? 0x1p-8 : 0x1p-11;
  for (std::size_t const cols : {1UL, 2UL, 10UL, 100UL, 1000UL}) {
    std::size_t const rows = 20;
    std::vector<T> const x = logits16<T>(rows * cols, 31 + cols, 20.0F);
    std::vector<T> y(x.size());
    forward(softmax{}, x, y, cols);
    for (std::size_t r = 0; r < rows; ++r) {
      long double m = -std::numeric_limits<long double>::infinity();
      for (std::size_t c = 0; c < cols; ++c) {
        m = std::max<long double>(m, static_cast<float>(x[r * cols + c]));
      }
      long double s = 0;
      for (std::size_t c = 0; c < cols; ++c) {
        s += std::exp(static_cast<long double>(static_cast<float>(x[r * cols + c])) - m);
      }
      long double row_sum = 0;
      for (std::size_t c = 0; c < cols; ++c) {
        long double const p =
            std::exp(static_cast<long double>(static_cast<float>(x[r * cols + c])) - m) / s;
        double const got = static_cast<float>(y[r * cols + c]);
        ASSERT_LE(std::fabs(got - static_cast<double>(p)), step16<T>(static_cast<double>(p)))
            << "cols=" << cols << " row " << r << " col " << c;
        row_sum += got;
      }
      EXPECT_LE(std::fabs(static_cast<double>(row_sum) - 1.0), sum_bound + 1e-6)
          << "cols=" << cols << " row " << r;
    }
  }
}

// Cross-entropy on 16-bit logits: the float overloads on the widened logits (and q), dz rounded
// once, the loss and the per-row losses bit for bit; hard targets with ignore_index, weights and
// smoothing, soft targets, the axis layout.
TYPED_TEST(Softmax16, CrossEntropyEqualsTheFloatOverloadsOnTheWidenedLogits) {
  using T = TypeParam;
  std::size_t const rows = 9;
  std::size_t const cols = 37;
  std::vector<T> const z = logits16<T>(rows * cols, 41, 10.0F);
  std::vector<float> const zf = widened(z);
  std::vector<std::int64_t> targets(rows);
  for (std::size_t r = 0; r < rows; ++r) {
    targets[r] = r == 4 ? -100 : static_cast<std::int64_t>((r * 7) % cols);
  }
  std::vector<float> weight(cols);
  for (std::size_t c = 0; c < cols; ++c) {
    weight[c] = 0.5F + static_cast<float>(c % 5) * 0.25F;
  }
  for (int variant = 0; variant < 3; ++variant) {
    std::vector<float> losses(rows);
    std::vector<float> losses16(rows);
    cross_entropy_options<float> o{.reduce = variant == 2 ? reduction::none : reduction::mean};
    if (variant >= 1) {
      o.label_smoothing = 0.1;
      o.weight = std::span<float const>(weight);
    }
    cross_entropy_options<float> o16 = o;
    o.losses = std::span<float>(losses);
    o16.losses = std::span<float>(losses16);
    std::vector<float> dzf(zf.size());
    std::vector<T> dz(z.size());
    float const want = softmax_cross_entropy(softmax{}, std::span<float const>(zf),
                                             std::span<std::int64_t const>(targets),
                                             std::span<float>(dzf), cols, o);
    float const got =
        softmax_cross_entropy(softmax{}, std::span<T const>(z),
                              std::span<std::int64_t const>(targets), std::span<T>(dz), cols, o16);
    ASSERT_EQ(std::bit_cast<std::uint32_t>(got), std::bit_cast<std::uint32_t>(want)) << variant;
    for (std::size_t i = 0; i < dz.size(); ++i) {
      ASSERT_EQ(dz[i].bits, T::from_float(dzf[i]).bits) << "variant " << variant << " i=" << i;
    }
    for (std::size_t r = 0; r < rows; ++r) {
      ASSERT_EQ(losses16[r], losses[r]) << r;
    }
  }
  // Soft targets (q in 16 bits too), and the axis layout: outer 3, 37 classes, inner 3.
  std::vector<T> q(z.size());
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < cols; ++c) {
      q[r * cols + c] = T::from_float(c == static_cast<std::size_t>(r) ? 0.75F : 0.25F / 36);
    }
  }
  std::vector<float> const qf = widened(q);
  std::vector<float> dzf(zf.size());
  std::vector<T> dz(z.size());
  float const want = softmax_cross_entropy(softmax{0.7}, std::span<float const>(zf),
                                           std::span<float const>(qf), std::span<float>(dzf), cols);
  float const got = softmax_cross_entropy(softmax{0.7}, std::span<T const>(z),
                                          std::span<T const>(q), std::span<T>(dz), cols);
  ASSERT_EQ(got, want);
  for (std::size_t i = 0; i < dz.size(); ++i) {
    ASSERT_EQ(dz[i].bits, T::from_float(dzf[i]).bits) << "soft i=" << i;
  }
  axis_layout const shape{3, 37, 3};
  std::vector<std::int64_t> const axis_targets{0, 5, 36, 1, -100, 2, 9, 10, 11};
  float const axis_want = softmax_cross_entropy(
      softmax{}, std::span<float const>(zf), std::span<std::int64_t const>(axis_targets),
      std::span<float>(dzf), shape, cross_entropy_options<float>{});
  float const axis_got = softmax_cross_entropy(
      softmax{}, std::span<T const>(z), std::span<std::int64_t const>(axis_targets),
      std::span<T>(dz), shape, cross_entropy_options<float>{});
  ASSERT_EQ(axis_got, axis_want);
  for (std::size_t i = 0; i < dz.size(); ++i) {
    ASSERT_EQ(dz[i].bits, T::from_float(dzf[i]).bits) << "axis i=" << i;
  }
  // A bad target throws before dz is written.
  std::vector<std::int64_t> bad(targets);
  bad[3] = static_cast<std::int64_t>(cols);
  std::vector<T> untouched(z.size(), T{0x7fc0});
  EXPECT_THROW(
      softmax_cross_entropy(softmax{}, std::span<T const>(z), std::span<std::int64_t const>(bad),
                            std::span<T>(untouched), cols),
      std::invalid_argument);
  for (T const e : untouched) {
    ASSERT_EQ(e.bits, 0x7fc0);
  }
}

TYPED_TEST(Softmax16, BadArgumentsThrowBeforeWriting) {
  using T = TypeParam;
  std::vector<T> const x = logits16<T>(12, 5, 3.0F);
  std::vector<T> y(12, T{0x7fc0});
  EXPECT_THROW(forward(softmax{0.0}, x, y, std::size_t{4}), std::invalid_argument);
  EXPECT_THROW(
      forward(softmax{}, std::span<T const>(x), std::span<T>(y.data(), 11), std::size_t{4}),
      std::invalid_argument);
  EXPECT_THROW(
      backward_from_output(log_softmax{}, std::span<T const>(x), std::span<T const>(x.data(), 11),
                           std::span<T>(y), std::size_t{4}),
      std::invalid_argument);
  for (T const e : y) {
    ASSERT_EQ(e.bits, 0x7fc0);
  }
}

}  // namespace
}  // namespace nonlin::test
