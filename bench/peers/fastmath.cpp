// SPDX-License-Identifier: MIT
// Peer "fastmath": the textbook std:: loops of textbook.hpp compiled with -ffast-math (this file
// only, see bench/CMakeLists.txt), which lets g++ vectorize expf, tanhf, erfcf, log1pf ... through
// glibc's libmvec: what a user gets from the obvious loop and one compiler flag.

#include <cmath>
#include <cstddef>

#include "peer.hpp"
#include "textbook.hpp"

#ifndef __FAST_MATH__
#error "bench/peers/fastmath.cpp must be compiled with -ffast-math"
#endif

namespace nonlin::peers {
namespace {

float row_max(float const* in, std::size_t cols) {
  float m = -INFINITY;
  for (std::size_t i = 0; i < cols; ++i) {
    m = std::max(m, in[i]);
  }
  return m;
}

// Rows of softmax over cols: max shift, exp, sum, scale (log_softmax: shift - log sum).
void softmax_rows(float const* x, float* y, std::size_t rows, std::size_t cols) {
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

void log_softmax_rows(float const* x, float* y, std::size_t rows, std::size_t cols) {
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

}  // namespace

peer make_fastmath() {
  peer p;
  p.name = "fastmath";
  p.version = "std:: loop, -ffast-math";
  textbook::for_each_function([&]<class Ref>() {
    function_kernels k;
    k.function = Ref::name;
    k.forward = [](float const* x, float* y, std::size_t n) {
      for (std::size_t i = 0; i < n; ++i) {
        y[i] = Ref::template fwd<float>(x[i]);
      }
    };
    k.backward = [](float const* x, float const* dy, float* dx, std::size_t n) {
      for (std::size_t i = 0; i < n; ++i) {
        dx[i] = Ref::template bwd<float>(x[i], dy[i]);
      }
    };
    if constexpr (requires(float v) { Ref::template bwdy<float>(v, v); }) {
      k.backward_from_output = [](float const* y, float const* dy, float* dx, std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) {
          dx[i] = Ref::template bwdy<float>(y[i], dy[i]);
        }
      };
    }
    p.functions.push_back(k);
  });
  p.softmax = softmax_rows;
  p.log_softmax = log_softmax_rows;
  return p;
}

}  // namespace nonlin::peers
