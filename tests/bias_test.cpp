// SPDX-License-Identifier: MIT
// forward_with_bias / backward_with_bias: y and dx are the span kernels' results on x + b bit for
// bit, in both layouts (inner = 1 and NCHW-like), in place; dbias is the sum of dx (against a
// long double sum); the whole (x, b) gradient matches central differences; bad arguments throw
// before anything is written. The gated forms (gated_*_fused_with_bias) the same way against
// gated_*_fused on x + b, in both splits.

#include <cmath>
#include <cstddef>
#include <cstring>
#include <random>
#include <span>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include <nonlin/bias.hpp>
#include <nonlin/nonlin.hpp>

#include "support/step16.hpp"

namespace nonlin::test {
namespace {

template <class T>
class Bias : public ::testing::Test {};
using scalar_types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Bias, scalar_types);

template <class T>
std::vector<T> values(std::size_t n, unsigned seed, double scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0, scale);
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(normal(rng));
  return v;
}

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof a) == 0 || (a != a && b != b);
}

TYPED_TEST(Bias, EqualsTheKernelsOnXPlusBAndDbiasIsTheSumOfDx) {
  using T = TypeParam;
  for (prelu_shape const shape : {prelu_shape{7, 37, 1}, prelu_shape{3, 5, 29},
                                  prelu_shape{2, 3, 1}, prelu_shape{4, 16, 16}}) {
    std::size_t const size = shape.size();
    std::vector<T> const x = values<T>(size, 1, 3);
    std::vector<T> const dy = values<T>(size, 2, 1);
    std::vector<T> const b = values<T>(shape.channels, 3, 1);
    auto check = [&](auto const& f) {
      std::vector<T> y(size), dx(size), db(shape.channels);
      forward_with_bias(f, std::span<T const>(x), std::span<T const>(b), std::span<T>(y), shape);
      backward_with_bias(f, std::span<T const>(x), std::span<T const>(b), std::span<T const>(dy),
                         std::span<T>(dx), std::span<T>(db), shape);
      std::vector<long double> expected_db(shape.channels, 0.0L);
      for (std::size_t i = 0; i < shape.n; ++i) {
        for (std::size_t c = 0; c < shape.channels; ++c) {
          for (std::size_t j = 0; j < shape.inner; ++j) {
            std::size_t const k = (i * shape.channels + c) * shape.inner + j;
            T const pre = x[k] + b[c];
            ASSERT_TRUE(same_bits(y[k], f(pre))) << k;
            ASSERT_TRUE(same_bits(dx[k], f.backward(pre, dy[k]))) << k;
            expected_db[c] += static_cast<long double>(dx[k]);
          }
        }
      }
      for (std::size_t c = 0; c < shape.channels; ++c) {
        long double magnitude = 0;
        for (std::size_t i = 0; i < shape.n; ++i) {
          for (std::size_t j = 0; j < shape.inner; ++j) {
            magnitude +=
                std::fabs(static_cast<long double>(dx[(i * shape.channels + c) * shape.inner + j]));
          }
        }
        long double const tolerance = 2 *
                                      static_cast<long double>(std::numeric_limits<T>::epsilon()) *
                                      std::max(std::fabs(expected_db[c]), magnitude * 1e-6L);
        EXPECT_LE(std::fabs(static_cast<long double>(db[c]) - expected_db[c]), tolerance) << c;
      }
      // In place: y over x, dx over dy.
      std::vector<T> in_place = x;
      forward_with_bias(f, std::span<T const>(in_place), std::span<T const>(b),
                        std::span<T>(in_place), shape);
      EXPECT_EQ(std::memcmp(in_place.data(), y.data(), size * sizeof(T)), 0);
      std::vector<T> dy_in_place = dy, db2(shape.channels);
      backward_with_bias(f, std::span<T const>(x), std::span<T const>(b),
                         std::span<T const>(dy_in_place), std::span<T>(dy_in_place),
                         std::span<T>(db2), shape);
      EXPECT_EQ(std::memcmp(dy_in_place.data(), dx.data(), size * sizeof(T)), 0);
      EXPECT_EQ(std::memcmp(db2.data(), db.data(), shape.channels * sizeof(T)), 0);
    };
    check(gelu_tanh{});
    check(relu{});
    check(silu{});
    check(sigmoid{});
  }
}

// The loss L = sum(r * f(x + b)): its gradient in x and b against central differences.
TEST(BiasDouble, GradientMatchesCentralDifferences) {
  prelu_shape const shape{3, 4, 5};
  std::size_t const size = shape.size();
  std::vector<double> x = values<double>(size, 4, 2);
  std::vector<double> b = values<double>(shape.channels, 5, 1);
  std::vector<double> const r = values<double>(size, 6, 1);
  gelu_exact const f{};
  auto loss = [&] {
    std::vector<double> y(size);
    forward_with_bias(f, std::span<double const>(x), std::span<double const>(b),
                      std::span<double>(y), shape);
    double sum = 0;
    for (std::size_t k = 0; k < size; ++k) sum += r[k] * y[k];
    return sum;
  };
  std::vector<double> dx(size), db(shape.channels);
  backward_with_bias(f, std::span<double const>(x), std::span<double const>(b),
                     std::span<double const>(r), std::span<double>(dx), std::span<double>(db),
                     shape);
  double const h = 1e-6;
  for (std::size_t c = 0; c < shape.channels; ++c) {
    double const keep = b[c];
    b[c] = keep + h;
    double const up = loss();
    b[c] = keep - h;
    double const down = loss();
    b[c] = keep;
    EXPECT_NEAR(db[c], (up - down) / (2 * h), 1e-7 * std::max(1.0, std::abs(db[c]))) << c;
  }
  for (std::size_t k : {0u, 17u, 59u}) {
    double const keep = x[k];
    x[k] = keep + h;
    double const up = loss();
    x[k] = keep - h;
    double const down = loss();
    x[k] = keep;
    EXPECT_NEAR(dx[k], (up - down) / (2 * h), 1e-7 * std::max(1.0, std::abs(dx[k]))) << k;
  }
}

TYPED_TEST(Bias, BadArgumentsThrowBeforeAnythingIsWritten) {
  using T = TypeParam;
  prelu_shape const shape{2, 3, 4};
  std::vector<T> const x(24, T(1));
  std::vector<T> const b(3, T(0.5));
  std::vector<T> y(24, T(7)), db(3, T(7));
  std::vector<T> const short_b(2, T(0));
  EXPECT_THROW(forward_with_bias(relu{}, std::span<T const>(x), std::span<T const>(short_b),
                                 std::span<T>(y), shape),
               std::invalid_argument);
  EXPECT_THROW(forward_with_bias(relu{}, std::span<T const>(x).subspan(1), std::span<T const>(b),
                                 std::span<T>(y).subspan(1), shape),
               std::invalid_argument);
  // dbias over dy.
  std::vector<T> dy(24, T(1));
  EXPECT_THROW(backward_with_bias(relu{}, std::span<T const>(x), std::span<T const>(b),
                                  std::span<T const>(dy), std::span<T>(y),
                                  std::span<T>(dy).subspan(0, 3), shape),
               std::invalid_argument);
  for (T v : y) EXPECT_EQ(v, T(7));
  for (T v : dy) EXPECT_EQ(v, T(1));
}

// The column sums of dx (rows, width) against a long double sum: within 2 eps of the larger of
// the sum and 1e-6 of the sum of magnitudes.
template <class T>
void expect_column_sums(std::vector<T> const& dx, std::vector<T> const& db, std::size_t rows) {
  std::size_t const width = db.size();
  for (std::size_t c = 0; c < width; ++c) {
    long double sum = 0;
    long double magnitude = 0;
    for (std::size_t r = 0; r < rows; ++r) {
      sum += static_cast<long double>(dx[r * width + c]);
      magnitude += std::fabs(static_cast<long double>(dx[r * width + c]));
    }
    long double const tolerance = 2 * static_cast<long double>(std::numeric_limits<T>::epsilon()) *
                                  std::max(std::fabs(sum), magnitude * 1e-6L);
    EXPECT_LE(std::fabs(static_cast<long double>(db[c]) - sum), tolerance) << c;
  }
}

TYPED_TEST(Bias, GatedEqualsTheFusedKernelsOnXPlusBAndDbiasIsTheSumOfDx) {
  using T = TypeParam;
  for (std::size_t const rows : {std::size_t{1}, std::size_t{5}}) {
    for (std::size_t const half : {std::size_t{3}, std::size_t{37}}) {
      std::size_t const size = rows * 2 * half;
      std::vector<T> const x = values<T>(size, 7, 2);
      std::vector<T> const dy = values<T>(rows * half, 8, 1);
      std::vector<T> const b = values<T>(2 * half, 9, 1);
      std::vector<T> pre(size);
      for (std::size_t k = 0; k < size; ++k) pre[k] = x[k] + b[k % (2 * half)];
      auto check = [&](auto const& f, glu_split split) {
        std::vector<T> out(rows * half), expected_out(rows * half);
        gated_forward_fused_with_bias(f, std::span<T const>(x), std::span<T const>(b),
                                      std::span<T>(out), rows, split);
        gated_forward_fused(f, std::span<T const>(pre), std::span<T>(expected_out), rows, split);
        EXPECT_EQ(std::memcmp(out.data(), expected_out.data(), out.size() * sizeof(T)), 0);
        std::vector<T> dx(size), expected_dx(size), db(2 * half);
        gated_backward_fused_with_bias(f, std::span<T const>(x), std::span<T const>(b),
                                       std::span<T const>(dy), std::span<T>(dx), std::span<T>(db),
                                       rows, split);
        gated_backward_fused(f, std::span<T const>(pre), std::span<T const>(dy),
                             std::span<T>(expected_dx), rows, split);
        EXPECT_EQ(std::memcmp(dx.data(), expected_dx.data(), size * sizeof(T)), 0);
        expect_column_sums(dx, db, rows);
        // In place: dx over x.
        std::vector<T> in_place = x, db2(2 * half);
        gated_backward_fused_with_bias(f, std::span<T const>(in_place), std::span<T const>(b),
                                       std::span<T const>(dy), std::span<T>(in_place),
                                       std::span<T>(db2), rows, split);
        EXPECT_EQ(std::memcmp(in_place.data(), dx.data(), size * sizeof(T)), 0);
        EXPECT_EQ(std::memcmp(db2.data(), db.data(), db.size() * sizeof(T)), 0);
      };
      for (glu_split split : {glu_split::value_first, glu_split::gate_first}) {
        check(swiglu{}, split);
        check(geglu{}, split);
        check(reglu{}, split);
        check(glu{}, split);
      }
    }
  }
}

// The product tails in the backward kernels with a bias: one pre-activation x + b in the tail (f'
// below the normal range, dy = 1e30 or 1e300 bringing dy f' back, where dy times the rounded f'
// differs) at every position, the other lanes ordinary; dx against the scalar call at x + b, bit
// for bit, in both layouts. The gated form, which defers the act's tails to the end of an
// iteration as gated_backward_fused does (kernels.hpp: backward_deferring_tails), the tail on the
// gate, against gated_backward_fused on x + b and against the scalar call.
TYPED_TEST(Bias, ProductTailsInEveryLane) {
  using T = TypeParam;
  constexpr bool is_float = std::is_same_v<T, float>;
  T const dy_large = is_float ? T(1e30) : T(1e300);
  auto const check = [&](char const* name, auto const& f, T tail_x) {
    SCOPED_TRACE(name);
    for (prelu_shape const shape : {prelu_shape{2, 37, 1}, prelu_shape{2, 3, 37}}) {
      std::size_t const size = shape.size();
      std::vector<T> const b = values<T>(shape.channels, 3, 0.25);
      std::vector<T> const dy(size, dy_large);
      for (std::size_t at = 0; at < size; ++at) {
        std::vector<T> x = values<T>(size, 1, 3);
        x[at] = tail_x;
        std::vector<T> dx(size), db(shape.channels);
        backward_with_bias(f, std::span<T const>(x), std::span<T const>(b), std::span<T const>(dy),
                           std::span<T>(dx), std::span<T>(db), shape);
        for (std::size_t k = 0; k < size; ++k) {
          T const pre = x[k] + b[(k / shape.inner) % shape.channels];
          ASSERT_TRUE(same_bits(dx[k], f.backward(pre, dy[k])))
              << "tail at " << at << ", element " << k << ", x + b = " << pre;
        }
      }
    }
  };
  check("sigmoid", sigmoid{}, is_float ? T(-95) : T(-720));
  check("gelu_tanh", gelu_tanh{}, is_float ? T(-12) : T(-22));
  check("mish", mish{}, is_float ? T(-95) : T(-720));
  auto const check_gated = [&](char const* name, auto const& f, T tail_gate) {
    SCOPED_TRACE(name);
    std::size_t const rows = 2;
    std::size_t const half = 37;
    std::size_t const size = rows * 2 * half;
    std::vector<T> const b = values<T>(2 * half, 9, 0.25);
    std::vector<T> const dy(rows * half, dy_large);
    for (glu_split split : {glu_split::value_first, glu_split::gate_first}) {
      std::size_t const gate_at = split == glu_split::value_first ? half : 0;
      for (std::size_t r = 0; r < rows; ++r) {
        for (std::size_t j = 0; j < half; ++j) {
          std::vector<T> x = values<T>(size, 7, 2);
          x[r * 2 * half + gate_at + j] = tail_gate;
          std::vector<T> pre(size);
          for (std::size_t k = 0; k < size; ++k) pre[k] = x[k] + b[k % (2 * half)];
          std::vector<T> dx(size), expected_dx(size), db(2 * half);
          gated_backward_fused_with_bias(f, std::span<T const>(x), std::span<T const>(b),
                                         std::span<T const>(dy), std::span<T>(dx), std::span<T>(db),
                                         rows, split);
          gated_backward_fused(f, std::span<T const>(pre), std::span<T const>(dy),
                               std::span<T>(expected_dx), rows, split);
          ASSERT_EQ(std::memcmp(dx.data(), expected_dx.data(), size * sizeof(T)), 0)
              << "tail at row " << r << ", lane " << j;
          std::size_t const value_at = split == glu_split::value_first ? 0 : half;
          for (std::size_t q = 0; q < rows; ++q) {
            for (std::size_t k = 0; k < half; ++k) {
              std::size_t const v = q * 2 * half + value_at + k;
              std::size_t const g = q * 2 * half + gate_at + k;
              auto const want = f.backward(pre[v], pre[g], dy[q * half + k]);
              ASSERT_TRUE(same_bits(dx[v], want.d_value) && same_bits(dx[g], want.d_gate))
                  << "tail at row " << r << ", lane " << j << "; row " << q << ", lane " << k;
            }
          }
        }
      }
    }
  };
  check_gated("glu", glu{}, is_float ? T(-95) : T(-720));
  check_gated("geglu_tanh", geglu_tanh{}, is_float ? T(-12) : T(-22));
}

TYPED_TEST(Bias, GatedBadArgumentsThrowBeforeAnythingIsWritten) {
  using T = TypeParam;
  std::size_t const rows = 2;
  std::size_t const half = 3;
  std::vector<T> const x(rows * 2 * half, T(1));
  std::vector<T> const b(2 * half, T(0.5));
  std::vector<T> const short_b(half, T(0.5));
  std::vector<T> out(rows * half, T(7)), dx(rows * 2 * half, T(7)), db(2 * half, T(7));
  std::vector<T> dy(rows * half, T(1));
  auto const unchanged = [&] {
    for (T v : out) EXPECT_EQ(v, T(7));
    for (T v : dx) EXPECT_EQ(v, T(7));
    for (T v : db) EXPECT_EQ(v, T(7));
    for (T v : dy) EXPECT_EQ(v, T(1));
  };
  EXPECT_THROW(
      gated_forward_fused_with_bias(swiglu{}, std::span<T const>(x), std::span<T const>(short_b),
                                    std::span<T>(out), rows, glu_split::gate_first),
      std::invalid_argument);
  EXPECT_THROW(gated_backward_fused_with_bias(
                   swiglu{}, std::span<T const>(x), std::span<T const>(b), std::span<T const>(dy),
                   std::span<T>(dx), std::span<T>(db).subspan(1), rows, glu_split::gate_first),
               std::invalid_argument);
  // dbias over dx, dx over the bias.
  EXPECT_THROW(gated_backward_fused_with_bias(
                   swiglu{}, std::span<T const>(x), std::span<T const>(b), std::span<T const>(dy),
                   std::span<T>(dx), std::span<T>(dx).subspan(0, 6), rows, glu_split::gate_first),
               std::invalid_argument);
  std::vector<T> shared(rows * 2 * half, T(7));
  EXPECT_THROW(gated_backward_fused_with_bias(swiglu{}, std::span<T const>(x),
                                              std::span<T const>(shared).subspan(0, 6),
                                              std::span<T const>(dy), std::span<T>(shared),
                                              std::span<T>(db), rows, glu_split::gate_first),
               std::invalid_argument);
  unchanged();
  for (T v : shared) EXPECT_EQ(v, T(7));
  // No rows: nothing to do, dbias all zeros.
  std::vector<T> none;
  std::vector<T> db0(4, T(7));
  gated_backward_fused_with_bias(swiglu{}, std::span<T const>(none),
                                 std::span<T const>(b).subspan(0, 4), std::span<T const>(none),
                                 std::span<T>(none), std::span<T>(db0), 0, glu_split::gate_first);
  for (T v : db0) EXPECT_EQ(v, T(0));
}

}  // namespace
}  // namespace nonlin::test

namespace nonlin::test {
namespace {

// 16-bit arrays: y and dx the span kernels' rule (f(x + b) in float, recomputed in double near a
// 16-bit midpoint, rounded once), dbias the sum of the dx written, within one 16-bit ulp; the
// gated forms the same through gated_forward / gated_backward on x + b.
template <class T>
class Bias16 : public ::testing::Test {};
using storage_types = ::testing::Types<bfloat16, float16>;
TYPED_TEST_SUITE(Bias16, storage_types);

template <class T>
std::vector<T> spread16(std::size_t n, std::size_t seed) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    v[i] = T::from_float((static_cast<float>((i * 37 + seed) % 53) - 26.0F) * 0.173F);
  }
  return v;
}

TYPED_TEST(Bias16, FollowsTheRoundingRuleAndDbiasIsTheSumOfDx) {
  using T = TypeParam;
  silu const f{};
  for (std::size_t inner : {std::size_t{1}, std::size_t{19}}) {
    prelu_shape const shape{.n = 11, .channels = 5, .inner = inner};
    std::vector<T> const x = spread16<T>(shape.size(), 1);
    std::vector<T> const dy = spread16<T>(shape.size(), 7);
    std::vector<T> const bias = spread16<T>(shape.channels, 3);
    std::vector<T> y(x.size());
    std::vector<T> dx(x.size());
    std::vector<T> dbias(bias.size());
    forward_with_bias(f, std::span<T const>(x), std::span<T const>(bias), std::span<T>(y), shape);
    backward_with_bias(f, std::span<T const>(x), std::span<T const>(bias), std::span<T const>(dy),
                       std::span<T>(dx), std::span<T>(dbias), shape);
    // nonlin::forward's rule for a double on a midpoint (value16) at x + b.
    auto const fwd = [f](auto v, auto b) -> decltype(f(v + b)) {
      return detail::value16(f, v + b);
    };
    auto const bwd = [f](auto v, auto b, auto d) -> decltype(f.backward(v + b, d)) {
      return f.backward(v + b, d);
    };
    std::vector<long double> sums(bias.size(), 0.0L);
    for (std::size_t i = 0; i < x.size(); ++i) {
      std::size_t const c = (i / inner) % shape.channels;
      auto const xi = static_cast<float>(x[i]);
      auto const bi = static_cast<float>(bias[c]);
      ASSERT_EQ(y[i].bits, detail::rounded16<T>(fwd, xi, bi).bits) << i;
      ASSERT_EQ(dx[i].bits, detail::rounded16<T>(bwd, xi, bi, static_cast<float>(dy[i])).bits) << i;
      sums[c] += static_cast<float>(dx[i]);
    }
    for (std::size_t c = 0; c < bias.size(); ++c) {
      double const want = static_cast<double>(sums[c]);
      EXPECT_LE(std::fabs(static_cast<float>(dbias[c]) - want), step16<T>(want)) << c;
    }
  }
}

TYPED_TEST(Bias16, GatedEqualsTheGatedKernelsOnXPlusB) {
  using T = TypeParam;
  swiglu const f{};
  std::size_t const rows = 6;
  std::size_t const half = 21;
  std::vector<T> const x = spread16<T>(rows * 2 * half, 2);
  std::vector<T> const dy = spread16<T>(rows * half, 5);
  std::vector<T> const bias = spread16<T>(2 * half, 9);
  std::vector<T> out(rows * half);
  std::vector<T> dx(x.size());
  std::vector<T> dbias(bias.size());
  gated_forward_fused_with_bias(f, std::span<T const>(x), std::span<T const>(bias),
                                std::span<T>(out), rows, glu_split::value_first);
  gated_backward_fused_with_bias(f, std::span<T const>(x), std::span<T const>(bias),
                                 std::span<T const>(dy), std::span<T>(dx), std::span<T>(dbias),
                                 rows, glu_split::value_first);
  auto const fwd = [f](auto v, auto g, auto bv, auto bg) -> decltype(f(v + bv, g + bg)) {
    return detail::value16(f, v + bv, g + bg);
  };
  std::vector<long double> sums(bias.size(), 0.0L);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t i = 0; i < half; ++i) {
      auto const v = static_cast<float>(x[r * 2 * half + i]);
      auto const g = static_cast<float>(x[r * 2 * half + half + i]);
      auto const bv = static_cast<float>(bias[i]);
      auto const bg = static_cast<float>(bias[half + i]);
      ASSERT_EQ(out[r * half + i].bits, detail::rounded16<T>(fwd, v, g, bv, bg).bits);
      auto const d = static_cast<float>(dy[r * half + i]);
      gated_gradient<float> const gr = f.backward(v + bv, g + bg, d);
      auto const vd = static_cast<double>(v) + bv;
      auto const gd = static_cast<double>(g) + bg;
      T const want_value = detail::rounded16_given<T>(
          gr.d_value, [&] { return f.backward(vd, gd, static_cast<double>(d)).d_value; });
      T const want_gate = detail::rounded16_given<T>(
          gr.d_gate, [&] { return f.backward(vd, gd, static_cast<double>(d)).d_gate; });
      ASSERT_EQ(dx[r * 2 * half + i].bits, want_value.bits) << r << " " << i;
      ASSERT_EQ(dx[r * 2 * half + half + i].bits, want_gate.bits) << r << " " << i;
    }
    for (std::size_t c = 0; c < 2 * half; ++c) {
      sums[c] += static_cast<float>(dx[r * 2 * half + c]);
    }
  }
  for (std::size_t c = 0; c < bias.size(); ++c) {
    double const want = static_cast<double>(sums[c]);
    EXPECT_LE(std::fabs(static_cast<float>(dbias[c]) - want), step16<T>(want)) << c;
  }
}

}  // namespace
}  // namespace nonlin::test
