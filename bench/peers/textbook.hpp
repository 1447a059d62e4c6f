// SPDX-License-Identifier: MIT
#pragma once
// The textbook formulas of every elementwise function (forward, derivative from x, and from the
// output y where that is how frameworks write it), with the same parameters as the nonlin
// functors' defaults. Two peers use them: the plain std:: loop (bench/activations_bench.cpp,
// variant "std") and the same loop compiled with -ffast-math (bench/peers/fastmath.cpp).
// Each ref_* names its nonlin functor as F (for the benchmark's nonlin rows).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numbers>

#include <nonlin/nonlin.hpp>

namespace nonlin::peers::textbook {

template <class T>
constexpr T k(double v) {
  return static_cast<T>(v);
}

template <class T>
T std_sigmoid(T x) {
  return T(1) / (T(1) + std::exp(-x));
}

struct ref_step {
  static constexpr char const* name = "step";
  using F = nonlin::step;
  template <class T>
  static T fwd(T x) {
    return x > T(0) ? T(1) : T(0);
  }
  template <class T>
  static T bwd(T, T) {
    return T(0);
  }
  template <class T>
  static T bwdy(T, T) {
    return T(0);
  }
};
struct ref_identity {
  static constexpr char const* name = "identity";
  using F = nonlin::identity;
  template <class T>
  static T fwd(T x) {
    return x;
  }
  template <class T>
  static T bwd(T, T dy) {
    return dy;
  }
  template <class T>
  static T bwdy(T, T dy) {
    return dy;
  }
};
struct ref_relu {
  static constexpr char const* name = "relu";
  using F = nonlin::relu;
  template <class T>
  static T fwd(T x) {
    return std::max(x, T(0));
  }
  template <class T>
  static T bwd(T x, T dy) {
    return x > T(0) ? dy : T(0);
  }
  template <class T>
  static T bwdy(T y, T dy) {
    return y > T(0) ? dy : T(0);
  }
};
struct ref_relu6 {
  static constexpr char const* name = "relu6";
  using F = nonlin::relu6;
  template <class T>
  static T fwd(T x) {
    return std::min(std::max(x, T(0)), T(6));
  }
  template <class T>
  static T bwd(T x, T dy) {
    return x > T(0) && x < T(6) ? dy : T(0);
  }
  template <class T>
  static T bwdy(T y, T dy) {
    return y > T(0) && y < T(6) ? dy : T(0);
  }
};
struct ref_hardtanh {
  static constexpr char const* name = "hardtanh";
  using F = nonlin::hardtanh;
  template <class T>
  static T fwd(T x) {
    return std::clamp(x, T(-1), T(1));
  }
  template <class T>
  static T bwd(T x, T dy) {
    return x > T(-1) && x < T(1) ? dy : T(0);
  }
  template <class T>
  static T bwdy(T y, T dy) {
    return y > T(-1) && y < T(1) ? dy : T(0);
  }
};
struct ref_leaky_relu {
  static constexpr char const* name = "leaky_relu";
  using F = nonlin::leaky_relu;
  template <class T>
  static T fwd(T x) {
    return x > T(0) ? x : k<T>(0.01) * x;
  }
  template <class T>
  static T bwd(T x, T dy) {
    return x > T(0) ? dy : k<T>(0.01) * dy;
  }
  template <class T>
  static T bwdy(T y, T dy) {
    return y > T(0) ? dy : k<T>(0.01) * dy;
  }
};
struct ref_elu {
  static constexpr char const* name = "elu";
  using F = nonlin::elu;
  template <class T>
  static T fwd(T x) {
    return x > T(0) ? x : std::expm1(x);
  }
  template <class T>
  static T bwd(T x, T dy) {
    return x > T(0) ? dy : dy * std::exp(x);
  }
  template <class T>
  static T bwdy(T y, T dy) {
    return y > T(0) ? dy : dy * (y + T(1));
  }
};
struct ref_selu {
  static constexpr char const* name = "selu";
  using F = nonlin::selu;
  static constexpr double alpha = 1.67326324235437728481704299167171;
  static constexpr double lambda = 1.05070098735548049341933498529460;
  template <class T>
  static T fwd(T x) {
    return k<T>(lambda) * (x > T(0) ? x : k<T>(alpha) * std::expm1(x));
  }
  template <class T>
  static T bwd(T x, T dy) {
    return x > T(0) ? dy * k<T>(lambda) : dy * k<T>(lambda * alpha) * std::exp(x);
  }
  template <class T>
  static T bwdy(T y, T dy) {
    return y > T(0) ? dy * k<T>(lambda) : dy * (y + k<T>(lambda * alpha));
  }
};
struct ref_celu {
  static constexpr char const* name = "celu";
  using F = nonlin::celu;
  template <class T>
  static T fwd(T x) {
    return std::max(T(0), x) + std::min(T(0), std::expm1(x / T(1)));
  }
  template <class T>
  static T bwd(T x, T dy) {
    return x > T(0) ? dy : dy * std::exp(x / T(1));
  }
  template <class T>
  static T bwdy(T y, T dy) {
    return y > T(0) ? dy : dy * (T(1) + y / T(1));
  }
};
struct ref_sigmoid {
  static constexpr char const* name = "sigmoid";
  using F = nonlin::sigmoid;
  template <class T>
  static T fwd(T x) {
    return std_sigmoid(x);
  }
  template <class T>
  static T bwd(T x, T dy) {
    T const s = std_sigmoid(x);
    return dy * s * (T(1) - s);
  }
  template <class T>
  static T bwdy(T y, T dy) {
    return dy * y * (T(1) - y);
  }
};
struct ref_tanh {
  static constexpr char const* name = "tanh";
  using F = nonlin::tanh;
  template <class T>
  static T fwd(T x) {
    return std::tanh(x);
  }
  template <class T>
  static T bwd(T x, T dy) {
    T const t = std::tanh(x);
    return dy * (T(1) - t * t);
  }
  template <class T>
  static T bwdy(T y, T dy) {
    return dy * (T(1) - y * y);
  }
};
struct ref_log_sigmoid {
  static constexpr char const* name = "log_sigmoid";
  using F = nonlin::log_sigmoid;
  template <class T>
  static T fwd(T x) {
    return -std::log1p(std::exp(-x));
  }
  template <class T>
  static T bwd(T x, T dy) {
    return dy / (T(1) + std::exp(x));
  }
  template <class T>
  static T bwdy(T y, T dy) {
    return dy * (T(1) - std::exp(y));
  }
};
struct ref_hardsigmoid {
  static constexpr char const* name = "hardsigmoid";
  using F = nonlin::hardsigmoid;
  template <class T>
  static T fwd(T x) {
    return std::clamp(x / T(6) + k<T>(0.5), T(0), T(1));
  }
  template <class T>
  static T bwd(T x, T dy) {
    return x > T(-3) && x < T(3) ? dy / T(6) : T(0);
  }
  template <class T>
  static T bwdy(T y, T dy) {
    return y > T(0) && y < T(1) ? dy / T(6) : T(0);
  }
};
struct ref_hardswish {
  static constexpr char const* name = "hardswish";
  using F = nonlin::hardswish;
  template <class T>
  static T fwd(T x) {
    return x * std::clamp(x + T(3), T(0), T(6)) / T(6);
  }
  template <class T>
  static T bwd(T x, T dy) {
    return x <= T(-3) ? T(0) : x >= T(3) ? dy : dy * (T(2) * x + T(3)) / T(6);
  }
};
struct ref_softplus {
  static constexpr char const* name = "softplus";
  using F = nonlin::softplus;
  template <class T>
  static T fwd(T x) {
    return x > T(20) ? x : std::log1p(std::exp(x));
  }
  template <class T>
  static T bwd(T x, T dy) {
    return x > T(20) ? dy : dy * std_sigmoid(x);
  }
  template <class T>
  static T bwdy(T y, T dy) {
    return y > T(20) ? dy : dy * (T(1) - std::exp(-y));
  }
};
struct ref_gelu_exact {
  static constexpr char const* name = "gelu_exact";
  using F = nonlin::gelu_exact;
  template <class T>
  static T fwd(T x) {
    return k<T>(0.5) * x * std::erfc(-x * k<T>(std::numbers::sqrt2 / 2));
  }
  template <class T>
  static T bwd(T x, T dy) {
    T const cdf = k<T>(0.5) * std::erfc(-x * k<T>(std::numbers::sqrt2 / 2));
    T const pdf =
        k<T>(0.5 * std::numbers::inv_sqrtpi * std::numbers::sqrt2) * std::exp(-k<T>(0.5) * x * x);
    return dy * (cdf + x * pdf);
  }
};
struct ref_gelu_tanh {
  static constexpr char const* name = "gelu_tanh";
  using F = nonlin::gelu_tanh;
  static constexpr double c = 0.797884560802865355879892119868763737;  // sqrt(2/pi)
  template <class T>
  static T fwd(T x) {
    return k<T>(0.5) * x * (T(1) + std::tanh(k<T>(c) * (x + k<T>(0.044715) * x * x * x)));
  }
  template <class T>
  static T bwd(T x, T dy) {
    T const t = std::tanh(k<T>(c) * (x + k<T>(0.044715) * x * x * x));
    T const du = k<T>(c) * (T(1) + k<T>(3 * 0.044715) * x * x);
    return dy * (k<T>(0.5) * (T(1) + t) + k<T>(0.5) * x * (T(1) - t * t) * du);
  }
};
struct ref_gelu_quick {
  static constexpr char const* name = "gelu_quick";
  using F = nonlin::gelu_quick;
  template <class T>
  static T fwd(T x) {
    return x * std_sigmoid(k<T>(1.702) * x);
  }
  template <class T>
  static T bwd(T x, T dy) {
    T const s = std_sigmoid(k<T>(1.702) * x);
    return dy * (s + k<T>(1.702) * x * s * (T(1) - s));
  }
};
struct ref_silu {
  static constexpr char const* name = "silu";
  using F = nonlin::silu;
  template <class T>
  static T fwd(T x) {
    return x * std_sigmoid(x);
  }
  template <class T>
  static T bwd(T x, T dy) {
    T const s = std_sigmoid(x);
    return dy * s * (T(1) + x * (T(1) - s));
  }
};
struct ref_swish {
  static constexpr char const* name = "swish";
  using F = nonlin::swish;  // beta = 1
  template <class T>
  static T fwd(T x) {
    return x * std_sigmoid(T(1) * x);
  }
  template <class T>
  static T bwd(T x, T dy) {
    T const s = std_sigmoid(T(1) * x);
    return dy * (s + T(1) * x * s * (T(1) - s));
  }
};
struct ref_mish {
  static constexpr char const* name = "mish";
  using F = nonlin::mish;
  template <class T>
  static T fwd(T x) {
    return x * std::tanh(std::log1p(std::exp(x)));
  }
  template <class T>
  static T bwd(T x, T dy) {
    T const t = std::tanh(std::log1p(std::exp(x)));
    return dy * (t + x * std_sigmoid(x) * (T(1) - t * t));
  }
};
struct ref_squared_relu {
  static constexpr char const* name = "squared_relu";
  using F = nonlin::squared_relu;
  template <class T>
  static T fwd(T x) {
    T const r = std::max(x, T(0));
    return r * r;
  }
  template <class T>
  static T bwd(T x, T dy) {
    return dy * T(2) * std::max(x, T(0));
  }
};

// Calls fn.template operator()<ref_*>() for every function, in table order.
template <class Fn>
void for_each_function(Fn&& fn) {
  fn.template operator()<ref_step>();
  fn.template operator()<ref_identity>();
  fn.template operator()<ref_relu>();
  fn.template operator()<ref_relu6>();
  fn.template operator()<ref_hardtanh>();
  fn.template operator()<ref_leaky_relu>();
  fn.template operator()<ref_elu>();
  fn.template operator()<ref_selu>();
  fn.template operator()<ref_celu>();
  fn.template operator()<ref_sigmoid>();
  fn.template operator()<ref_tanh>();
  fn.template operator()<ref_log_sigmoid>();
  fn.template operator()<ref_hardsigmoid>();
  fn.template operator()<ref_hardswish>();
  fn.template operator()<ref_softplus>();
  fn.template operator()<ref_gelu_exact>();
  fn.template operator()<ref_gelu_tanh>();
  fn.template operator()<ref_gelu_quick>();
  fn.template operator()<ref_silu>();
  fn.template operator()<ref_swish>();
  fn.template operator()<ref_mish>();
  fn.template operator()<ref_squared_relu>();
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
