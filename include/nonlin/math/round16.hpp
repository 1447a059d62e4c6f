// SPDX-License-Identifier: MIT
#pragma once
// Correct rounding to a 16-bit storage type (bfloat16, float16) from a float result that is
// within a few ulp of the true value, for the span kernels (kernels.hpp).
//
// Rounding a float result once to 16 bits gives the correctly rounded value unless the true
// value and the float result lie on different sides of a 16-bit rounding midpoint, which they
// can only do when the float result is within its own error of that midpoint. 16-bit midpoints
// are floats (bfloat16 keeps 8 significant bits, float16 11: a midpoint needs one more), so
// "within k float ulp of one" is a test on the float's bits:
//
//   near_midpoint16<T>(m)      m: |r|'s bits (int32, scalar or batch). True where r lies within
//                              midpoint_margin float steps of a midpoint of T (float16 below
//                              2^-14: a superset, see there); inf: false; a NaN may be marked
//                              (its recomputation is a NaN as well)
//   round_to_odd(d)            d rounded to float toward zero, its last bit set where inexact: a
//                              float that then rounds to 16 bits as d itself would (24 >= 11 + 2
//                              bits; the same holds for the subnormal ranges, float's being finer)
//
// The kernels recompute the lanes near a midpoint in double (the same functor) and store
// round_to_odd of that: correctly rounded unless the true value is within double's error of a
// midpoint too; where double lands exactly on one, the functor's side_of_true_value decides
// (math/true_side.hpp, toward_side below; tools/accuracy.cpp --storage16 counts the results that
// are not correctly rounded, over all 65536 inputs of every function: 0 for the catalog). A lane is
// near a midpoint with probability 2 k / 2^16 (bfloat16) and 2 k / 2^13 (float16 normal results).

#include <bit>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include "../float16.hpp"
#include "../isa.hpp"
#include "arch.hpp"
#include "float16_bits.hpp"
#include "ops.hpp"

namespace nonlin::math {
inline namespace NONLIN_ISA {

NONLIN_INTRINSIC_DIAGNOSTICS_PUSH

// The floats that count as near a midpoint M: a window of W floats (W a power of two) from
// M - W/2 to M + W/2 - 1 float steps, tested as ((bits + W/2 - M's field) & field & ~(W - 1)) ==
// 0, an add and one vptestnm. The kernels' window, 16, is wider on each side than every
// default-tier function's float error (3.33 ulp at most with an FMA unit, docs/accuracy.md; the
// tests hold every row to 5 without one, tests/accuracy_test.cpp): a lane is recomputed in double
// with probability 16 / 2^16 (bfloat16) or 16 / 2^13 (float16). A kernel whose float comes from a
// less accurate evaluation may take a wider window (detail/fast16.hpp: 32 for the 16-bit
// backward of swish and gelu_quick), at the same cost a lane and twice the recomputations.
inline constexpr std::int32_t midpoint_window = 16;
// The steps on each side of a window of W; the margin, the smaller side, is what an evaluation's
// error must stay within.
template <std::int32_t W = midpoint_window>
inline constexpr std::int32_t midpoint_steps_below_in = W / 2;
template <std::int32_t W = midpoint_window>
inline constexpr std::int32_t midpoint_margin_in = W / 2 - 1;
inline constexpr std::int32_t midpoint_margin = midpoint_margin_in<>;  // the smaller side

// (a & m) == 0, one instruction where the arch layer has it.
template <class V>
constexpr auto bits_clear(V const& a, V const& m) noexcept {
  if constexpr (arch::has_bits_clear<V>) {
    return arch::bits_clear(a, m);
  } else {
    return (a & m) == V(0);
  }
}

// m: a float's magnitude bits (0 to 0x7fffffff); for bfloat16 any bits of the float (its sign
// does not matter there). W: the window (above).
template <storage16 T, std::int32_t W = midpoint_window, class V>
constexpr auto near_midpoint16(V const& m) noexcept {
  static_assert(W >= 2 && (W & (W - 1)) == 0 && W <= 0x400);
  constexpr std::int32_t below = midpoint_steps_below_in<W>;
  if constexpr (std::is_same_v<T, bfloat16>) {
    // bfloat16 drops a float's low 16 bits in every binade, subnormals included: the midpoint
    // is a dropped field of 0x8000. The field of the sum depends on the low 16 bits of the
    // float alone, so the sign bit may be there: an add and one vptestnmd.
    return math::bits_clear(m + V(below - 0x8000), V(0x10000 - W));
  } else {
    // float16 drops a float's low 13 bits from 2^-14 on. Below, its step is 2^-24: adding 2^-14
    // to |r| puts those steps at the same 13-bit field, the sum rounded to a step of 2^-37 at
    // most, so every float within k of its own (finer) steps of a midpoint is still within
    // k + 1/2 of the sum's steps: a superset of the near lanes (a window of at least 7 of the
    // sum's steps, of 2^-37, is at least as wide as 7 of the finer ones), flagging as large a
    // share of them as above 2^-14. From 65536 on every value rounds to inf; the field test
    // there only costs a recomputation.
    using F = decltype(bits16::as_float(m));
    F const magnitude = bits16::as_float(m);
    F const smallest_normal(0x1p-14F);
    V const s = bits16::as_bits(
        math::select(magnitude < smallest_normal, magnitude + smallest_normal, magnitude));
    return math::bits_clear(s + V(below - 0x1000), V(0x2000 - W));
  }
}

// d rounded to odd at float's precision: the nearest float toward zero, with its last bit set
// where that is not d itself. Beyond the float range: the largest float (odd), which every
// 16-bit type rounds to inf, as it does d. NaN stays NaN.
inline float round_to_odd(double d) noexcept {
  float const nearest = static_cast<float>(d);
  double const back = static_cast<double>(nearest);
  // Without branches (the kernels call it on the lanes near a midpoint, which fall at random):
  // a magnitude rounded up (inf included) steps one float down toward zero, an inexact result
  // gets its last bit set; NaN compares false both times and comes back as it was rounded.
  auto const step = static_cast<std::uint32_t>(std::abs(back) > std::abs(d));
  auto const odd = static_cast<std::uint32_t>(back < d || back > d);
  return std::bit_cast<float>((std::bit_cast<std::uint32_t>(nearest) - step) | odd);
}

// A double y moved toward side s (+1 up, -1 down, 0 not at all; a functor's
// side_of_true_value, math/true_side.hpp) by |y| 2^-40, where y is exactly a finite float
// (its low 29 bits clear): less than any float step, so round_to_odd of it is a float beyond y on
// that side (where y's last bit is clear, as a midpoint's is: the next one), and a y on a 16-bit
// midpoint rounds the true value's way. Elsewhere y as it was: round_to_odd already marks it
// inexact, and moving it could land on a float, perhaps a midpoint. (|y| 2^-40 and the sum are
// exact: y has 24 significant bits.)
template <real_value V>
inline V toward_side(V const& y, V const& s) noexcept {
  static_assert(std::is_same_v<scalar_t<V>, double>);
  using I = int_t<V>;
  V const truncated = math::from_bits<V>(math::as_bits(y) & I(~std::int64_t{0x1fffffff}));
  auto const on_float = math::both(truncated == y, math::abs(y) <= V(0x1.fffffep127));
  V const moved = y + (s * math::abs(y)) * V(0x1p-40);
  return math::select(math::both(on_float, s != V(0)), moved, y);
}

NONLIN_INTRINSIC_DIAGNOSTICS_POP

}  // namespace NONLIN_ISA
}  // namespace nonlin::math
