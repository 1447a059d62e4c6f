// SPDX-License-Identifier: MIT
#pragma once
// Everything nonlin offers. Include a family header instead to compile less.

#include "axis_layout.hpp"     // IWYU pragma: export
#include "concepts.hpp"        // IWYU pragma: export
#include "cross_entropy.hpp"   // IWYU pragma: export
#include "elu.hpp"             // IWYU pragma: export
#include "fast.hpp"            // IWYU pragma: export
#include "gelu.hpp"            // IWYU pragma: export
#include "glu.hpp"             // IWYU pragma: export
#include "gradient_check.hpp"  // IWYU pragma: export
#include "kernels.hpp"         // IWYU pragma: export
#include "mish.hpp"            // IWYU pragma: export
#include "piecewise.hpp"       // IWYU pragma: export
#include "prelu.hpp"           // IWYU pragma: export
#include "sigmoid.hpp"         // IWYU pragma: export
#include "silu.hpp"            // IWYU pragma: export
#include "softmax.hpp"         // IWYU pragma: export
#include "tanh.hpp"            // IWYU pragma: export
#include "version.hpp"         // IWYU pragma: export
