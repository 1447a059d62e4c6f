// SPDX-License-Identifier: MIT
// Regressions of what an adversarial user found (issue 10): shapes whose product overflows,
// empty work with huge dimensions, outputs that alias inputs or each other, and messages that
// show the value they reject. Every call that must throw is checked to write nothing.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include <xsimd/xsimd.hpp>

#include <nonlin/nonlin.hpp>

namespace nonlin::test {
namespace {

template <class T>
class Reliability : public ::testing::Test {};
using scalar_types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Reliability, scalar_types);

// Runs `call`, which must throw std::invalid_argument whose message contains every one of
// `words`.
template <class Call>
void expect_rejected(Call&& call, std::vector<std::string> const& words) {
  try {
    call();
    ADD_FAILURE() << "no exception; expected one with '" << words.front() << "'";
  } catch (std::invalid_argument const& e) {
    std::string const what = e.what();
    for (std::string const& word : words) {
      EXPECT_NE(what.find(word), std::string::npos) << "'" << word << "' not in: " << what;
    }
  }
}

template <class T>
void expect_all_nan(std::vector<T> const& v) {
  for (std::size_t i = 0; i < v.size(); ++i) {
    EXPECT_TRUE(std::isnan(v[i])) << "written at " << i << ": " << v[i];
  }
}

constexpr std::size_t huge = (std::size_t{1} << 62) + 1;  // * 4 wraps to 4

TYPED_TEST(Reliability, ShapesWhoseProductOverflowsThrow) {
  using T = TypeParam;
  T const nan = std::numeric_limits<T>::quiet_NaN();
  std::vector<T> const x = {1, 2, 3, 4};
  std::vector<T> y(4, nan);
  axis_layout const layout{huge, 4, 1};
  std::vector<std::string> const named = {"outer=4611686018427387905", "axis=4", "inner=1"};
  expect_rejected([&] { forward(softmax{}, std::span<T const>(x), std::span<T>(y), layout); },
                  named);
  expect_rejected([&] { forward(log_softmax{}, std::span<T const>(x), std::span<T>(y), layout); },
                  named);
  expect_rejected(
      [&] {
        backward_from_output(softmax{}, std::span<T const>(x), std::span<T const>(x),
                             std::span<T>(y), layout);
      },
      named);
  expect_rejected(
      [&] {
        backward_from_output(log_softmax{}, std::span<T const>(x), std::span<T const>(x),
                             std::span<T>(y), layout);
      },
      named);
  expect_rejected([&] { (void)layout.size(); }, named);
  expect_all_nan(y);

  prelu_shape const shape{.n = huge, .channels = 4, .inner = 1};
  std::vector<std::string> const prelu_named = {"n=4611686018427387905", "channels=4"};
  std::vector<T> const alpha(4, T(0.25));
  std::vector<T> dalpha(4, nan);
  expect_rejected(
      [&] {
        prelu_forward(std::span<T const>(x), std::span<T const>(alpha), std::span<T>(y), shape);
      },
      prelu_named);
  expect_rejected(
      [&] {
        prelu_backward(std::span<T const>(x), std::span<T const>(alpha), std::span<T const>(x),
                       std::span<T>(y), std::span<T>(dalpha), shape);
      },
      prelu_named);
  expect_rejected([&] { (void)shape.size(); }, prelu_named);
  expect_all_nan(y);
  expect_all_nan(dalpha);
}

// A zero dimension beside huge ones is empty work: it returns at once (a loop over 2^62 empty
// rows would never end; ctest's timeout catches that).
TYPED_TEST(Reliability, EmptyWorkWithHugeDimensionsReturnsAtOnce) {
  using T = TypeParam;
  std::vector<T> none;
  std::span<T const> const in(none);
  std::span<T> const out(none);
  constexpr std::size_t big = std::size_t{1} << 62;
  for (axis_layout const layout : {axis_layout{big, 0, 1}, axis_layout{big, 0, big},
                                   axis_layout{0, big, big}, axis_layout{big, big, 0}}) {
    forward(softmax{}, in, out, layout);
    forward(log_softmax{}, in, out, layout);
    backward_from_output(softmax{}, in, in, out, layout);
    backward_from_output(log_softmax{}, in, in, out, layout);
  }
  std::vector<T> const alpha = {T(0.25)};
  std::vector<T> dalpha = {T(7)};
  prelu_shape const shape{.n = big, .channels = big, .inner = 0};
  prelu_forward(in, std::span<T const>(alpha), out, shape);
  prelu_backward(in, std::span<T const>(alpha), in, out, std::span<T>(dalpha), shape);
  EXPECT_EQ(dalpha[0], T(0));  // overwritten: the sum over no positions
  gated_forward_fused(swiglu{}, in, out, big, glu_split::value_first);
  gated_backward_fused(swiglu{}, in, in, out, big, glu_split::gate_first);
}

// Soft targets: log p goes into dz before q is read, so dz = q itself would give a wrong loss
// (-53.3 instead of 2.894 in the report): rejected, nothing written.
TYPED_TEST(Reliability, CrossEntropyGradientMustNotBeTheTargets) {
  using T = TypeParam;
  std::vector<T> const logits = {T(0.3), T(-1), T(2), T(0)};
  std::vector<T> q = {T(0.1), T(0.2), T(0.3), T(0.4)};
  std::vector<T> const q_before = q;
  expect_rejected(
      [&] {
        softmax_cross_entropy(softmax{}, std::span<T const>(logits), std::span<T const>(q),
                              std::span<T>(q), 4);
      },
      {"nonlin::softmax_cross_entropy", "dz overlaps q"});
  EXPECT_EQ(q, q_before);
  std::vector<T> dz(4);
  T const loss = softmax_cross_entropy(softmax{}, std::span<T const>(logits), std::span<T const>(q),
                                       std::span<T>(dz), 4);
  // -sum q log softmax(z), worked in double.
  double log_sum = 0;
  for (T z : logits) {
    log_sum += std::exp(double(z));
  }
  log_sum = std::log(log_sum);
  double expected = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    expected -= double(q[i]) * (double(logits[i]) - log_sum);
  }
  EXPECT_NEAR(loss, expected, 1e-6);  // 1.8832 (the report's "2.894" is not this loss)
}

// Every output against every input and every other output, in the kernels with more than one
// output or inputs of other shapes: PReLU's dalpha, dx and y against alpha; cross-entropy's
// losses and dz against the targets.
TYPED_TEST(Reliability, OutputsApartFromEveryOtherArgument) {
  using T = TypeParam;
  T const nan = std::numeric_limits<T>::quiet_NaN();
  prelu_shape const shape{.n = 2, .channels = 3, .inner = 5};
  std::vector<T> x(30);
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = T(static_cast<int>(i % 7) - 3);
  }
  std::vector<T> dy(30, T(0.5));
  std::vector<T> alpha = {T(0.1), T(0.2), T(0.3)};
  std::vector<T> const x_before = x;
  std::vector<T> const alpha_before = alpha;
  std::vector<T> dx(30, nan);
  std::span<T const> const cx(x);
  std::span<T const> const calpha(alpha);
  std::span<T const> const cdy(dy);
  // dalpha = alpha: zeroing dalpha first made dx[0] = -6 instead of 0.1.
  expect_rejected(
      [&] { prelu_backward(cx, calpha, cdy, std::span<T>(dx), std::span<T>(alpha), shape); },
      {"nonlin::prelu_backward", "dalpha overlaps alpha"});
  // dalpha inside x, inside dy, inside dx.
  expect_rejected(
      [&] {
        prelu_backward(cx, calpha, cdy, std::span<T>(dx), std::span<T>(x).subspan(4, 3), shape);
      },
      {"dalpha overlaps x"});
  expect_rejected(
      [&] {
        prelu_backward(cx, calpha, cdy, std::span<T>(dx), std::span<T>(dy).subspan(0, 3), shape);
      },
      {"dalpha overlaps dy"});
  std::vector<T> dalpha(3, nan);
  expect_rejected(
      [&] {
        prelu_backward(cx, calpha, cdy, std::span<T>(dx), std::span<T>(dx).subspan(27, 3), shape);
      },
      {"dalpha overlaps dx"});
  // dx or y over alpha: alpha would be read after the first block is written.
  std::vector<T> long_alpha(31, T(0.1));
  std::span<T const> const alpha_in_dx(long_alpha.data() + 1, 3);
  expect_rejected(
      [&] {
        prelu_backward(cx, alpha_in_dx, cdy, std::span<T>(long_alpha.data(), 30),
                       std::span<T>(dalpha), shape);
      },
      {"dx overlaps alpha"});
  expect_rejected(
      [&] { prelu_forward(cx, alpha_in_dx, std::span<T>(long_alpha.data(), 30), shape); },
      {"y overlaps alpha"});
  EXPECT_EQ(x, x_before);
  EXPECT_EQ(alpha, alpha_before);
  expect_all_nan(dx);
  expect_all_nan(dalpha);
  for (std::size_t i = 0; i < long_alpha.size(); ++i) {
    EXPECT_EQ(long_alpha[i], T(0.1));
  }

  // Cross-entropy: losses = logits + 1 (reduction none) overwrote the logits.
  std::vector<T> logits = {T(0.3), T(-1), T(2), T(0), T(1), T(1), T(-2), T(0.5), T(9)};
  std::vector<T> const logits_before = logits;
  std::vector<std::int64_t> const targets = {2, 0};
  std::vector<T> grad(8, nan);
  std::span<T const> const z(logits.data(), 8);
  expect_rejected(
      [&] {
        softmax_cross_entropy(softmax{}, z, std::span<std::int64_t const>(targets),
                              std::span<T>(grad), 4, reduction::none, -100,
                              std::span<T>(logits.data() + 1, 2));
      },
      {"losses overlaps logits"});
  expect_rejected(
      [&] {
        softmax_cross_entropy(softmax{}, z, std::span<std::int64_t const>(targets),
                              std::span<T>(grad), 4, reduction::none, -100,
                              std::span<T>(grad.data() + 6, 2));
      },
      {"losses overlaps dz"});
  std::vector<T> q(8, T(0.25));
  expect_rejected(
      [&] {
        softmax_cross_entropy(softmax{}, z, std::span<T const>(q), std::span<T>(grad), 4,
                              reduction::none, std::span<T>(q.data() + 2, 2));
      },
      {"losses overlaps q"});
  // Targets and losses (or dz) in one buffer of another type: only the bytes are compared.
  std::vector<std::int64_t> shared(8, 0);
  std::span<std::int64_t const> const first_two(shared.data(), 2);
  expect_rejected(
      [&] {
        softmax_cross_entropy(softmax{}, z, first_two, std::span<T>(grad), 4, reduction::none, -100,
                              std::span<T>(reinterpret_cast<T*>(shared.data() + 1), 2));
      },
      {"losses overlaps targets"});
  expect_rejected(
      [&] {
        softmax_cross_entropy(softmax{}, z, first_two,
                              std::span<T>(reinterpret_cast<T*>(shared.data()), 8), 4);
      },
      {"dz overlaps targets"});
  EXPECT_EQ(logits, logits_before);
  expect_all_nan(grad);
  for (T v : q) {
    EXPECT_EQ(v, T(0.25));
  }
}

TYPED_TEST(Reliability, MessagesShowTheRejectedValue) {
  using T = TypeParam;
  std::vector<T> const x = {1, 2, 3, 4};
  std::vector<T> y(4);
  // The temperature as it is (shortest round trip), not std::to_string's fixed 6 decimals.
  double const tiny = sizeof(T) == 4 ? 1e-40 : 1e-320;  // 1/T overflows in T
  expect_rejected(
      [&] { forward(softmax{.temperature = tiny}, std::span<T const>(x), std::span<T>(y), 4); },
      {sizeof(T) == 4 ? "got 1e-40" : "got 1e-320"});
  if constexpr (sizeof(T) == 4) {
    expect_rejected(
        [&] { forward(softmax{.temperature = 1e300}, std::span<T const>(x), std::span<T>(y), 4); },
        {"got 1e+300"});
  }
  expect_rejected(
      [&] { forward(log_softmax{.temperature = -0.0}, std::span<T const>(x), std::span<T>(y), 4); },
      {"nonlin::forward(log_softmax)", "got -0"});
  // alpha shown, and NaN reported as NaN, not as "alpha <= 0".
  expect_rejected([&] { backward_from_output(leaky_relu{.alpha = -0.5}, x, x, y); },
                  {"alpha = -0.5", "alpha > 0"});
  expect_rejected(
      [&] {
        backward_from_output(elu{.alpha = std::numeric_limits<double>::quiet_NaN()}, x, x, y);
      },
      {"alpha = nan"});
  // The rows layout names the op and the argument.
  expect_rejected([&] { forward(softmax{}, std::span<T const>(x), std::span<T>(y), 3); },
                  {"nonlin::forward(softmax)", "x has 4 elements", "cols=3"});
  expect_rejected(
      [&] {
        backward_from_output(log_softmax{}, std::span<T const>(x), std::span<T const>(x),
                             std::span<T>(y), 3);
      },
      {"nonlin::backward_from_output(log_softmax)", "y has 4 elements", "cols=3"});
  std::vector<std::int64_t> const targets = {0};
  expect_rejected(
      [&] {
        softmax_cross_entropy(softmax{}, std::span<T const>(x),
                              std::span<std::int64_t const>(targets), std::span<T>(y), 3);
      },
      {"nonlin::softmax_cross_entropy", "logits has 4 elements", "cols=3"});
}

// squared_relu backward is dy (2x): 2x overflowed first (x = max, dy = 0.5 gave inf, dy = 0 NaN).
// The huge inputs sit among ordinary ones at every offset, so that the SIMD body's batches (the
// branch taken by a batch with such a lane) and the tail both meet them.
TYPED_TEST(Reliability, SquaredReluBackwardDoesNotOverflowInBetween) {
  using T = TypeParam;
  using L = std::numeric_limits<T>;
  std::vector<T> const huge_x = {L::max(), L::max(), L::max(), L::max(), -L::max()};
  std::vector<T> const huge_dy = {T(0.5), T(0), L::min(), T(-0.25), L::infinity()};
  std::vector<T> x, dy;
  for (std::size_t i = 0; i < 37 * huge_x.size(); ++i) {
    bool const special = i % 37 == (i / 37) * 7 % 37;
    x.push_back(special ? huge_x[i / 37] : T(1.5) - T(0.125) * static_cast<T>(i % 23));
    dy.push_back(special ? huge_dy[i / 37] : T(0.75));
  }
  std::vector<T> dx(x.size());
  backward(squared_relu{}, x, dy, dx);
  for (std::size_t i = 0; i < x.size(); ++i) {
    long double const exact = x[i] > 0 ? 2.0L * x[i] * dy[i] : 0.0L;
    EXPECT_EQ(dx[i], static_cast<T>(exact)) << i;
    EXPECT_TRUE(std::isfinite(dx[i])) << i;
    EXPECT_EQ(squared_relu{}.backward(x[i], dy[i]), dx[i]) << i;
  }
}

// mish keeps the sign of zero, as silu and the GELUs do (mish(-0) was +0).
TYPED_TEST(Reliability, MishKeepsTheSignOfZero) {
  using T = TypeParam;
  std::vector<T> const x = {T(-0.0), T(0.0)};
  std::vector<T> y(2);
  forward(mish{}, x, y);
  EXPECT_TRUE(std::signbit(y[0]));
  EXPECT_FALSE(std::signbit(y[1]));
  EXPECT_TRUE(std::signbit(mish{}(T(-0.0))));
  EXPECT_EQ(y[0], T(0));
  EXPECT_TRUE(std::signbit(silu{}(T(-0.0))));  // the rule mish now follows
}

// PReLU's dalpha where the terms cancel: per SIMD lane big, tiny, -big, tiny. The plain lane
// sums lost the first tiny in big (dalpha off by 50 %); exact products and a compensated sum give
// the exact 2 tiny per lane.
TYPED_TEST(Reliability, PreluAlphaGradientWhereTermsCancel) {
  using T = TypeParam;
  constexpr std::size_t width = xsimd::batch<T>::size;
  T const big = std::is_same_v<T, float> ? T(0x1p26) : T(0x1p55);
  T const tiny = T(0.375);
  for (std::size_t extra : {std::size_t{0}, std::size_t{3}}) {  // with a scalar tail too
    prelu_shape const shape{.n = 2, .channels = 1, .inner = 4 * width + extra};
    std::vector<T> x(shape.size(), T(-1));
    std::vector<T> dy(shape.size());
    std::size_t tinies = 0;
    for (std::size_t i = 0; i < dy.size(); ++i) {
      std::size_t const k = i % shape.inner;
      std::size_t const step = k / width;
      dy[i] = k >= 4 * width ? tiny : step == 0 ? big : step == 2 ? -big : tiny;
      tinies += dy[i] == tiny ? 1 : 0;
    }
    std::vector<T> const alpha = {T(0.25)};
    std::vector<T> dalpha(1);
    std::vector<T> dx(shape.size());
    prelu_backward(std::span<T const>(x), std::span<T const>(alpha), std::span<T const>(dy),
                   std::span<T>(dx), std::span<T>(dalpha), shape);
    EXPECT_EQ(dalpha[0], -T(tinies) * tiny) << extra;
  }
}

// Soft targets that do not sum to 1: dz was p - q, not the gradient of the returned loss
// (p sum q - q). Checked against central differences of the loss, in double.
TEST(ReliabilityDouble, SoftTargetGradientIsTheLossGradientWhateverTheSumOfQ) {
  std::vector<double> const z = {0.3, -1, 2, 0, 1.5, -0.5, 0.25, 3};
  std::vector<double> const q = {0.1, 0.2, 0.3, 0.1, 0.5, 0.5, 0.5, 0.25};  // sums 0.7, 1.75
  for (double const t : {1.0, 0.7}) {
    for (reduction const r : {reduction::sum, reduction::mean}) {
      auto loss_at = [&](std::vector<double> const& point) {
        std::vector<double> scratch(point.size());
        return softmax_cross_entropy(softmax{.temperature = t}, std::span<double const>(point),
                                     std::span<double const>(q), std::span<double>(scratch), 4, r);
      };
      std::vector<double> dz(z.size());
      softmax_cross_entropy(softmax{.temperature = t}, std::span<double const>(z),
                            std::span<double const>(q), std::span<double>(dz), 4, r);
      for (std::size_t i = 0; i < z.size(); ++i) {
        double const h = 1e-6;
        std::vector<double> up = z;
        std::vector<double> down = z;
        up[i] += h;
        down[i] -= h;
        EXPECT_NEAR(dz[i], (loss_at(up) - loss_at(down)) / (2 * h), 1e-8) << i << " T = " << t;
      }
    }
  }
}

// A row with a NaN or +inf is NaN throughout, its masked (-inf) entries included, as the README
// says (they were kept at p = 0, log p = -inf); the other rows are not touched. Both layouts.
TYPED_TEST(Reliability, PoisonedRowsAreNanThroughout) {
  using T = TypeParam;
  T const inf = std::numeric_limits<T>::infinity();
  T const nan = std::numeric_limits<T>::quiet_NaN();
  std::vector<T> const x = {inf, -inf, T(1), nan, -inf, T(0), T(1), -inf, T(2)};
  // The same three rows as columns of (outer 1, axis 3, inner 3): the strided path.
  std::vector<T> xt(x.size());
  for (std::size_t j = 0; j < 3; ++j) {
    for (std::size_t a = 0; a < 3; ++a) {
      xt[a * 3 + j] = x[j * 3 + a];
    }
  }
  for (bool const log : {false, true}) {
    std::vector<T> rows(x.size());
    std::vector<T> axis(x.size());
    auto run = [&](auto f) {
      forward(f, std::span<T const>(x), std::span<T>(rows), 3);
      forward(f, std::span<T const>(xt), std::span<T>(axis), axis_layout{1, 3, 3});
    };
    if (log) {
      run(log_softmax{});
    } else {
      run(softmax{});
    }
    for (std::size_t j = 0; j < 3; ++j) {
      for (std::size_t a = 0; a < 3; ++a) {
        T const from_rows = rows[j * 3 + a];
        T const from_axis = axis[a * 3 + j];
        if (j < 2) {
          EXPECT_TRUE(std::isnan(from_rows)) << j << " " << a << " log " << log;
          EXPECT_TRUE(std::isnan(from_axis)) << j << " " << a << " log " << log;
        } else {
          EXPECT_FALSE(std::isnan(from_rows) || std::isnan(from_axis)) << a;
        }
      }
    }
    EXPECT_EQ(rows[7], log ? -inf : T(0));  // the masked entry of the finite row
    EXPECT_EQ(axis[1 * 3 + 2], log ? -inf : T(0));
    EXPECT_TRUE(std::isfinite(rows[6]) && std::isfinite(rows[8]));
  }
}

// The gate gradient dy value act'(gate): dy value overflowed first (glu, value = max, gate = 0,
// dy = 2 gave inf; the true value is max / 2).
TYPED_TEST(Reliability, GateGradientDoesNotOverflowInBetween) {
  using T = TypeParam;
  T const big = std::numeric_limits<T>::max();
  std::vector<T> const value(19, big);  // a full batch and a tail
  std::vector<T> const gate(19, T(0));
  std::vector<T> const dy(19, T(2));
  std::vector<T> d_value(19);
  std::vector<T> d_gate(19);
  auto check = [&](auto const& f, T slope, char const* name) {
    gated_backward(f, value, gate, dy, d_value, d_gate);
    for (std::size_t i = 0; i < d_gate.size(); ++i) {
      EXPECT_TRUE(std::isfinite(d_gate[i])) << name << " " << i;
      EXPECT_NEAR(d_gate[i] / big, T(2) * slope, 1e-6) << name << " " << i;
    }
    EXPECT_EQ(f.backward(big, T(0), T(2)).d_gate, d_gate[0]) << name;
  };
  check(glu{}, T(0.25), "glu");  // sigmoid'(0)
  check(swiglu{}, T(0.5), "swiglu");
  check(geglu{}, T(0.5), "geglu");
  check(reglu{}, T(0), "reglu");  // relu'(0) = 0: selected, was already right
  // The fused layout runs the same functor.
  std::vector<T> x;
  for (std::size_t i = 0; i < 19; ++i) {
    x.push_back(big);
  }
  for (std::size_t i = 0; i < 19; ++i) {
    x.push_back(T(0));
  }
  std::vector<T> dx(x.size());
  gated_backward_fused(glu{}, x, dy, dx, 1, glu_split::value_first);
  EXPECT_EQ(dx[19], big / 2);
}

// log_softmax where (z - m) / T is below -max: NaN (inf - inf in the quotient's low part)
// instead of -inf; cross-entropy then gave dz = NaN and a NaN loss where the true loss is +inf.
TYPED_TEST(Reliability, LogSoftmaxBelowTheRangeIsMinusInfinity) {
  using T = TypeParam;
  using L = std::numeric_limits<T>;
  T const inf = L::infinity();
  struct row_case {
    std::vector<T> z;
    double t;
  };
  std::vector<row_case> cases = {{{L::max(), -L::max()}, 1.0},
                                 {{L::max() / 2, -L::max() / 2}, 0.5},
                                 {{T(0), T(-1e10)}, std::is_same_v<T, float> ? 1e-30 : 1e-300},
                                 {{T(1000), T(0)}, std::is_same_v<T, float> ? 2e-38 : 1e-307}};
  for (row_case const& c : cases) {
    for (bool const strided : {false, true}) {
      std::vector<T> lp(2);
      std::vector<T> p(2);
      // The strided layout: each row twice, side by side (inner = 2).
      if (strided) {
        std::vector<T> const zt = {c.z[0], c.z[0], c.z[1], c.z[1]};
        std::vector<T> lpt(4);
        std::vector<T> pt(4);
        forward(log_softmax{c.t}, std::span<T const>(zt), std::span<T>(lpt), axis_layout{1, 2, 2});
        forward(softmax{c.t}, std::span<T const>(zt), std::span<T>(pt), axis_layout{1, 2, 2});
        lp = {lpt[0], lpt[2]};
        p = {pt[0], pt[2]};
      } else {
        forward(log_softmax{c.t}, std::span<T const>(c.z), std::span<T>(lp), 2);
        forward(softmax{c.t}, std::span<T const>(c.z), std::span<T>(p), 2);
      }
      EXPECT_EQ(lp[0], T(0)) << c.t << " strided " << strided;
      EXPECT_EQ(lp[1], -inf) << c.t << " strided " << strided;
      EXPECT_EQ(p[0], T(1));
      EXPECT_EQ(p[1], T(0));
    }
    std::vector<T> dz(2);
    std::vector<std::int64_t> const first = {0};
    T const loss0 =
        softmax_cross_entropy(softmax{c.t}, std::span<T const>(c.z),
                              std::span<std::int64_t const>(first), std::span<T>(dz), 2);
    EXPECT_EQ(loss0, T(0));
    EXPECT_EQ(dz[0], T(0));
    EXPECT_EQ(dz[1], T(0));
    std::vector<std::int64_t> const second = {1};
    T const loss1 =
        softmax_cross_entropy(softmax{c.t}, std::span<T const>(c.z),
                              std::span<std::int64_t const>(second), std::span<T>(dz), 2);
    EXPECT_EQ(loss1, inf) << c.t;
  }
}

// log_softmax of a row's dominant entry where the others add less than an ulp to its 1: log s
// was taken after the compensated sum had been collapsed to 1, giving exactly 0 (100 % off).
// Now, against -log1p(sum of the others), over 1-1100 others: the rows layout within 5 ulp
// (measured 1.83 ulp float / 2.59 double with AVX-512 and 1.83 / 1.69 with SSE since float rows
// sum in double; 4.46 / 2.59 and 2.05 / 1.69 before; 10 / 28 on SSE before the error term's own
// roundings were kept, 13.5 in double when the double rows' sum lost them again), the strided
// layout within 2 ulp (1.63 / 1.48; 45 ulp at 1000 others before).
TYPED_TEST(Reliability, LogSoftmaxOfADominantEntryKeepsTheSumsLowPart) {
  using T = TypeParam;
  T const d = std::is_same_v<T, float> ? T(2) : T(4);  // (z - m) / T = -20 / -40
  double const t = 0.1;
  long double const tr = static_cast<T>(t);
  long double const e = std::exp(-static_cast<long double>(d) / tr);
  for (std::size_t const others :
       {std::size_t{1}, std::size_t{2}, std::size_t{16}, std::size_t{40}, std::size_t{1000}}) {
    std::vector<T> z(others + 1, T(0));
    z[0] = d;
    long double const exact = -std::log1p(static_cast<long double>(others) * e);
    T const ulp = std::nextafter(static_cast<T>(-exact), std::numeric_limits<T>::infinity()) -
                  static_cast<T>(-exact);
    std::vector<T> rows(z.size());
    forward(log_softmax{t}, std::span<T const>(z), std::span<T>(rows), z.size());
    // The strided layout: the row twice, side by side (inner = 2).
    std::vector<T> zt;
    for (T v : z) {
      zt.insert(zt.end(), {v, v});
    }
    std::vector<T> strided(zt.size());
    forward(log_softmax{t}, std::span<T const>(zt), std::span<T>(strided),
            axis_layout{1, z.size(), 2});
    auto expect_within = [&](T got, long double ulps) {
      EXPECT_LT(got, T(0)) << others;
      EXPECT_LE(std::abs(static_cast<long double>(got) - exact), ulps * ulp)
          << others << ": " << got << " vs " << static_cast<double>(exact);
    };
    expect_within(rows[0], 5);
    expect_within(strided[0], 2);
    expect_within(strided[1], 2);
  }
}

// The same at T = 1 and far smaller sums of the others, in float rows, which hold the sum in
// double: it keeps 2^-53 of the maximum's 1, and the maximum's lane adds n / W terms onto it (W
// floats a batch), so log p of the dominant entry is within 5 ulp or (n / W + 2) 2^-53,
// whichever is larger (AVX-512: 3.5 ulp at e^-24 with one other; from e^-38 it is 0, not
// -(their sum): 1.4e7 ulp, 1e-17 in absolute terms). As documented in the README.
TEST(ReliabilityFloat, LogSoftmaxOfADominantEntryInFloatRows) {
  constexpr std::size_t width = xsimd::batch<float>::size;
  for (float const d : {16.0F, 20.0F, 24.0F, 30.0F, 40.0F, 60.0F}) {
    for (std::size_t const others : {std::size_t{1}, std::size_t{16}, std::size_t{1000}}) {
      std::vector<float> z(others + 1, 0.0F);
      z[others / 2] = d;
      std::vector<float> rows(z.size());
      forward(log_softmax{}, std::span<float const>(z), std::span<float>(rows), z.size());
      long double const exact =
          -std::log1p(static_cast<long double>(others) * std::exp(-static_cast<long double>(d)));
      float const ulp =
          std::nextafter(static_cast<float>(-exact), 1.0F) - static_cast<float>(-exact);
      long double const error = std::abs(static_cast<long double>(rows[others / 2]) - exact);
      long double const absolute =
          (static_cast<long double>(z.size()) / static_cast<long double>(width) + 2) * 0x1p-53L;
      EXPECT_LE(error, std::max(5 * static_cast<long double>(ulp), absolute))
          << d << " " << others << ": " << error / ulp << " ulp";
    }
  }
}

// Rows sum to 1 within the stated 5 eps at any length, in both layouts. The strided layout's
// per-lane error term was a plain sum of the additions' roundings, which drifted with the length
// (axis_layout{1, 1e6, 2}, one 10 among zeros: 148 eps in float); so did the rows layout's with
// 4-lane SSE (18 eps at 1e6 columns, the x86-64-v2 stage).
TYPED_TEST(Reliability, RowsOfAMillionSumToOne) {
  using T = TypeParam;
  std::size_t const axis = 1000000;
  // Neumaier's sum in long double: a plain long double sum of a million terms is itself off by
  // several double eps.
  auto expect_sums_to_one = [](std::vector<T> const& y, std::size_t start, std::size_t step,
                               char const* layout) {
    long double sum = 0;
    long double carry = 0;
    for (std::size_t i = start; i < y.size(); i += step) {
      long double const v = y[i];
      long double const next = sum + v;
      carry += std::abs(sum) >= std::abs(v) ? (sum - next) + v : (v - next) + sum;
      sum = next;
    }
    EXPECT_LE(std::abs((sum + carry) - 1),
              5 * static_cast<long double>(std::numeric_limits<T>::epsilon()))
        << layout << " " << start;
  };
  std::vector<T> x(2 * axis, T(0));
  x[0] = T(10);
  x[1] = T(10);
  std::vector<T> y(x.size());
  forward(softmax{}, std::span<T const>(x), std::span<T>(y), axis_layout{1, axis, 2});
  expect_sums_to_one(y, 0, 2, "strided");
  expect_sums_to_one(y, 1, 2, "strided");
  std::vector<T> row(axis, T(0));
  row[0] = T(10);
  std::vector<T> p(axis);
  forward(softmax{}, std::span<T const>(row), std::span<T>(p), axis);
  expect_sums_to_one(p, 0, 1, "rows");
}

// softplus' defaults are accurate in both dtypes (item 15): PyTorch's threshold 20, the old
// default, returned x in double at 20.27, 4e5 ulp from log1p(e^x) (and 1 for its derivative,
// 7e6 ulp). Now within 2 ulp of the long double values on [15, 45] (float and double; past 40
// in double the result rounds to x anyway), scalar and span alike; the threshold 20 is still
// there when asked for.
// A threshold below 0 puts the linear piece's outputs below 0, where no smooth output lies: the
// derivative there is 1, from the output too (it was -expm1(-z) = -inf, and NaN for dy = 0;
// found by the CI fuzz run: x = -304).
TYPED_TEST(Reliability, SoftplusBelowZeroThresholdFromTheOutput) {
  using T = TypeParam;
  for (double threshold : {-1.0, -300.0, -1e30}) {
    softplus const f{.beta = 2.0, .threshold = threshold};
    std::vector<T> x;  // beta x > threshold: the linear piece
    for (double v : {-304.0, -1e10, threshold / 4, -1e-30, 3.0}) {
      if (2.0 * v > threshold) {
        x.push_back(static_cast<T>(v));
      }
    }
    std::vector<T> y(x.size());
    std::vector<T> dy(x.size(), T(0));
    std::vector<T> dx(x.size(), T(1));
    forward(f, std::span<T const>(x), std::span<T>(y));
    backward_from_output(f, std::span<T const>(y), std::span<T const>(dy), std::span<T>(dx));
    for (std::size_t i = 0; i < x.size(); ++i) {
      ASSERT_EQ(y[i], x[i]) << "linear piece at x = " << x[i];
      EXPECT_EQ(f.derivative_from_output(y[i]), T(1)) << "x = " << x[i];
      EXPECT_EQ(dx[i], T(0)) << "x = " << x[i];
    }
  }
}

TYPED_TEST(Reliability, SoftplusDefaultsAreAccurateInBothTypes) {
  using T = TypeParam;
  auto ulp_of = [](long double v) {
    T const r = static_cast<T>(v);
    return static_cast<long double>(std::nextafter(r, std::numeric_limits<T>::infinity()) - r);
  };
  std::vector<T> x;
  for (int k = 0; k <= 3000; ++k) {
    x.push_back(static_cast<T>(15.0 + k * 0.01 + 0.003));
  }
  std::vector<T> y(x.size());
  std::vector<T> dx(x.size());
  std::vector<T> const dy(x.size(), T(1));
  forward(softplus{}, std::span<T const>(x), std::span<T>(y));
  backward(softplus{}, std::span<T const>(x), std::span<T const>(dy), std::span<T>(dx));
  for (std::size_t i = 0; i < x.size(); ++i) {
    long double const xi = x[i];
    long double const value = xi + std::log1p(std::exp(-xi));
    long double const slope = 1.0L / (1.0L + std::exp(-xi));
    EXPECT_LE(std::abs(y[i] - value), 2 * ulp_of(value)) << "softplus(" << x[i] << ")";
    EXPECT_LE(std::abs(dx[i] - slope), 2 * ulp_of(slope)) << "softplus'(" << x[i] << ")";
    EXPECT_EQ(softplus{}(x[i]), y[i]);
    EXPECT_EQ(softplus{}.derivative(x[i]), dx[i]);
  }
  T const at = static_cast<T>(20.27);
  EXPECT_EQ(softplus{.threshold = 20}(at), at);
  EXPECT_EQ(softplus{.threshold = 20}.derivative(at), T(1));
  // beta x overflowing: still x (the linear piece), not inf.
  T const big = std::numeric_limits<T>::max();
  EXPECT_EQ(softplus{.beta = 4}(big), big);
  EXPECT_EQ(softplus{.beta = 4}.derivative(big), T(1));
}

// softmax and log_softmax backward with dy near +-max (item 7): dy - <y, dy> and sum dy
// overflowed while dx is finite (softmax: y = [3/4, 1/4], dy = [max, -max] gave dx_1 = -inf, true
// -3/8 max; log_softmax: three entries of dy = max gave -inf, true about 0). Now within 4 u of the
// condition, both layouts, T = 1 and 2.
TYPED_TEST(Reliability, SoftmaxBackwardWithGradientsNearTheLargestFinite) {
  using T = TypeParam;
  T const big = std::numeric_limits<T>::max();
  long double const u = std::numeric_limits<T>::epsilon() / 2;
  for (double t : {1.0, 2.0}) {
    for (std::size_t inner : {std::size_t{1}, std::size_t{2}}) {
      axis_layout const shape{1, 2, inner};
      // (axis, inner): entry a of lane j at a * inner + j; every lane the same row.
      std::vector<T> y(2 * inner);
      std::vector<T> dy(2 * inner);
      for (std::size_t j = 0; j < inner; ++j) {
        y[j] = T(0.75);
        y[inner + j] = T(0.25);
        dy[j] = big;
        dy[inner + j] = -big;
      }
      std::vector<T> dx(y.size());
      backward_from_output(softmax{.temperature = t}, std::span<T const>(y), std::span<T const>(dy),
                           std::span<T>(dx), shape);
      long double const dot = 0.75L * big - 0.25L * big;
      for (std::size_t a = 0; a < 2; ++a) {
        long double const p = a == 0 ? 0.75L : 0.25L;
        long double const g = a == 0 ? big : -static_cast<long double>(big);
        long double const exact = p * (g - dot) / t;
        long double const condition = p * (std::fabs(g) + 0.75L * big + 0.25L * big) / t;
        for (std::size_t j = 0; j < inner; ++j) {
          T const got = dx[a * inner + j];
          EXPECT_TRUE(std::isfinite(got)) << "softmax T=" << t << " inner=" << inner << " " << a;
          EXPECT_LE(std::fabs(got - exact), 4 * u * condition) << "softmax T=" << t << " " << a;
        }
      }
      // log_softmax: three equal entries, each dy = max; sum dy = 3 max.
      axis_layout const three{1, 3, inner};
      std::vector<T> logp(3 * inner, static_cast<T>(-std::log(3.0L)));
      std::vector<T> g3(3 * inner, big);
      std::vector<T> dx3(logp.size());
      backward_from_output(log_softmax{.temperature = t}, std::span<T const>(logp),
                           std::span<T const>(g3), std::span<T>(dx3), three);
      long double const p3 = std::exp(static_cast<long double>(logp[0]));
      long double const exact = (big - p3 * 3.0L * big) / t;
      long double const condition = (big + p3 * 3.0L * big) / t;
      for (T const got : dx3) {
        EXPECT_TRUE(std::isfinite(got)) << "log_softmax T=" << t << " inner=" << inner;
        EXPECT_LE(std::fabs(got - exact), 4 * u * condition) << "log_softmax T=" << t;
      }
    }
  }
}

// Scalar log1p of +NaN added the shift to the NaN's bits in the signed type: undefined behaviour
// (UBSan, found by the softmax fuzzer through a poisoned row's log s in the cross-entropy). Now
// wrapping, as batches do; NaN out.
TYPED_TEST(Reliability, ScalarLogOfNanIsDefined) {
  using T = TypeParam;
  EXPECT_TRUE(std::isnan(math::log1p(std::numeric_limits<T>::quiet_NaN())));
  EXPECT_TRUE(std::isnan(math::log1p(-std::numeric_limits<T>::quiet_NaN())));
  std::vector<T> const z = {T(1), std::numeric_limits<T>::quiet_NaN(), T(0)};
  std::vector<T> const q = {T(0.25), T(0.25), T(0.5)};
  std::vector<T> dz(3);
  T const loss = softmax_cross_entropy(softmax{}, std::span<T const>(z), std::span<T const>(q),
                                       std::span<T>(dz), 3);
  EXPECT_TRUE(std::isnan(loss));
  for (T const v : dz) {
    EXPECT_TRUE(std::isnan(v));
  }
}

}  // namespace
}  // namespace nonlin::test
