// SPDX-License-Identifier: MIT
#pragma once
// A batch of floats to and from B::size 16-bit values (bfloat16, float16) in memory, for the
// span kernels. Where the target has the instruction (F16C or AVX-512F for float16, AVX-512 BF16
// for narrowing to bfloat16) the arch layer does it; elsewhere the integer formulas of
// float16_bits.hpp run on int32 batches. Both give the scalar conversions' bits (float16.hpp).
//
//   load16<B>(p)      widen: exact
//   store16(x, p)     narrow: round to nearest even, once
//   store16_pair_unexceptional(a, b, p)   two batches none of whose lanes is among
//                     narrow16_exceptions<T>(x) (where has_narrow16_exceptions): untested
//   store16_pair_values(a, b, p)   two batches whose lanes are values of T or NaNs: untested

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include "../float16.hpp"
#include "../isa.hpp"
#include "arch.hpp"
#include "float16_bits.hpp"

namespace nonlin::math {
inline namespace NONLIN_ISA {

// xsimd's lane shifts inline AVX-512 intrinsics that g++ 12 misreports (arch.hpp).
NONLIN_INTRINSIC_DIAGNOSTICS_PUSH

namespace detail16 {

template <class B>
using int_batch = xsimd::batch<std::int32_t, typename B::arch_type>;

template <storage16 T>
std::uint16_t const* raw_bits(T const* p) noexcept {
  return reinterpret_cast<std::uint16_t const*>(p);
}
template <storage16 T>
std::uint16_t* raw_bits(T* p) noexcept {
  return reinterpret_cast<std::uint16_t*>(p);
}

template <class B, storage16 T>
NONLIN_ALWAYS_INLINE int_batch<B> load_zero_extended(T const* p) noexcept {
  if constexpr (arch::has_zero_extend16<B>) {
    return arch::zero_extend16<B>(raw_bits(p));
  } else {
    alignas(64) std::array<std::int32_t, B::size> wide;
    for (std::size_t k = 0; k < B::size; ++k) {
      wide[k] = p[k].bits;
    }
    return int_batch<B>::load_aligned(wide.data());
  }
}

// Lanes holding 0 to 0xffff, stored as 16-bit values.
template <class B, storage16 T>
NONLIN_ALWAYS_INLINE void store_truncated(int_batch<B> const& bits, T* p) noexcept {
  if constexpr (arch::has_zero_extend16<B>) {
    arch::truncate16<B>(bits, raw_bits(p));
  } else {
    alignas(64) std::array<std::int32_t, B::size> wide;
    bits.store_aligned(wide.data());
    for (std::size_t k = 0; k < B::size; ++k) {
      p[k].bits = static_cast<std::uint16_t>(wide[k]);
    }
  }
}

template <storage16 T, class I>
NONLIN_ALWAYS_INLINE I narrowed_bits(I const& float_bits) noexcept {
  if constexpr (std::is_same_v<T, bfloat16>) {
    return bits16::bfloat16_bits_from_float(float_bits);
  } else {
    return bits16::float16_bits_from_float(float_bits);
  }
}

}  // namespace detail16

template <class B, storage16 T>
NONLIN_ALWAYS_INLINE B load16(T const* p) noexcept {
  if constexpr (std::is_same_v<T, float16> && arch::has_float16_convert<B>) {
    return arch::widen_float16<B>(detail16::raw_bits(p));
  } else if constexpr (std::is_same_v<T, float16>) {
    return bits16::as_float(bits16::float_bits_from_float16(detail16::load_zero_extended<B>(p)));
  } else if constexpr (arch::has_bfloat16_widen<B>) {
    return arch::widen_bfloat16<B>(detail16::raw_bits(p));
  } else {
    return bits16::as_float(detail16::load_zero_extended<B>(p) << 16);
  }
}

// Whether store16 narrows T by an instruction that gets some lanes wrong (bfloat16 by
// vcvtneps2bf16: it flushes subnormal floats to +-0), and those lanes of x, by one vfpclass (on
// the bits: DAZ does not hide them). AVX-512 BF16 without DQ takes the integer formula.
template <class B, storage16 T>
inline constexpr bool has_narrow16_exceptions =
    std::is_same_v<T, bfloat16>&& arch::has_bfloat16_narrow<B>&& arch::has_subnormal_class<B>;

// (As a mask of the int32 lanes, like the tests on a float's bits it joins: AVX-512's lane masks
// are one register type for both.)
template <storage16 T, class B>
NONLIN_ALWAYS_INLINE auto narrow16_exceptions(B const& x) noexcept {
  static_assert(has_narrow16_exceptions<B, T>);
  using mask = typename detail16::int_batch<B>::batch_bool_type;
  return mask(static_cast<typename mask::register_type>(arch::subnormal_class(x)));
}

template <class B, storage16 T>
NONLIN_ALWAYS_INLINE void store16(B const& x, T* p) noexcept {
  using I = detail16::int_batch<B>;
  if constexpr (std::is_same_v<T, float16> && arch::has_float16_convert<B>) {
    arch::narrow_float16(x, detail16::raw_bits(p));
  } else if constexpr (has_narrow16_exceptions<B, T>) {
    // A batch holding a subnormal takes the integer formula instead (a rare case).
    if (xsimd::any(narrow16_exceptions<T>(x))) {
      detail16::store_truncated<B>(bits16::bfloat16_bits_from_float(I(bits16::as_bits(x))), p);
    } else {
      arch::narrow_bfloat16_flushing(x, detail16::raw_bits(p));
    }
  } else {
    detail16::store_truncated<B>(detail16::narrowed_bits<T>(I(bits16::as_bits(x))), p);
  }
}

// store16(a, p) and store16(b, p + B::size), for batches none of whose lanes is among
// narrow16_exceptions (the caller has tested them): no test, and bfloat16 in one instruction.
template <class B, storage16 T>
NONLIN_ALWAYS_INLINE void store16_pair_unexceptional(B const& a, B const& b, T* p) noexcept {
  if constexpr (has_narrow16_exceptions<B, T>) {
    arch::narrow_bfloat16_pair_flushing(a, b, detail16::raw_bits(p));
  } else {
    store16(a, p);
    store16(b, p + B::size);
  }
}

// store16(a, p) and store16(b, p + B::size), for batches whose lanes are all values of T (or
// NaNs): no test, and bfloat16 in two instructions (arch::narrow_bfloat16_pair_values).
template <class B, storage16 T>
NONLIN_ALWAYS_INLINE void store16_pair_values(B const& a, B const& b, T* p) noexcept {
  if constexpr (std::is_same_v<T, bfloat16> && arch::has_bfloat16_pair_values_narrow<B>) {
    arch::narrow_bfloat16_pair_values(a, b, detail16::raw_bits(p));
  } else {
    store16(a, p);
    store16(b, p + B::size);
  }
}

NONLIN_INTRINSIC_DIAGNOSTICS_POP

}  // namespace NONLIN_ISA
}  // namespace nonlin::math
