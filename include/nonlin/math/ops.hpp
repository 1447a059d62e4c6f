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

#if defined(__SSE2__)
#include <immintrin.h>
#endif
#if defined(__FMA__) || defined(__AVX512F__)
#define NONLIN_HAS_FMA 1
#else
#define NONLIN_HAS_FMA 0
#endif

#include "../concepts.hpp"

// g++ 12 reports the _mm*_undefined_*() operand of some AVX-512 intrinsics (shifts, extracts) as
// used uninitialized once they are inlined (a false positive of its intrinsic headers). Functions
// that use those intrinsics are wrapped in these, so users' -Werror builds stay clean.
#if defined(__GNUC__) && !defined(__clang__)
#define NONLIN_INTRINSIC_DIAGNOSTICS_PUSH                                              \
  _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wuninitialized\"") \
      _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"")
#define NONLIN_INTRINSIC_DIAGNOSTICS_POP _Pragma("GCC diagnostic pop")
// GCC 12 also warns that the batch loop's full-width load reads past a span it has seen
// allocated with fewer elements than a batch (-Warray-bounds, x86-64-v2: a 3-float row), on a
// path where the loop cannot run (i + width <= n fails).
#define NONLIN_LOOP_DIAGNOSTICS_PUSH \
  _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Warray-bounds\"")
#define NONLIN_LOOP_DIAGNOSTICS_POP _Pragma("GCC diagnostic pop")
#else
#define NONLIN_LOOP_DIAGNOSTICS_PUSH
#define NONLIN_LOOP_DIAGNOSTICS_POP
#define NONLIN_INTRINSIC_DIAGNOSTICS_PUSH
#define NONLIN_INTRINSIC_DIAGNOSTICS_POP
#endif

// GCC 12 leaves large helpers out of line although a kernel calls them once per batch (a call,
// its constants reloaded and a vzeroupper per batch: math::normal in gelu_exact, 1.2-1.4x).
// The span kernels' batch loops (kernels.hpp, glu.hpp) are flattened, so everything a functor
// calls is inlined there (gelu_exact: 115 -> 92 instructions per batch forward, 157 -> 132
// backward); that once also inlined parameter set-up that GCC redid every batch (softplus'
// backward from the output at 0.27x), which the kernels' own copy of the functor now prevents.
// Helpers called from other loops (the softmax drivers) are named with NONLIN_ALWAYS_INLINE.
#if defined(__GNUC__) || defined(__clang__)
#define NONLIN_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define NONLIN_ALWAYS_INLINE inline
#endif
#if defined(__GNUC__) || defined(__clang__)
#define NONLIN_FLATTEN __attribute__((flatten))
#else
#define NONLIN_FLATTEN
#endif

namespace nonlin::math {

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
#if NONLIN_HAS_FMA
  using T = scalar_t<V>;
  if constexpr (!is_batch_v<V>) {
    return std::fma(a, b, c);
  } else if constexpr (sizeof(V) == 64) {
#if defined(__AVX512F__)
    if constexpr (std::is_same_v<T, float>) {
      return V(_mm512_fmadd_ps(a, b, c));
    } else {
      return V(_mm512_fmadd_pd(a, b, c));
    }
#endif
  } else if constexpr (sizeof(V) == 32) {
    if constexpr (std::is_same_v<T, float>) {
      return V(_mm256_fmadd_ps(a, b, c));
    } else {
      return V(_mm256_fmadd_pd(a, b, c));
    }
  } else if constexpr (sizeof(V) == 16) {
    if constexpr (std::is_same_v<T, float>) {
      return V(_mm_fmadd_ps(a, b, c));
    } else {
      return V(_mm_fmadd_pd(a, b, c));
    }
  } else {
    static_assert(sizeof(V) == 0, "nonlin::math::fma: unsupported batch width");
  }
#else
  return a * b + c;
#endif
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

// |magnitude| with the sign of s.
template <real_value V>
inline V copysign(V const& magnitude, V const& s) noexcept {
  return math::from_bits<V>(math::as_bits(math::abs(magnitude)) | math::as_bits(math::sign_bit(s)));
}

namespace detail {
// x86's max (take_max) or min of (bound, x): "bound > x ? bound : x" / "bound < x ? bound : x",
// x where either is NaN; one instruction on batches, the same select on scalars.
NONLIN_INTRINSIC_DIAGNOSTICS_PUSH
template <bool take_max, real_value V>
inline V bound_or_x(V const& bound, V const& x) noexcept {
  if constexpr (is_batch_v<V>) {
    constexpr bool is_float = std::is_same_v<scalar_t<V>, float>;
#if defined(__AVX512F__)
    if constexpr (sizeof(V) == 64 && is_float) {
      return V(take_max ? _mm512_max_ps(bound, x) : _mm512_min_ps(bound, x));
    } else if constexpr (sizeof(V) == 64) {
      return V(take_max ? _mm512_max_pd(bound, x) : _mm512_min_pd(bound, x));
    }
#endif
#if defined(__AVX__)
    if constexpr (sizeof(V) == 32 && is_float) {
      return V(take_max ? _mm256_max_ps(bound, x) : _mm256_min_ps(bound, x));
    } else if constexpr (sizeof(V) == 32) {
      return V(take_max ? _mm256_max_pd(bound, x) : _mm256_min_pd(bound, x));
    }
#endif
#if defined(__SSE2__)
    if constexpr (sizeof(V) == 16 && is_float) {
      return V(take_max ? _mm_max_ps(bound, x) : _mm_min_ps(bound, x));
    } else if constexpr (sizeof(V) == 16) {
      return V(take_max ? _mm_max_pd(bound, x) : _mm_min_pd(bound, x));
    }
#endif
  }
  if constexpr (take_max) {
    return math::select(bound > x, bound, x);
  } else {
    return math::select(bound < x, bound, x);
  }
}
NONLIN_INTRINSIC_DIAGNOSTICS_POP
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

// Where x is NaN give x, elsewhere v: for results that a select would otherwise make finite.
template <real_value V>
inline V keep_nan(V const& x, V const& v) noexcept {
  return math::select(math::is_nan(x), x, v);
}

// x is 0 or infinite: where a first-order correction x (1 + delta) must leave x alone. On
// 512-bit batches one vfpclass (classes +-0, +-inf) instead of two compares, an and and an or.
NONLIN_INTRINSIC_DIAGNOSTICS_PUSH
template <real_value V>
inline mask_t<V> zero_or_infinite(V const& x) noexcept {
#if defined(__AVX512DQ__)
  if constexpr (is_batch_v<V> && sizeof(V) == 64) {
    constexpr int zero_or_inf_classes = 0x02 | 0x04 | 0x08 | 0x10;
    if constexpr (std::is_same_v<scalar_t<V>, float>) {
      return mask_t<V>(_mm512_fpclass_ps_mask(x, zero_or_inf_classes));
    } else {
      return mask_t<V>(_mm512_fpclass_pd_mask(x, zero_or_inf_classes));
    }
  }
#endif
  return math::either(x == V(0), math::abs(x) == V(std::numeric_limits<scalar_t<V>>::infinity()));
}
NONLIN_INTRINSIC_DIAGNOSTICS_POP

// 1/x to about 2^-14 relative (vrcp14 with AVX-512, for scalars too; a division elsewhere): for
// the small correction terms of double-float quotients, where 2^-14 of a term of 2^-24 is far
// below any rounding, and a division would cost more than the whole correction.
NONLIN_INTRINSIC_DIAGNOSTICS_PUSH
template <real_value V>
inline V approx_reciprocal(V const& x) noexcept {
#if defined(__AVX512F__) && defined(__AVX512VL__)
  using T = scalar_t<V>;
  constexpr bool is_float = std::is_same_v<T, float>;
  if constexpr (!is_batch_v<V>) {
    if constexpr (is_float) {
      return _mm_cvtss_f32(_mm_rcp14_ss(_mm_set_ss(x), _mm_set_ss(x)));
    } else {
      return _mm_cvtsd_f64(_mm_rcp14_sd(_mm_set_sd(x), _mm_set_sd(x)));
    }
  } else if constexpr (sizeof(V) == 64) {
    if constexpr (is_float) {
      return V(_mm512_rcp14_ps(x));
    } else {
      return V(_mm512_rcp14_pd(x));
    }
  } else if constexpr (sizeof(V) == 32) {
    if constexpr (is_float) {
      return V(_mm256_rcp14_ps(x));
    } else {
      return V(_mm256_rcp14_pd(x));
    }
  } else {
    if constexpr (is_float) {
      return V(_mm_rcp14_ps(x));
    } else {
      return V(_mm_rcp14_pd(x));
    }
  }
#else
  return math::c<V>(1) / x;
#endif
}
NONLIN_INTRINSIC_DIAGNOSTICS_POP

}  // namespace nonlin::math
