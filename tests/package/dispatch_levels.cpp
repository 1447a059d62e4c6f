// SPDX-License-Identifier: MIT
// The package consumers' dispatch levels (nonlin_add_dispatch compiles this once per level).
#include <nonlin/dispatch_level.hpp>

NONLIN_DISPATCH_ELEMENTWISE(nonlin::sigmoid, float)
