// SPDX-License-Identifier: MIT
// The float span kernels as extern "C" functions with stable names, so that tools/opcount.py can
// find each one's hot loop in the disassembly of this object. Nothing calls them: the object is
// compiled (scripts/opcount.sh), never linked. Each function is named
//   nonlin_opcount_<direction>_<kernel>
// with direction fwd (forward), bwd (backward from x) or bwdy (backward_from_output); opcount.py
// turns "fast_" into "fast::" and "_1_5" into "(1.5)" for its table.
// The functors are those of tests/support/functors.hpp with their default parameters, and the
// parameterised duplicates left out except swish(1.5) and fast::swish(1.5).

#include <cstddef>
#include <span>

#include <nonlin/nonlin.hpp>

namespace {
using in = std::span<float const>;
using out = std::span<float>;
}  // namespace

// Each kernel takes its functor by reference, as a user's code passes it (parameters known at
// run time), not as a temporary whose constants the compiler folds into the loop: a functor
// reached through a reference had its parameters reloaded and reconverted in every iteration
// (hardtanh: 13 instructions per batch against 10 from a temporary), which a temporary hid.
#define PARAMETERS(name, functor) using parameters_##name##_t = decltype(functor);

// The fwd and bwd entries of an elementwise functor (the two macros below).
#define FORWARD_BACKWARD(name, functor)                                                     \
  PARAMETERS(name, functor)                                                                 \
  extern "C" void nonlin_opcount_fwd_##name(parameters_##name##_t const& parameters_##name, \
                                            float const* x, float* y, std::size_t n) {      \
    nonlin::forward(parameters_##name, in(x, n), out(y, n));                                \
  }                                                                                         \
  extern "C" void nonlin_opcount_bwd_##name(parameters_##name##_t const& parameters_##name, \
                                            float const* x, float const* dy, float* dx,     \
                                            std::size_t n) {                                \
    nonlin::backward(parameters_##name, in(x, n), in(dy, n), out(dx, n));                   \
  }

// fwd and bwd of a functor whose output does not determine its derivative. The static_asserts
// keep the list honest: a functor that gains backward_from_output must move to ELEMENTWISE_Y.
#define ELEMENTWISE(name, functor)                                         \
  static_assert(!nonlin::output_differentiable<decltype(functor), float>); \
  FORWARD_BACKWARD(name, functor)

// fwd, bwd and bwdy.
#define ELEMENTWISE_Y(name, functor)                                                         \
  static_assert(nonlin::output_differentiable<decltype(functor), float>);                    \
  FORWARD_BACKWARD(name, functor)                                                            \
  extern "C" void nonlin_opcount_bwdy_##name(parameters_##name##_t const& parameters_##name, \
                                             float const* y, float const* dy, float* dx,     \
                                             std::size_t n) {                                \
    nonlin::backward_from_output(parameters_##name, in(y, n), in(dy, n), out(dx, n));        \
  }

// fwd: out = value * act(gate); bwd: both gradients in one pass.
#define GATED(name, functor)                                                                 \
  PARAMETERS(name, functor)                                                                  \
  extern "C" void nonlin_opcount_fwd_##name(parameters_##name##_t const& parameters_##name,  \
                                            float const* value, float const* gate, float* y, \
                                            std::size_t n) {                                 \
    nonlin::gated_forward(parameters_##name, in(value, n), in(gate, n), out(y, n));          \
  }                                                                                          \
  extern "C" void nonlin_opcount_bwd_##name(                                                 \
      parameters_##name##_t const& parameters_##name, float const* value, float const* gate, \
      float const* dy, float* d_value, float* d_gate, std::size_t n) {                       \
    nonlin::gated_backward(parameters_##name, in(value, n), in(gate, n), in(dy, n),          \
                           out(d_value, n), out(d_gate, n));                                 \
  }

// Rows of a contiguous (n / cols, cols) array: forward and backward from the saved output.
#define NORMALIZATION(name, functor)                                                         \
  PARAMETERS(name, functor)                                                                  \
  extern "C" void nonlin_opcount_fwd_##name(parameters_##name##_t const& parameters_##name,  \
                                            float const* x, float* y, std::size_t n,         \
                                            std::size_t cols) {                              \
    nonlin::forward(parameters_##name, in(x, n), out(y, n), cols);                           \
  }                                                                                          \
  extern "C" void nonlin_opcount_bwdy_##name(parameters_##name##_t const& parameters_##name, \
                                             float const* y, float const* dy, float* dx,     \
                                             std::size_t n, std::size_t cols) {              \
    nonlin::backward_from_output(parameters_##name, in(y, n), in(dy, n), out(dx, n), cols);  \
  }

ELEMENTWISE_Y(step, nonlin::step{})
ELEMENTWISE_Y(identity, nonlin::identity{})
ELEMENTWISE_Y(relu, nonlin::relu{})
ELEMENTWISE_Y(relu6, nonlin::relu6{})
ELEMENTWISE_Y(hardtanh, nonlin::hardtanh{})
ELEMENTWISE_Y(leaky_relu, nonlin::leaky_relu{})
ELEMENTWISE_Y(elu, nonlin::elu{})
ELEMENTWISE_Y(selu, nonlin::selu{})
ELEMENTWISE_Y(celu, nonlin::celu{})
ELEMENTWISE_Y(sigmoid, nonlin::sigmoid{})
ELEMENTWISE_Y(tanh, nonlin::tanh{})
ELEMENTWISE_Y(log_sigmoid, nonlin::log_sigmoid{})
ELEMENTWISE_Y(hardsigmoid, nonlin::hardsigmoid{})
ELEMENTWISE(hardswish, nonlin::hardswish{})
ELEMENTWISE_Y(softplus, nonlin::softplus{})
ELEMENTWISE(gelu_exact, nonlin::gelu_exact{})
ELEMENTWISE(gelu_tanh, nonlin::gelu_tanh{})
ELEMENTWISE(gelu_quick, nonlin::gelu_quick{})
ELEMENTWISE(silu, nonlin::silu{})
ELEMENTWISE(swish_1_5, nonlin::swish{.beta = 1.5})
ELEMENTWISE(mish, nonlin::mish{})
ELEMENTWISE(squared_relu, nonlin::squared_relu{})
ELEMENTWISE_Y(fast_elu, nonlin::fast::elu{})
ELEMENTWISE_Y(fast_selu, nonlin::fast::selu{})
ELEMENTWISE_Y(fast_celu, nonlin::fast::celu{})
ELEMENTWISE_Y(fast_sigmoid, nonlin::fast::sigmoid{})
ELEMENTWISE_Y(fast_tanh, nonlin::fast::tanh{})
ELEMENTWISE_Y(fast_log_sigmoid, nonlin::fast::log_sigmoid{})
ELEMENTWISE_Y(fast_softplus, nonlin::fast::softplus{})
ELEMENTWISE(fast_silu, nonlin::fast::silu{})
ELEMENTWISE(fast_swish_1_5, nonlin::fast::swish{.beta = 1.5})
ELEMENTWISE(fast_gelu_quick, nonlin::fast::gelu_quick{})
ELEMENTWISE(fast_gelu_exact, nonlin::fast::gelu_exact{})
ELEMENTWISE(fast_gelu_tanh, nonlin::fast::gelu_tanh{})
ELEMENTWISE(fast_mish, nonlin::fast::mish{})

GATED(glu, nonlin::glu{})
GATED(reglu, nonlin::reglu{})
GATED(geglu, nonlin::geglu{})
GATED(swiglu, nonlin::swiglu{})

NORMALIZATION(softmax, nonlin::softmax{})
NORMALIZATION(log_softmax, nonlin::log_softmax{})
NORMALIZATION(fast_softmax, nonlin::fast::softmax{})
NORMALIZATION(fast_log_softmax, nonlin::fast::log_softmax{})
