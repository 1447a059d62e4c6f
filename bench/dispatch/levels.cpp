// SPDX-License-Identifier: MIT
// nonlin_bench's dispatch levels (nonlin_add_dispatch compiles this once per x86-64 level): the
// functors bench/dispatch_bench.cpp dispatches.
#include <nonlin/dispatch_level.hpp>

NONLIN_DISPATCH_ELEMENTWISE(nonlin::relu, float)
NONLIN_DISPATCH_ELEMENTWISE(nonlin::sigmoid, float)
NONLIN_DISPATCH_ELEMENTWISE(nonlin::silu, float)
NONLIN_DISPATCH_ELEMENTWISE(nonlin::gelu_tanh, float)
