// SPDX-License-Identifier: MIT
#pragma once
// 16-bit storage: bfloat16 (8 exponent bits, 7 mantissa bits: float's range) and float16
// (IEEE binary16: 5 and 10). They are formats to keep arrays in, not to compute in: the span
// kernels (kernels.hpp) widen them to float, run the float functor and round once on the store.
//
//   float(v)          exact widening (a float16 signaling NaN comes back quiet, as vcvtph2ps does)
//   T::from_float(x)  round to nearest, ties to even; +-0 and +-inf kept; a NaN stays a NaN of
//                     the same sign with the quiet bit set and its top payload bits kept;
//                     float16: subnormal results rounded, |x| >= 65520 to +-inf
//
// Each is an aggregate of one public std::uint16_t `bits`, trivially copyable and standard
// layout, 2 bytes: a buffer of std::uint16_t (or of C++23 std::bfloat16_t / std::float16_t)
// moves in and out by std::bit_cast or std::memcpy, with no conversion.

#include <bit>
#include <concepts>
#include <cstdint>
#include <type_traits>

#include "isa.hpp"
#include "math/float16_bits.hpp"

namespace nonlin {

namespace detail {
inline namespace NONLIN_ISA {
constexpr std::uint16_t low_16_bits(std::int32_t bits) noexcept {
  return static_cast<std::uint16_t>(bits & 0xffff);
}
}  // namespace NONLIN_ISA
}  // namespace detail

struct bfloat16 {
  std::uint16_t bits;

  NONLIN_ISA_TAG explicit constexpr operator float() const noexcept {
    return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
  }
  NONLIN_ISA_TAG static constexpr bfloat16 from_float(float x) noexcept {
    return {detail::low_16_bits(
        math::bits16::bfloat16_bits_from_float(std::bit_cast<std::int32_t>(x)))};
  }
};

struct float16 {
  std::uint16_t bits;

  NONLIN_ISA_TAG explicit constexpr operator float() const noexcept {
    return std::bit_cast<float>(math::bits16::float_bits_from_float16(std::int32_t{bits}));
  }
  NONLIN_ISA_TAG static constexpr float16 from_float(float x) noexcept {
    return {
        detail::low_16_bits(math::bits16::float16_bits_from_float(std::bit_cast<std::int32_t>(x)))};
  }
};

// The 16-bit storage types the span kernels take.
template <class T>
concept storage16 = std::same_as<T, bfloat16> || std::same_as<T, float16>;

static_assert(sizeof(bfloat16) == 2 && sizeof(float16) == 2);
static_assert(std::is_trivially_copyable_v<bfloat16> && std::is_trivially_copyable_v<float16>);
static_assert(std::is_standard_layout_v<bfloat16> && std::is_standard_layout_v<float16>);
static_assert(std::is_aggregate_v<bfloat16> && std::is_aggregate_v<float16>);

}  // namespace nonlin
