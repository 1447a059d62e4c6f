// SPDX-License-Identifier: MIT
#pragma once
// x times a gate of x: silu, swish(beta), gelu_quick, hardswish. Not monotonic: no backward
// from the output.

#include <type_traits>

#include "concepts.hpp"
#include "isa.hpp"
#include "math/constants.hpp"
#include "math/divide.hpp"
#include "math/double_float.hpp"
#include "math/logistic.hpp"
#include "math/ops.hpp"
#include "math/roots.hpp"
#include "math/silu_slope.hpp"
#include "math/true_side.hpp"

namespace nonlin {

namespace detail {
inline namespace NONLIN_ISA {
// z = beta x as hi + lo, so that neither beta's rounding to float nor the product's costs
// |beta x| ulp where sigmoid(beta x) is tiny.
template <real_value V>
inline math::double_float<V> scaled_argument(V x, math::double_double beta) noexcept {
  auto b = math::constant<V>(beta);
  auto z = math::two_product(b.hi, x);
  z.lo = math::fma(b.lo, x, z.lo);
  return z;
}
template <real_value V>
inline V swish_forward(V x, math::double_double beta) noexcept {
  return math::x_sigmoid(x, scaled_argument(x, beta));
}
// silu'(z) = sigmoid(z) (1 + z sigmoid(-z)), z = beta x; near its zero z0 = -1.2785 from the
// fitted ratio. The bracket 1 + z as hi + lo (math::bounded_bracket).
template <real_value V>
inline math::double_float<V> one_plus_argument(math::double_float<V> z) noexcept {
  auto sum = math::two_sum(math::c<V>(1), z.hi);
  sum.lo = sum.lo + z.lo;
  return math::bounded_bracket(sum);
}
// For an exact z: z clamped first, so the sum needs no bound afterwards.
template <real_value V>
inline math::double_float<V> one_plus_argument(V z) noexcept {
  V const bound(math::bracket_bound<V>);
  return math::two_sum(math::c<V>(1),
                       math::clamp_below(math::clamp_above(z, bound), math::neg(bound)));
}
// z as hi + lo, for the root patch and the product tail.
template <real_value V>
inline math::double_float<V> as_pair(math::double_float<V> const& z) noexcept {
  return z;
}
template <real_value V>
inline math::double_float<V> as_pair(V const& z) noexcept {
  return {z, V(0)};
}
// silu'(z) from its generic value, the fitted ratio near the zero (within the window, x0 + -0.05
// for the default tier's generic value; detail/fast16.hpp patches the fast tier's over a wider
// one).
template <real_value V>
inline V patched_silu_derivative(V generic, math::double_float<V> const& z,
                                 math::root_window window = math::x_sigmoid_root_window) noexcept {
  using R = math::tables::derivative_roots<scalar_t<V>>;
  return math::patch_near_root(generic, z, R::silu_root_hi, R::silu_root_lo, R::silu_ratio, window);
}
// The quotient form with the fitted ratio near the zero.
template <real_value V, class Z>
inline V quotient_form_swish_derivative(Z const& z) noexcept {
  return patched_silu_derivative(math::x_sigmoid_derivative(z, one_plus_argument(z)), as_pair(z));
}
// dy swish'(x) from swish'(x) = derivative in the quotient form, rounded once also where
// swish'(x) alone is below the normal range.
template <real_value V, class Z>
inline V quotient_form_swish_backward(Z const& z, V derivative, V dy) noexcept {
  return math::x_sigmoid_derivative_times(derivative, as_pair(z), one_plus_argument(z), dy);
}
// From the table where the build has it (math/silu_slope.hpp), the quotient form beyond it.
template <real_value V, class Z>
inline V swish_derivative(Z const& z) noexcept {
  return math::silu_slope(z, [&] { return quotient_form_swish_derivative<V>(z); });
}
template <real_value V>
inline V swish_derivative(V x, math::double_double beta) noexcept {
  return swish_derivative<V>(scaled_argument(x, beta));
}
// dy swish'(x).
template <real_value V, class Z>
inline V swish_backward(Z const& z, V dy) noexcept {
  return math::silu_slope_times(z, dy, [&] {
    return quotient_form_swish_backward(z, quotient_form_swish_derivative<V>(z), dy);
  });
}
template <real_value V>
inline V swish_backward(V x, math::double_double beta, V dy) noexcept {
  return swish_backward(scaled_argument(x, beta), dy);
}
}  // namespace NONLIN_ISA
}  // namespace detail

// swish(x) = x sigmoid(beta x) (Ramachandran et al. 2017); derivative
// s + beta x s (1 - s), s = sigmoid(beta x). beta is taken as the double it is.
// Bound: 2 ulp forward, 2 ulp derivative, float and double, for every x (tested against
// MPFR: its row in catalog/, tests/accuracy_test.cpp).
struct swish {
  double beta = 1.0;

  // beta = 1 (the default) takes silu's path, whose z = x needs no low part: the same values,
  // a quarter fewer operations (one branch on the parameter, the same for every element).
  template <real_value V>
  NONLIN_ISA_TAG V operator()(V x) const noexcept {
    return beta == 1.0 ? math::x_sigmoid(x) : detail::swish_forward(x, {beta, 0.0});
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative(V x) const noexcept {
    return beta == 1.0 ? detail::swish_derivative<V>(x) : detail::swish_derivative(x, {beta, 0.0});
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward(V x, V dy) const noexcept {
    return beta == 1.0 ? detail::swish_backward(x, dy) : detail::swish_backward(x, {beta, 0.0}, dy);
  }
  // For the 16-bit kernels (math/true_side.hpp): x sigmoid(beta x) - x/2 has the sign of beta
  // for x != 0.
  template <real_value V>
  NONLIN_ISA_TAG V side_of_true_value(V x, V y) const noexcept {
    return math::side_beyond_product(math::c<V>(0.5), x, y, math::sign_of<V>(beta));
  }
};

// silu(x) = x sigmoid(x): swish with beta = 1 (minimum -0.278 near x = -1.278).
// Bound: 2 ulp forward, 2 ulp derivative, float and double, for every x (tested against
// MPFR: its row in catalog/, tests/accuracy_test.cpp).
struct silu {
  // One batch of the forward is a long chain (kernels.hpp: elementwise_interleaved).
  static constexpr bool long_forward_chain = true;

  template <real_value V>
  NONLIN_ISA_TAG V operator()(V x) const noexcept {
    return math::x_sigmoid(x);  // swish with beta = 1
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative(V x) const noexcept {
    return detail::swish_derivative<V>(x);
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward(V x, V dy) const noexcept {
    return detail::swish_backward(x, dy);
  }
  // For the 16-bit kernels (math/true_side.hpp): x sigmoid(x) > x/2 for x != 0.
  template <real_value V>
  NONLIN_ISA_TAG V side_of_true_value(V x, V y) const noexcept {
    return math::side_beyond_product(math::c<V>(0.5), x, y, math::c<V>(1));
  }
  // Both at once (the gated units need both): the same bits as operator() and derivative. From
  // one exp, unless the derivative comes from the table (math/silu_slope.hpp).
  template <real_value V>
  NONLIN_ISA_TAG value_and_slope<V> value_and_derivative(V x) const noexcept {
    if constexpr (math::has_slope_tables<V>) {
      return {math::x_sigmoid(x), detail::swish_derivative<V>(x)};
    } else {
      auto both = math::x_sigmoid_and_derivative(x, detail::one_plus_argument(x));
      return {both.value, detail::patched_silu_derivative(both.derivative, detail::as_pair(x))};
    }
  }
  // backward(x, dy) from derivative(x) already evaluated.
  template <real_value V>
  NONLIN_ISA_TAG V backward_given_derivative(V x, V derivative, V dy) const noexcept {
    return math::within_slope_table(
        x, [&] { return dy * derivative; },
        [&] { return detail::quotient_form_swish_backward(x, derivative, dy); });
  }
};

// gelu_quick(x) = x sigmoid(k x), k = 1.702 (the real number, carried to 2^-100): CLIP's
// QuickGELU; derivative s + k x s (1 - s).
// Bound: 2 ulp forward, 2 ulp derivative, float and double, for every x (tested against
// MPFR: its row in catalog/, tests/accuracy_test.cpp).
struct gelu_quick {
  double k = math::gelu_quick_k;

  template <real_value V>
  NONLIN_ISA_TAG V operator()(V x) const noexcept {
    return detail::swish_forward(x, slope());
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative(V x) const noexcept {
    return detail::swish_derivative(x, slope());
  }
  template <real_value V>
  NONLIN_ISA_TAG V backward(V x, V dy) const noexcept {
    return detail::swish_backward(x, slope(), dy);
  }
  // For the 16-bit kernels (math/true_side.hpp): x sigmoid(k x) - x/2 has the sign of k.
  template <real_value V>
  NONLIN_ISA_TAG V side_of_true_value(V x, V y) const noexcept {
    return math::side_beyond_product(math::c<V>(0.5), x, y, math::sign_of<V>(k));
  }
  // k as the double_double it stands for (also the 16-bit kernels' fast twin's: detail/fast16.hpp).
  NONLIN_ISA_TAG math::double_double slope() const noexcept {
    return k == math::gelu_quick_k ? math::gelu_quick_slope : math::double_double{k, 0.0};
  }
};

// hardswish(x) = x relu6(x + 3) / 6 (MobileNetV3): 0 for x <= -3, x for x >= 3, else
// x (x + 3) / 6; derivative (2x + 3) / 6 inside, 0 and 1 on the closed saturation regions.
// Bound: 2 ulp forward, 2 ulp derivative, float and double, for every x (tested against
// MPFR: its row in catalog/, tests/accuracy_test.cpp).
struct hardswish {
  template <real_value V>
  NONLIN_ISA_TAG V operator()(V x) const noexcept {
    V const inner = math::divide_by_integer(x * (x + math::c<V>(3)), scalar_t<V>(6));
    return math::select(x <= math::c<V>(-3), V(0), math::select(x >= math::c<V>(3), x, inner));
  }
  template <real_value V>
  NONLIN_ISA_TAG V derivative(V x) const noexcept {
    return backward(x, math::c<V>(1));
  }
  // Selects on the pieces whose derivative is 0 or 1 (dy = inf at x <= -3 gives 0, not NaN).
  template <real_value V>
  NONLIN_ISA_TAG V backward(V x, V dy) const noexcept {
    V const inner = math::divide_by_integer(x + x + math::c<V>(3), scalar_t<V>(6));
    return backward_given_inside(x, dy, dy * inner);
  }
  // backward(x, dy) with its value inside (-3, 3) given (also the 16-bit twin's:
  // detail/fast16.hpp).
  template <real_value V>
  NONLIN_ISA_TAG static V backward_given_inside(V x, V dy, V inside_value) noexcept {
    V const outer = math::select(x <= math::c<V>(-3), V(0), dy);
    auto inside = math::both(x > math::c<V>(-3), x < math::c<V>(3));
    return math::keep_nan(x, math::select(inside, inside_value, outer));
  }
  // For the 16-bit kernels (kernels.hpp, tested16): lanes whose float result rounded once to 16
  // bits is the correctly rounded value, so that their midpoint test is skipped. Results from
  // 16-bit inputs are often exact multiples of a 16-bit midpoint's last bit: on the benchmarks'
  // bfloat16 inputs the test sent 23% of the iterations of 64 to the recomputation in double,
  // every flagged lane such a one. Named: the lanes where t = x + 3 and p = x t are exact in
  // float (t - 3 == x: exact by Sterbenz for t >= 3/2, and t is exact below; p: two_product).
  // Then the result q is p / 6 rounded once (divide_by_integer), and if q is a 16-bit midpoint
  // M in [2^e, 2^(e+1)), p / 6 is M itself: p is a float near 6 M >= 2^(e+2), so p - 6 M is a
  // multiple of p's last bit, 2^(e-21) or more, and p / 6 would lie at least 2^(e-21) / 6 >
  // 2^(e-24) (half a float step of M) away from M, where it does not round to M. Any other q
  // rounds to 16 bits as p / 6 does (no midpoint lies between them). An exact t makes x 0 or
  // |x| >= 2^-23, so p does not underflow. Outside (-3, 3) the result is x or 0, exact on any
  // lane. From bfloat16 inputs every |x| in [2^-6, 3) is named; from float16 ones in [1, 3).
  template <real_value V>
  NONLIN_ISA_TAG math::mask_t<V> correctly_rounded_forward16(V x) const noexcept {
    V const t = x + math::c<V>(3);
    return math::both(t - math::c<V>(3) == x, math::two_product(x, t).lo == V(0));
  }
  // For the 16-bit kernels (math/true_side.hpp): x relu6(x + 3) / 6 > x/2 for x != 0
  // (relu6(x + 3) / 6 rises through 1/2 at 0 and is flat only beyond +-3, where x or 0 is).
  template <real_value V>
  NONLIN_ISA_TAG V side_of_true_value(V x, V y) const noexcept {
    return math::side_beyond_product(math::c<V>(0.5), x, y, math::c<V>(1));
  }
};

}  // namespace nonlin
