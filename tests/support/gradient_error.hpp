// SPDX-License-Identifier: MIT
#pragma once
// The error of the softmax, log_softmax and cross-entropy gradients in units of the condition of
// their sums: |dx_i - exact_i| / (u * c_i), u the unit roundoff of T and c_i the sum of the
// magnitudes that make up dx_i:
//   softmax      dx_i = p_i (g_i - sum_j p_j g_j) / T      c_i = p_i (|g_i| + sum_j |p_j g_j|) / T
//   log_softmax  dx_i = (g_i - p_i sum_j g_j) / T          c_i = (|g_i| + p_i sum_j |g_j|) / T
//   cross-ent.   dz_i = (p_i sum_j q_j - q_i) / T          c_i = (p_i sum_j |q_j| + |q_i|) / T
// (plus denorm_min, the spacing of subnormal results). The exact values are long double from the
// same inputs (the saved p, log p, or the logits), every sum compensated, so that the reference's
// own error is a small fraction of u even for double at 10^5 terms. A plain float sum of 1000 terms
// measured 8.5 units here; the library's compensated sums with exact products, 1-3. Used by
// softmax_test (which asserts the bound) and tools/gradient_error.cpp (which prints the table).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <nonlin/softmax.hpp>

namespace nonlin::test::gradient_error {

// Neumaier's compensated sum in long double.
struct exact_sum {
  long double sum = 0;
  long double carry = 0;
  void add(long double v) {
    long double const next = sum + v;
    carry += std::fabs(sum) >= std::fabs(v) ? (sum - next) + v : (v - next) + sum;
    sum = next;
  }
  long double value() const { return sum + carry; }
};

enum class op { softmax_backward, log_softmax_backward, cross_entropy };

inline char const* name(op o) {
  switch (o) {
    case op::softmax_backward:
      return "softmax bwd";
    case op::log_softmax_backward:
      return "log_softmax bwd";
    case op::cross_entropy:
      return "cross-entropy dz";
  }
  return "";
}

struct setup {
  op what = op::softmax_backward;
  std::size_t cols = 1000;  // the softmax axis
  double temperature = 1.0;
  std::size_t inner = 1;  // 1: the rows layout; else (outer, cols, inner)
  std::size_t outer = 4;
  unsigned seed = 1;
  bool fast = false;  // nonlin::fast::softmax / log_softmax (forward and backward)
};

// The largest error over every element, in units of u * c_i.
template <class T>
double worst(setup const& s) {
  std::mt19937_64 rng(s.seed);
  std::uniform_real_distribution<double> logit(-8.0, 8.0);
  // dy mostly of one sign: the sums then grow with the length, as a plain sum's error does.
  std::uniform_real_distribution<double> grad(-0.25, 1.0);
  std::size_t const n = s.outer * s.cols * s.inner;
  axis_layout const shape{s.outer, s.cols, s.inner};
  std::vector<T> z(n);
  std::vector<T> g(n);
  for (std::size_t i = 0; i < n; ++i) {
    z[i] = static_cast<T>(logit(rng));
    g[i] = static_cast<T>(grad(rng));
  }
  long double const inv_t = 1.0L / static_cast<long double>(static_cast<T>(s.temperature));
  long double const u = std::numeric_limits<T>::epsilon() / 2;
  std::vector<T> y(n);
  std::vector<T> dx(n);
  auto at = [&](std::size_t o, std::size_t a, std::size_t j) {
    return (o * s.cols + a) * s.inner + j;
  };
  double result = 0;
  auto judge = [&](T got, long double exact, long double condition) {
    long double const err = std::fabs(static_cast<long double>(got) - exact);
    // Subnormal results cannot be closer than their spacing: the unit is u c_i + denorm_min.
    long double const unit = u * condition + std::numeric_limits<T>::denorm_min();
    result = std::max(result, static_cast<double>(err / unit));
  };
  if (s.what == op::cross_entropy) {
    // Rows layout only (the loss's own layout); soft targets, reduction sum.
    std::vector<T> q(n);
    for (std::size_t r = 0; r < s.outer * s.inner; ++r) {
      exact_sum total;
      for (std::size_t i = 0; i < s.cols; ++i) {
        q[r * s.cols + i] = static_cast<T>(std::fabs(grad(rng)));
        total.add(q[r * s.cols + i]);
      }
      for (std::size_t i = 0; i < s.cols; ++i) {
        q[r * s.cols + i] = static_cast<T>(q[r * s.cols + i] / total.value());
      }
    }
    softmax_cross_entropy(softmax{.temperature = s.temperature}, std::span<T const>(z),
                          std::span<T const>(q), std::span<T>(dx), s.cols, reduction::sum);
    for (std::size_t r = 0; r < s.outer * s.inner; ++r) {
      T const* zr = z.data() + r * s.cols;
      T const* qr = q.data() + r * s.cols;
      long double const m = *std::max_element(zr, zr + s.cols);
      exact_sum sum;
      exact_sum q_sum;
      for (std::size_t i = 0; i < s.cols; ++i) {
        sum.add(std::exp((zr[i] - m) * inv_t));
        q_sum.add(qr[i]);
      }
      for (std::size_t i = 0; i < s.cols; ++i) {
        long double const p = std::exp((zr[i] - m) * inv_t) / sum.value();
        long double const exact = (p * q_sum.value() - qr[i]) * inv_t;
        judge(dx[r * s.cols + i], exact, (p * q_sum.value() + qr[i]) * inv_t);
      }
    }
    return result;
  }
  bool const log = s.what == op::log_softmax_backward;
  auto run = [&](auto const& f) {
    forward(f, std::span<T const>(z), std::span<T>(y), shape);
    backward_from_output(f, std::span<T const>(y), std::span<T const>(g), std::span<T>(dx), shape);
  };
  if (log) {
    s.fast ? run(fast::log_softmax{.temperature = s.temperature})
           : run(log_softmax{.temperature = s.temperature});
  } else {
    s.fast ? run(fast::softmax{.temperature = s.temperature})
           : run(softmax{.temperature = s.temperature});
  }
  for (std::size_t o = 0; o < s.outer; ++o) {
    for (std::size_t j = 0; j < s.inner; ++j) {
      exact_sum reduce;
      exact_sum magnitude;
      for (std::size_t a = 0; a < s.cols; ++a) {
        long double const yi = y[at(o, a, j)];
        long double const gi = g[at(o, a, j)];
        reduce.add(log ? gi : yi * gi);
        magnitude.add(std::fabs(log ? gi : yi * gi));
      }
      for (std::size_t a = 0; a < s.cols; ++a) {
        long double const yi = y[at(o, a, j)];
        long double const gi = g[at(o, a, j)];
        T const got = dx[at(o, a, j)];
        if (log) {
          long double const p = std::exp(yi);
          judge(got, (gi - p * reduce.value()) * inv_t,
                (std::fabs(gi) + p * magnitude.value()) * inv_t);
        } else {
          judge(got, yi * (gi - reduce.value()) * inv_t,
                yi * (std::fabs(gi) + magnitude.value()) * inv_t);
        }
      }
    }
  }
  return result;
}

}  // namespace nonlin::test::gradient_error
