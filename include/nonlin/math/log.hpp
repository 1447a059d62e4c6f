// SPDX-License-Identifier: MIT
#pragma once
// log1p for float, double and their batches.
//
// 1 + x = 2^k * m with m in [sqrt(1/2), sqrt(2)); with f = m - 1 and s = f / (2 + f),
// log m = 2 atanh s = f - s (f - s^2 R(s^2)), R the atanh series 2/3 + 2 s^2/5 + ...; f is
// exact, so the rounding of s only touches the small correction. The rounding of 1 + x is
// put back as c = (x - (u - 1)) / u.

#include <array>
#include <cstdint>
#include <limits>

#include "../isa.hpp"
#include "constants.hpp"
#include "exp.hpp"
#include "ops.hpp"
#include "polynomial.hpp"

namespace nonlin::math {
inline namespace NONLIN_ISA {

namespace detail {
template <class T>
struct log_constants;

template <>
struct log_constants<float> {
  using unsigned_bits = std::uint32_t;
  static constexpr std::int32_t sqrt_half_bits = 0x3f3504f3;
  static constexpr std::int32_t one_bits = 0x3f800000;
  static constexpr std::int32_t mantissa_mask = 0x007fffff;
  // 2 / (2k + 3), k = 0..5: s^2 <= 0.0295, so the next term is below 2^-31 relative.
  static constexpr std::array<float, 6> r = {0x1.555556p-1f, 0x1.99999ap-2f, 0x1.24924ap-2f,
                                             0x1.c71c72p-3f, 0x1.745d18p-3f, 0x1.3b13b2p-3f};
};

template <>
struct log_constants<double> {
  using unsigned_bits = std::uint64_t;
  static constexpr std::int64_t sqrt_half_bits = 0x3fe6a09e667f3bcd;
  static constexpr std::int64_t one_bits = 0x3ff0000000000000;
  static constexpr std::int64_t mantissa_mask = 0x000fffffffffffff;
  // 2 / (2k + 3), k = 0..10
  static constexpr std::array<double, 11> r = {
      0x1.5555555555555p-1, 0x1.999999999999ap-2, 0x1.2492492492492p-2, 0x1.c71c71c71c71cp-3,
      0x1.745d1745d1746p-3, 0x1.3b13b13b13b14p-3, 0x1.1111111111111p-3, 0x1.e1e1e1e1e1e1ep-4,
      0x1.af286bca1af28p-4, 0x1.8618618618618p-4, 0x1.642c8590b2164p-4,
  };
};
}  // namespace detail

// The biased exponent field of a float's bits, as a value of V (0 .. 255 or 0 .. 2047).
NONLIN_INTRINSIC_DIAGNOSTICS_PUSH
template <real_value V>
inline V biased_exponent(int_t<V> const& bits) noexcept {
  using T = scalar_t<V>;
  using E = detail::exp_constants<T>;
  using U = typename detail::log_constants<T>::unsigned_bits;
  int_t<V> field;
  if constexpr (is_batch_v<V>) {
    using UB = xsimd::batch<U, typename V::arch_type>;
    field = xsimd::bitwise_cast<int_t<V>>(xsimd::bitwise_cast<UB>(bits) >> E::mantissa_bits);
  } else {
    field = static_cast<int_t<V>>(static_cast<U>(bits) >> E::mantissa_bits);
  }
  // An integer j < 2^mbits placed in the mantissa of 2^mbits reads as 2^mbits + j.
  V const two_m(T(1) / std::numeric_limits<T>::epsilon());
  return math::from_bits<V>(math::as_bits(two_m) + field) - two_m;
}
NONLIN_INTRINSIC_DIAGNOSTICS_POP

// log(1 + x) within 1 ulp for a finite x > -1; NaN for NaN (the correction term carries it), so
// a caller whose argument cannot be -1, below it or +inf (softplus's e^-|z| in (0, 1]) needs
// none of log1p's three selects, which sat at the end of its chain (softplus 1.15x without).
template <real_value V>
inline V log1p_above_minus_one(V const& x) noexcept {
  using T = scalar_t<V>;
  using K = detail::log_constants<T>;
  using I = int_t<V>;
  V const one(T(1));
  V const u = x + one;
  // Put the rounding error of u back (exact while u - 1 is, i.e. for all x > -1).
  V const correction = math::divide(x - (u - one), u);
  // u = 2^k m, m in [sqrt(1/2), sqrt(2)): shift the exponent field so that the break is at
  // sqrt(1/2) instead of 1, read it off, and rebuild m from the low bits.
  // (Wrapping: a scalar +NaN's bits plus the shift overflow the signed type, which batches wrap
  // and scalars must not; a NaN's result comes through the correction term anyway.)
  I shifted;
  if constexpr (is_batch_v<V>) {
    shifted = math::as_bits(u) + I(K::one_bits - K::sqrt_half_bits);
  } else {
    using U = typename K::unsigned_bits;
    shifted = static_cast<I>(static_cast<U>(math::as_bits(u)) +
                             static_cast<U>(K::one_bits - K::sqrt_half_bits));
  }
  V const m = math::from_bits<V>((shifted & I(K::mantissa_mask)) + I(K::sqrt_half_bits));
  V const k = math::biased_exponent<V>(shifted) - V(T(detail::exp_constants<T>::bias));
  V const f = m - one;
  V const s = math::divide(f, f + math::c<V>(2));
  V const s2 = s * s;
  V const inner = math::fnma(s2, math::horner(s2, K::r), f);                 // f - s^2 R
  V const tail = math::fma(k, V(ln2_split<scalar_t<V>>::tail), correction);  // k ln2_lo + c
  V const log_m = f - math::fms(s, inner, tail);  // f - s(f - s^2 R) + tail
  return math::fma(k, V(ln2_split<scalar_t<V>>::head), log_m);
}

// log(1 + x) within 1 ulp; -inf at -1, NaN below -1 and for NaN, +inf at +inf.
template <real_value V>
inline V log1p(V const& x) noexcept {
  using T = scalar_t<V>;
  V result = math::log1p_above_minus_one(x);
  result = math::select(x == V(T(-1)), V(-std::numeric_limits<T>::infinity()), result);
  result = math::select(x < V(T(-1)), V(std::numeric_limits<T>::quiet_NaN()), result);
  return math::select(x == V(std::numeric_limits<T>::infinity()), x, result);
}

}  // namespace NONLIN_ISA
}  // namespace nonlin::math
