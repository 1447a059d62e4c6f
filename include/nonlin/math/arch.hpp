// SPDX-License-Identifier: MIT
#pragma once
// The arch layer: every instruction nonlin picks by hand, in one place. Each primitive comes
// with a compile-time flag saying whether the target has it for V (has_*<V>); the math layer
// calls a primitive only under `if constexpr` of its flag and otherwise writes the portable
// form, which gives the same bits (the primitives are exact or, for reciprocal_estimate, only
// seed a correction). Calling one whose flag is false does not compile. An ISA adds its
// branches here and nowhere else: x86 (SSE2 to AVX-512) and aarch64 (NEON, 128-bit batches).
//
//   fma            a * b + c rounded once, scalars and batches       (FMA, AVX-512 or aarch64)
//   fnma, fms      c - a * b and a * b - c rounded once, likewise (no separate sign flip)
//   divide         a / b rounded once, float batches                 (aarch64: see there)
//   min_max        x86's max/min: bound > x ? bound : x (x if NaN)   (SSE2, AVX, AVX-512F)
//   fixup_by_class dst, x or a constant per lane by x's class (NaN, 0, negative, positive...),
//                  one vfixupimm                                     (AVX-512F, 512-bit)
//   neg_abs_at_least         max(-|x|, bound) for bound <= 0 (not NaN-propagating), one vrange
//                            (AVX-512DQ, 512-bit)
//   zero_or_infinite_class   x is +-0 or +-inf, one vfpclass         (AVX-512DQ, 512-bit)
//   zero_infinite_or_subnormal_class   the same or subnormal, one vfpclass
//   subnormal_class          x is subnormal, one vfpclass (on the bits: DAZ does not hide them)
//   reciprocal_estimate      1/x to 2^-14, vrcp14                    (AVX-512F + VL)
//   scalef         y * 2^floor(n) rounded once, vscalef              (AVX-512F + VL)
//   scalef_unless, fma_or_zero   masked: y or scalef(y, n); 0 or fma  (AVX-512F, 512-bit)
//   round_down     floor(x), one vrndscale                           (AVX-512F, 512-bit)
//   load_masked, store_masked  the first count lanes                 (AVX-512F + VL)
//   widen          a float batch's halves as double batches, exact   (SSE2, AVX, AVX-512F, NEON)
//   narrow_to_odd  two double batches to floats, rounded to odd      (AVX-512F, 512-bit)
//   compress, expand           a float batch's masked lanes packed to the front and back
//                                                                      (AVX-512F, 512-bit)
//   lane_indices, permute      a per-lane table lookup, vpermps/pd   (AVX-512F + DQ, 512-bit)
//   permute_pair               the same from two registers, vpermt2ps/pd
//   permute_by_low_bits        the same, indexed by the low bits of a lane's bit pattern
//   widen_float16, narrow_float16   16-bit IEEE halves <-> floats     (F16C, AVX-512F 512-bit)
//   narrow_bfloat16_flushing   floats -> bfloat16, subnormals to 0   (AVX-512 BF16)
//   narrow_bfloat16_pair_flushing   two batches of them, one vcvtne2ps2bf16   (AVX-512 BF16)
//   narrow_bfloat16_pair_values     two batches of bfloat16 values, subnormals kept
//                                                           (AVX-512 BF16 + BW, 512-bit)
//   widen_bfloat16 bfloat16 -> floats by one vpermw          (AVX-512BW, 512-bit)
//   bits_clear     (a & m) == 0 per int32 lane, one vptestnmd        (AVX-512F, 512-bit)
//   zero_extend16, truncate16  uint16 <-> int32 lanes          (SSE4.1, AVX2, AVX-512F, NEON)
//
// aarch64 has no instruction that does what min_max, the classes, reciprocal_estimate, scalef,
// the masked loads and stores or permute do here (NEON's fmax/fmin return NaN for a NaN bound and
// order -0 below +0; frecpe is an 8-bit estimate; there are no lane masks): the math layer's
// portable forms run there, as on x86 without those extensions. The 16-bit conversions stay on
// the integer formulas too: fcvtl/fcvtn read FPCR (its rounding mode; FZ flushes subnormal
// floats), the formulas do not.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#if defined(__SSE2__)
#include <immintrin.h>
#endif
#if defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>
#endif

#include <xsimd/xsimd.hpp>

#include "../concepts.hpp"
#include "../isa.hpp"

// aarch64 always has fused multiply-add: fmadd for scalars (std::fma), fmla for NEON lanes.
#if defined(__FMA__) || defined(__AVX512F__) || (defined(__aarch64__) && defined(__ARM_FEATURE_FMA))
#define NONLIN_HAS_FMA 1
#else
#define NONLIN_HAS_FMA 0
#endif

// g++ 12 reports the _mm*_undefined_*() operand of some AVX-512 intrinsics (shifts, extracts) as
// used uninitialized once they are inlined (a false positive of its intrinsic headers). Functions
// that use those intrinsics are wrapped in these, so users' -Werror builds stay clean.
#if defined(__GNUC__) && !defined(__clang__)
#define NONLIN_INTRINSIC_DIAGNOSTICS_PUSH                                              \
  _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wuninitialized\"") \
      _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"")
#define NONLIN_INTRINSIC_DIAGNOSTICS_POP _Pragma("GCC diagnostic pop")
#else
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
// A rarely taken path kept out of the hot loop's registers and code (math::with_product_tail).
#define NONLIN_COLD inline __attribute__((noinline, cold))
// Out of line but compiled for speed, for a path some data take often: the 16-bit kernels'
// recomputation near a midpoint, which exact results (products of 16-bit values) reach in up
// to 81% of the iterations. As `cold`, GCC 12 optimized it for size and returned its 256-byte
// array with rep movsl, whose 4-byte stores the caller's zmm loads could not forward from.
#define NONLIN_OUT_OF_LINE inline __attribute__((noinline))
#else
#define NONLIN_ALWAYS_INLINE inline
#define NONLIN_COLD inline
#define NONLIN_OUT_OF_LINE inline
#endif
namespace nonlin::math::arch {
inline namespace NONLIN_ISA {

namespace detail {
#if defined(__AVX512F__) && defined(__AVX512VL__)
inline constexpr bool avx512vl = true;
#else
inline constexpr bool avx512vl = false;
#endif
#if defined(__AVX512F__) && defined(__AVX512DQ__)
inline constexpr bool avx512dq = true;
#else
inline constexpr bool avx512dq = false;
#endif
#if defined(__AVX512F__)
inline constexpr bool avx512f = true;
#else
inline constexpr bool avx512f = false;
#endif
#if defined(__AVX512F__) && defined(__AVX512BW__)
inline constexpr bool avx512bw = true;
#else
inline constexpr bool avx512bw = false;
#endif
#if defined(__AVX__)
inline constexpr bool avx = true;
#else
inline constexpr bool avx = false;
#endif
#if defined(__F16C__)
inline constexpr bool f16c = true;
#else
inline constexpr bool f16c = false;
#endif
#if defined(__AVX512F__) && defined(__AVX512BF16__)
inline constexpr bool avx512bf16 = true;
#else
inline constexpr bool avx512bf16 = false;
#endif
#if defined(__AVX2__)
inline constexpr bool avx2 = true;
#else
inline constexpr bool avx2 = false;
#endif
#if defined(__SSE4_1__)
inline constexpr bool sse41 = true;
#else
inline constexpr bool sse41 = false;
#endif
#if defined(__SSE2__)
inline constexpr bool sse2 = true;
#else
inline constexpr bool sse2 = false;
#endif
#if defined(__aarch64__) && defined(__ARM_NEON)
inline constexpr bool neon64 = true;
#else
inline constexpr bool neon64 = false;
#endif

// A batch of 16, 32 or 64 bytes that the target's registers hold.
template <class V>
constexpr bool x86_width() {
  if constexpr (is_batch_v<V>) {
    return (sizeof(V) == 16 && sse2) || (sizeof(V) == 32 && avx) || (sizeof(V) == 64 && avx512f);
  } else {
    return false;
  }
}
// A batch of 16 bytes on aarch64: a NEON register.
template <class V>
constexpr bool neon_width() {
  if constexpr (is_batch_v<V>) {
    return sizeof(V) == 16 && neon64;
  } else {
    return false;
  }
}
template <class V>
inline constexpr bool is_float = std::is_same_v<scalar_t<V>, float>;
}  // namespace detail

// ---- fma --------------------------------------------------------------------------------------

template <class V>
inline constexpr bool has_fma = NONLIN_HAS_FMA != 0;

// a * b + c rounded once: std::fma for scalars (an instruction with FMA), the fmadd of the width
// for batches (xsimd 8.1's own fma is unfused on AVX-512); on aarch64 fmla, for NEON batches.
template <class V>
inline V fma(V const& a, V const& b, V const& c) noexcept {
  static_assert(has_fma<V>, "arch::fma: the target has no FMA");
#if NONLIN_HAS_FMA && defined(__aarch64__)
  if constexpr (!is_batch_v<V>) {
    return std::fma(a, b, c);
  } else if constexpr (sizeof(V) == 16) {
    if constexpr (detail::is_float<V>) {
      return V(vfmaq_f32(c, a, b));  // c + a * b
    } else {
      return V(vfmaq_f64(c, a, b));
    }
  } else {
    static_assert(sizeof(V) == 0, "arch::fma: unsupported batch width");
  }
#elif NONLIN_HAS_FMA
  if constexpr (!is_batch_v<V>) {
    return std::fma(a, b, c);
  } else if constexpr (sizeof(V) == 64) {
#if defined(__AVX512F__)
    if constexpr (detail::is_float<V>) {
      return V(_mm512_fmadd_ps(a, b, c));
    } else {
      return V(_mm512_fmadd_pd(a, b, c));
    }
#endif
  } else if constexpr (sizeof(V) == 32) {
    if constexpr (detail::is_float<V>) {
      return V(_mm256_fmadd_ps(a, b, c));
    } else {
      return V(_mm256_fmadd_pd(a, b, c));
    }
  } else if constexpr (sizeof(V) == 16) {
    if constexpr (detail::is_float<V>) {
      return V(_mm_fmadd_ps(a, b, c));
    } else {
      return V(_mm_fmadd_pd(a, b, c));
    }
  } else {
    static_assert(sizeof(V) == 0, "arch::fma: unsupported batch width");
  }
#else
  return a * b + c;  // not reached (the static_assert above)
#endif
}

// c - a * b rounded once: the same value as fma(-a, b, c), in one instruction (fnmadd, fmls)
// where the sign flip of a would otherwise be a separate xor that no compiler folds (the math
// layer flips signs on the bits, math::neg).
template <class V>
inline V fnma(V const& a, V const& b, V const& c) noexcept {
  static_assert(has_fma<V>, "arch::fnma: the target has no FMA");
#if NONLIN_HAS_FMA && defined(__aarch64__)
  if constexpr (!is_batch_v<V>) {
    return std::fma(-a, b, c);
  } else if constexpr (sizeof(V) == 16) {
    if constexpr (detail::is_float<V>) {
      return V(vfmsq_f32(c, a, b));  // c - a * b
    } else {
      return V(vfmsq_f64(c, a, b));
    }
  } else {
    static_assert(sizeof(V) == 0, "arch::fnma: unsupported batch width");
  }
#elif NONLIN_HAS_FMA
  if constexpr (!is_batch_v<V>) {
    return std::fma(-a, b, c);
  } else if constexpr (sizeof(V) == 64) {
#if defined(__AVX512F__)
    if constexpr (detail::is_float<V>) {
      return V(_mm512_fnmadd_ps(a, b, c));
    } else {
      return V(_mm512_fnmadd_pd(a, b, c));
    }
#endif
  } else if constexpr (sizeof(V) == 32) {
    if constexpr (detail::is_float<V>) {
      return V(_mm256_fnmadd_ps(a, b, c));
    } else {
      return V(_mm256_fnmadd_pd(a, b, c));
    }
  } else if constexpr (sizeof(V) == 16) {
    if constexpr (detail::is_float<V>) {
      return V(_mm_fnmadd_ps(a, b, c));
    } else {
      return V(_mm_fnmadd_pd(a, b, c));
    }
  } else {
    static_assert(sizeof(V) == 0, "arch::fnma: unsupported batch width");
  }
#else
  return c - a * b;  // not reached (the static_assert above)
#endif
}

// a * b - c rounded once, likewise (fmsub; aarch64 has no such vector instruction: the sign
// flip and an fmla, as before).
template <class V>
inline V fms(V const& a, V const& b, V const& c) noexcept {
  static_assert(has_fma<V>, "arch::fms: the target has no FMA");
#if NONLIN_HAS_FMA && defined(__aarch64__)
  if constexpr (!is_batch_v<V>) {
    return std::fma(a, b, -c);
  } else if constexpr (sizeof(V) == 16) {
    if constexpr (detail::is_float<V>) {
      return V(vfmaq_f32(vnegq_f32(c), a, b));
    } else {
      return V(vfmaq_f64(vnegq_f64(c), a, b));
    }
  } else {
    static_assert(sizeof(V) == 0, "arch::fms: unsupported batch width");
  }
#elif NONLIN_HAS_FMA
  if constexpr (!is_batch_v<V>) {
    return std::fma(a, b, -c);
  } else if constexpr (sizeof(V) == 64) {
#if defined(__AVX512F__)
    if constexpr (detail::is_float<V>) {
      return V(_mm512_fmsub_ps(a, b, c));
    } else {
      return V(_mm512_fmsub_pd(a, b, c));
    }
#endif
  } else if constexpr (sizeof(V) == 32) {
    if constexpr (detail::is_float<V>) {
      return V(_mm256_fmsub_ps(a, b, c));
    } else {
      return V(_mm256_fmsub_pd(a, b, c));
    }
  } else if constexpr (sizeof(V) == 16) {
    if constexpr (detail::is_float<V>) {
      return V(_mm_fmsub_ps(a, b, c));
    } else {
      return V(_mm_fmsub_pd(a, b, c));
    }
  } else {
    static_assert(sizeof(V) == 0, "arch::fms: unsupported batch width");
  }
#else
  return a * b - c;  // not reached (the static_assert above)
#endif
}

// ---- divide -----------------------------------------------------------------------------------

template <class V>
inline constexpr bool has_divide = detail::neon_width<V>() && detail::is_float<V>;

// a / b rounded once, by fdiv (vdivq_f32). xsimd 8.1 divides float batches on aarch64 as on
// 32-bit NEON, by frecpe and two Newton steps, up to an ulp off the quotient (5.96046590e-08f / 6
// gives 9.93411042e-09, not 9.93410953e-09): its / is not the scalar /, so the math layer
// divides through math::divide, which takes this where the flag is set. (Its double division
// is fdiv already.)
template <class V>
inline V divide(V const& a, V const& b) noexcept {
  static_assert(has_divide<V>, "arch::divide: not for this V");
#if defined(__aarch64__) && defined(__ARM_NEON)
  return V(vdivq_f32(a, b));
#else
  return a / b;  // not reached (has_divide)
#endif
}

// ---- min_max ----------------------------------------------------------------------------------

template <class V>
inline constexpr bool has_min_max = detail::x86_width<V>();

// take_max: "bound > x ? bound : x", else "bound < x ? bound : x"; x where either is NaN, and x
// for -0 against +0: x86's max/min with the bound first, one instruction.
NONLIN_INTRINSIC_DIAGNOSTICS_PUSH
template <bool take_max, class V>
inline V min_max([[maybe_unused]] V const& bound, V const& x) noexcept {
  static_assert(has_min_max<V>, "arch::min_max: not for this V");
  [[maybe_unused]] constexpr bool is_float = detail::is_float<V>;
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
  return x;  // not reached (has_min_max)
}
NONLIN_INTRINSIC_DIAGNOSTICS_POP

// ---- fixup_by_class ---------------------------------------------------------------------------

template <class V>
inline constexpr bool has_fixup_by_class = detail::avx512f&& is_batch_v<V> && sizeof(V) == 64;

// Per lane, one of dst, x or a constant, chosen by x's class: one vfixupimmps/pd, on port 0 or 5
// (probed), where a select on x > 0 is a compare (port 5 only on Intel) and a blend, and a NaN
// test one more of each. `table` holds a 4-bit response per class (Intel SDM, VFIXUPIMMPS);
// fixup_table builds it from the responses by name. Subnormals are negative or positive (no DAZ
// here); the response x passes a signaling NaN as it is (measured on every float).
enum class fixup_response : std::uint32_t { dst = 0, x = 1, plus_zero = 8, plus_one = 10 };
struct fixup_classes {
  fixup_response quiet_nan = fixup_response::dst;
  fixup_response signaling_nan = fixup_response::dst;
  fixup_response zero = fixup_response::dst;  // +-0
  fixup_response plus_one = fixup_response::dst;
  fixup_response minus_infinity = fixup_response::dst;
  fixup_response plus_infinity = fixup_response::dst;
  fixup_response negative = fixup_response::dst;  // the other negative numbers
  fixup_response positive = fixup_response::dst;  // the other positive numbers
};
constexpr std::uint32_t fixup_table(fixup_classes const& c) noexcept {
  fixup_response const in_order[] = {c.quiet_nan,      c.signaling_nan, c.zero,     c.plus_one,
                                     c.minus_infinity, c.plus_infinity, c.negative, c.positive};
  std::uint32_t table = 0;
  for (int j = 0; j < 8; ++j) {
    table |= static_cast<std::uint32_t>(in_order[j]) << (4 * j);
  }
  return table;
}

NONLIN_INTRINSIC_DIAGNOSTICS_PUSH
template <std::uint32_t table, class V>
inline V fixup_by_class(V const& dst, V const& x) noexcept {
  static_assert(has_fixup_by_class<V>, "arch::fixup_by_class: needs AVX-512F, 512-bit");
#if defined(__AVX512F__)
  constexpr int no_exceptions = 0;  // imm8: no #ZE / #IE reports for the classes
  if constexpr (detail::is_float<V>) {
    return V(_mm512_fixupimm_ps(dst, x, _mm512_set1_epi32(static_cast<int>(table)), no_exceptions));
  } else {
    return V(_mm512_fixupimm_pd(dst, x, _mm512_set1_epi64(static_cast<long long>(table)),
                                no_exceptions));
  }
#else
  (void)x;
  return dst;  // not reached
#endif
}
NONLIN_INTRINSIC_DIAGNOSTICS_POP

// ---- neg_abs_at_least -------------------------------------------------------------------------

template <class V>
inline constexpr bool has_neg_abs_at_least = detail::avx512dq&& is_batch_v<V> && sizeof(V) == 64;

// max(-|x|, bound) for a bound <= 0, by one vrangeps/pd: the operand of smaller magnitude with
// its sign set (imm 0x0E), -min(|x|, |bound|), which is the same value for every x that is not
// a NaN (an x of the bound's magnitude gives it either way, +-0 gives -0). A quiet NaN x gives
// the bound: vrange returns the other operand (measured: sigmoid(NaN) came out finite). One
// operation where the portable form is an or and a max.
NONLIN_INTRINSIC_DIAGNOSTICS_PUSH
template <class V>
inline V neg_abs_at_least(V const& x, V const& bound) noexcept {
  static_assert(has_neg_abs_at_least<V>, "arch::neg_abs_at_least: not for this V");
#if defined(__AVX512F__) && defined(__AVX512DQ__)
  constexpr int smaller_magnitude_sign_set = 0x0E;
  if constexpr (detail::is_float<V>) {
    return V(_mm512_range_ps(x, bound, smaller_magnitude_sign_set));
  } else {
    return V(_mm512_range_pd(x, bound, smaller_magnitude_sign_set));
  }
#else
  (void)bound;
  return x;  // not reached
#endif
}
NONLIN_INTRINSIC_DIAGNOSTICS_POP

// ---- subnormal_class ---------------------------------------------------------------------------

template <class V>
inline constexpr bool has_subnormal_class = detail::avx512dq&& is_batch_v<V> && sizeof(V) == 64;

// The lanes that hold a subnormal, by one vfpclass (class 0x20: it reads the encoding, so
// MXCSR.DAZ does not hide them).
NONLIN_INTRINSIC_DIAGNOSTICS_PUSH
template <class V>
inline auto subnormal_class(V const& x) noexcept {
  static_assert(has_subnormal_class<V>, "arch::subnormal_class: not for this V");
  using mask = typename V::batch_bool_type;
#if defined(__AVX512F__) && defined(__AVX512DQ__)
  constexpr int subnormal = 0x20;
  if constexpr (detail::is_float<V>) {
    return mask(_mm512_fpclass_ps_mask(x, subnormal));
  } else {
    return mask(_mm512_fpclass_pd_mask(x, subnormal));
  }
#else
  (void)x;
  return mask(false);  // not reached
#endif
}
NONLIN_INTRINSIC_DIAGNOSTICS_POP

// ---- zero_or_infinite_class -------------------------------------------------------------------

template <class V>
inline constexpr bool has_zero_or_infinite_class = detail::avx512dq&& is_batch_v<V> &&
                                                   sizeof(V) == 64;

// The lanes that are +-0 or +-inf, by one vfpclass (classes +-0, +-inf).
NONLIN_INTRINSIC_DIAGNOSTICS_PUSH
template <class V>
inline auto zero_or_infinite_class(V const& x) noexcept {
  static_assert(has_zero_or_infinite_class<V>, "arch::zero_or_infinite_class: not for this V");
  using mask = typename V::batch_bool_type;
#if defined(__AVX512F__) && defined(__AVX512DQ__)
  constexpr int zero_or_inf_classes = 0x02 | 0x04 | 0x08 | 0x10;
  if constexpr (detail::is_float<V>) {
    return mask(_mm512_fpclass_ps_mask(x, zero_or_inf_classes));
  } else {
    return mask(_mm512_fpclass_pd_mask(x, zero_or_inf_classes));
  }
#else
  (void)x;
  return mask(false);  // not reached
#endif
}
NONLIN_INTRINSIC_DIAGNOSTICS_POP

// The lanes that are +-0, +-inf or subnormal (on the bits: DAZ does not hide them), by one
// vfpclass; the same has_ flag as zero_or_infinite_class.
NONLIN_INTRINSIC_DIAGNOSTICS_PUSH
template <class V>
inline auto zero_infinite_or_subnormal_class(V const& x) noexcept {
  static_assert(has_zero_or_infinite_class<V>,
                "arch::zero_infinite_or_subnormal_class: not for this V");
  using mask = typename V::batch_bool_type;
#if defined(__AVX512F__) && defined(__AVX512DQ__)
  constexpr int classes = 0x02 | 0x04 | 0x08 | 0x10 | 0x20;
  if constexpr (detail::is_float<V>) {
    return mask(_mm512_fpclass_ps_mask(x, classes));
  } else {
    return mask(_mm512_fpclass_pd_mask(x, classes));
  }
#else
  (void)x;
  return mask(false);  // not reached
#endif
}
NONLIN_INTRINSIC_DIAGNOSTICS_POP

// ---- reciprocal_estimate ----------------------------------------------------------------------

template <class V>
inline constexpr bool has_reciprocal_estimate = detail::avx512vl;

// 1/x to about 2^-14 relative: vrcp14, for scalars too.
NONLIN_INTRINSIC_DIAGNOSTICS_PUSH
template <class V>
inline V reciprocal_estimate(V const& x) noexcept {
  static_assert(has_reciprocal_estimate<V>, "arch::reciprocal_estimate: needs AVX-512VL");
#if defined(__AVX512F__) && defined(__AVX512VL__)
  constexpr bool is_float = detail::is_float<V>;
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
  return x;            // not reached
#endif
}
NONLIN_INTRINSIC_DIAGNOSTICS_POP

// ---- scalef -----------------------------------------------------------------------------------

template <class V>
inline constexpr bool has_scalef = detail::avx512vl;

// y * 2^floor(n) in one vscalef, rounded once (scalars and every batch width).
NONLIN_INTRINSIC_DIAGNOSTICS_PUSH
template <class V>
inline V scalef(V const& y, V const& n) noexcept {
  static_assert(has_scalef<V>, "arch::scalef: needs AVX-512VL");
#if defined(__AVX512F__) && defined(__AVX512VL__)
  constexpr bool is_float = detail::is_float<V>;
  if constexpr (!is_batch_v<V>) {
    if constexpr (is_float) {
      return _mm_cvtss_f32(_mm_scalef_ss(_mm_set_ss(y), _mm_set_ss(n)));
    } else {
      return _mm_cvtsd_f64(_mm_scalef_sd(_mm_set_sd(y), _mm_set_sd(n)));
    }
  } else if constexpr (sizeof(V) == 64) {
    if constexpr (is_float) {
      return V(_mm512_scalef_ps(y, n));
    } else {
      return V(_mm512_scalef_pd(y, n));
    }
  } else if constexpr (sizeof(V) == 32) {
    if constexpr (is_float) {
      return V(_mm256_scalef_ps(y, n));
    } else {
      return V(_mm256_scalef_pd(y, n));
    }
  } else {
    if constexpr (is_float) {
      return V(_mm_scalef_ps(y, n));
    } else {
      return V(_mm_scalef_pd(y, n));
    }
  }
#else
  (void)y;
  return n;  // not reached
#endif
}
NONLIN_INTRINSIC_DIAGNOSTICS_POP

// ---- scalef_unless, fma_or_zero ---------------------------------------------------------------

template <class V>
inline constexpr bool has_masked_arithmetic = detail::avx512f&& is_batch_v<V> && sizeof(V) == 64;

// y where keep, y * 2^floor(n) elsewhere: one merge-masked vscalef, where a select of n and the
// scale are two operations.
NONLIN_INTRINSIC_DIAGNOSTICS_PUSH
template <class V>
inline V scalef_unless(typename V::batch_bool_type const& keep, V const& y, V const& n) noexcept {
  static_assert(has_masked_arithmetic<V>, "arch::scalef_unless: needs AVX-512F, 512-bit");
#if defined(__AVX512F__)
  if constexpr (detail::is_float<V>) {
    auto const scaled = static_cast<__mmask16>(~static_cast<__mmask16>(keep));
    return V(_mm512_mask_scalef_ps(y, scaled, y, n));
  } else {
    auto const scaled = static_cast<__mmask8>(~static_cast<__mmask8>(keep));
    return V(_mm512_mask_scalef_pd(y, scaled, y, n));
  }
#else
  (void)keep;
  (void)n;
  return y;  // not reached
#endif
}

// +0 where zero, a * b + c rounded once elsewhere: one zero-masked fma, where the fma and a
// select are two operations.
template <class V>
inline V fma_or_zero(typename V::batch_bool_type const& zero, V const& a, V const& b,
                     V const& c) noexcept {
  static_assert(has_masked_arithmetic<V>, "arch::fma_or_zero: needs AVX-512F, 512-bit");
#if defined(__AVX512F__)
  if constexpr (detail::is_float<V>) {
    auto const computed = static_cast<__mmask16>(~static_cast<__mmask16>(zero));
    return V(_mm512_maskz_fmadd_ps(computed, a, b, c));
  } else {
    auto const computed = static_cast<__mmask8>(~static_cast<__mmask8>(zero));
    return V(_mm512_maskz_fmadd_pd(computed, a, b, c));
  }
#else
  (void)zero;
  (void)b;
  (void)c;
  return a;  // not reached
#endif
}
NONLIN_INTRINSIC_DIAGNOSTICS_POP

// ---- round_down ---------------------------------------------------------------------------

template <class V>
inline constexpr bool has_round_down = detail::avx512f&& is_batch_v<V> && sizeof(V) == 64;

// The largest integer <= x, exact, one vrndscale: the masked form, as xsimd's floor (the unmasked
// intrinsic) trips g++ 12's uninitialized warning on its undefined operand.
template <class V>
inline V round_down(V const& x) noexcept {
  static_assert(has_round_down<V>, "arch::round_down: needs AVX-512F, 512-bit");
#if defined(__AVX512F__)
  constexpr int floor_no_exceptions = _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC;
  if constexpr (detail::is_float<V>) {
    return V(_mm512_mask_roundscale_ps(x, __mmask16(0xffff), x, floor_no_exceptions));
  } else {
    return V(_mm512_mask_roundscale_pd(x, __mmask8(0xff), x, floor_no_exceptions));
  }
#else
  return x;  // not reached
#endif
}

// ---- load_masked, store_masked ----------------------------------------------------------------

template <class B>
inline constexpr bool has_masked_load_store = detail::avx512vl&& is_batch_v<B> &&
                                              (sizeof(B) == 16 || sizeof(B) == 32 ||
                                               sizeof(B) == 64);

// The first count lanes (count < B::size) from p, the others `fill`; lanes past count are not
// read (no fault).
NONLIN_INTRINSIC_DIAGNOSTICS_PUSH
template <class B>
inline B load_masked(scalar_t<B> const* p, std::size_t count, scalar_t<B> fill) noexcept {
  static_assert(has_masked_load_store<B>, "arch::load_masked: needs AVX-512VL");
#if defined(__AVX512F__) && defined(__AVX512VL__)
  constexpr bool is_float = detail::is_float<B>;
  auto const mask = static_cast<unsigned>((1u << count) - 1u);
  if constexpr (sizeof(B) == 64 && is_float) {
    return B(_mm512_mask_loadu_ps(_mm512_set1_ps(fill), static_cast<__mmask16>(mask), p));
  } else if constexpr (sizeof(B) == 64) {
    return B(_mm512_mask_loadu_pd(_mm512_set1_pd(fill), static_cast<__mmask8>(mask), p));
  } else if constexpr (sizeof(B) == 32 && is_float) {
    return B(_mm256_mask_loadu_ps(_mm256_set1_ps(fill), static_cast<__mmask8>(mask), p));
  } else if constexpr (sizeof(B) == 32) {
    return B(_mm256_mask_loadu_pd(_mm256_set1_pd(fill), static_cast<__mmask8>(mask), p));
  } else if constexpr (sizeof(B) == 16 && is_float) {
    return B(_mm_mask_loadu_ps(_mm_set1_ps(fill), static_cast<__mmask8>(mask), p));
  } else {
    return B(_mm_mask_loadu_pd(_mm_set1_pd(fill), static_cast<__mmask8>(mask), p));
  }
#else
  (void)p;
  (void)count;
  return B(fill);  // not reached
#endif
}

// The first count lanes of value to p; nothing past them is written.
template <class B>
inline void store_masked(B const& value, scalar_t<B>* p, std::size_t count) noexcept {
  static_assert(has_masked_load_store<B>, "arch::store_masked: needs AVX-512VL");
#if defined(__AVX512F__) && defined(__AVX512VL__)
  constexpr bool is_float = detail::is_float<B>;
  auto const mask = static_cast<unsigned>((1u << count) - 1u);
  if constexpr (sizeof(B) == 64 && is_float) {
    _mm512_mask_storeu_ps(p, static_cast<__mmask16>(mask), value);
  } else if constexpr (sizeof(B) == 64) {
    _mm512_mask_storeu_pd(p, static_cast<__mmask8>(mask), value);
  } else if constexpr (sizeof(B) == 32 && is_float) {
    _mm256_mask_storeu_ps(p, static_cast<__mmask8>(mask), value);
  } else if constexpr (sizeof(B) == 32) {
    _mm256_mask_storeu_pd(p, static_cast<__mmask8>(mask), value);
  } else if constexpr (sizeof(B) == 16 && is_float) {
    _mm_mask_storeu_ps(p, static_cast<__mmask8>(mask), value);
  } else {
    _mm_mask_storeu_pd(p, static_cast<__mmask8>(mask), value);
  }
#else
  (void)value;
  (void)p;
  (void)count;
#endif
}
NONLIN_INTRINSIC_DIAGNOSTICS_POP

// ---- widen ------------------------------------------------------------------------------------

template <class B>
inline constexpr bool has_widen = detail::is_float<B> &&
                                  (detail::x86_width<B>() || detail::neon_width<B>());

// The two halves of a float batch as double batches of the same arch (exact).
NONLIN_INTRINSIC_DIAGNOSTICS_PUSH
template <class B, class D = xsimd::batch<double, typename B::arch_type>>
inline std::pair<D, D> widen(B const& x) noexcept {
  static_assert(has_widen<B>, "arch::widen: not for this B");
#if defined(__AVX512F__)
  if constexpr (sizeof(B) == 64) {
    __m512 const v = x;
    return {D(_mm512_cvtps_pd(_mm512_castps512_ps256(v))),
            D(_mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))))};
  }
#endif
#if defined(__AVX__)
  if constexpr (sizeof(B) == 32) {
    __m256 const v = x;
    return {D(_mm256_cvtps_pd(_mm256_castps256_ps128(v))),
            D(_mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)))};
  }
#endif
#if defined(__SSE2__)
  if constexpr (sizeof(B) == 16) {
    __m128 const v = x;
    return {D(_mm_cvtps_pd(v)), D(_mm_cvtps_pd(_mm_movehl_ps(v, v)))};
  }
#endif
#if defined(__aarch64__) && defined(__ARM_NEON)
  if constexpr (sizeof(B) == 16) {
    float32x4_t const v = x;
    return {D(vcvt_f64_f32(vget_low_f32(v))), D(vcvt_high_f64_f32(v))};
  }
#endif
  return {D(0.0), D(0.0)};  // not reached (has_widen)
}
NONLIN_INTRINSIC_DIAGNOSTICS_POP

// ---- narrow_to_odd ----------------------------------------------------------------------------

template <class B>
inline constexpr bool has_narrow_to_odd = detail::avx512f&& is_batch_v<B>&& detail::is_float<B> &&
                                          sizeof(B) == 64;

// Two double batches as the float batch of their lanes (lo first), each rounded to odd at float's
// precision: the same bits as math::round_to_odd lane by lane (vcvtpd2ps toward zero, then the
// last bit set where the float is not the double; NaN is not set, as there).
NONLIN_INTRINSIC_DIAGNOSTICS_PUSH
template <class B, class D>
inline B narrow_to_odd(D const& lo, D const& hi) noexcept {
  static_assert(has_narrow_to_odd<B>, "arch::narrow_to_odd: needs AVX-512F, 512-bit");
#if defined(__AVX512F__)
  constexpr int toward_zero = _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC;
  __m256 const low = _mm512_cvt_roundpd_ps(lo, toward_zero);
  __m256 const high = _mm512_cvt_roundpd_ps(hi, toward_zero);
  // Not equal, ordered: false for NaN.
  auto const inexact_low = _mm512_cmp_pd_mask(_mm512_cvtps_pd(low), lo, _CMP_NEQ_OQ);
  auto const inexact_high = _mm512_cmp_pd_mask(_mm512_cvtps_pd(high), hi, _CMP_NEQ_OQ);
  __m512i const both = _mm512_castpd_si512(
      _mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(low)), _mm256_castps_pd(high), 1));
  __mmask16 const inexact = _mm512_kunpackb(inexact_high, inexact_low);
  return B(_mm512_castsi512_ps(_mm512_mask_or_epi32(both, inexact, both, _mm512_set1_epi32(1))));
#else
  (void)hi;
  return B(lo);  // not reached
#endif
}
NONLIN_INTRINSIC_DIAGNOSTICS_POP

// ---- compress, expand -------------------------------------------------------------------------

template <class B>
inline constexpr bool has_compress = has_narrow_to_odd<B>;

// The lanes of x where bit k of `lanes` is set, packed into the first popcount(lanes) lanes (the
// rest 0), and the inverse: the first popcount(lanes) lanes of packed put back in order where
// `lanes` is set, x kept elsewhere (vcompressps, vexpandps; register forms).
NONLIN_INTRINSIC_DIAGNOSTICS_PUSH
template <class B>
inline B compress(B const& x, std::uint16_t lanes) noexcept {
  static_assert(has_compress<B>, "arch::compress: needs AVX-512F, 512-bit");
#if defined(__AVX512F__)
  return B(_mm512_maskz_compress_ps(lanes, x));
#else
  (void)lanes;
  return x;  // not reached
#endif
}
template <class B>
inline B expand(B const& x, std::uint16_t lanes, B const& packed) noexcept {
  static_assert(has_compress<B>, "arch::expand: needs AVX-512F, 512-bit");
#if defined(__AVX512F__)
  return B(_mm512_mask_expand_ps(x, lanes, packed));
#else
  (void)lanes;
  (void)packed;
  return x;  // not reached
#endif
}
NONLIN_INTRINSIC_DIAGNOSTICS_POP

// ---- lane_indices, permute --------------------------------------------------------------------

template <class V>
inline constexpr bool has_permute = detail::avx512dq&& is_batch_v<V> && sizeof(V) == 64;

// Integral-valued lanes as the lane indices permute takes (truncated).
NONLIN_INTRINSIC_DIAGNOSTICS_PUSH
template <class V>
inline auto lane_indices(V const& v) noexcept {
  static_assert(has_permute<V>, "arch::lane_indices: needs AVX-512DQ, 512-bit");
#if defined(__AVX512F__) && defined(__AVX512DQ__)
  if constexpr (detail::is_float<V>) {
    return _mm512_cvttps_epi32(v);
  } else {
    return _mm512_cvttpd_epi64(v);
  }
#else
  return v;  // not reached
#endif
}

// column[index[i]] in lane i, column a register's worth of entries at 64-byte alignment.
template <class V, class I>
inline V permute(I const& index, scalar_t<V> const* column) noexcept {
  static_assert(has_permute<V>, "arch::permute: needs AVX-512DQ, 512-bit");
#if defined(__AVX512F__) && defined(__AVX512DQ__)
  if constexpr (detail::is_float<V>) {
    return V(_mm512_permutexvar_ps(index, V::load_aligned(column)));
  } else {
    return V(_mm512_permutexvar_pd(index, V::load_aligned(column)));
  }
#else
  (void)index;
  return V::load_aligned(column);  // not reached
#endif
}

// column[index[i]] in lane i, column two registers' worth of entries at 64-byte alignment: one
// vpermt2ps/pd (the same port and cost as vpermps on the Golden Cove and Zen 4 cores).
template <class V, class I>
inline V permute_pair(I const& index, scalar_t<V> const* column) noexcept {
  static_assert(has_permute<V>, "arch::permute_pair: needs AVX-512DQ, 512-bit");
#if defined(__AVX512F__) && defined(__AVX512DQ__)
  if constexpr (detail::is_float<V>) {
    return V(
        _mm512_permutex2var_ps(V::load_aligned(column), index, V::load_aligned(column + V::size)));
  } else {
    return V(
        _mm512_permutex2var_pd(V::load_aligned(column), index, V::load_aligned(column + V::size)));
  }
#else
  (void)index;
  return V::load_aligned(column);  // not reached
#endif
}

// column[j] in lane i, j the low bits of lane i's bit pattern (4 for float, 3 for double): no
// conversion, as vpermps/pd read no other bits of their index.
template <class V>
inline V permute_by_low_bits(V const& v, scalar_t<V> const* column) noexcept {
  static_assert(has_permute<V>, "arch::permute_by_low_bits: needs AVX-512DQ, 512-bit");
#if defined(__AVX512F__) && defined(__AVX512DQ__)
  if constexpr (detail::is_float<V>) {
    return V(_mm512_permutexvar_ps(_mm512_castps_si512(v), V::load_aligned(column)));
  } else {
    return V(_mm512_permutexvar_pd(_mm512_castpd_si512(v), V::load_aligned(column)));
  }
#else
  (void)v;
  return V::load_aligned(column);  // not reached
#endif
}
NONLIN_INTRINSIC_DIAGNOSTICS_POP

// ---- widen_float16, narrow_float16 ------------------------------------------------------------

template <class B>
inline constexpr bool has_float16_convert = is_batch_v<B>&& detail::is_float<B> &&
                                            ((sizeof(B) == 64 && detail::avx512f) ||
                                             ((sizeof(B) == 32 || sizeof(B) == 16) &&
                                              detail::f16c));

// B::size IEEE halves from p as floats: exact; a signaling NaN comes back quiet (vcvtph2ps).
NONLIN_INTRINSIC_DIAGNOSTICS_PUSH
template <class B>
inline B widen_float16(std::uint16_t const* p) noexcept {
  static_assert(has_float16_convert<B>, "arch::widen_float16: needs F16C or AVX-512F");
#if defined(__AVX512F__)
  if constexpr (sizeof(B) == 64) {
    return B(_mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<__m256i const*>(p))));
  }
#endif
#if defined(__F16C__)
  if constexpr (sizeof(B) == 32) {
    return B(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<__m128i const*>(p))));
  } else if constexpr (sizeof(B) == 16) {
    return B(_mm_cvtph_ps(_mm_loadl_epi64(reinterpret_cast<__m128i const*>(p))));
  }
#endif
  (void)p;
  return B(0.0f);  // not reached (has_float16_convert)
}

// x's lanes to p as IEEE halves, rounded to nearest even (the immediate, not MXCSR's mode).
template <class B>
inline void narrow_float16(B const& x, std::uint16_t* p) noexcept {
  static_assert(has_float16_convert<B>, "arch::narrow_float16: needs F16C or AVX-512F");
#if defined(__AVX512F__) || defined(__F16C__)
  constexpr int nearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
#endif
#if defined(__AVX512F__)
  if constexpr (sizeof(B) == 64) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtps_ph(x, nearest));
  }
#endif
#if defined(__F16C__)
  if constexpr (sizeof(B) == 32) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(x, nearest));
  } else if constexpr (sizeof(B) == 16) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm_cvtps_ph(x, nearest));
  }
#endif
  (void)x;
  (void)p;
}
NONLIN_INTRINSIC_DIAGNOSTICS_POP

// ---- narrow_bfloat16_flushing -----------------------------------------------------------------

template <class B>
inline constexpr bool has_bfloat16_narrow = is_batch_v<B>&& detail::is_float<B> &&
                                            sizeof(B) == 64 && detail::avx512bf16;

// x's lanes to p as bfloat16 by vcvtneps2bf16: nearest even; a NaN comes back quiet with its sign
// and top payload bits; but a subnormal float becomes +-0, whatever MXCSR says (measured on
// Zen 4: 0x007fffff gives 0x0000, not 0x0080), so the caller handles subnormal lanes.
NONLIN_INTRINSIC_DIAGNOSTICS_PUSH
template <class B>
inline void narrow_bfloat16_flushing(B const& x, std::uint16_t* p) noexcept {
  static_assert(has_bfloat16_narrow<B>, "arch::narrow_bfloat16_flushing: needs AVX-512 BF16");
#if defined(__AVX512F__) && defined(__AVX512BF16__)
  __m256bh const narrow = _mm512_cvtneps_pbh(x);
  // __m256bh is a vector of short in one compiler and of __bf16 in another: copy its bytes.
  std::memcpy(p, &narrow, sizeof narrow);
#else
  (void)x;
  (void)p;
#endif
}
NONLIN_INTRINSIC_DIAGNOSTICS_POP

// Two batches to 2 B::size bfloat16 at p, a's first, by one vcvtne2ps2bf16 (the same bits as
// narrow_bfloat16_flushing of each; measured on this VM: the pair instruction issues as often as
// the single one, 1.25 a cycle, so a pair halves the conversions).
NONLIN_INTRINSIC_DIAGNOSTICS_PUSH
template <class B>
inline void narrow_bfloat16_pair_flushing(B const& a, B const& b, std::uint16_t* p) noexcept {
  static_assert(has_bfloat16_narrow<B>, "arch::narrow_bfloat16_pair_flushing: needs AVX-512 BF16");
#if defined(__AVX512F__) && defined(__AVX512BF16__)
  // The second operand fills the low half.
  __m512bh const narrow = _mm512_cvtne2ps_pbh(b, a);
  std::memcpy(p, &narrow, sizeof narrow);
#else
  (void)a;
  (void)b;
  (void)p;
#endif
}
NONLIN_INTRINSIC_DIAGNOSTICS_POP

// Two batches whose lanes are bfloat16 values or NaNs (the results of a function that returns
// an argument, 0 or a small integer: kernels.hpp's exact16::representable) to 2 B::size
// bfloat16 at p, a's first, with no test: vcvtne2ps2bf16 ORed with the lanes' high halves
// (vpermt2w). The conversion gives a value's own high half, and a NaN's with the quiet bit set;
// it flushes a subnormal to +-0, and the high half puts it back. What store16 stores, for two
// operations at 2 and 1.25 a cycle where the test of the subnormal lanes took two vfpclass and
// a branch: relu's forward ran 1.57x, step's backward 1.61x on 4096 bfloat16.
template <class B>
inline constexpr bool has_bfloat16_pair_values_narrow = has_bfloat16_narrow<B>&& detail::avx512bw;

NONLIN_INTRINSIC_DIAGNOSTICS_PUSH
template <class B>
inline void narrow_bfloat16_pair_values(B const& a, B const& b, std::uint16_t* p) noexcept {
  static_assert(has_bfloat16_pair_values_narrow<B>,
                "arch::narrow_bfloat16_pair_values: needs AVX-512 BF16 and BW");
#if defined(__AVX512BW__) && defined(__AVX512BF16__)
  // Word 2k + 1 of a (the high half of its lane k), then those of b (index bit 5).
  __m512i const high_halves =
      _mm512_set_epi16(63, 61, 59, 57, 55, 53, 51, 49, 47, 45, 43, 41, 39, 37, 35, 33,  //
                       31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
  __m512i const truncated =
      _mm512_permutex2var_epi16(_mm512_castps_si512(a), high_halves, _mm512_castps_si512(b));
  __m512bh const narrow = _mm512_cvtne2ps_pbh(b, a);
  __m512i rounded;
  std::memcpy(&rounded, &narrow, sizeof rounded);
  _mm512_storeu_si512(p, _mm512_or_si512(rounded, truncated));
#else
  (void)a;
  (void)b;
  (void)p;
#endif
}
NONLIN_INTRINSIC_DIAGNOSTICS_POP

// ---- widen_bfloat16 ---------------------------------------------------------------------------

template <class B>
inline constexpr bool has_bfloat16_widen = is_batch_v<B>&& detail::is_float<B> &&
                                           sizeof(B) == 64 && detail::avx512bw;

// B::size bfloat16 at p as floats: each pattern in the high half of its lane, the low half 0, by
// one vpermw with a zeroing mask where zero_extend16 and a shift take two (both issue 2 a cycle
// here): relu's forward 1.09x, backward 1.14x on 4096 bfloat16; the exp-based ones 0.97-1.04x.
NONLIN_INTRINSIC_DIAGNOSTICS_PUSH
template <class B>
inline B widen_bfloat16(std::uint16_t const* p) noexcept {
  static_assert(has_bfloat16_widen<B>, "arch::widen_bfloat16: needs AVX-512BW, 512-bit");
#if defined(__AVX512BW__)
  __m512i const word_k_twice =
      _mm512_set_epi16(15, 15, 14, 14, 13, 13, 12, 12, 11, 11, 10, 10, 9, 9, 8, 8,  //
                       7, 7, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0);
  __m512i const words =
      _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<__m256i const*>(p)));
  // The mask keeps the odd words (the high halves) and zeroes the even ones.
  return B(_mm512_castsi512_ps(_mm512_maskz_permutexvar_epi16(0xaaaaaaaaU, word_k_twice, words)));
#else
  (void)p;
  return B(0.0f);  // not reached (has_bfloat16_widen)
#endif
}
NONLIN_INTRINSIC_DIAGNOSTICS_POP

// ---- bits_clear -------------------------------------------------------------------------------

template <class I>
inline constexpr bool has_bits_clear = false;
template <class A>
inline constexpr bool has_bits_clear<xsimd::batch<std::int32_t, A>> =
    sizeof(xsimd::batch<std::int32_t, A>) == 64 && detail::avx512f;

// The lanes where a & m is 0, by one vptestnmd (GCC 12 writes `(a & m) == 0` as an and and a
// test of the result with itself: two instructions).
NONLIN_INTRINSIC_DIAGNOSTICS_PUSH
template <class I>
inline auto bits_clear(I const& a, I const& m) noexcept {
  static_assert(has_bits_clear<I>, "arch::bits_clear: needs AVX-512F, 512-bit");
  using mask = typename I::batch_bool_type;
#if defined(__AVX512F__)
  return mask(_mm512_testn_epi32_mask(a, m));
#else
  (void)a;
  (void)m;
  return mask(false);  // not reached
#endif
}
NONLIN_INTRINSIC_DIAGNOSTICS_POP

// ---- zero_extend16, truncate16 ----------------------------------------------------------------

template <class B>
inline constexpr bool has_zero_extend16 = is_batch_v<B>&& detail::is_float<B> &&
                                          ((sizeof(B) == 64 && detail::avx512f) ||
                                           (sizeof(B) == 32 && detail::avx2) ||
                                           (sizeof(B) == 16 && (detail::sse41 || detail::neon64)));

// B::size uint16 from p, zero-extended to the int32 lanes of B's arch (vpmovzxwd, NEON's uxtl).
NONLIN_INTRINSIC_DIAGNOSTICS_PUSH
template <class B, class I = xsimd::batch<std::int32_t, typename B::arch_type>>
inline I zero_extend16(std::uint16_t const* p) noexcept {
  static_assert(has_zero_extend16<B>, "arch::zero_extend16: needs SSE4.1, AVX2, AVX-512F or NEON");
#if defined(__AVX512F__)
  if constexpr (sizeof(B) == 64) {
    return I(_mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<__m256i const*>(p))));
  }
#endif
#if defined(__AVX2__)
  if constexpr (sizeof(B) == 32) {
    return I(_mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<__m128i const*>(p))));
  }
#endif
#if defined(__SSE4_1__)
  if constexpr (sizeof(B) == 16) {
    return I(_mm_cvtepu16_epi32(_mm_loadl_epi64(reinterpret_cast<__m128i const*>(p))));
  }
#endif
#if defined(__aarch64__) && defined(__ARM_NEON)
  if constexpr (sizeof(B) == 16) {
    return I(vreinterpretq_s32_u32(vmovl_u16(vld1_u16(p))));
  }
#endif
  (void)p;
  return I(0);  // not reached (has_zero_extend16)
}

// The low 16 bits of each int32 lane (each lane 0 to 0xffff) to p (NEON: xtn).
template <class B, class I>
inline void truncate16(I const& v, std::uint16_t* p) noexcept {
  static_assert(has_zero_extend16<B>, "arch::truncate16: needs SSE4.1, AVX2, AVX-512F or NEON");
#if defined(__AVX512F__)
  if constexpr (sizeof(B) == 64) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtepi32_epi16(v));
  }
#endif
#if defined(__AVX2__)
  if constexpr (sizeof(B) == 32) {
    // packus works within 128-bit halves; the permute brings the two packed quarters together.
    __m256i const packed = _mm256_packus_epi32(v, v);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                     _mm256_castsi256_si128(_mm256_permute4x64_epi64(packed, 0x08)));
  }
#endif
#if defined(__SSE4_1__)
  if constexpr (sizeof(B) == 16) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm_packus_epi32(v, v));
  }
#endif
#if defined(__aarch64__) && defined(__ARM_NEON)
  if constexpr (sizeof(B) == 16) {
    int32x4_t const lanes = v;
    vst1_u16(p, vmovn_u32(vreinterpretq_u32_s32(lanes)));
  }
#endif
  (void)v;
  (void)p;
}
NONLIN_INTRINSIC_DIAGNOSTICS_POP

}  // namespace NONLIN_ISA
}  // namespace nonlin::math::arch
