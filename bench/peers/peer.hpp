// SPDX-License-Identifier: MIT
#pragma once
// The libraries nonlin is measured against ("peers"), each behind the same plain interface so
// that the benchmark (bench/activations_bench.cpp, bench/softmax_bench.cpp, bench/bias_bench.cpp)
// and the accuracy tool (tools/accuracy.cpp) time and measure them exactly like nonlin's own span
// kernels.
//
// A peer implements nonlin's functions with the library's own primitives, the way a user of
// that library would write them (e.g. SiLU with SLEEF as x / (1 + Sleef_expf16_u10(-x))), with
// nonlin's default parameters (see README: leaky_relu slope 0.01, elu/celu alpha 1, gelu_quick
// 1.702, swish beta 1, softplus beta 1 with no threshold, hardsigmoid x/6 + 1/2 clamped, ...).
// float32 (and, for oneDNN, bfloat16 arrays as well). A function the library cannot express
// sensibly is simply absent (nullptr or no entry): absent peers are shown as "-" in the tables.
//
// Kernels take whole arrays (any n >= 0, any alignment, no aliasing between inputs and
// outputs). Any one-time setup (oneDNN primitive creation) happens on the first call for a
// given n, which the benchmark makes before timing; later calls with the same n must not
// allocate or create anything.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace nonlin::peers {

// y[i] = f(x[i])
using forward_kernel = void (*)(float const* x, float* y, std::size_t n);
// dx[i] = dy[i] * f'(x[i])  (backward: in = x)  or  dy[i] * f'(f^-1(y[i]))  (from output: in = y)
using backward_kernel = void (*)(float const* in, float const* dy, float* dx, std::size_t n);
// Row-wise softmax / log_softmax of a rows x cols row-major matrix, temperature 1.
using rows_kernel = void (*)(float const* x, float* y, std::size_t rows, std::size_t cols);
// Their backward from the output y, per row: softmax dx = y * (dy - sum_j dy_j y_j),
// log_softmax dx = dy - exp(y) * sum_j dy_j.
using rows_backward_kernel = void (*)(float const* y, float const* dy, float* dx, std::size_t rows,
                                      std::size_t cols);
// Gated units (nonlin/glu.hpp) on separate value and gate arrays of n elements:
// out[i] = value[i] * act(gate[i]); backward d_value = dy * act(gate),
// d_gate = dy * value * act'(gate).
using gated_forward_kernel = void (*)(float const* value, float const* gate, float* out,
                                      std::size_t n);
using gated_backward_kernel = void (*)(float const* value, float const* gate, float const* dy,
                                       float* d_value, float* d_gate, std::size_t n);

// Bias + activation forward on a (tokens, features) row-major array:
// y[t * features + c] = f(x[t * features + c] + bias[c]) (nonlin::forward_with_bias). Unlike the
// kernels above, all setup (primitive, memory objects bound to these very arrays) happens in this
// call, outside any timed loop; the returned callable only runs the computation (and waits for it).
// The arrays must outlive the callable.
using bias_forward_prepare = std::function<void()> (*)(float const* x, float const* bias, float* y,
                                                       std::size_t tokens, std::size_t features);

// The same on bfloat16 arrays, as their bits (nonlin::bfloat16's layout): oneDNN's bf16 only.
using forward_kernel16 = void (*)(std::uint16_t const* x, std::uint16_t* y, std::size_t n);
using backward_kernel16 = void (*)(std::uint16_t const* in, std::uint16_t const* dy,
                                   std::uint16_t* dx, std::size_t n);
using rows_kernel16 = void (*)(std::uint16_t const* x, std::uint16_t* y, std::size_t rows,
                               std::size_t cols);

struct function_kernels16 {
  std::string function;
  forward_kernel16 forward = nullptr;
  backward_kernel16 backward = nullptr;
  backward_kernel16 backward_from_output = nullptr;
};

struct function_kernels {
  std::string function;  // nonlin's functor name: "sigmoid", "gelu_tanh", "leaky_relu", ...
  forward_kernel forward = nullptr;
  backward_kernel backward = nullptr;              // from x
  backward_kernel backward_from_output = nullptr;  // from y = f(x), where the library offers it
};

struct gated_kernels {
  std::string unit;  // nonlin's alias: "glu" (sigmoid), "reglu", "geglu" (gelu_exact), "swiglu"
  gated_forward_kernel forward = nullptr;
  gated_backward_kernel backward = nullptr;
};

struct bias_kernels {
  std::string function;  // nonlin's functor name, as in function_kernels
  bias_forward_prepare forward = nullptr;
};

struct peer {
  std::string name;     // table column: "fastmath", "eigen", "sleef", "xsimd", "onednn"
  std::string version;  // e.g. "Eigen 3.4.0", "SLEEF 3.5.1", "oneDNN 2.6.3 (1 thread)"
  std::vector<function_kernels> functions;
  rows_kernel softmax = nullptr;
  rows_kernel log_softmax = nullptr;
  rows_backward_kernel softmax_backward = nullptr;      // from the output y = softmax(x)
  rows_backward_kernel log_softmax_backward = nullptr;  // from the output y = log_softmax(x)
  std::vector<gated_kernels> gated;
  std::vector<bias_kernels> bias;  // bench/bias_bench.cpp; only oneDNN (binary + eltwise post-op)
  // bfloat16 arrays (bench/activations_bench.cpp, softmax_bench.cpp); only oneDNN.
  std::vector<function_kernels16> functions_bf16;
  rows_kernel16 softmax_bf16 = nullptr;
  rows_kernel16 log_softmax_bf16 = nullptr;
  // false: calls must not overlap (oneDNN's cached primitives and memory objects); the accuracy
  // tool then runs this peer's kernels under a lock.
  bool thread_safe = true;

  function_kernels const* find(std::string const& function) const {
    for (auto const& f : functions) {
      if (f.function == function) {
        return &f;
      }
    }
    return nullptr;
  }
  function_kernels16 const* find_bf16(std::string const& function) const {
    for (auto const& f : functions_bf16) {
      if (f.function == function) {
        return &f;
      }
    }
    return nullptr;
  }
  gated_kernels const* find_gated(std::string const& unit) const {
    for (auto const& g : gated) {
      if (g.unit == unit) {
        return &g;
      }
    }
    return nullptr;
  }
  bias_kernels const* find_bias(std::string const& function) const {
    for (auto const& b : bias) {
      if (b.function == function) {
        return &b;
      }
    }
    return nullptr;
  }
};

// Every peer compiled into this build (bench/peers/registry.cpp), in table order.
std::vector<peer> const& all();

// One per library; each defined in its own translation unit (bench/peers/<name>.cpp), compiled
// only when the library is found (NONLIN_HAVE_EIGEN, NONLIN_HAVE_SLEEF, NONLIN_HAVE_DNNL).
peer make_fastmath();
peer make_eigen();
peer make_sleef();
peer make_xsimd();
peer make_onednn();

}  // namespace nonlin::peers
