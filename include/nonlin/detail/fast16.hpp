// SPDX-License-Identifier: MIT
#pragma once
// The float evaluations of the span kernels on 16-bit arrays (kernels.hpp). A 16-bit result is
// the float result rounded once, except where that float lies within math::midpoint_margin
// float steps of a 16-bit rounding midpoint: there the functor runs again in double
// (math/round16.hpp). So the float only has to be within that margin of the true value, not
// within the default tier's 2 ulp, and a default-tier functor whose fast twin (fast.hpp) is
// always within it gives the very same 16-bit results from the twin's float, at the fast
// tier's speed (the double recomputation stays the default functor's):
//
//   - a lane the twin leaves unmarked is more than 7 steps from a midpoint, the true value
//     within the twin's error of it, so on the same side: its rounding is the correct one,
//     which the default's float (within 2 ulp) or double (where marked) gives as well;
//   - a marked lane is the default functor's double result in both.
//
// Except where the true value is within double's error of a midpoint (where double may land on
// it: math/true_side.hpp), which both mark; a NaN result is a NaN, whose sign and payload may be
// another's (as between two builds of one functor: which operand's NaN an operation returns is
// the compiler's choice); and dy = +-inf times an f'(x) that rounds to 0 in float gives NaN from
// one evaluation and the limit +-inf from another (log_sigmoid at x = 201: the default's NaN,
// the twin's +inf).
//
// fast16<F>::forward / backward / gated_forward say which kernels take the twin
// (fast16<F>::twin(f) builds it with f's parameters; forward_in<T> / backward_in<T> and
// twin_in<T>(f) where that depends on the 16-bit type: hardswish's twin, below):
//   forward:       the twin's float error within 7 steps for every x. Measured (docs/accuracy.md;
//                  tests/accuracy_test.cpp asserts 5 on every build): sigmoid 3.21, tanh 4.52,
//                  elu / celu 1.62, selu 2.53, log_sigmoid / softplus 2.24, silu 3.15, mish
//                  3.49, gelu_exact 4.33 ulp. swish, gelu_quick and gelu_tanh through
//                  x_sigmoid_twin (the default's argument as hi + lo: the fast functors'
//                  rounded one left 84 ulp in gelu_quick's left tail, 66 in swish(1.5)'s, 206
//                  in gelu_tanh's): 2.56 (swish, gelu_quick) and 2.33 (gelu_tanh) ulp on every
//                  16-bit x.
//   backward:      dx = dy f'(x) within 7 steps for every x and dy. The twin's derivative
//                  within e ulp gives a product within 2 e + 1/2 steps (an ulp of f' times |dy|
//                  is less than twice an ulp of the product): e <= 3.25. Measured: sigmoid
//                  3.10, tanh 2.92, elu / celu 1.04, selu 2.48, log_sigmoid / softplus 3.06
//                  (every float). silu, mish and gelu_exact lose the relative accuracy near
//                  their zeros (README, "Fast tier"): their twins take the default tier's fitted
//                  ratio there (root_patched below), and are then within 3.25 on every 16-bit x,
//                  not every float: silu 2.58 (bfloat16) / 3.08 (float16), mish 2.41 / 3.25
//                  (3.247 at float16 x = -0.187), gelu_exact 2.49 / 2.55 (float16_test,
//                  FastTwinDerivativesAreWithinTheBackwardMargin); gelu_tanh, its argument
//                  as hi + lo and the ratio over the fit's whole range, 2.77 / 3.245 (3.245 at
//                  float16 x = -1.840; gelu_tanh_twin). swish and gelu_quick: their
//                  z = beta x is any float, where the fast silu'(z), with the ratio, is up to
//                  5.29 ulp off: they take a wider window of the midpoint test, 32 floats, whose
//                  margin of 15 steps bounds e <= 7.25 (scaled_x_sigmoid_twin).
//   gated_forward: value act(gate) (glu.hpp) within 7 steps, by the same product bound: the
//                  act's forward within 3.25 ulp at every 16-bit gate (the gates are 16-bit).
//                  With backward too, the gated units' backward takes the twin as well: d_value
//                  = dy act(gate) by this bound, d_gate = act.backward(gate, dy value) by the
//                  backward's (dy value exact where it is a normal float: two 16-bit values;
//                  elsewhere the default unit's, glu.hpp gated_backward_twin). Measured:
//                  sigmoid 3.21, silu 3.15, the ELU family, log_sigmoid and softplus on every
//                  float; tanh 3.06 (bfloat16) / 3.18 (float16), mish 3.06 / 3.06, gelu_exact
//                  2.21 / 2.74, gelu_tanh 2.28 / 2.33 on the 16-bit ones only (every float:
//                  4.52, 3.49, 4.33, 206).
// The figures: every float, float build with FMA. backward_from_output: the fast twins use the
// default tier's math there already.
//
// tests/float16_test.cpp holds the kernels to rounded16 of the default functor (every 16-bit x
// with 48 values of dy, or of the value for the gated units); tests/storage16_accuracy_test.cpp
// checks every x against MPFR.

#include <cstdint>
#include <limits>
#include <type_traits>

#include "../elu.hpp"
#include "../fast.hpp"
#include "../float16.hpp"
#include "../gelu.hpp"
#include "../isa.hpp"
#include "../math/arch.hpp"
#include "../math/round16.hpp"
#include "../mish.hpp"
#include "../sigmoid.hpp"
#include "../silu.hpp"
#include "../tanh.hpp"

namespace nonlin::detail {
inline namespace NONLIN_ISA {

// The products' margin (backward, gated_forward) rests on the twins' errors measured with an FMA
// unit (x86-64-v3 and up, aarch64: the same bits); a build without one (x86-64-v2) evaluates the
// default functor there. The forwards' margin holds on every build (the bound tested, 5 ulp).
inline constexpr bool with_fma = math::arch::has_fma<float>;

// No twin: the kernels evaluate F itself in float.
template <class F>
struct fast16 {
  static constexpr bool forward = false;
  static constexpr bool backward = false;
  static constexpr bool gated_forward = false;
  static constexpr std::int32_t backward_window = math::midpoint_window;
  template <class T>
  static constexpr bool forward_in = forward;
  template <class T>
  static constexpr bool backward_in = backward;
};

// A twin: every forward takes it; backward and the gated forward where the products' margin holds.
// backward_window: the window of the backward kernel's midpoint test (math/round16.hpp), whose
// margin bounds the twin's derivative error: (margin - 1/2) / 2, 3.25 ulp for the kernels' window
// of 16 (swish and gelu_quick take 32: 7.25).
template <bool backward_margin, bool gated_forward_margin,
          std::int32_t window = math::midpoint_window>
struct twin_directions {
  static constexpr bool forward = true;
  static constexpr bool backward = backward_margin && with_fma;
  static constexpr bool gated_forward = gated_forward_margin && with_fma;
  static constexpr std::int32_t backward_window = window;
  // The 16-bit types whose kernels take the twin (both, except for hardswish below).
  template <class T>
  static constexpr bool forward_in = forward;
  template <class T>
  static constexpr bool backward_in = backward;
};

template <>
struct fast16<nonlin::sigmoid> : twin_directions<true, true> {
  static fast::sigmoid twin(nonlin::sigmoid const& /*f*/) noexcept { return {}; }
};
template <>
struct fast16<nonlin::tanh> : twin_directions<true, true> {
  static fast::tanh twin(nonlin::tanh const& /*f*/) noexcept { return {}; }
};
template <>
struct fast16<nonlin::elu> : twin_directions<true, true> {
  static fast::elu twin(nonlin::elu const& f) noexcept { return {f.alpha}; }
};
template <>
struct fast16<nonlin::selu> : twin_directions<true, true> {
  static fast::selu twin(nonlin::selu const& /*f*/) noexcept { return {}; }
};
template <>
struct fast16<nonlin::celu> : twin_directions<true, true> {
  static fast::celu twin(nonlin::celu const& f) noexcept { return {f.alpha}; }
};
template <>
struct fast16<nonlin::log_sigmoid> : twin_directions<true, true> {
  static fast::log_sigmoid twin(nonlin::log_sigmoid const& /*f*/) noexcept { return {}; }
};
template <>
struct fast16<nonlin::softplus> : twin_directions<true, true> {
  static fast::softplus twin(nonlin::softplus const& f) noexcept { return {f.beta, f.threshold}; }
};

// A twin whose derivative loses its relative accuracy near the function's zero x0 (where its
// formula cancels): there it takes the default tier's fitted ratio instead
// (Near::derivative_near_zero, math/roots.hpp), over a window that holds every 16-bit x where
// the twin alone is more than 3.25 ulp off. Batches with no lane in the window skip the ratio
// (a branch on the batch), the others pay its ~20 operations.
template <class Twin, class Near>
struct root_patched : Twin {
  template <real_value V>
  NONLIN_ISA_TAG V derivative(V x) const noexcept {
    return Near::derivative_near_zero(Twin::derivative(x), x);
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward(V x, V dy) const noexcept {
    return Twin::backward_given_derivative(x, derivative(x), dy);
  }
  // The twin's pair (where it has one: fast::gelu_exact) with the derivative patched: the gated
  // units' backward takes both from one evaluation (glu.hpp).
  template <real_value V>
  requires requires(Twin const& t, V v) { t.value_and_derivative(v); }
  NONLIN_ISA_TAG value_and_slope<V> value_and_derivative(V x) const noexcept {
    value_and_slope<V> both = Twin::value_and_derivative(x);
    both.derivative = Near::derivative_near_zero(both.derivative, x);
    return both;
  }
};

// fast::silu' is more than 3.25 ulp off on the 16-bit x of [-1.367, -1.102] (bfloat16) and
// [-1.386, -1.102] (float16), x0 - 0.108 to x0 + 0.177: the ratio on x0 - 0.15 to x0 + 0.2 (the
// default tier's on x0 +- 0.05).
struct silu_near_zero16 {
  template <real_value V>
  NONLIN_ISA_TAG static V derivative_near_zero(V generic, V x) noexcept {
    return nonlin::detail::patched_silu_derivative(generic, math::double_float<V>{x, V(0)},
                                                   math::root_window{-0.15, 0.2});
  }
};

// The fast x sigma(z) with z given as hi + lo (Argument::of(x), the default tier's own): the
// forward twin of the x sigma(z) functors whose z is not x itself. The fast functors round z once,
// which costs |z| / 2 ulp where sigma(z) is e^z: over 100 in the left tails of 16-bit x
// (gelu_quick 84, swish(1.5) 66, gelu_tanh 206). The low part only where the exps can use it:
// beyond twice their lowest argument (-200 for float) sigma(z) is 0 or 1 whatever it is, and
// there it may be huge (half an ulp of a huge z, which the clamps would not take out of
// e^c (1 + lo)) or NaN (inf - inf where beta x overflowed).
template <class Argument>
struct x_sigmoid_twin : Argument {
  template <real_value V>
  NONLIN_ISA_TAG V operator()(V x) const noexcept {
    return fast::detail::x_sigmoid(x, argument(x));
  }

 protected:
  template <real_value V>
  NONLIN_ISA_TAG math::double_float<V> argument(V x) const noexcept {
    auto z = Argument::of(x);
    V const far(-2 * math::detail::lowest_arg<math::exp_range::product, scalar_t<V>>);
    return {z.hi, math::select(math::abs(z.hi) <= far, z.lo, V(0))};
  }
};

// swish's and gelu_quick's z = beta x (the default tier's scaled_argument). Their twin is within
// 2.56 ulp on every 16-bit x (beta = 1, 1.5, -0.7, 0.1, 20 and gelu_quick's 1.702; float16_test).
struct scaled_argument_of {
  math::double_double beta;
  template <real_value V>
  NONLIN_ISA_TAG math::double_float<V> of(V x) const noexcept {
    return nonlin::detail::scaled_argument(x, beta);
  }
};
// Their backward: silu'(z) at z = beta x, the fast derivative with z as hi + lo and x z' = z, the
// default tier's fitted ratio on z0 - 0.2 .. z0 + 0.25. With z any float (beta is any double),
// not a 16-bit one, the fast derivative alone is more than 3.25 ulp off over z0 - 0.71 to
// z0 + 0.44, and with the ratio it is still 5.29 ulp off at z = -17.41 (every normal float z of
// [-40, 20], z's low part 0 and +-0.49 of z's ulp; 3.65 beyond, to -110 and 100): beyond the
// products' margin of 3.25, within the 7.25 of a window of 32 floats (math/round16.hpp), which
// their backward kernels take. It doubles the lanes recomputed in double (32 / 2^16 of
// bfloat16's, 32 / 2^13 of float16's).
// Where the build has silu's table (math/silu_slope.hpp), the derivative is the table's at z
// (within 1.7 ulp), and with beta = 1 (swish's default) z = x and it is fast::silu's (one branch
// on the parameter, as swish's own).
struct scaled_x_sigmoid_twin : x_sigmoid_twin<scaled_argument_of> {
  template <real_value V>
  NONLIN_ISA_TAG V derivative(V x) const noexcept {
    if (silu_at_x<V>()) {
      return fast::silu{}.derivative(x);
    }
    auto const z = argument(x);
    return math::silu_slope(z, [&] { return derivative_at(z); });
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward(V x, V dy) const noexcept {
    if (silu_at_x<V>()) {
      return fast::silu{}.backward(x, dy);
    }
    auto const z = argument(x);
    return math::silu_slope_times(z, dy, [&] {
      return fast::detail::x_sigmoid_derivative_times(derivative_at(z), z, z.hi, dy);
    });
  }
  // silu'(z) (float16_test checks it over the floats z).
  template <real_value V>
  NONLIN_ISA_TAG static V derivative_at(math::double_float<V> const& z) noexcept {
    return nonlin::detail::patched_silu_derivative(fast::detail::x_sigmoid_derivative(z, z.hi), z,
                                                   math::root_window{-0.2, 0.25});
  }

 private:
  // beta = 1 where fast::silu' is the table's (without the table it lacks this twin's ratio).
  template <real_value V>
  NONLIN_ISA_TAG bool silu_at_x() const noexcept {
    return math::has_slope_tables<V> && beta.hi == 1.0 && beta.lo == 0.0;
  }
};

// gelu_tanh's z = x (c1 + c3 x^2). Its twin is within 2.28 (bfloat16) / 2.33 (float16) ulp on
// every 16-bit x, 99 / 134 with z's low part dropped (float16_test); its backward below
// (gelu_tanh_twin).
struct gelu_tanh_argument_of {
  template <real_value V>
  NONLIN_ISA_TAG static math::double_float<V> of(V x) noexcept {
    return nonlin::gelu_tanh::argument(x);
  }
};

template <>
struct fast16<nonlin::swish> : twin_directions<true, false, 32> {
  static scaled_x_sigmoid_twin twin(nonlin::swish const& f) noexcept { return {{{{f.beta, 0.0}}}}; }
};
template <>
struct fast16<nonlin::gelu_quick> : twin_directions<true, false, 32> {
  static scaled_x_sigmoid_twin twin(nonlin::gelu_quick const& f) noexcept {
    return {{{f.slope()}}};
  }
};
// gelu_tanh's backward twin: the fast derivative with v as hi + lo, and the default tier's fitted
// ratio over the whole range of its fit, x0 - 1 to x0 + 1/2: the fast derivative is more than
// 3.25 ulp off on [-0.898, -0.684] (bfloat16) and [-1.666, -0.575] (float16; x0 - 0.91 to
// x0 + 0.18, in two pieces), and with the ratio over x0 - 1/2 to x0 + 0.3 still 4.08 ulp at
// float16 x = -1.666. With it: 2.77 (bfloat16) / 3.245 (float16, x = -1.840) ulp on every
// 16-bit x.
struct gelu_tanh_twin : x_sigmoid_twin<gelu_tanh_argument_of> {
  template <real_value V>
  NONLIN_ISA_TAG V derivative(V x) const noexcept {
    return nonlin::gelu_tanh::derivative_near_zero(
        fast::detail::x_sigmoid_derivative_split_left(argument(x), fast::gelu_tanh::slope_x(x)), x,
        math::root_window{-1.0, 0.5});
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward(V x, V dy) const noexcept {
    return fast::detail::x_sigmoid_derivative_times(derivative(x), argument(x),
                                                    fast::gelu_tanh::slope_x(x), dy);
  }
};
template <>
struct fast16<nonlin::gelu_tanh> : twin_directions<true, true> {
  static gelu_tanh_twin twin(nonlin::gelu_tanh const& /*f*/) noexcept { return {}; }
};

// Where fast::silu' comes from the table (math/silu_slope.hpp: within 1.6 ulp at the zero too),
// it needs no patch.
template <>
struct fast16<nonlin::silu> : twin_directions<true, true> {
  static std::conditional_t<math::has_slope_tables<float>, fast::silu,
                            root_patched<fast::silu, silu_near_zero16>>
  twin(nonlin::silu const& /*f*/) noexcept {
    return {};
  }
};
// fast::mish' is more than 3.25 ulp off on [-1.203, -1.141] (bfloat16) and [-1.249, -1.101]
// (float16), x0 - 0.057 to x0 + 0.091: the default tier's window, x0 - 0.15 to x0 + 0.4.
template <>
struct fast16<nonlin::mish> : twin_directions<true, true> {
  static root_patched<fast::mish, nonlin::mish> twin(nonlin::mish const& /*f*/) noexcept {
    return {};
  }
};
// fast::gelu_exact' is more than 3.25 ulp off on [-0.922, -0.531] (bfloat16) and [-0.922,
// -0.514] (float16), x0 - 0.17 to x0 + 0.24: the default tier's window, x0 - 0.4 to x0 + 1/2.
template <>
struct fast16<nonlin::gelu_exact> : twin_directions<true, true> {
  static root_patched<fast::gelu_exact, nonlin::gelu_exact> twin(
      nonlin::gelu_exact const& /*f*/) noexcept {
    return {};
  }
};

// hardswish's 16-bit twin: its backward dy (2x + 3) / 6 rounded once where it can be
// (slope_times), in double always and in float for bfloat16 (rounded_once_in_float).
//   - In double it is the 16-bit kernels' recomputation (`recomputes`: backward16_twin_op takes
//     the twin's double, not the default functor's): for float arguments its product is exact,
//     so a true value on a 16-bit midpoint is recomputed as the tie itself, where the default's
//     dy times (2x + 3)/6 rounded lands a double step beside it (dy = 117/128 at x = 1/8 gives
//     0x1.fbp-2, a bfloat16 midpoint): 155 bfloat16 and 282 float16 results of 9.8 million
//     (x, dy) were not correctly rounded. (The default functor keeps its own: backward is
//     dy * derivative(x) bit for bit, gradient_test.)
//   - In float, for bfloat16, it names the lanes where it rounded once
//     (correctly_rounded_backward16), which skip the midpoint test: exact results of 16-bit
//     inputs often lie on a midpoint, where the default's float sent 64% of the iterations of 64
//     elements to the recomputation. Not for float16: there the product of an 11-bit dy and
//     2x + 3 is exact on fewer lanes, and the twin's operations cost more than the recomputations
//     they save (0.85-0.93x at 4K and 256K); its float is the default's.
// Its forward is the default's; for bfloat16 it names the forward's lanes by bfloat16's own rule
// (correctly_rounded_forward16 below).
template <bool rounded_once_in_float>
struct hardswish_twin : nonlin::hardswish {
  static constexpr bool recomputes = true;
  template <real_value V>
  NONLIN_ISA_TAG V backward(V x, V dy) const noexcept {
    if constexpr (rounded_once_in_float || std::is_same_v<scalar_t<V>, double>) {
      return backward_given_inside(x, dy, slope_times(x, dy));
    } else {
      return nonlin::hardswish::backward(x, dy);
    }
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative(V x) const noexcept {
    return backward(x, math::c<V>(1));
  }
  // For the forward kernel on bfloat16 x only: the lanes where x (x + 3) / 6 rounded once rounds
  // correctly to 16 bits, by one compare: every |x| >= 2^-7. From 2^-7 to 3 hardswish's own
  // correctly_rounded_forward16 holds for every bfloat16 x (8 significant bits, the last at 2^-14
  // or above: x + 3 has at most 16, x (x + 3) at most 24; storage16_accuracy_test), and from 3 on
  // the result is x or 0. (hardswish's own test takes four operations a batch more.)
  template <real_value V>
  requires rounded_once_in_float NONLIN_ISA_TAG static math::mask_t<V> correctly_rounded_forward16(
      V x) noexcept {
    return math::abs(x) >= math::c<V>(0x1p-7);
  }
  // dy (2x + 3) / 6 as ((dy t/16) / 3) 8, t = 2x + 3: one rounding wherever t and dy t/16 are
  // exact and dy t/16 is normal (the division by 3 is correctly rounded, math::divide_by_integer;
  // t/16 keeps the product below overflow, |t| < 9; the factor 8 is exact), as it is in double
  // for float arguments. Elsewhere within 1.5 ulp, and within 5.3 steps where the product or the
  // quotient is subnormal: inside the margin. An infinite dy gives the product itself (+-inf, or
  // NaN where t = 0), where the division's residual would be inf - inf.
  template <real_value V>
  NONLIN_ISA_TAG static V slope_times(V x, V dy) noexcept {
    V const p = dy * ((x + x + math::c<V>(3)) * math::c<V>(0.0625));
    // (p's sign or'ed in: the division gives +0 for -0, where dy is negative at x = -1.5.)
    V const q = math::with_sign_of(math::divide_by_integer(p, scalar_t<V>(3)) * math::c<V>(8), p);
    return math::select(math::abs(p) == V(std::numeric_limits<scalar_t<V>>::infinity()), p, q);
  }
  // For the 16-bit kernels (kernels.hpp, tested16): the lanes where backward's float rounded once
  // to 16 bits is the correctly rounded value of dy (2x + 3) / 6, for any float arguments.
  // Named: outside (-3, 3) (0 or dy, exact); inside where t = 2x + 3 and p = dy t/16 are exact
  // (t - 3 - 2x and p's low part 0: their bits or'ed, one compare) and |p| is above the product
  // underflow (math::above_product_underflow: its low part is then exact, and p/3 normal). Then q
  // = p/3 rounded once, and if q is a 16-bit midpoint M (9 or 12 significant bits), p - 3M is a
  // multiple of p's last bit, at least twice M's float step, while |p/3 - M| <= half a step
  // would need it within 1.5 steps: so p = 3M, and the true value is M itself (times 8, exact).
  // Any other q rounds to 16 bits as p/3 does. From bfloat16 inputs every |x| of [2^-6, 3) but
  // -1.5 is named with every dy far above the underflow (storage16_accuracy_test).
  template <real_value V>
  requires rounded_once_in_float NONLIN_ISA_TAG static math::mask_t<V> correctly_rounded_backward16(
      V x, V dy) noexcept {
    V const twice = x + x;
    V const t = twice + math::c<V>(3);
    auto product = math::two_product(dy, t * math::c<V>(0.0625));  // not const (GCC 12)
    V const low_parts =
        math::from_bits<V>(math::as_bits((t - math::c<V>(3)) - twice) | math::as_bits(product.lo));
    auto const inside = math::both(x > math::c<V>(-3), x < math::c<V>(3));
    return math::either(math::both(low_parts == V(0), math::above_product_underflow(product.hi)),
                        !inside);
  }
};
// The twin for both 16-bit types' backward (its double), and for bfloat16's forward (its naming).
template <>
struct fast16<nonlin::hardswish> {
  static constexpr bool forward = true;
  static constexpr bool backward = true;
  static constexpr bool gated_forward = false;
  static constexpr std::int32_t backward_window = math::midpoint_window;
  template <class T>
  static constexpr bool forward_in = std::is_same_v<T, bfloat16>;
  template <class T>
  static constexpr bool backward_in = true;
  template <class T>
  static hardswish_twin<std::is_same_v<T, bfloat16>> twin_in(
      nonlin::hardswish const& /*f*/) noexcept {
    return {};
  }
  static hardswish_twin<true> twin(nonlin::hardswish const& /*f*/) noexcept { return {}; }
};

// F's twin for the kernels on T: fast16<F>::twin_in<T> where it has one, else twin.
template <class T, class F>
auto twin16(F const& f) noexcept {
  if constexpr (requires { fast16<F>::template twin_in<T>(f); }) {
    return fast16<F>::template twin_in<T>(f);
  } else {
    return fast16<F>::twin(f);
  }
}

// call(g) for float arguments, call(f) for double ones: the op of a 16-bit kernel whose float
// results come from the twin g and whose recomputations from f.
template <class F, class G, class Call>
auto twin_in_float(F const& f, G const& g, Call const& call) {
  return [f, g, call](auto... v) -> decltype(call(f, v...)) {
    if constexpr ((std::is_same_v<scalar_t<decltype(v)>, float> && ...)) {
      return call(g, v...);
    } else {
      return call(f, v...);
    }
  };
}

}  // namespace NONLIN_ISA
}  // namespace nonlin::detail
