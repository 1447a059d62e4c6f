// SPDX-License-Identifier: MIT
#pragma once
// Everything nonlin offers. Include a family header instead to compile less:
//   piecewise.hpp  step, identity, relu, relu6, hardtanh, leaky_relu, squared_relu
//   elu.hpp        elu, selu, celu
//   sigmoid.hpp    sigmoid, log_sigmoid, softplus, hardsigmoid
//   tanh.hpp       tanh, softsign
//   silu.hpp       silu, swish, gelu_quick (the x sigma(z) family), hardswish
//   gelu.hpp       gelu_exact, gelu_tanh
//   mish.hpp       mish
//   fast.hpp       fast::sigmoid, tanh, silu, swish, gelu_quick, gelu_tanh (the opt-in fast tier)
//   prelu.hpp      prelu_forward, prelu_backward (alpha per channel)
//   glu.hpp        gated units: glu, bilinear, reglu, geglu, swiglu, ...; separate and fused
//   softmax.hpp    softmax, log_softmax (rows and axis_layout); cross_entropy.hpp: the loss
//   kernels.hpp    forward / backward / backward_from_output over spans
//   float16.hpp    bfloat16, float16: 16-bit storage the span kernels also take
// The math every functor is built from is in math/ (exp, log, the logistic quotients, the
// normal tails, compensated sums); math/ and detail/ are not API.

#include "axis_layout.hpp"     // IWYU pragma: export
#include "bias.hpp"            // IWYU pragma: export
#include "concepts.hpp"        // IWYU pragma: export
#include "cross_entropy.hpp"   // IWYU pragma: export
#include "elu.hpp"             // IWYU pragma: export
#include "fast.hpp"            // IWYU pragma: export
#include "float16.hpp"         // IWYU pragma: export
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
