// SPDX-License-Identifier: MIT
#pragma once
// The math of softmax and log_softmax, one text for batches and scalars: the running maximum
// and compensated sum of exp((z - m) / T) and how two of them combine, (z - m) / T as hi + lo,
// log s from the sum's hi + lo, and the per-element outputs p and log p.

#include <array>
#include <cstddef>
#include <limits>

#include <xsimd/xsimd.hpp>

#include "../concepts.hpp"
#include "../isa.hpp"
#include "../math/double_float.hpp"
#include "../math/exp.hpp"
#include "../math/fast.hpp"
#include "../math/log.hpp"
#include "../math/ops.hpp"
#include "../math/sum.hpp"

namespace nonlin::detail {
inline namespace NONLIN_ISA {

// Running maximum and sum of exp((z - m) / T), per lane. The sum is twice compensated (sum.hpp):
// terms of at most 1 added onto a sum of at least 1 lose up to half an ulp each, in the same
// direction when they are alike (one large logit and many equal small ones), which would make
// the row's error grow with its length, and so would a plain sum of those roundings.
template <class V>
struct running : math::twice_compensated_sum<V> {
  V max = V(-std::numeric_limits<scalar_t<V>>::infinity());
};

// A scalar state: maximum m, sum hi + lo.
template <class T>
running<T> running_of(T m, T hi, T lo) {
  return {{{hi, lo}, T(0)}, m};
}

// z - m exactly as hi + lo, for m >= z (m is the maximum z is shifted by; NaN in either gives a
// NaN hi): math::fast_two_sum with the operands ordered by one min and one max instead of a
// compare of magnitudes feeding two blends (deep in exp's chain: 3.3 of the 25 cycles a batch of
// a row's sum on this machine). For m >= z, -m has the larger magnitude exactly where z >= -m:
// m >= 0 gives |z| <= m there and |z| > m below; m < 0 gives z <= m < 0 < -m, |z| >= |m|. So
// big = min(-m, z), small = the other one (where z == -m, big is z and small -m: the sum is
// z + (-m) as IEEE rounds it, signed zeros included), and s - big is exact: no intermediate
// overflows where z - m is finite (Knuth's branch-free two-sum forms s - z, which rounds to -inf
// for float z = 0x1.c60856p+126, m = max). Where s overflows, hi is the infinity and the
// callers drop lo.
template <class V>
inline math::double_float<V> difference_to_maximum(V const& z, V const& m) noexcept {
  V const minus_m = math::neg(m);
  // big: -m < z ? -m : z; small: z > -m ? z : -m.
  return math::fast_two_sum(math::clamp_above(z, minus_m), math::clamp_below(minus_m, z));
}

// (z - m) / T as hi + lo: z - m exactly (difference_to_maximum), the quotient's rounding
// recovered from the exact residual d - q T (two_product), so that neither costs accuracy in exp
// or log. At T = 1 (unit_temperature, the caller's promise) the quotient is the difference
// itself, and a difference that overflows is already the limit.
template <bool unit_temperature = false, class V>
inline math::double_float<V> shifted_quotient(V z, V m, V inv_t, V t) {
  auto d = difference_to_maximum(z, m);
  if constexpr (unit_temperature) {
    return d;
  }
  V const q = d.hi * inv_t;
  auto qt = math::two_product(q, t);
  V const lo = (((d.hi - qt.hi) - qt.lo) + d.lo) * inv_t;
  // Finite z and m more than the largest float apart: z - m overflows, (z - m) / T may not.
  constexpr auto inf = std::numeric_limits<scalar_t<V>>::infinity();
  auto overflowed = math::both(math::abs(d.hi) == V(inf), math::abs(z) < V(inf));
  // Two statements, not z * inv_t - m * inv_t: clang's default -ffp-contract=on fuses a product
  // into an addition within one expression, which it did for scalars but cannot across xsimd's
  // operator calls, so a scalar and a lane differed by an ulp (the fuzzer's cross-entropy loss
  // against log_softmax). Apart, neither is fused under "on", and both are under "fast" (GCC's
  // default). An explicit fma would agree too but costs a negation per batch here.
  V const z_scaled = z * inv_t;
  V const m_scaled = m * inv_t;
  V const scaled = z_scaled - m_scaled;
  return {math::select(overflowed, scaled, q), math::select(overflowed, V(0), lo)};
}

// exp((z - m) / T) with (z - m) / T carried as hi + lo into exp.
template <bool unit_temperature = false, class V>
inline math::exp_split<V> shifted_exp(V z, V m, V inv_t, V t) {
  auto q = shifted_quotient<unit_temperature>(z, m, inv_t, t);
  // Where z = m = -inf the difference is NaN; such a lane has nothing to add.
  return math::exp_split_nonpositive(q.hi, q.lo);
}

// The same rounded, from the lean exp (its argument's low part folded in, m's rounding not
// kept: within 1 ulp instead of ~0.5), for the contiguous rows: p = term / s normalises the
// terms' own errors out of the row's sum (p within 3 ulp of the true softmax, as with the
// other exp), and log p of a dominant entry, minus the sum of the others, is within 1.83 ulp
// (float) and 2.59 (double) over 1-1100 alike others, against 1.67 and 2.59 with the other exp.
// far: the row has entries whose term is below the normal range (masked ones, or (m - z) / T
// above ~87 for float): their value is formed without an underflowing operation, the same bits
// without the Intel cores' microcode assist (math::scale_without_underflow: a row of 1000 floats
// half masked with -inf took 5.4x as long as an unmasked one): about 9 operations a batch more,
// which the other rows do not pay.
template <bool unit_temperature = false, bool far = false, class V>
inline V shifted_exp_value(V z, V m, V inv_t, V t) {
  auto q = shifted_quotient<unit_temperature>(z, m, inv_t, t);
  auto const e = math::exp_scaled_nonpositive(q.hi, q.lo);
  if constexpr (far) {
    return e.value_without_underflow();
  } else {
    return e.value();
  }
}

// The fast tier's term (nonlin::fast::softmax): exp((z - m) / T) with z - m (and its product with
// 1 / T) rounded, as every peer forms it, from the fast tier's table exp without its low column
// (within about an ulp). What it gives up is the difference's rounding: about |z - m| / T times
// 2^-24 relative (an ulp at |z - m| / T = 1, |z - m| / T ulp beyond), on terms that are already
// e^-(z - m) / T small. A masked entry (z = -inf), or a difference that overflows, is clamped to
// exp's lowest argument, where the value is 0. far: as shifted_exp_value's.
template <bool unit_temperature = false, bool far = false, class V>
inline V fast_shifted_exp_value(V z, V m, V inv_t) {
  V d = z - m;
  if constexpr (!unit_temperature) {
    d = d * inv_t;
  }
  V const lowest(math::detail::exp_constants<scalar_t<V>>::min_arg);
  auto const e = math::fast::exp_by_table<false>(math::clamp_below(d, lowest));
  if constexpr (far) {
    return e.value_without_underflow();
  } else {
    return e.value();
  }
}

// log s for the row's compensated sum s = hi + lo >= 1 (the maximum contributes e^0):
// log1p((hi - 1) + lo), hi - 1 exact below 2. The low part counts where the other entries add
// less than an ulp to 1: then s - 1 is all in lo, and log p of the maximum is -lo, not 0.
template <class V>
inline V log_of_sum(V hi, V lo) {
  return math::log1p((hi - math::c<V>(1)) + lo);
}

// log p = (z - m) / T - log s for a row's log s. Where (z - m) / T is -inf (a masked entry, or
// finite z and m so far apart, or T so small, that the quotient overflows: the true log p is
// below -max) log p is -inf; the low part, NaN there (inf - inf), is left out. At T = 1
// (unit_temperature) log p = (z - c.hi) - c.lo with c = m + log s exactly (two_sum of two
// row constants, which the compiler hoists out of a row's loop): two roundings, as
// (z - m) - log s + lo has, in two operations instead of nine (the exact difference, the
// additions and the select: z = -inf gives -inf by itself). m + log s cannot overflow (m finite,
// 0 <= log s <= log n).
template <bool unit_temperature = false, class V>
inline V log_probability_given(V z, V m, V log_sum, V inv_t, V t) {
  if constexpr (unit_temperature) {
    auto c = math::two_sum(m, log_sum);
    return (z - c.hi) - c.lo;
  } else {
    auto q = shifted_quotient<unit_temperature>(z, m, inv_t, t);
    V const value = (q.hi - log_sum) + q.lo;
    return math::select(q.hi == V(-std::numeric_limits<scalar_t<V>>::infinity()), q.hi, value);
  }
}

template <class V>
NONLIN_ALWAYS_INLINE void update(running<V>& r, V z, V inv_t, V t) {
  V const m = math::select(z > r.max, z, r.max);
  auto grew = z > r.max;
  if (math::any(grew)) {
    // Rescale the lanes whose maximum grew: sum * exp((old - new) / T); a lane that was empty
    // (old = -inf) has sum 0 and stays 0.
    V const factor = shifted_exp(r.max, m, inv_t, t).value();
    r.sum = math::select(grew, math::select(r.sum == V(0), V(0), r.sum * factor), r.sum);
    r.error = math::select(grew, math::select(r.error == V(0), V(0), r.error * factor), r.error);
    r.error_lo =
        math::select(grew, math::select(r.error_lo == V(0), V(0), r.error_lo * factor), r.error_lo);
  }
  // A masked entry (z = -inf) in a lane still at -inf adds nothing.
  V const term = shifted_exp(z, m, inv_t, t).value();
  r.add(math::select(z == V(-std::numeric_limits<scalar_t<V>>::infinity()), V(0), term));
  // NaN anywhere: propagate (z > max is false for NaN, so the NaN enters through the sum).
  r.sum = math::select(math::is_nan(z), z, r.sum);
  r.max = m;
}

// Combines the lanes of two batch states into one (max, sum): the sums are rescaled to the
// overall maximum in SIMD, then added across lanes. A NaN lane sum (a NaN entry) or an infinite
// maximum (a +inf entry: inf - inf) makes the total NaN, as the policy says; lanes still at
// -inf (empty or fully masked) add 0.
NONLIN_INTRINSIC_DIAGNOSTICS_PUSH
template <class B>
inline running<scalar_t<B>> combine(running<B> const& a, running<B> const& b, scalar_t<B> inv_t,
                                    scalar_t<B> t) {
  using T = scalar_t<B>;
  constexpr T inf = std::numeric_limits<T>::infinity();
  B const lane_max = math::select(b.max > a.max, b.max, a.max);
  alignas(64) std::array<T, B::size> lanes;
  lane_max.store_aligned(lanes.data());
  T m = -inf;
  for (T const v : lanes) {
    m = v > m ? v : m;
  }
  if (m == -inf) {
    // Every lane empty or masked, unless a lane saw a NaN.
    return running_of(m, xsimd::hadd(a.sum + b.sum), T(0));
  }
  // The lanes' compensated sums rescaled to m, then added across lanes, still compensated.
  alignas(64) std::array<T, B::size> sums;
  alignas(64) std::array<T, B::size> errors;
  math::compensated_sum<T> total;
  for (running<B> const* r : {&a, &b}) {
    B const factor = shifted_exp(r->max, B(m), B(inv_t), B(t)).value();
    auto empty = r->max == B(-inf);
    math::select(empty, math::select(math::is_nan(r->sum), r->sum, B(0)), r->sum * factor)
        .store_aligned(sums.data());
    math::select(empty, B(0), r->low() * factor).store_aligned(errors.data());
    for (std::size_t i = 0; i < B::size; ++i) {
      total.add(sums[i], errors[i]);
    }
  }
  return running_of(m, total.sum + total.error, T(0));
}
NONLIN_INTRINSIC_DIAGNOSTICS_POP

// The per-element outputs, one text for batches and scalars.
template <class V>
V probability(V z, V m, V sum, V sum_lo, V inv_t, V t) {
  constexpr auto inf = std::numeric_limits<scalar_t<V>>::infinity();
  V const p = shifted_exp(z, m, inv_t, t).times(math::divide(math::c<V>(1), sum + sum_lo));
  // A fully masked row (m = -inf, and no NaN seen: sum == sum) and masked entries give 0; a row
  // with a NaN or +inf (sum is NaN) is NaN throughout, masked entries included.
  auto masked_row = math::both(m == V(-inf), sum == sum);
  auto masked_entry = math::both(z == V(-inf), sum == sum);
  return math::select(math::either(masked_row, masked_entry), V(0), p);
}

template <class V>
NONLIN_ALWAYS_INLINE V log_probability(V z, V m, V sum, V sum_lo, V inv_t, V t) {
  constexpr auto inf = std::numeric_limits<scalar_t<V>>::infinity();
  V const value = log_probability_given(z, m, log_of_sum(sum, sum_lo), inv_t, t);
  auto masked_row = math::both(m == V(-inf), sum == sum);
  return math::select(masked_row, V(-inf), math::select(sum == sum, value, sum));
}

}  // namespace NONLIN_ISA
}  // namespace nonlin::detail
