// SPDX-License-Identifier: MIT
#pragma once
// Compensated sums (Ogita, Rump and Oishi's Sum2 and Dot2): `sum` is the plain running sum and
// `error` collects every addition's rounding (two_sum) and the low parts of exact products
// (two_product), so that terms which cancel leave the total rounded about once:
// |total - exact| <= u |exact| + gamma_n^2 sum |terms|. Where `sum` is infinite or NaN (a term
// overflowed, a NaN came in) it is the total. The sums that the span kernels reduce (PReLU's
// dalpha, softmax's <p, dp>, log_softmax's sum of dy, the cross-entropy's sums of q and of the
// loss, softmax's cross-lane totals) all go through it: plain sums were off by 9-14 ulp where
// PReLU's products cancel and by up to 886 units of u sum |terms| in softmax's strided backward
// at 10^5 classes (tools/gradient_error.cpp), drifting with the length.

#include <array>
#include <cstddef>
#include <limits>
#include <type_traits>
#include <utility>

#include <xsimd/xsimd.hpp>

#include "../isa.hpp"
#include "double_float.hpp"
#include "ops.hpp"

namespace nonlin::math {
inline namespace NONLIN_ISA {

template <real_value V>
struct compensated_sum {
  V sum = V(0);
  V error = V(0);

  // += term + term_lo (term_lo: a low part the caller has, e.g. of an exact product).
  void add(V const& term, V const& term_lo) noexcept {
    auto s = math::two_sum(sum, term);
    sum = s.hi;
    error = error + (s.lo + term_lo);
  }
  // += term (no "+ 0": the compiler may not drop it, since -0 + 0 is +0).
  void add(V const& term) noexcept {
    auto s = math::two_sum(sum, term);
    sum = s.hi;
    error = error + s.lo;
  }
  // += a * b, the product exact.
  void add_product(V const& a, V const& b) noexcept {
    auto p = math::two_product(a, b);
    add(p.hi, p.lo);
  }
  V total() const noexcept {
    return math::select(math::abs(sum) < V(std::numeric_limits<scalar_t<V>>::infinity()),
                        sum + error, sum);
  }
};

// The lanes' sums and errors added into `rest` (a scalar sum of the elements left over).
NONLIN_INTRINSIC_DIAGNOSTICS_PUSH
template <class B, class T>
compensated_sum<T> lanes_into(B const& sums, B const& errors, compensated_sum<T> rest) noexcept {
  alignas(64) std::array<T, B::size> s;
  alignas(64) std::array<T, B::size> e;
  sums.store_aligned(s.data());
  errors.store_aligned(e.data());
  for (std::size_t k = 0; k < B::size; ++k) {
    rest.add(s[k], e[k]);
  }
  return rest;
}
NONLIN_INTRINSIC_DIAGNOSTICS_POP

// The lanes' sums, then `rest`, into one total.
template <class B, class T>
T lanes_total(compensated_sum<B> const& lanes, compensated_sum<T> const& rest) noexcept {
  return math::lanes_into(lanes.sum, lanes.error, rest).total();
}

// A compensated sum whose error term is compensated too: error's own additions round into
// error_lo. Where many alike terms are added the error term is what a dominant entry's log p is
// made of, and a plain error sum drifted with the number of terms per lane (148 eps at 10^6 in
// softmax's strided layout, 18 eps at 10^6 columns with 4-lane SSE, log p up to 28 ulp).
template <real_value V>
struct twice_compensated_sum : compensated_sum<V> {
  V error_lo = V(0);

  // The rounding error of everything added so far (sum + low() is the total).
  V low() const noexcept { return this->error + error_lo; }

  // += term + term_lo and += a * b as in compensated_sum (their roundings into error).
  using compensated_sum<V>::add;
  // += term: the rounding into error, error's own rounding into error_lo.
  void add(V const& term) noexcept {
    auto added = math::two_sum(this->sum, term);
    this->sum = added.hi;
    auto low_sum = math::two_sum(this->error, added.lo);
    this->error = low_sum.hi;
    error_lo = error_lo + low_sum.lo;
  }
  V total() const noexcept {
    return math::select(math::abs(this->sum) < V(std::numeric_limits<scalar_t<V>>::infinity()),
                        this->sum + low(), this->sum);
  }
};

// A sum of float batches held in double, two batches of half the width (each addition rounds
// at 2^-53, so n terms per lane drift by n 2^-53 of the sum: 2^-33 at 10^6 terms per lane, far
// below float's rounding), or, for double, the twice-compensated sum above: the same accuracy
// as compensating in float at 4 operations per batch (two conversions, two additions) instead of
// 13 (two two_sums and an addition). total() gives the sum rounded to T as hi + lo.
NONLIN_INTRINSIC_DIAGNOSTICS_PUSH
template <class B>
struct wide_sum {
  using T = scalar_t<B>;
  using D = xsimd::batch<double, typename B::arch_type>;
  static constexpr bool widened = std::is_same_v<T, float> && D::size * 2 == B::size;

  struct halves {
    D low = D(0.0);
    D high = D(0.0);
    B products_low = B(0);  // add_small_product's low parts, in float
  };
  std::conditional_t<widened, halves, twice_compensated_sum<B>> state;

  void add(B const& term) noexcept {
    if constexpr (widened) {
      auto h = widen(term);
      state.low = state.low + h.first;
      state.high = state.high + h.second;
    } else {
      state.add(term);
    }
  }
  // += a * b: for float the product is exact in double, then one rounding at 2^-53.
  void add_product(B const& a, B const& b) noexcept {
    if constexpr (widened) {
      auto x = widen(a);
      auto y = widen(b);
      state.low = math::fma(x.first, y.first, state.low);
      state.high = math::fma(x.second, y.second, state.high);
    } else {
      state.add_product(a, b);
    }
  }
  // += a * b for a product that cannot overflow (|a| <= 1, as softmax's p): for float the
  // product is split into p + p_lo in float (exact, two_product), only p is widened and added
  // in double, p_lo is added in float. Two conversions and an extract a batch instead of four
  // and two (vcvtps2pd binds the widening loop: ~1.3 cycles each on Zen 4). p_lo's float sum
  // adds at most n 2^-24 |sum of p_lo| <= n 2^-48 sum |a b| for n terms a lane; a product
  // below 2^-126 is exact in p + p_lo to 2^-150 absolute (the underflow term of a float
  // product: it matters only to a total below ~n 2^-126).
  void add_small_product(B const& a, B const& b) noexcept {
    if constexpr (widened) {
      auto p = math::two_product(a, b);
      auto h = widen(p.hi);
      state.low = state.low + h.first;
      state.high = state.high + h.second;
      state.products_low = state.products_low + p.lo;
    } else {
      state.add_product(a, b);
    }
  }
  // The total rounded to T.
  T value() const noexcept {
    if constexpr (widened) {
      return static_cast<T>(lanes_in_double(0.0));
    } else {
      return math::lanes_into(state.sum, state.low(), compensated_sum<T>{}).total();
    }
  }
  double_float<T> total() const noexcept {
    if constexpr (widened) {
      double const sum = lanes_in_double(0.0);
      auto const hi = static_cast<float>(sum);
      return {hi, static_cast<float>(sum - static_cast<double>(hi))};
    } else {
      auto const rest = math::lanes_into(state.sum, state.low(), compensated_sum<T>{});
      return {rest.sum, rest.error};
    }
  }

 private:
  // start + every lane of both halves, in double (widened only).
  double lanes_in_double(double start) const noexcept {
    alignas(64) std::array<double, D::size> a;
    alignas(64) std::array<double, D::size> b;
    state.low.store_aligned(a.data());
    state.high.store_aligned(b.data());
    alignas(64) std::array<float, B::size> c;
    state.products_low.store_aligned(c.data());
    for (std::size_t k = 0; k < D::size; ++k) {
      start += (a[k] + b[k]) + (static_cast<double>(c[k]) + static_cast<double>(c[k + D::size]));
    }
    return start;
  }
  // The two halves of a float batch as double batches (exact).
  static std::pair<D, D> widen(B const& x) noexcept {
    if constexpr (arch::has_widen<B>) {
      return arch::widen<B, D>(x);
    } else {
      alignas(64) std::array<float, B::size> f;
      x.store_aligned(f.data());
      alignas(64) std::array<double, B::size> d;
      for (std::size_t k = 0; k < B::size; ++k) {
        d[k] = static_cast<double>(f[k]);
      }
      return {D::load_aligned(d.data()), D::load_aligned(d.data() + D::size)};
    }
  }
};
NONLIN_INTRINSIC_DIAGNOSTICS_POP

}  // namespace NONLIN_ISA
}  // namespace nonlin::math
