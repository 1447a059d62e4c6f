// SPDX-License-Identifier: MIT
#pragma once
// The textbook formulas: those of every elementwise function are in its catalog row (catalog/),
// iterated by for_each_function; softmax's are here. Two peers use them: the plain std:: loop
// (bench/activations_bench.cpp, variant "std") and the same loop compiled with -ffast-math
// (bench/peers/fastmath.cpp).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numbers>

#include <nonlin/nonlin.hpp>

#include "catalog/catalog.hpp"

namespace nonlin::peers::textbook {

// Calls fn.template operator()<Row>() for every default-tier catalog row, in catalog order; each
// row has its textbook formulas (textbook_forward, textbook_backward and, where frameworks write
// one, textbook_backward_from_output) beside its functor.
template <class Fn>
void for_each_function(Fn&& fn) {
  test::catalog::for_each_row([&]<class Row>() {
    if constexpr (Row::level == test::catalog::tier::default_tier) {
      fn.template operator()<Row>();
    }
  });
}

// The textbook row loops of softmax and log_softmax, forward and backward from the output, for
// the std variant (bench/softmax_bench.cpp) and the fastmath peer. Internal linkage: each
// translation unit keeps its own copy, so the -ffast-math one is not merged with the plain one
// (inline: a file that uses only some of them does not warn about the rest).
namespace {

inline float row_max(float const* in, std::size_t cols) {
  float m = -std::numeric_limits<float>::infinity();
  for (std::size_t i = 0; i < cols; ++i) {
    m = std::max(m, in[i]);
  }
  return m;
}

// Rows of softmax over cols: max shift, exp, sum, scale (log_softmax: shift - log sum).
inline void softmax_rows(float const* x, float* y, std::size_t rows, std::size_t cols) {
  for (std::size_t r = 0; r < rows; ++r) {
    float const* in = x + r * cols;
    float* out = y + r * cols;
    float const m = row_max(in, cols);
    float sum = 0;
    for (std::size_t i = 0; i < cols; ++i) {
      out[i] = std::exp(in[i] - m);
      sum += out[i];
    }
    float const inv = 1.0F / sum;
    for (std::size_t i = 0; i < cols; ++i) {
      out[i] *= inv;
    }
  }
}

inline void log_softmax_rows(float const* x, float* y, std::size_t rows, std::size_t cols) {
  for (std::size_t r = 0; r < rows; ++r) {
    float const* in = x + r * cols;
    float* out = y + r * cols;
    float const m = row_max(in, cols);
    float sum = 0;
    for (std::size_t i = 0; i < cols; ++i) {
      sum += std::exp(in[i] - m);
    }
    float const shift = m + std::log(sum);
    for (std::size_t i = 0; i < cols; ++i) {
      out[i] = in[i] - shift;
    }
  }
}

// Backward from the output, per row: softmax dx = y (dy - sum dy y); log_softmax
// dx = dy - e^y sum dy (e^y = softmax(x)).
inline void softmax_backward_rows(float const* y, float const* dy, float* dx, std::size_t rows,
                                  std::size_t cols) {
  for (std::size_t r = 0; r < rows; ++r) {
    std::size_t const base = r * cols;
    float dot = 0;
    for (std::size_t i = 0; i < cols; ++i) {
      dot += y[base + i] * dy[base + i];
    }
    for (std::size_t i = 0; i < cols; ++i) {
      dx[base + i] = y[base + i] * (dy[base + i] - dot);
    }
  }
}

inline void log_softmax_backward_rows(float const* y, float const* dy, float* dx, std::size_t rows,
                                      std::size_t cols) {
  for (std::size_t r = 0; r < rows; ++r) {
    std::size_t const base = r * cols;
    float sum = 0;
    for (std::size_t i = 0; i < cols; ++i) {
      sum += dy[base + i];
    }
    for (std::size_t i = 0; i < cols; ++i) {
      dx[base + i] = dy[base + i] - std::exp(y[base + i]) * sum;
    }
  }
}

}  // namespace

}  // namespace nonlin::peers::textbook
