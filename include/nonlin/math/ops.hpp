// SPDX-License-Identifier: MIT
#pragma once
// The handful of operations nonlin's math is written in, each with one meaning for float,
// double and every xsimd::batch: select, fused multiply-add, bit access, NaN tests.
//
// Why these and not xsimd's scalar overloads: xsimd 8.1 forwards scalar math to std::, whose
// algorithms differ from its batch kernels, so a scalar and a SIMD lane would round differently.
// Everything nonlin computes is built from +, -, *, /, comparisons, select, bit operations and
// the fma below, which round the same way in a scalar register and in every lane.

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "../concepts.hpp"
#include "../isa.hpp"
#include "arch.hpp"

// GCC 12 warns that the batch loop's full-width load reads past a span it has seen
// allocated with fewer elements than a batch (-Warray-bounds, x86-64-v2: a 3-float row), on a
// path where the loop cannot run (i + width <= n fails).
#if defined(__GNUC__) && !defined(__clang__)
#define NONLIN_LOOP_DIAGNOSTICS_PUSH \
  _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Warray-bounds\"")
#define NONLIN_LOOP_DIAGNOSTICS_POP _Pragma("GCC diagnostic pop")
#else
#define NONLIN_LOOP_DIAGNOSTICS_PUSH
#define NONLIN_LOOP_DIAGNOSTICS_POP
#endif

#if defined(__GNUC__) || defined(__clang__)
#define NONLIN_FLATTEN __attribute__((flatten))
#else
#define NONLIN_FLATTEN
#endif

// GCC's first instruction scheduling pass (-fschedule-insns, which x86 leaves off; aarch64 runs
// it), weighing register pressure, for the span kernels whose one batch is a long chain of
// dependent operations (kernels.hpp, elementwise_interleaved). Other compilers schedule their own
// way.
#if defined(__GNUC__) && !defined(__clang__)
#define NONLIN_INTERLEAVED __attribute__((optimize("schedule-insns", "sched-pressure")))
#else
#define NONLIN_INTERLEAVED
#endif

namespace nonlin::math {
inline namespace NONLIN_ISA {

namespace detail {
template <class V>
struct companions;

template <>
struct companions<float> {
  using mask = bool;
  using integer = std::int32_t;
};
template <>
struct companions<double> {
  using mask = bool;
  using integer = std::int64_t;
};
template <class T, class A>
struct companions<xsimd::batch<T, A>> {
  using mask = xsimd::batch_bool<T, A>;
  using integer = xsimd::batch<typename companions<T>::integer, A>;
};
}  // namespace detail

// The comparison result of V (bool or batch_bool) and the same-width signed integer of V.
template <real_value V>
using mask_t = typename detail::companions<V>::mask;
template <real_value V>
using int_t = typename detail::companions<V>::integer;

// A constant of the value type: c<V>(0.5) is 0.5 rounded to scalar_t<V>, broadcast if needed.
template <real_value V>
inline V c(double value) noexcept {
  return V(static_cast<scalar_t<V>>(value));
}

template <real_value V>
inline V select(mask_t<V> const& m, V const& a, V const& b) noexcept {
  if constexpr (is_batch_v<V>) {
    return xsimd::select(m, a, b);
  } else {
    return m ? a : b;
  }
}

// a and b for bool or batch_bool (bool & bool would be an int).
template <class M>
inline M both(M const& a, M const& b) noexcept {
  if constexpr (std::is_same_v<M, bool>) {
    return a && b;
  } else {
    return a & b;
  }
}

// a or b for bool or batch_bool.
template <class M>
inline M either(M const& a, M const& b) noexcept {
  if constexpr (std::is_same_v<M, bool>) {
    return a || b;
  } else {
    return a | b;
  }
}

template <class M>
inline bool any(M const& m) noexcept {
  if constexpr (std::is_same_v<M, bool>) {
    return m;
  } else {
    return xsimd::any(m);
  }
}

template <class M>
inline bool all(M const& m) noexcept {
  if constexpr (std::is_same_v<M, bool>) {
    return m;
  } else {
    return xsimd::all(m);
  }
}

// a*b + c. Where the target has an FMA unit this is one rounding, for scalars and every batch
// width alike (xsimd 8.1's own fma is unfused on AVX-512). Without one it is two roundings for
// both, and no compiler can contract either, so scalar and SIMD still agree.
template <real_value V>
inline V fma(V const& a, V const& b, V const& c) noexcept {
  if constexpr (arch::has_fma<V>) {
    return arch::fma(a, b, c);
  } else {
    return a * b + c;
  }
}

// +0 where zero, fma(a, b, c) elsewhere: one zero-masked fma on 512-bit batches, a select
// elsewhere (the same bits).
template <real_value V>
inline V fma_or_zero(mask_t<V> const& zero, V const& a, V const& b, V const& c) noexcept {
  if constexpr (arch::has_masked_arithmetic<V>) {
    return arch::fma_or_zero(zero, a, b, c);
  } else {
    return math::select(zero, V(0), math::fma(a, b, c));
  }
}

// c - a*b: fma(-a, b, c) without the sign flip as an instruction of its own (math::neg works on
// the bits, which compilers do not fold into the fma). The same bits: without an FMA unit,
// (-a) b + c and c - a b round alike.
template <real_value V>
inline V fnma(V const& a, V const& b, V const& c) noexcept {
  if constexpr (arch::has_fma<V>) {
    return arch::fnma(a, b, c);
  } else {
    return c - a * b;
  }
}

// a*b - c: fma(a, b, -c) likewise.
template <real_value V>
inline V fms(V const& a, V const& b, V const& c) noexcept {
  if constexpr (arch::has_fma<V>) {
    return arch::fms(a, b, c);
  } else {
    return a * b - c;
  }
}

// a / b rounded once, for scalars and every batch. Not / on a batch: xsimd 8.1 divides float
// batches on aarch64 by an estimate and Newton steps, up to an ulp off (arch::divide), so
// nonlin's math divides through here.
template <real_value V>
inline V divide(V const& a, V const& b) noexcept {
  if constexpr (arch::has_divide<V>) {
    return arch::divide(a, b);
  } else {
    return a / b;
  }
}

template <real_value V>
inline int_t<V> as_bits(V const& x) noexcept {
  if constexpr (is_batch_v<V>) {
    return xsimd::bitwise_cast<int_t<V>>(x);
  } else {
    return std::bit_cast<int_t<V>>(x);
  }
}

template <real_value V>
inline V from_bits(int_t<V> const& i) noexcept {
  if constexpr (is_batch_v<V>) {
    return xsimd::bitwise_cast<V>(i);
  } else {
    return std::bit_cast<V>(i);
  }
}

// Not x != x: xsimd 8.1's batch != on AVX-512 is an ordered compare, false for NaN.
template <real_value V>
inline mask_t<V> is_nan(V const& x) noexcept {
  if constexpr (is_batch_v<V>) {
    return xsimd::isnan(x);
  } else {
    return std::isnan(x);
  }
}

// The largest integer <= x (exact; NaN and +-inf as they are).
template <real_value V>
inline V floor(V const& x) noexcept {
  if constexpr (arch::has_round_down<V>) {
    return arch::round_down(x);
  } else if constexpr (is_batch_v<V>) {
    return xsimd::floor(x);
  } else {
    return std::floor(x);
  }
}

template <real_value V>
inline V abs(V const& x) noexcept {
  using I = typename detail::companions<scalar_t<V>>::integer;
  return math::from_bits<V>(math::as_bits(x) & int_t<V>(std::numeric_limits<I>::max()));
}

// The sign bit of x alone (+0.0 or -0.0).
template <real_value V>
inline V sign_bit(V const& x) noexcept {
  using I = typename detail::companions<scalar_t<V>>::integer;
  return math::from_bits<V>(math::as_bits(x) & int_t<V>(std::numeric_limits<I>::min()));
}

// -x by flipping the sign bit. Not the unary minus: xsimd 8.1 computes that as 0 - x on
// AVX-512, which gives +0 for x = +0 where a scalar gives -0.
template <real_value V>
inline V neg(V const& x) noexcept {
  using I = typename detail::companions<scalar_t<V>>::integer;
  return math::from_bits<V>(math::as_bits(x) ^ int_t<V>(std::numeric_limits<I>::min()));
}

// -|x|: the sign bit set, one or (neg(abs(x)) is an and and an xor that compilers keep apart).
template <real_value V>
inline V neg_abs(V const& x) noexcept {
  using I = typename detail::companions<scalar_t<V>>::integer;
  return math::from_bits<V>(math::as_bits(x) | int_t<V>(std::numeric_limits<I>::min()));
}

// A magnitude whose sign bit is clear (a NaN included) with the sign of s: copysign without
// clearing what is clear already (one vpternlog instead of an and and a vpternlog).
template <real_value V>
inline V with_sign_of(V const& magnitude, V const& s) noexcept {
  return math::from_bits<V>(math::as_bits(magnitude) | math::as_bits(math::sign_bit(s)));
}

// |magnitude| with the sign of s.
template <real_value V>
inline V copysign(V const& magnitude, V const& s) noexcept {
  return math::with_sign_of(math::abs(magnitude), s);
}

namespace detail {
// x86's max (take_max) or min of (bound, x): "bound > x ? bound : x" / "bound < x ? bound : x",
// x where either is NaN; one instruction on batches, the same select on scalars.
template <bool take_max, real_value V>
inline V bound_or_x(V const& bound, V const& x) noexcept {
  if constexpr (arch::has_min_max<V>) {
    return arch::min_max<take_max>(bound, x);
  } else if constexpr (take_max) {
    return math::select(bound > x, bound, x);
  } else {
    return math::select(bound < x, bound, x);
  }
}
}  // namespace detail

// NaN-propagating clamps: a NaN x comes out as NaN. With the bound first, x86's min/max is
// exactly the select "x > hi ? hi : x" (also for -0 against +0), in one instruction instead of a
// compare and a blend.
template <real_value V>
inline V clamp_above(V const& x, V const& hi) noexcept {
  return detail::bound_or_x<false>(hi, x);
}
template <real_value V>
inline V clamp_below(V const& x, V const& lo) noexcept {
  return detail::bound_or_x<true>(lo, x);
}

// max(-|x|, bound) for a bound <= 0: -|x| clamped below. One vrange on 512-bit batches
// (arch::neg_abs_at_least), else an or and a max; the same value for every x that is not a
// NaN. A NaN x gives a NaN in the portable form and the bound from vrange: only for callers
// whose result carries the NaN through another operand (math::exp_scaled_of_neg_abs).
template <real_value V>
inline V neg_abs_at_least(V const& x, V const& bound) noexcept {
  if constexpr (arch::has_neg_abs_at_least<V>) {
    return arch::neg_abs_at_least(x, bound);
  } else {
    return math::clamp_below(math::neg_abs(x), bound);
  }
}

// The responses of arch::fixup_by_class's tables, by name.
using fixup = arch::fixup_response;

// Where x is NaN give x, elsewhere v: for results that a select would otherwise make finite.
// On 512-bit batches one vfixupimm (arch::fixup_by_class) instead of a compare (port 5 only on
// Intel) and a blend.
template <real_value V>
inline V keep_nan(V const& x, V const& v) noexcept {
  if constexpr (arch::has_fixup_by_class<V>) {
    return arch::fixup_by_class<arch::fixup_table(
        {.quiet_nan = fixup::x, .signaling_nan = fixup::x})>(v, x);
  } else {
    return math::select(math::is_nan(x), x, v);
  }
}

// x where x is NaN, +-0 or +inf, v elsewhere: the limits of x sigma(x) (math/logistic.hpp). On
// 512-bit batches one vfixupimm (arch::fixup_by_class); elsewhere the same select, in a branch
// taken by the batches that hold such a lane (the compares cost more than the select there).
template <real_value V>
inline V x_where_zero_nan_or_plus_infinity(V const& x, V const& v) noexcept {
  if constexpr (arch::has_fixup_by_class<V>) {
    return arch::fixup_by_class<arch::fixup_table({.quiet_nan = fixup::x,
                                                   .signaling_nan = fixup::x,
                                                   .zero = fixup::x,
                                                   .plus_infinity = fixup::x})>(v, x);
  } else {
    auto const special =
        math::either(math::is_nan(x),
                     math::either(x == V(0), x == V(std::numeric_limits<scalar_t<V>>::infinity())));
    if (math::any(special)) [[unlikely]] {
      return math::select(special, x, v);
    }
    return v;
  }
}

// v where x > 0, x where x is NaN, +0 elsewhere (relu's backward, step): on 512-bit batches one
// vfixupimm (arch::fixup_by_class) instead of a compare and a blend and a NaN test and a blend;
// the same bits for every x (math_test, every float).
template <real_value V>
inline V where_positive(V const& x, V const& v) noexcept {
  if constexpr (arch::has_fixup_by_class<V>) {
    constexpr auto table = arch::fixup_table({.quiet_nan = fixup::x,
                                              .signaling_nan = fixup::x,
                                              .zero = fixup::plus_zero,
                                              .minus_infinity = fixup::plus_zero,
                                              .negative = fixup::plus_zero});
    return arch::fixup_by_class<table>(v, x);
  } else {
    return math::keep_nan(x, math::select(x > V(0), v, V(0)));
  }
}

// x where x > 0 or x is NaN, +0 elsewhere (relu, -0 included): where_positive(x, x), whose
// portable form a compare and a blend do alone (a NaN x fails x <= 0).
template <real_value V>
inline V positive_part(V const& x) noexcept {
  if constexpr (arch::has_fixup_by_class<V>) {
    return math::where_positive(x, x);
  } else {
    return math::select(x <= V(0), V(0), x);
  }
}

// 1 where z >= 0 (-0 included), v where z < 0 (the logistic's numerator). Where z is NaN: z on
// 512-bit batches, one vfixupimm (arch::fixup_by_class) instead of a compare (port 5 only on
// Intel) and a blend; v elsewhere, so a caller must pass a v that is NaN where z is unless the
// target has the instruction (math::sigmoid: e^-|z| keeps a NaN z exactly where the vrange that
// drops it is missing, and every target with vrange has vfixupimm).
template <real_value V>
inline V one_where_nonnegative(V const& z, V const& v) noexcept {
  if constexpr (arch::has_fixup_by_class<V>) {
    constexpr auto table = arch::fixup_table({.quiet_nan = fixup::x,
                                              .signaling_nan = fixup::x,
                                              .zero = fixup::plus_one,
                                              .plus_one = fixup::plus_one,
                                              .plus_infinity = fixup::plus_one,
                                              .positive = fixup::plus_one});
    return arch::fixup_by_class<table>(v, z);
  } else {
    return math::select(z >= V(0), math::c<V>(1), v);
  }
}

// 1 where y > 0, v elsewhere (a NaN y included): the exponential linear units' slope from their
// output. One vfixupimm on 512-bit batches, a compare and a blend elsewhere; the same bits.
template <real_value V>
inline V one_where_positive(V const& y, V const& v) noexcept {
  if constexpr (arch::has_fixup_by_class<V>) {
    constexpr auto table = arch::fixup_table({.plus_one = fixup::plus_one,
                                              .plus_infinity = fixup::plus_one,
                                              .positive = fixup::plus_one});
    return arch::fixup_by_class<table>(v, y);
  } else {
    return math::select(y > V(0), math::c<V>(1), v);
  }
}

// x is 0 or infinite: where a first-order correction x (1 + delta) must leave x alone. On
// 512-bit batches one vfpclass (classes +-0, +-inf) instead of two compares, an and and an or.
template <real_value V>
inline mask_t<V> zero_or_infinite(V const& x) noexcept {
  if constexpr (arch::has_zero_or_infinite_class<V>) {
    return arch::zero_or_infinite_class(x);
  } else {
    return math::either(x == V(0), math::abs(x) == V(std::numeric_limits<scalar_t<V>>::infinity()));
  }
}

// x is +-0, +-inf or subnormal (|x| below the smallest normal number, or infinite).
template <real_value V>
inline mask_t<V> zero_infinite_or_subnormal(V const& x) noexcept {
  if constexpr (arch::has_zero_or_infinite_class<V>) {
    return arch::zero_infinite_or_subnormal_class(x);
  } else {
    return math::either(math::zero_or_infinite(x),
                        math::abs(x) < V(std::numeric_limits<scalar_t<V>>::min()));
  }
}

// 1/x to about 2^-14 relative (vrcp14 with AVX-512, for scalars too; a division elsewhere): for
// the small correction terms of double-float quotients, where 2^-14 of a term of 2^-24 is far
// below any rounding, and a division would cost more than the whole correction.
template <real_value V>
inline V approx_reciprocal(V const& x) noexcept {
  if constexpr (arch::has_reciprocal_estimate<V>) {
    return arch::reciprocal_estimate(x);
  } else {
    return math::divide(math::c<V>(1), x);
  }
}

}  // namespace NONLIN_ISA
}  // namespace nonlin::math
