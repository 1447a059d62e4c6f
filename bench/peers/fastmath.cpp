// SPDX-License-Identifier: MIT
// Peer "fastmath": the textbook std:: loops of the catalog rows (catalog/) compiled with
// -ffast-math (this file only, see bench/CMakeLists.txt), which lets g++ vectorize expf, tanhf,
// erfcf, log1pf ... through glibc's libmvec: what a user gets from the obvious loop and one
// compiler flag.

#include <cmath>
#include <cstddef>

#include "peer.hpp"
#include "textbook.hpp"

#ifndef __FAST_MATH__
#error "bench/peers/fastmath.cpp must be compiled with -ffast-math"
#endif

namespace nonlin::peers {
namespace {

// Gated units as one loop of the act's textbook formulas: out = value * act(gate); backward
// d_value = dy * act(gate), d_gate = act's backward of gate with the incoming dy * value.
template <class Ref>
gated_kernels gated_of(char const* unit) {
  gated_kernels g;
  g.unit = unit;
  g.forward = [](float const* value, float const* gate, float* out, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      out[i] = value[i] * Ref::template textbook_forward<float>(gate[i]);
    }
  };
  g.backward = [](float const* value, float const* gate, float const* dy, float* d_value,
                  float* d_gate, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      d_value[i] = dy[i] * Ref::template textbook_forward<float>(gate[i]);
      d_gate[i] = Ref::template textbook_backward<float>(gate[i], dy[i] * value[i]);
    }
  };
  return g;
}

}  // namespace

peer make_fastmath() {
  peer p;
  p.name = "fastmath";
  p.version = "std:: loop, -ffast-math";
  textbook::for_each_function([&]<class Ref>() {
    function_kernels k;
    k.function = std::string(Ref::name);
    k.forward = [](float const* x, float* y, std::size_t n) {
      for (std::size_t i = 0; i < n; ++i) {
        y[i] = Ref::template textbook_forward<float>(x[i]);
      }
    };
    k.backward = [](float const* x, float const* dy, float* dx, std::size_t n) {
      for (std::size_t i = 0; i < n; ++i) {
        dx[i] = Ref::template textbook_backward<float>(x[i], dy[i]);
      }
    };
    if constexpr (requires(float v) { Ref::template textbook_backward_from_output<float>(v, v); }) {
      k.backward_from_output = [](float const* y, float const* dy, float* dx, std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) {
          dx[i] = Ref::template textbook_backward_from_output<float>(y[i], dy[i]);
        }
      };
    }
    p.functions.push_back(k);
  });
  p.softmax = textbook::softmax_rows;
  p.log_softmax = textbook::log_softmax_rows;
  p.softmax_backward = textbook::softmax_backward_rows;
  p.log_softmax_backward = textbook::log_softmax_backward_rows;
  p.gated = {
      gated_of<test::catalog::sigmoid_row>("glu"),
      gated_of<test::catalog::relu_row>("reglu"),
      gated_of<test::catalog::gelu_exact_row>("geglu"),
      gated_of<test::catalog::silu_row>("swiglu"),
  };
  return p;
}

}  // namespace nonlin::peers
