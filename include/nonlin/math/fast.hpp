// SPDX-License-Identifier: MIT
#pragma once
// The math of the opt-in fast tier (nonlin/fast.hpp): an exp from a 16-entry table of 2^(j/16)
// (8 for double) and a degree-3 polynomial where exp.hpp's reduction needs degree 6, none of the
// default tier's compensations (no hi + lo arguments, no exact 1 + e, no fitted root
// neighbourhoods), and plain divisions for the quotients. Scalars and batches still share every
// line, so they agree bit for bit.
// The bounds this buys are measured by tools/accuracy.cpp and listed in the README.

#include <array>
#include <cstddef>
#include <limits>
#include <type_traits>

#include "../isa.hpp"
#include "arch.hpp"
#include "constants.hpp"
#include "exp.hpp"
#include "log.hpp"
#include "logistic.hpp"
#include "normal.hpp"
#include "normal_tables.hpp"
#include "ops.hpp"
#include "polynomial.hpp"

namespace nonlin::math::fast {
inline namespace NONLIN_ISA {

namespace detail {
// 2^(j/N), j = 0..N-1, rounded to nearest: one register of entries (N = 16 floats, 8 doubles),
// so that a lookup is one vpermps/pd on AVX-512. magic: adding it rounds to a multiple of 1/N,
// whose j / N the low bits of the sum hold. q: (e^r - 1 - r) / r^2 on |r| <= ln2 / (2N), the
// Taylor coefficients (float: the remainder r^4 / 24 <= 9.2e-9, 0.15 ulp of e^r; double: r^9 / 9!
// <= 1.5e-18, 0.014 ulp).
template <class T>
struct exp2_fractions;
template <>
struct exp2_fractions<float> {
  static constexpr int size = 16;
  static constexpr float magic = 0x1.8p19f;
  // ln2 = head + tail, head to 9 bits: k head is exact for every k of the product range (13
  // bits), also without an FMA unit (x86-64-v2), and so is a - k head.
  static constexpr float ln2_head = 0x1.63p-1f;
  static constexpr float ln2_tail = -0x1.bd0106p-13f;
  alignas(64) static constexpr std::array<float, 16> table = {
      0x1p+0f,        0x1.0b5586p+0f, 0x1.172b84p+0f, 0x1.2387a6p+0f,
      0x1.306fep+0f,  0x1.3dea64p+0f, 0x1.4bfdaep+0f, 0x1.5ab07ep+0f,
      0x1.6a09e6p+0f, 0x1.7a1148p+0f, 0x1.8ace54p+0f, 0x1.9c4918p+0f,
      0x1.ae89fap+0f, 0x1.c199bep+0f, 0x1.d5818ep+0f, 0x1.ea4afap+0f};
  // 2^(j/16) - table[j], rounded: e^r's error stays that of its last addition (~0.5 ulp, not
  // ~1 with the entry's own rounding), which the derivatives of x sigma(z) amplify where they
  // cancel.
  alignas(64) static constexpr std::array<float, 16> table_lo = {
      0x0p+0f,          0x1.9f3122p-25f,  -0x1.c15742p-27f, 0x1.ceac48p-25f,
      0x1.4636e2p-25f,  0x1.824684p-25f,  -0x1.593abcp-25f, -0x1.5bd5ecp-27f,
      0x1.9fcef4p-26f,  -0x1.829fd0p-25f, 0x1.15506ep-27f,  0x1.51f848p-27f,
      -0x1.a94b14p-26f, -0x1.3d56b2p-27f, -0x1.822dbcp-27f, 0x1.52486cp-27f};
  static constexpr std::array<float, 2> q = {0x1p-1f, 0x1.555556p-3f};
  // e^r - 1 itself near 0 (expm1_nonpositive, j = 0, where the result is m): one Taylor term more,
  // r^5 / 120 <= 2^-29 of r on |r| <= ln2/32 (with q alone r^4 / 24 reached 7 ulp of r).
  static constexpr std::array<float, 3> expm1_q = {0x1p-1f, 0x1.555556p-3f, 0x1.555556p-5f};
};
template <>
struct exp2_fractions<double> {
  static constexpr int size = 8;
  static constexpr double magic = 0x1.8p49;
  // As for float: head to 36 bits, k up to 15.
  static constexpr double ln2_head = 0x1.62e42fefap-1;
  static constexpr double ln2_tail = 0x1.cf79abc9e3b3ap-40;
  alignas(64) static constexpr std::array<double, 8> table = {0x1p+0,
                                                              0x1.172b83c7d517bp+0,
                                                              0x1.306fe0a31b715p+0,
                                                              0x1.4bfdad5362a27p+0,
                                                              0x1.6a09e667f3bcdp+0,
                                                              0x1.8ace5422aa0dbp+0,
                                                              0x1.ae89f995ad3adp+0,
                                                              0x1.d5818dcfba487p+0};
  alignas(64) static constexpr std::array<double, 8> table_lo = {0x0p+0,
                                                                 -0x1.19041b9d78a76p-55,
                                                                 0x1.6f46ad23182e4p-55,
                                                                 0x1.d4397afec42e2p-56,
                                                                 -0x1.bdd3413b26456p-54,
                                                                 0x1.6e9f156864b27p-54,
                                                                 0x1.7a1cd345dcc81p-54,
                                                                 0x1.2ed02d75b3707p-55};
  static constexpr std::array<double, 7> q = {0x1p-1,
                                              0x1.5555555555555p-3,
                                              0x1.5555555555555p-5,
                                              0x1.1111111111111p-7,
                                              0x1.6c16c16c16c17p-10,
                                              0x1.a01a01a01a01ap-13,
                                              0x1.a01a01a01a01ap-16};
  // r^9 / 9! <= 2^-54 of r on |r| <= ln2/16: q suffices for e^r - 1 too.
  static constexpr std::array<double, 7> expm1_q = q;
};
}  // namespace detail

// column[j], j = the low bits of kf's bit pattern (kf = j + magic, magic's ulp 1, or k + magic
// with k a multiple of 1/N and magic's ulp 1/N): one vpermps/pd where the batch holds the whole
// column, a gather (or an index) elsewhere; the same entry either way.
template <real_value V, std::size_t N>
inline V register_table_entry(V const& kf, std::array<scalar_t<V>, N> const& column) noexcept {
  static_assert((N & (N - 1)) == 0, "the index is the low bits");
  if constexpr (arch::has_permute<V>) {
    static_assert(V::size == N, "the table is one register");
    return arch::permute_by_low_bits(kf, column.data());
  } else {
    auto const index = math::as_bits(kf) & int_t<V>(N - 1);
    if constexpr (is_batch_v<V>) {
      return V::gather(column.data(), index);
    } else {
      return column[static_cast<std::size_t>(index)];
    }
  }
}

// e^a = u 2^n for a <= 0 within exp's clamped range: a = k ln2 + r, k a multiple of 1/N,
// |r| <= ln2 / (2N); u = 2^(k - n) e^r = t (1 + m) from the table's entry t and m = e^r - 1,
// n = floor(k) integral. u lies in [2^(-1/(2N)), 2): e^a to about half an ulp (t + t_lo carries
// the entry to twice the precision; m's error and the last addition's rounding remain); a short
// chain (the polynomial is degree 3 for float where the plain reduction needs 6) and two lookups
// beside it. low_column = false leaves t_lo out (one lookup and one fma fewer, e^a to about an
// ulp: the entry's rounding too): for the forwards and sigma' (fast::sigmoid, fast::tanh),
// where e^a's error passes to the result at most once; the derivatives of x sigma(z) and of mish
// amplify it where they cancel and keep the column.
template <real_value V>
struct exp_parts {
  V u;
  V n;
  V value() const noexcept { return math::scale(u, n); }
  // The same bits without an underflowing operation (math::scale_without_underflow).
  V value_without_underflow() const noexcept { return math::scale_without_underflow(u, n); }
};

// The table reduction itself: e^a = t (1 + m) 2^n, t = 2^(j/N) from the table (its column index
// in kf's low bits, for the low column's entry), m = e^r - 1.
template <real_value V>
struct table_reduction {
  V kf;
  V t;
  V m;
  V n;
};

template <bool for_expm1 = false, real_value V>
inline table_reduction<V> reduce_by_table(V const& a) noexcept {
  using T = scalar_t<V>;
  using E = detail::exp2_fractions<T>;
  V const magic(E::magic);
  V const kf = math::fma(a, V(math::detail::exp_constants<T>::log2e), magic);
  V const k = kf - magic;
  V const r = math::fma(k, V(-E::ln2_tail), math::fma(k, V(-E::ln2_head), a));
  V const t = fast::register_table_entry(kf, E::table);
  V const q = for_expm1 ? math::horner(r, E::expm1_q) : math::horner(r, E::q);
  return {kf, t, math::fma(r * r, q, r), math::floor(k)};
}

template <bool low_column = true, real_value V>
inline exp_parts<V> exp_by_table(V const& a) noexcept {
  auto p = fast::reduce_by_table(a);  // not const: GCC 12 would store it
  if constexpr (low_column) {
    V const t_lo = fast::register_table_entry(p.kf, detail::exp2_fractions<scalar_t<V>>::table_lo);
    return {p.t + math::fma(p.t, p.m, t_lo), p.n};
  } else {
    return {math::fma(p.t, p.m, p.t), p.n};
  }
}

// e^a - 1 for a <= 0 (or NaN) from the table (m from expm1_q): with s = t 2^n (exact: n >= -27 for
// float, -56 for double above the clamp), (s - 1 + t_lo 2^n) + s m, the last fma rounding once. s -
// 1 is exact for s >= 1/2 (Sterbenz) and within half an ulp of a result of at least 1/2 in
// magnitude below; the low column keeps the entry's rounding (2^-25 absolute, 16 ulp of a result
// near -0.03) out. Near 0 (j = 0, n = 0) it is m itself. a is clamped at expm1_low, where the
// result rounds to -1
// (-inf gives -1), NaN kept. Within about 1.5 ulp (every float: tests/accuracy_test.cpp's ELU
// rows).
template <real_value V>
inline V expm1_nonpositive(V const& a) noexcept {
  using T = scalar_t<V>;
  V const ac = math::clamp_below(a, V(math::detail::exp_constants<T>::expm1_low));
  auto p = fast::reduce_by_table<true>(ac);  // not const: GCC 12 would store it
  V const t_lo = fast::register_table_entry(p.kf, detail::exp2_fractions<T>::table_lo);
  V const s = math::scale(p.t, p.n);
  return math::fma(s, p.m, (s - math::c<V>(1)) + math::scale(t_lo, p.n));
}

// The logistic pieces from e = e^-|z| = u 2^n in (0, 1] and d = 1 + e: sigma(|z|) = 1 / d and
// sigma(-|z|) = e / d, so neither tail cancels or overflows; each caller forms one quotient, a
// division at the end of its chain (vdivps runs beside the FMA pipes, design.md). Only the lower
// clamp of exp is needed (-|z| <= 0).
template <real_value V>
struct logistic_parts {
  V a;  // -|z|, clamped at exp's lowest argument
  V u;
  V n;
  V e;
  V d;
  // (1 + e)^2 = 1 + e (e + 2): one rounding that counts (e + 2's is e times smaller), where
  // d * d would carry d's rounding twice and its own.
  V square() const noexcept { return math::fma(e, e + math::c<V>(2), math::c<V>(1)); }
  V slope() const noexcept { return math::divide(e, square()); }  // sigma'(z) = e / (1 + e)^2
};

// The argument z of the fast sigma(z) family: a V, or z.hi + z.lo (a double_float) where the
// caller keeps z's rounding (the 16-bit twins of swish, gelu_quick and gelu_tanh,
// detail/fast16.hpp, whose z rounded once costs |z| / 2 ulp in the left tail). The clamps and tests
// read high(z); e^(c + lo) is taken as e^c (1 + lo) (|lo| <= ulp(z): its square is far below e's
// rounding).
template <real_value V>
inline V const& high(V const& z) noexcept {
  return z;
}
template <real_value V>
inline V const& high(double_float<V> const& z) noexcept {
  return z.hi;
}
// z with high(z) replaced by hi (a clamp), its low part kept.
template <real_value V>
inline V with_high(V const& /*z*/, V const& hi) noexcept {
  return hi;
}
template <real_value V>
inline double_float<V> with_high(double_float<V> const& z, V const& hi) noexcept {
  return {hi, z.lo};
}
// e^-z from the table (z already clamped where the caller needs it).
template <bool low_column, real_value V>
inline exp_parts<V> exp_minus(V const& z) noexcept {
  return fast::exp_by_table<low_column>(math::neg(z));
}
template <bool low_column, real_value V>
inline exp_parts<V> exp_minus(double_float<V> const& z) noexcept {
  auto e = fast::exp_by_table<low_column>(math::neg(z.hi));  // not const: GCC 12 would store it
  return {math::fnma(e.u, z.lo, e.u), e.n};
}
// e^-|z| for a = -|high(z)| clamped below.
template <bool low_column, real_value V>
inline exp_parts<V> exp_minus_abs(V const& a, V const& /*z*/) noexcept {
  return fast::exp_by_table<low_column>(a);
}
template <bool low_column, real_value V>
inline exp_parts<V> exp_minus_abs(V const& a, double_float<V> const& z) noexcept {
  auto e = fast::exp_by_table<low_column>(a);  // not const: GCC 12 would store it
  V const lo = math::select(z.hi >= V(0), math::neg(z.lo), z.lo);
  return {math::fma(e.u, lo, e.u), e.n};
}

// R = product: for a backward's products far in the tails (math::with_product_tail), where
// dy sigma'(z) = scale_times(u / d^2, n, dy). low_column: exp_by_table's.
template <exp_range R = exp_range::value, bool low_column = true, class Z>
inline auto logistic(Z const& z) noexcept {
  using V = std::remove_cvref_t<decltype(fast::high(z))>;
  V const h = fast::high(z);
  V const a = math::clamp_below(math::neg_abs(h), V(math::detail::lowest_arg<R, scalar_t<V>>));
  auto const parts = fast::exp_minus_abs<low_column>(a, z);
  V const n = R == exp_range::value ? parts.n : math::value_exponent(parts.n);
  V const e = math::scale(parts.u, n);
  return logistic_parts<V>{a, parts.u, parts.n, e, e + math::c<V>(1)};
}

// dy c sigma'(z) for a derivative `common` = c sigma'(z) (c a power of two), rounded once also
// far in the tails.
template <real_value V, class Tails = product_tails>
inline V slope_times(V const& common, V const& z, V const& dy, V const& power_of_two,
                     Tails const& tails = {}) noexcept {
  auto tail = [](V arg, V factor, V power) {
    auto p = fast::logistic<exp_range::product>(arg);
    return math::scale_times(math::divide(power * p.u, p.square()), p.n, factor);
  };
  return tails(dy * common, math::neg_abs(z), tail, z, dy, power_of_two);
}

// numerator sigma(z) = numerator / (1 + e^-z) in one quotient wherever sigma(z) is a normal
// number (z >= -87 for float, -708 for double: e^-z is finite there, and its relative error
// passes to the quotient undamped only where sigma is small, as it does in e^-|z| / (1 +
// e^-|z|)); z is clamped where sigma(z) rounds to 1. d >= 1, so no numerator overflows. The
// batches with a lane below take `left_tail()` there (the split form e^-|z| / (1 + e^-|z|),
// scaled last) and the same quotient as the others on every other lane (a result must not
// depend on its neighbours).
namespace detail {
template <class T>
inline constexpr T sigmoid_normal_bound = std::is_same_v<T, float> ? T(87) : T(708);

// numerator / (1 + e^-z) for z within +-sigmoid_normal_bound.
template <real_value V, class Z>
inline V times_sigmoid_within(V const& numerator, Z const& z) noexcept {
  return math::divide(numerator, fast::exp_minus<false>(z).value() + math::c<V>(1));
}
}  // namespace detail

template <real_value V, class Z, class LeftTail>
inline V times_sigmoid(V const& numerator, Z const& z, LeftTail left_tail) noexcept {
  V const bound(detail::sigmoid_normal_bound<scalar_t<V>>);
  V const h = fast::high(z);
  auto quotient = [&](V const& clamped) {
    return detail::times_sigmoid_within(numerator, fast::with_high(z, clamped));
  };
  auto const below = h < math::neg(bound);
  if (math::any(below)) [[unlikely]] {
    return math::select(below, left_tail(),
                        quotient(math::clamp_below(math::clamp_above(h, bound), math::neg(bound))));
  }
  return quotient(math::clamp_above(h, bound));
}

template <real_value V>
inline V sigmoid(V const& z) noexcept {
  return fast::times_sigmoid(math::c<V>(1), z, [&] {
    auto const p = fast::logistic(z);
    return math::divide(p.e, p.d);
  });
}

// dy sigma(z): dy times fast::sigmoid(z) (a backward is dy times the derivative, bit for bit,
// wherever the derivative is a normal number), rounded once where sigma(z) alone is below the
// normal range (math::sigmoid_product's tail, in its branch for z < -82 / -703). Its quotient
// needs no branch of its own: z clamped on both sides, the lanes where the clamp below acts take
// the tail, tested on the clamped z (also below product_min_arg, where the tail gives 0 for
// every finite dy and the quotient of the clamped z would not).
template <real_value V, class Tails = product_tails>
inline V sigmoid_times(V const& z, V const& dy, Tails const& tails = {}) noexcept {
  V const bound(detail::sigmoid_normal_bound<scalar_t<V>>);
  V const clamped = math::clamp_below(math::clamp_above(z, bound), math::neg(bound));
  V const common = dy * detail::times_sigmoid_within(math::c<V>(1), clamped);
  return math::sigmoid_product(common, z, dy, clamped, tails);
}

// x Phi(x) and Phi(x) + x phi(x) as math::normal forms them, Phi(-a) = e^(-a^2/2) g(a), with
// the half-ulp table of g (float degree <= 9 where the default tier's needs 11), e^(-a^2/2)
// from the table exp without its low column, a^2's low part l folded in as e (1 - l/2) (a^2
// rounded would cost about a^2/2 ulp of e in the left tail, 65 ulp at x = -12), 1/sqrt(2 pi)
// rounded once; no fitted ratio near the derivative's zero, and the factors meet e's 2^n last
// (subnormal results round twice).
template <real_value V>
inline normal_at<V> normal(V const& x) noexcept {
  using T = scalar_t<V>;
  auto tail = math::detail::scaled_tail<tables::normal<T>::fast_scaled_tail>(math::abs(x));
  auto a2 = math::two_product(tail.a, tail.a);
  V const half_square =
      math::clamp_below(a2.hi * math::c<V>(-0.5), V(math::detail::exp_constants<T>::min_arg));
  auto e = fast::exp_by_table<false>(half_square);
  V const u = math::fma(e.u, a2.lo * math::c<V>(-0.5), e.u);  // e^(lo) = 1 + lo
  V const q = math::scale(tail.a * tail.g * u, e.n);          // a Phi(-a)
  V const s = math::scale(math::fnma(tail.a, math::c<V>(inv_sqrt_2pi), tail.g) * u,
                          e.n);  // Phi(-a) - a phi(a)
  return math::detail::normal_from_left(x, q, s);
}

namespace detail {
// log(1 + e) for e in [0, 1]: 1 + e = c_j (1 + r), c_j = 1 + j / 15, j = round(15 e), so that
// |r| <= 1/30; inverse[j] = 1 / c_j rounded, r = e inverse[j] + (inverse[j] - 1) in one fma
// (inverse[j] - 1 is exact: inverse[j] is in [1/2, 1]), so r is e itself for j = 0 (no rounding
// of 1 + e to put back) and rounded once elsewhere; log(1 + e) = minus_log[j] + log1p(r),
// minus_log[j] = -log inverse[j] rounded, log1p(r) = r + r^2 q(r) with q minimax on |r| <=
// 1/30: 0.36 ulp of log1p(r) (tools/fit_coefficients.py --log1p). magic: adding it to 15 e
// rounds to an integer, j in its low bits.
struct log1p_unit_float {
  static constexpr float magic = 0x1.8p23f;
  static constexpr float steps = 15.0f;
  alignas(64) static constexpr std::array<float, 16> inverse = {
      0x1p+0f,        0x1.ep-1f,      0x1.c3c3c4p-1f, 0x1.aaaaaap-1f,
      0x1.9435e6p-1f, 0x1.8p-1f,      0x1.6db6dcp-1f, 0x1.5d1746p-1f,
      0x1.4de9bep-1f, 0x1.4p-1f,      0x1.333334p-1f, 0x1.276276p-1f,
      0x1.1c71c8p-1f, 0x1.124924p-1f, 0x1.08d3dcp-1f, 0x1p-1f};
  alignas(64) static constexpr std::array<float, 16> minus_log = {
      0.0f,           0x1.08598cp-4f, 0x1.005588p-3f, 0x1.756504p-3f,
      0x1.e41fc8p-3f, 0x1.269622p-2f, 0x1.588c2cp-2f, 0x1.882f1ep-2f,
      0x1.b5b3ep-2f,  0x1.e148a2p-2f, 0x1.058aeep-1f, 0x1.199facp-1f,
      0x1.2cf25ep-1f, 0x1.3f9128p-1f, 0x1.5188a6p-1f, 0x1.62e43p-1f};
  static constexpr std::array<float, 3> q = {-0x1.fffffep-2f, 0x1.5585ap-2f, -0x1.0033a2p-2f};
};
}  // namespace detail

// log(1 + e) for e in [0, 1] or NaN (softplus's e^-|z|). float: detail::log1p_unit_float, two
// lookups beside a short chain and no division; double: the default tier's log1p (its two
// divisions), which a one-register table of 8 would not shorten (|r| <= 1/14 needs degree 12).
template <real_value V>
inline V log1p_unit(V const& e) noexcept {
  if constexpr (std::is_same_v<scalar_t<V>, float>) {
    using L = detail::log1p_unit_float;
    V const jf = math::fma(e, V(L::steps), V(L::magic));
    V const inverse = fast::register_table_entry(jf, L::inverse);
    V const r = math::fma(e, inverse, inverse - math::c<V>(1));
    V const log1p_r = math::fma(r * r, math::horner(r, L::q), r);
    return fast::register_table_entry(jf, L::minus_log) + log1p_r;
  } else {
    return math::log1p_above_minus_one(e);
  }
}

// log(1 + e^z) = max(z, 0) + log(1 + e^-|z|), e^-|z| from the table exp without its low
// column (its error passes to the result at most once: e / ((1 + e) log(1 + e)) <= 1), clamped
// where it is 0 (+-inf give +inf and 0).
template <real_value V>
inline V softplus(V const& z) noexcept {
  using K = math::detail::exp_constants<scalar_t<V>>;
  V const a = math::clamp_below(math::neg_abs(z), V(K::min_arg));
  V const e = fast::exp_by_table<false>(a).value();
  return math::select(z > V(0), z, V(0)) + fast::log1p_unit(e);
}

namespace detail {
// tanh x ~ x P(x^2) / Q(x^2) on [-9, 9], P of degree 7, Q = 1 + q1 s + q2 s^2 + q3 s^3: the
// minimax rational for the relative error (tools/fit_coefficients.py --tanh: 0.22 ulp of 1 with
// the coefficients rounded to float). Evaluated in float, every float is within 4.85 ulp (at
// x = 6.08; 0.94 with P and Q in double: the two Horner chains' roundings, each passed on whole
// where all the terms are alike, x > 3), where degree 6 over 3 (Eigen's degrees) is 5.15.
// P(0) = Q(0) = 1, so a tiny or subnormal x (x^2 rounds to 0) gives x itself, -0 included.
struct tanh_rational_float {
  static constexpr std::array<float, 8> p = {0x1p+0f,          0x1.0df0cp-3f,    0x1.a544aep-9f,
                                             0x1.9fdd62p-17f,  -0x1.c1e2eap-26f, 0x1.967ce2p-34f,
                                             -0x1.3898cep-42f, 0x1.04efe2p-51f};
  static constexpr std::array<float, 4> q = {0x1p+0f, 0x1.dc4db6p-2f, 0x1.986936p-6f,
                                             0x1.1c4214p-12f};
  // Near 1 the two Horner chains' roundings leave the ratio up to ~2 ulp of 1 either side of
  // tanh, so it is clamped to [-1, 1]; x is clamped at the first float above 8.9 where the ratio
  // is at least 1 + 2^-22 with and without an FMA unit, so +-inf (and |x| >= 8.9001, where
  // tanh rounds to 1 - 2^-24 or 1) gives +-1 exactly.
  static constexpr float limit = 0x1.1ccddp+3f;  // 8.90012
};
}  // namespace detail

// float: tanh x = x P(x^2) / Q(x^2) (detail::tanh_rational_float), x and the ratio clamped:
// two short Horner chains side by side and one division, no exp.
// double: tanh x = sign(x) (1 - e) / (1 + e), e = e^-2|x| = 2^n (1 + p): 1 - e = (1 - 2^n) -
// 2^n p with 1 - 2^n exact, so small |x| does not cancel (the table's e would: its entries are
// rounded); |x| is clamped where tanh rounds to 1. One division at the end of the chain.
template <real_value V>
inline V tanh(V const& x) noexcept {
  using T = scalar_t<V>;
  if constexpr (std::is_same_v<T, float>) {
    using R = detail::tanh_rational_float;
    V const limit(R::limit);
    V const one = math::c<V>(1);
    V const xc = math::clamp_below(math::clamp_above(x, limit), math::neg(limit));
    V const s = xc * xc;
    V const ratio = math::divide(xc * math::horner(s, R::p), math::horner(s, R::q));
    return math::clamp_below(math::clamp_above(ratio, one), math::neg(one));
  } else {
    constexpr T saturation = T(19);
    V const a = math::clamp_above(math::abs(x), V(saturation));
    auto reduction = math::reduce_exp(math::neg(a + a));
    V const p = math::expm1_reduced(reduction.r);
    V const two_n = math::scale(math::c<V>(1), reduction.n);
    V const one = math::c<V>(1);
    V const numerator = math::fnma(two_n, p, one - two_n);
    V const denominator = math::fma(two_n, p, one + two_n);
    return math::copysign(math::divide(numerator, denominator), x);
  }
}

}  // namespace NONLIN_ISA
}  // namespace nonlin::math::fast
