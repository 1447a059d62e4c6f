// SPDX-License-Identifier: MIT
#pragma once
// Every elementwise functor with what the tests need to know about it: name, kinks, and
// whether its output determines its derivative. "kinks" lists every point where the first or
// second derivative jumps: a central difference straddling one is not a test of anything.

#include <string_view>
#include <tuple>
#include <vector>

#include <nonlin/nonlin.hpp>

namespace nonlin::test {

template <class F>
struct info {
  std::string_view name;
  F f;
  std::vector<double> kinks;
};

inline auto all_functors() {
  return std::make_tuple(
      info<step>{"step", {}, {0.0}}, info<identity>{"identity", {}, {}},
      info<relu>{"relu", {}, {0.0}}, info<relu6>{"relu6", {}, {0.0, 6.0}},
      info<hardtanh>{"hardtanh", {}, {-1.0, 1.0}},
      info<hardtanh>{"hardtanh(-2,3)", {.min = -2.0, .max = 3.0}, {-2.0, 3.0}},
      info<leaky_relu>{"leaky_relu", {}, {0.0}},
      info<leaky_relu>{"leaky_relu(0.2)", {.alpha = 0.2}, {0.0}}, info<elu>{"elu", {}, {0.0}},
      info<elu>{"elu(0.5)", {.alpha = 0.5}, {0.0}}, info<selu>{"selu", {}, {0.0}},
      info<celu>{"celu", {}, {0.0}}, info<celu>{"celu(2)", {.alpha = 2.0}, {0.0}},
      info<sigmoid>{"sigmoid", {}, {}}, info<nonlin::tanh>{"tanh", {}, {}},
      info<log_sigmoid>{"log_sigmoid", {}, {}}, info<hardsigmoid>{"hardsigmoid", {}, {-3.0, 3.0}},
      info<hardswish>{"hardswish", {}, {-3.0, 3.0}}, info<softplus>{"softplus", {}, {}},
      info<softplus>{"softplus(2,10)", {.beta = 2.0, .threshold = 10.0}, {5.0}},
      info<gelu_exact>{"gelu_exact", {}, {}}, info<gelu_tanh>{"gelu_tanh", {}, {}},
      info<gelu_quick>{"gelu_quick", {}, {}}, info<silu>{"silu", {}, {}},
      info<swish>{"swish(1.5)", {.beta = 1.5}, {}}, info<mish>{"mish", {}, {}},
      info<squared_relu>{"squared_relu", {}, {0.0}}, info<fast::sigmoid>{"fast::sigmoid", {}, {}},
      info<fast::tanh>{"fast::tanh", {}, {}}, info<fast::silu>{"fast::silu", {}, {}},
      info<fast::swish>{"fast::swish(1.5)", {.beta = 1.5}, {}},
      info<fast::gelu_quick>{"fast::gelu_quick", {}, {}},
      info<fast::gelu_tanh>{"fast::gelu_tanh", {}, {}});
}

template <class Visitor>
void for_each_functor(Visitor&& visit) {
  std::apply([&](auto const&... entry) { (visit(entry), ...); }, all_functors());
}

}  // namespace nonlin::test
