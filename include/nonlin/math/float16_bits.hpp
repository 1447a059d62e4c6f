// SPDX-License-Identifier: MIT
#pragma once
// The 16-bit conversions as integer arithmetic on a float's bits, written once for a
// std::int32_t and for an xsimd::batch<std::int32_t>: the scalar types (float16.hpp) and the
// portable SIMD path (convert16.hpp) run the same text, so they give the same bits. The
// instructions the arch layer uses instead (F16C, AVX-512 BF16) are checked against these.
//
//   bfloat16_bits_from_float   round to nearest even; NaN quiet, same sign, top payload bits
//   float16_bits_from_float    the same; subnormal results rounded, >= 65520 to inf
//   float_bits_from_float16    exact; a signaling NaN comes back quiet, as vcvtph2ps does
//
// Bits are held in int32 (a float's bits with the sign in bit 31; a 16-bit value zero-extended):
// every formula works on the magnitude, which is >= 0, so signed compares and shifts are exact.

#include <bit>
#include <cstdint>

#include <xsimd/xsimd.hpp>

#include "../isa.hpp"
#include "arch.hpp"

namespace nonlin::math::bits16 {
inline namespace NONLIN_ISA {

// xsimd's lane shifts inline AVX-512 intrinsics that g++ 12 misreports (arch.hpp).
NONLIN_INTRINSIC_DIAGNOSTICS_PUSH

constexpr std::int32_t pick(bool condition, std::int32_t if_true, std::int32_t if_false) noexcept {
  return condition ? if_true : if_false;
}
template <class A>
xsimd::batch<std::int32_t, A> pick(xsimd::batch_bool<std::int32_t, A> const& condition,
                                   xsimd::batch<std::int32_t, A> const& if_true,
                                   xsimd::batch<std::int32_t, A> const& if_false) noexcept {
  return xsimd::select(condition, if_true, if_false);
}

constexpr float as_float(std::int32_t bits) noexcept { return std::bit_cast<float>(bits); }
template <class A>
xsimd::batch<float, A> as_float(xsimd::batch<std::int32_t, A> const& bits) noexcept {
  return xsimd::bitwise_cast<xsimd::batch<float, A>>(bits);
}
constexpr std::int32_t as_bits(float x) noexcept { return std::bit_cast<std::int32_t>(x); }
template <class A>
xsimd::batch<std::int32_t, A> as_bits(xsimd::batch<float, A> const& x) noexcept {
  return xsimd::bitwise_cast<xsimd::batch<std::int32_t, A>>(x);
}

inline constexpr std::int32_t float_infinity = 0x7f800000;

// The sign bit of a float moved to bit 15 (arithmetic shift: bit 15 of u >> 16 is bit 31 of u).
template <class V>
constexpr V sign16(V const& u) noexcept {
  return (u >> 16) & V(0x8000);
}

template <class V>
constexpr V bfloat16_bits_from_float(V const& u) noexcept {
  V const magnitude = u & V(0x7fffffff);
  // Adding 0x7fff plus the kept part's lowest bit rounds to nearest, ties to even; a carry
  // moves into the exponent, up to inf past the largest bfloat16. Subnormals are rounded too
  // (vcvtneps2bf16 flushes them; convert16.hpp fixes those lanes up). NaN magnitudes are held
  // at inf's for this sum, which would overflow int32 for them (UB in the scalar code; the NaN
  // lanes take quiet_nan below either way).
  V const finite = pick(magnitude > V(float_infinity), V(float_infinity), magnitude);
  V const rounded = (finite + V(0x7fff) + ((finite >> 16) & V(1))) >> 16;
  // A NaN keeps its sign and top payload bits with the quiet bit set: a NaN never rounds to inf.
  V const quiet_nan = (magnitude >> 16) | V(0x0040);
  return sign16(u) | pick(magnitude > V(float_infinity), quiet_nan, rounded);
}

template <class V>
constexpr V float16_bits_from_float(V const& u) noexcept {
  V const magnitude = u & V(0x7fffffff);
  // Normal results: the exponent rebiased from 127 to 15, rounded to 10 mantissa bits as
  // above; from 65520 on the carry reaches 0x7c00 (inf), beyond it the sum only grows.
  V const rebiased = magnitude - V((127 - 15) << 23);
  V const normal = (rebiased + V(0xfff) + ((magnitude >> 13) & V(1))) >> 13;
  V const finite_or_inf = pick(normal > V(0x7c00), V(0x7c00), normal);
  // Below 2^-14 the result is subnormal: the significand with its implicit bit, shifted right
  // by 126 - exponent (14 to 25) and rounded to nearest even. From a shift of 25 on the value
  // is below half the smallest subnormal (0 after rounding), so the shift stops there; lanes at
  // 2^-14 and above take another result, and their shift is held at 14 only to stay defined.
  V const exponent = magnitude >> 23;
  V const significand = (magnitude & V(0x7fffff)) | V(0x800000);
  V const shift =
      pick(exponent < V(126 - 25), V(25), pick(exponent > V(126 - 14), V(14), V(126) - exponent));
  V const below_half = (V(1) << (shift - V(1))) - V(1);
  V const subnormal = (significand + below_half + ((significand >> shift) & V(1))) >> shift;
  V const quiet_nan = V(0x7e00) | ((magnitude >> 13) & V(0x3ff));
  V const smallest_normal = V(0x38800000);  // 2^-14
  return sign16(u) | pick(magnitude > V(float_infinity), quiet_nan,
                          pick(magnitude < smallest_normal, subnormal, finite_or_inf));
}

template <class V>
constexpr V float_bits_from_float16(V const& h) noexcept {
  V const sign = (h & V(0x8000)) << 16;
  V const magnitude = h & V(0x7fff);
  V const shifted = magnitude << 13;
  V const normal = shifted + V((127 - 15) << 23);
  // A subnormal m 2^-24 as (1 + m/1024) 2^-14 - 2^-14: both normal floats, the difference exact.
  V const two_to_minus_14 = V(0x38800000);
  V const subnormal = as_bits(as_float(shifted + two_to_minus_14) - as_float(two_to_minus_14));
  V const quiet_bit = pick(magnitude > V(0x7c00), V(0x00400000), V(0));
  V const inf_or_nan = shifted | V(float_infinity) | quiet_bit;
  return sign |
         pick(magnitude < V(0x0400), subnormal, pick(magnitude >= V(0x7c00), inf_or_nan, normal));
}

NONLIN_INTRINSIC_DIAGNOSTICS_POP

}  // namespace NONLIN_ISA
}  // namespace nonlin::math::bits16
