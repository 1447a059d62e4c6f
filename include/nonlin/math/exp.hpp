// SPDX-License-Identifier: MIT
#pragma once
// exp, expm1 and the pieces they are made of, for float, double and their batches.
//
// e^x = 2^n * e^r with n = round(x / ln 2) and r = x - n ln 2 (Cody–Waite: ln 2 split into a
// head with trailing zero bits, so n * head is exact even without an FMA unit, and a tail).
// |r| <= ln2/2, where the polynomial below is within 0.15 ulp of e^r - 1 (float: degree 6,
// double: 12; minimax, fitted by tools/fit_coefficients.py --exp); exp_split, whose callers
// need e^x to far below an ulp near the zeros of their derivatives, keeps the Taylor series
// (degree 7 and 13), whose error vanishes towards r = 0: there a minimax one cost silu' and
// gelu_quick' 0.4 ulp and gelu_exact' (double) 0.37. The scale 2^n is applied last and in two
// halves, so a result in the subnormal range is rounded once (gradual underflow), and a caller
// that multiplies e^x by a factor can do so before the scale (exp_split + scale).

#include <array>
#include <cstdint>
#include <limits>

#include "../isa.hpp"
#include "constants.hpp"
#include "double_float.hpp"
#include "ops.hpp"
#include "polynomial.hpp"

namespace nonlin::math {
inline namespace NONLIN_ISA {

namespace detail {
template <class T>
struct exp_constants;

template <>
struct exp_constants<float> {
  static constexpr float magic = 0x1.8p23f;  // 1.5 * 2^23: adding it rounds to an integer
  static constexpr float log2e = 0x1.715476p+0f;
  static constexpr float min_arg = -115.0f;  // below, e^x * K is 0 for every |K| < 2^16
  // A backward's products dy K e^x: below -200, 0 for every finite dy and |K| < 2^6 (2^-288.5).
  static constexpr float product_min_arg = -200.0f;
  // Above, K e^x with K >= 2^-3 is a normal number (2^-119): the products need no care.
  static constexpr float normal_arg = -82.0f;
  static constexpr float max_arg = 89.0f;     // above, e^x overflows
  static constexpr float expm1_low = -18.0f;  // below, e^x - 1 rounds to -1
  static constexpr std::int32_t bias = 127;
  static constexpr int mantissa_bits = 23;
  // (e^r - 1 - r) / r^2 on |r| <= ln2/2, minimax for m's error relative to m = e^r - 1 (0.142
  // ulp; 0.050 relative to e^r; tools/fit_coefficients.py --exp): degree 4, one fma less than,
  // and as accurate as, the Taylor polynomial below (0.148 and 0.061).
  static constexpr std::array<float, 5> q = {0x1.fffffep-2f, 0x1.5554bp-3f, 0x1.555674p-5f,
                                             0x1.122768p-7f, 0x1.6bec04p-10f};
  // sum r^k / (k+2)!, k = 0..5, for exp_split (see there): 0.06 ulp at |r| = ln2/2, but its
  // error vanishes as r^8 towards r = 0, where the minimax one's does not.
  static constexpr std::array<float, 6> taylor_q = {
      0x1p-1f, 0x1.555556p-3f, 0x1.555556p-5f, 0x1.111112p-7f, 0x1.6c16c2p-10f, 0x1.a01a02p-13f};
};

template <>
struct exp_constants<double> {
  static constexpr double magic = 0x1.8p52;
  static constexpr double log2e = 0x1.71547652b82fep+0;
  static constexpr double min_arg = -760.0;
  // e^-1460 = 2^-2106.3. Without an FMA unit n ln2_head is exact only for |n| < 2^11: there
  // the products stop at -1418 (2^-2045.8), so dy K e^x is kept for |dy K| < 2^970.
  static constexpr double product_min_arg = NONLIN_HAS_FMA ? -1460.0 : -1418.0;
  static constexpr double normal_arg = -703.0;  // 2^-1014
  static constexpr double max_arg = 710.0;
  static constexpr double expm1_low = -38.0;
  static constexpr std::int64_t bias = 1023;
  static constexpr int mantissa_bits = 52;
  // As for float: degree 10 (0.004 ulp of m, 0.002 of e^r; Taylor's degree 11: 0.057, 0.024).
  static constexpr std::array<double, 11> q = {
      0x1p-1,
      0x1.5555555555559p-3,
      0x1.555555555553fp-5,
      0x1.111111110f6dfp-7,
      0x1.6c16c16c1f05cp-10,
      0x1.a01a01afd1852p-13,
      0x1.a01a017bcc50ap-16,
      0x1.71ddf88556c04p-19,
      0x1.27e536258aab5p-22,
      0x1.af5e686c5f0cap-26,
      0x1.1ee8890955e78p-29,
  };
  // sum r^k / (k+2)!, k = 0..11, for exp_split.
  static constexpr std::array<double, 12> taylor_q = {
      0x1p-1,
      0x1.5555555555555p-3,
      0x1.5555555555555p-5,
      0x1.1111111111111p-7,
      0x1.6c16c16c16c17p-10,
      0x1.a01a01a01a01ap-13,
      0x1.a01a01a01a01ap-16,
      0x1.71de3a556c734p-19,
      0x1.27e4fb7789f5cp-22,
      0x1.ae64567f544e4p-26,
      0x1.1eed8eff8d898p-29,
      0x1.6124613a86d09p-33,
  };
};
}  // namespace detail

// x rounded to the nearest integer (ties to even), for |x| < 2^22 (float) / 2^51 (double).
template <real_value V>
inline V round_to_integer(V const& x) noexcept {
  using K = detail::exp_constants<scalar_t<V>>;
  V const magic(K::magic);
  return (x + magic) - magic;
}

// 2^k for an integral-valued k in the normal exponent range: with AVX-512 one vscalef of 1
// instead of four integer operations (the same 2^k).
template <real_value V>
inline V pow2(V const& k) noexcept {
  if constexpr (arch::has_scalef<V>) {
    return arch::scalef(V(scalar_t<V>(1)), k);
  } else {
    using K = detail::exp_constants<scalar_t<V>>;
    V const magic(K::magic);
    int_t<V> const integer = math::as_bits(k + magic) - math::as_bits(magic);
    return math::from_bits<V>((integer + int_t<V>(K::bias)) << K::mantissa_bits);
  }
}

// 2^n as two factors 2^(n/2) 2^(n - n/2), each a normal number for |n| < 2 * bias.
template <real_value V>
struct pow2_pair {
  V first;
  V second;
};

template <real_value V>
inline pow2_pair<V> scale_factors(V const& n) noexcept {
  V const half = math::round_to_integer(n * math::c<V>(0.5));
  return {math::pow2(half), math::pow2(n - half)};
}

// y * 2^n for integral n, rounded once (subnormal results included): the first factor keeps
// y * 2^(n/2) normal and exact, the second rounds; needs |n| < 2 * bias. With AVX-512 one
// vscalef does the same (also rounded once, so the bits are the same), for scalars too.
template <real_value V>
inline V scale(V const& y, V const& n) noexcept {
  if constexpr (arch::has_scalef<V>) {
    return arch::scalef(y, n);
  } else {
    auto [first, second] = math::scale_factors(n);
    return (y * first) * second;
  }
}

// y where keep, scale(y, n) elsewhere: scale(y, select(keep, 0, n)), whose 2^0 leaves y as it is;
// one merge-masked vscalef on 512-bit batches.
template <real_value V>
inline V scale_unless(mask_t<V> const& keep, V const& y, V const& n) noexcept {
  if constexpr (arch::has_masked_arithmetic<V>) {
    return arch::scalef_unless(keep, y, n);
  } else {
    return math::scale(y, math::select(keep, V(0), n));
  }
}

namespace detail {
// 2^mantissa_bits: adding it to a t in [0, 2^mantissa_bits] rounds t to an integer (ties to
// even), exactly, in the binade above.
template <real_value V>
inline V subnormal_units_magic() noexcept {
  return V(scalar_t<V>(std::int64_t(1) << exp_constants<scalar_t<V>>::mantissa_bits));
}

// The value whose bits are t rounded to an integer, for t in [0, 2^mantissa_bits]: t units of
// the smallest subnormal (2^mantissa_bits of them make the smallest normal), rounded once.
template <real_value V>
inline V from_subnormal_units(V const& t) noexcept {
  V const magic = subnormal_units_magic<V>();
  return math::from_bits<V>(math::as_bits(t + magic) - math::as_bits(magic));
}
}  // namespace detail

// y 2^n rounded once, as scale(y, n), computed without a floating-point operation whose result
// underflows (is subnormal, or rounds to 0 from below the normal range): on Intel cores such an
// operation takes a microcode assist, ~190 cycles for a vscalefps and ~120 for a vmulps on this
// Golden Cove machine (measured; subnormal inputs cost the same to a multiply, nothing to an
// addition or a conversion), where every other lane of the batch costs 1. Where |y| 2^n is below
// the smallest normal, t = |y| 2^(n + mantissa_bits + bias - 1) is the result in units of the
// smallest subnormal (t < 2^mantissa_bits, exact: a normal number), and t + 2^mantissa_bits rounds
// it to an integer (ties to even: the rounding of the product itself), whose bits are the
// result's; the others take the scale with those lanes masked. For |y| >= 2^-60 or y = 0 (the
// shift is clamped so that t stays normal); NaN and infinities as scale.
template <real_value V>
inline V scale_without_underflow(V const& y, V const& n) noexcept {
  using T = scalar_t<V>;
  using K = detail::exp_constants<T>;
  V const to_subnormal_units(T(K::bias + K::mantissa_bits - 1));
  V const t = math::scale(math::abs(y), math::clamp_below(n + to_subnormal_units, V(T(-64))));
  auto const below_normal = t < detail::subnormal_units_magic<V>();
  return math::select(below_normal, math::with_sign_of(detail::from_subnormal_units(t), y),
                      math::scale_unless(below_normal, y, n));
}

// a b rounded once, as a * b, for a >= 0 (or NaN) and b in [2^-126, 1] (a normal number at most
// 1: softmax's terms times 1 / s), without an operation that underflows (scale_without_underflow)
// on 512-bit AVX-512 float batches: where a b is below the normal range (a subnormal a included)
// the product is formed exactly in double, in units of the smallest subnormal float, and rounded
// to an integer there (ties to even, the product's own rounding), whose bits are the result's;
// the other lanes multiply, those lanes' a replaced by 1. Other batches and scalars: a * b, the
// same bits.
template <real_value V>
inline V product_without_underflow(V const& a, V const& b) noexcept {
  if constexpr (arch::has_narrow_to_odd<V> && arch::has_widen<V>) {
    using D = xsimd::batch<double, typename V::arch_type>;
    auto const wide_a = arch::widen<V, D>(a);
    auto const wide_b = arch::widen<V, D>(b);
    D const magic(0x1p52);
    auto in_units = [&](D const& x, D const& y) {
      return ((x * (y * D(0x1p149))) + magic) - magic;  // x y 2^149 exact, then rounded
    };
    // Integers up to 2^23 where the result is below the normal range: exact in float, whatever
    // the narrowing's rounding.
    V const units = arch::narrow_to_odd<V>(in_units(wide_a.first, wide_b.first),
                                           in_units(wide_a.second, wide_b.second));
    auto const below_normal = units <= detail::subnormal_units_magic<V>();
    return math::select(below_normal, detail::from_subnormal_units(units),
                        math::select(below_normal, math::c<V>(1), a) * b);
  } else {
    return a * b;
  }
}

// The range an exp is evaluated for: `value` where e^x itself (or e^x K, |K| < 2^16) is the
// result, so that below min_arg it is 0; `product` for the products dy f'(x) of a backward, whose
// factor e^x may lie far below the smallest subnormal while dy e^x K is still a normal number
// (tanh.backward(89, FLT_MAX) = 6.8e-39, while tanh'(89) rounds to 0): clamped at
// product_min_arg, with n down to -289 (float) / -2046 (double), which math::scale cannot apply
// in one step without AVX-512 (scale_times and value_exponent below can).
enum class exp_range { value, product };

// The exponent with which the value of a `product`-range e^x is formed: clamped where 2^n alone
// is below every subnormal (the value is 0 either way), so that math::scale's two factors stay
// normal.
template <real_value V>
inline V value_exponent(V const& n) noexcept {
  using K = detail::exp_constants<scalar_t<V>>;
  return math::clamp_below(n, V(scalar_t<V>(-2 * (K::bias - 2))));
}

// dy (y 2^n) rounded once where the product is a normal number, also where y 2^n alone is not
// (n integral, >= -2 (bias - 1) - bias + mantissa bits; 2^-mantissa bits <= |y| < 2^64): y 2^n'
// first, with n' = max(n, -(bias - mantissa bits - 1)) keeping it normal and its product with
// any finite dy finite, then the rest of 2^n (exact unless the result is subnormal, then rounded
// once more: at most an ulp of the smallest subnormal). Where
// n >= n' the result is dy * scale(y, n), bit for bit: only the batches with a lane below take
// the second scale (a branch on the whole batch).
template <real_value V>
inline V scale_times(V const& y, V const& n, V const& dy) noexcept {
  using T = scalar_t<V>;
  using K = detail::exp_constants<T>;
  V const lowest(T(-(K::bias - K::mantissa_bits - 1)));
  if (!math::any(n < lowest)) [[likely]] {
    return dy * math::scale(y, n);
  }
  V const first = math::clamp_below(n, lowest);
  return math::scale(dy * math::scale(y, first), n - first);
}

// dy f'(x) for a derivative whose factor e^a (a <= 0, its exp's argument) may leave f'(x) below
// the normal range: `common` (dy times the rounded f'(x)) wherever a >= normal_arg, where f' is a
// normal number; on the lanes product_min_arg <= a < normal_arg, tail(args...): the same formula
// evaluated with the exp of the product range and dy multiplied in before the final scale
// (scale_times). Below product_min_arg dy f' is 0 for every finite dy: common's dy * 0 (NaN for
// an infinite dy, as at x = +-inf). One compare and a branch per batch in the hot loop.
// The tail runs out of line, marked cold, on arguments passed by value: inlined, or given its
// inputs through a closure's references, it cost the hot loop 5-13% (6 zmm stores a batch to
// keep the referenced values in memory, and register pressure across the four batches of an
// iteration), though it never runs there.
namespace detail {
template <real_value V, class Tail, class... Args>
NONLIN_COLD V product_tail(V common, V a, Tail tail, Args... args) noexcept {
  using K = exp_constants<scalar_t<V>>;
  return math::select(math::both(a < V(K::normal_arg), a >= V(K::product_min_arg)), tail(args...),
                      common);
}
}  // namespace detail

template <real_value V, class Tail, class... Args>
inline V with_product_tail(V const& common, V const& a, Tail tail, Args const&... args) noexcept {
  static_assert(std::is_empty_v<Tail>, "the tail takes its inputs as arguments, not captures");
  using K = detail::exp_constants<scalar_t<V>>;
  if (!math::any(a < V(K::normal_arg))) [[likely]] {
    return common;
  }
  return detail::product_tail(common, a, tail, args...);
}

// How a backward applies with_product_tail: the functors' backward and the math functions under
// it take one of these as their last argument (default: product_tails).
//   product_tails: with_product_tail itself, a branch on each batch.
//   recorded_product_tails: common, and `lanes` gains the lanes where with_product_tail would
//     have taken the tail (a < normal_arg). A span kernel evaluates the four batches of an
//     iteration so, without a branch between them (kernels.hpp: backward_deferring_tails), and
//     evaluates them again with product_tails where a lane was recorded: the same bits, since
//     with_product_tail returns common wherever no lane is below normal_arg.
struct product_tails {
  template <real_value V, class Tail, class... Args>
  V operator()(V const& common, V const& a, Tail tail, Args const&... args) const noexcept {
    return math::with_product_tail(common, a, tail, args...);
  }
};

template <real_value V>
struct recorded_product_tails {
  mask_t<V>& lanes;

  template <class Tail, class... Args>
  V operator()(V const& common, V const& a, Tail /*tail*/, Args const&... /*args*/) const noexcept {
    using K = detail::exp_constants<scalar_t<V>>;
    lanes = lanes | (a < V(K::normal_arg));
    return common;
  }
};

// The reduced argument of e^x: x = n ln2 + r + lo, n integral, |r| <= ln2/2 (x clamped first);
// lo, what rounding r lost, is reduction_error's, for the callers that keep it. (Two members:
// GCC 12 left a dead zmm store per batch for a third one that the caller did not use.)
template <real_value V>
struct reduced {
  V r;
  V n;
};

// x - n ln2_head, exact: n ln2_head has trailing zero bits.
template <real_value V>
inline V reduction_head(V const& xc, V const& n) noexcept {
  return math::fma(n, V(-ln2_split<scalar_t<V>>::head), xc);
}

// The reduction of an argument already within [min_arg, max_arg]. n ln2_head is exact, and so is
// x - n ln2_head; only the tail's step rounds.
template <real_value V>
inline reduced<V> reduce_exp_clamped(V const& xc) noexcept {
  using K = detail::exp_constants<scalar_t<V>>;
  V const magic(K::magic);
  V n = math::fma(xc, V(K::log2e), magic) - magic;  // not const: see two_sum
  return {math::fma(n, V(-ln2_split<scalar_t<V>>::tail), math::reduction_head(xc, n)), n};
}

// What rounding the reduction's tail step lost, by an fma of its error (the head is the same
// expression as the reduction's, so the compiler computes it once).
template <real_value V>
inline V reduction_error(V const& xc, reduced<V> const& reduction) noexcept {
  return math::fma(reduction.n, V(-ln2_split<scalar_t<V>>::tail),
                   math::reduction_head(xc, reduction.n) - reduction.r);
}

template <real_value V>
inline reduced<V> reduce_exp(V const& x) noexcept {
  using K = detail::exp_constants<scalar_t<V>>;
  return math::reduce_exp_clamped(
      math::clamp_below(math::clamp_above(x, V(K::max_arg)), V(K::min_arg)));
}

// e^r - 1 for |r| <= ln2/2 (and any smaller r), within 0.6 ulp.
template <real_value V>
inline V expm1_reduced(V const& r) noexcept {
  using K = detail::exp_constants<scalar_t<V>>;
  return math::fma(r * r, math::horner(r, K::q), r);
}

// e^(x + lo) as (1 + m + m_lo) 2^n, m = e^r - 1 rounded and m_lo what that rounding, the
// reduction's rounding and the argument's low part lo (|lo| < ulp(x)) add: the form that lets a
// caller multiply e^x by a factor k as k + (k m + k m_lo), where only the last two roundings
// count, before the scale (math::scale), which is exact unless the result is subnormal (then it
// rounds once). Where e^x underflows entirely (x below the clamp) m = -1 and m_lo = 0, so every
// product is 0; above the clamp m = +inf.
template <real_value V>
struct exp_split {
  V m;
  V m_lo;
  V n;

  V times(V const& k) const noexcept { return math::scale(unscaled_times(k), n); }
  // k e^x before the scale 2^n (for scale_times).
  V unscaled_times(V const& k) const noexcept { return k + math::fma(k, m, k * m_lo); }
  V value() const noexcept { return math::scale(math::c<V>(1) + (m + m_lo), n); }
  mask_t<V> vanished() const noexcept { return m == math::c<V>(-1); }
};

// e^x k for k = k.hi + k.lo: k.hi + (k.hi m + (k.lo m + (k.hi m_lo + k.lo))) before the scale.
// k.lo m counts: the quotients from a vrcp14 seed leave k.lo up to 2^-14 of k.hi (k.lo m_lo is
// below 2^-38 of an ulp). Subnormal results round twice (the sum, then the scale): at most one
// ulp of 2^-149.
template <real_value V>
inline V unscaled_times(exp_split<V> const& e, double_float<V> const& k) noexcept {
  V const low = math::fma(k.lo, e.m, math::fma(k.hi, e.m_lo, k.lo));
  return k.hi + math::fma(k.hi, e.m, low);
}

template <real_value V>
inline V times(exp_split<V> const& e, double_float<V> const& k) noexcept {
  return math::scale(math::unscaled_times(e, k), e.n);
}

namespace detail {
// The lowest argument of an exp of range R.
template <exp_range R, class T>
inline constexpr T lowest_arg =
    R == exp_range::value ? exp_constants<T>::min_arg : exp_constants<T>::product_min_arg;

template <bool with_lo, exp_range R, real_value V>
inline exp_split<V> exp_split_nonpositive(V const& x, V const& lo) noexcept {
  using K = detail::exp_constants<scalar_t<V>>;
  V const lowest(lowest_arg<R, scalar_t<V>>);
  auto below = x < lowest;
  V const xc = math::select(below, lowest, x);
  auto reduction = math::reduce_exp_clamped(xc);
  V const r = reduction.r;
  V low = math::reduction_error(xc, reduction);
  if constexpr (with_lo) {
    low = low + lo;
  }
  // m = r + r^2 q(r) rounded once; r - m is exact (m is within a factor 2 of r), so the fma
  // recovers m's rounding error (but that of r^2, 2^-24 of a term below r^2 / 2). e^(r + low) =
  // (1 + m)(1 + low) to 2^-48.
  // The Taylor polynomial: near the zeros of x sigma(z)' (r ~ 0.11) its error is ~2^-41, where
  // the minimax one's 2^-26 would be amplified by the bracket's cancellation.
  V const r2 = r * r;
  V const q = math::horner(r, K::taylor_q);
  V const m = math::fma(r2, q, r);
  V const m_lo = math::fma(r2, q, r - m) + math::fma(m, low, low);
  return {math::select(below, math::c<V>(-1), m), math::select(below, V(0), m_lo), reduction.n};
}
}  // namespace detail

// e^x as (1 + m) 2^n, m = e^r - 1 rounded once and nothing kept of its rounding or of the
// reduction's: within 1 ulp (half from m, half from 1 + m), for the callers that round the
// result once more anyway (a quotient, a log1p). Below exp's lowest argument the clamp leaves
// e^min_arg, whose value is 0.
template <real_value V>
struct exp_scaled {
  V m;
  V n;

  V value() const noexcept { return math::scale(math::c<V>(1) + m, n); }
  // The same bits, without an operation that underflows where the value is below the normal
  // range (see scale_without_underflow): for the callers whose arguments often lie there
  // (softmax's masked and far entries).
  V value_without_underflow() const noexcept {
    return math::scale_without_underflow(math::c<V>(1) + m, n);
  }
};

// e^x k for k = k.hi + k.lo and the lean exp: k.hi + (k.hi m + (k.lo m + k.lo)).
template <real_value V>
inline V unscaled_times(exp_scaled<V> const& e, double_float<V> const& k) noexcept {
  return k.hi + math::fma(k.hi, e.m, math::fma(k.lo, e.m, k.lo));
}

template <real_value V>
inline V times(exp_scaled<V> const& e, double_float<V> const& k) noexcept {
  return math::scale(math::unscaled_times(e, k), e.n);
}

// e^x k for a k with no remainder: k + k m rounded once (two operations fewer; for k = 1 the
// same bits as {1, 0} above).
template <real_value V>
inline V unscaled_times(exp_scaled<V> const& e, V const& k) noexcept {
  return math::fma(k, e.m, k);
}

template <real_value V>
inline V times(exp_scaled<V> const& e, V const& k) noexcept {
  return math::scale(math::unscaled_times(e, k), e.n);
}

// e^(x + lo) for x <= max_arg (or NaN) as exp_scaled: lo is folded into the reduced argument
// (one addition; leaving it out costs 64-196 ulp where x is a rounded product), the clamp below
// is one max; below it lo (up to half an ulp of a huge x) is dropped.
template <exp_range R = exp_range::value, real_value V>
inline exp_scaled<V> exp_scaled_nonpositive(V const& x, V const& lo) noexcept {
  V const lowest(detail::lowest_arg<R, scalar_t<V>>);
  auto reduction = math::reduce_exp_clamped(math::clamp_below(x, lowest));
  V const kept = math::select(x < lowest, V(0), lo);
  return {math::expm1_reduced(reduction.r + kept), reduction.n};
}

namespace detail {
// e^x as exp_scaled for an x already clamped below at lowest_arg (or NaN).
template <real_value V>
inline exp_scaled<V> exp_scaled_clamped(V const& clamped) noexcept {
  auto reduction = math::reduce_exp_clamped(clamped);
  return {math::expm1_reduced(reduction.r), reduction.n};
}
}  // namespace detail

template <exp_range R = exp_range::value, real_value V>
inline exp_scaled<V> exp_scaled_nonpositive(V const& x) noexcept {
  return detail::exp_scaled_clamped(math::clamp_below(x, V(detail::lowest_arg<R, scalar_t<V>>)));
}

// e^-|z| as exp_scaled: exp_scaled_nonpositive(-|z|) with -|z| and its clamp in one operation
// (math::neg_abs_at_least), the same bits wherever z is not a NaN. A NaN z may give e^lowest
// instead of a NaN (vrange returns the bound for a quiet NaN): for callers whose result takes
// the NaN from another operand (x sigma(x) with z = x: x itself; sigma(z): its numerator, from z).
template <exp_range R = exp_range::value, real_value V>
inline exp_scaled<V> exp_scaled_of_neg_abs(V const& z) noexcept {
  return detail::exp_scaled_clamped(
      math::neg_abs_at_least(z, V(detail::lowest_arg<R, scalar_t<V>>)));
}

// e^(x + lo) where it cannot overflow (x <= max_arg, or NaN): the exps of the activations, whose
// arguments are <= 0 (-|z|, -h^2/2, z - max). No upper clamp and no infinity to mark, two
// compares and two selects less. Below min_arg, m = -1 (exp_split::vanished).
template <exp_range R = exp_range::value, real_value V>
inline exp_split<V> exp_split_nonpositive(V const& x, V const& lo) noexcept {
  return detail::exp_split_nonpositive<true, R>(x, lo);
}

// The same without a low part (one addition less).
template <exp_range R = exp_range::value, real_value V>
inline exp_split<V> exp_split_nonpositive(V const& x) noexcept {
  return detail::exp_split_nonpositive<false, R>(x, V(0));
}

// e^x, within 1 ulp; 0 at -inf, +inf at +inf (e^max_arg overflows), NaN for NaN.
template <real_value V>
inline V exp(V const& x) noexcept {
  using K = detail::exp_constants<scalar_t<V>>;
  return math::exp_scaled_nonpositive(math::clamp_above(x, V(K::max_arg))).value();
}

// e^x where it cannot overflow (x <= max_arg, or NaN).
template <real_value V>
inline V exp_nonpositive(V const& x) noexcept {
  return math::exp_scaled_nonpositive(x).value();
}

// 2^n (1 + m) - 1 for m = e^r - 1 and n <= mantissa bits, where 2^n - 1 is exact: one fma,
// rounded once.
template <real_value V>
inline V expm1_small_n(V const& n, V const& m) noexcept {
  V const p = math::pow2(n);
  return math::fma(p, m, p - math::c<V>(1));
}

// e^x - 1 without cancellation near 0, within 1 ulp; -1 at -inf, +inf at +inf, NaN for NaN.
template <real_value V>
inline V expm1(V const& x) noexcept {
  using T = scalar_t<V>;
  using K = detail::exp_constants<T>;
  // Beyond these the result rounds to -1 or overflows; clamping keeps 2^n representable.
  V const low(K::expm1_low);
  V const xc = math::clamp_below(math::clamp_above(x, V(K::max_arg)), low);
  auto reduction = math::reduce_exp(xc);
  V const n = reduction.n;
  V const m = math::expm1_reduced(reduction.r);
  // For n <= mantissa bits, 2^n - 1 is exact and one fma gives 2^n (1 + m) - 1 rounded once;
  // above, the -1 is below half an ulp and e^x itself is the answer.
  V const near = math::expm1_small_n(math::clamp_above(n, V(T(K::mantissa_bits))), m);
  V const far = math::scale(m + math::c<V>(1), n);
  V result = math::select(n > V(T(K::mantissa_bits)), far, near);
  result = math::select(x > V(K::max_arg), V(std::numeric_limits<T>::infinity()), result);
  return math::select(x < low, V(T(-1)), result);
}

// e^x - 1 for x <= 0 (or NaN): n <= 0, always expm1's small-n path, without its clamp above and
// its far side. -1 below `low` in a branch taken only by a batch with such a lane, and the clamp
// as one max (the same select, NaN kept): a select at the end or the start of the chain costs
// far more than its count (design.md: an operation costs by how long it waits).
template <real_value V>
inline V expm1_nonpositive(V const& x) noexcept {
  using T = scalar_t<V>;
  V const low(detail::exp_constants<T>::expm1_low);
  auto reduction = math::reduce_exp_clamped(math::clamp_below(x, low));
  V const result = math::expm1_small_n(reduction.n, math::expm1_reduced(reduction.r));
  auto const below = x < low;
  if (math::any(below)) [[unlikely]] {
    return math::select(below, V(T(-1)), result);
  }
  return result;
}

// 1 - e^a = -expm1(a) for the a <= 0 of a log-probability: softplus' and log_sigmoid's
// derivatives from their outputs (sigma(x) = 1 - e^(-softplus x), sigma(-x) = 1 - e^(log_sigmoid
// x)). An a > 0, which neither output takes, counts as 0 (one min; the result -0, as at the edge
// of the range itself, where -expm1(a) would be negative); NaN stays NaN. expm1_nonpositive
// instead of expm1: no clamp above, no far side and no selects for +inf.
template <real_value V>
inline V one_minus_exp_nonpositive(V const& a) noexcept {
  return math::neg(math::expm1_nonpositive(math::clamp_above(a, V(0))));
}

}  // namespace NONLIN_ISA
}  // namespace nonlin::math
