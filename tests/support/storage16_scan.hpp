// SPDX-License-Identifier: MIT
#pragma once
// Correct rounding of the span kernels on 16-bit arrays, over all 65536 inputs, against MPFR
// (the catalog's references): how many forward results and derivatives (backward with dy = 1)
// are not the correctly rounded value. Shared by tests/storage16_accuracy_test.cpp and
// tools/accuracy.cpp --storage16.
//
// The correctly rounded value of an MPFR number v: v rounded toward zero to double with its last
// bit set where inexact (rounding to odd), then to float the same way (math::round_to_odd), then
// to nearest even in T: rounding to odd at 53 and 24 bits keeps every 16-bit rounding decision
// (11 + 2 <= 24), subnormal ranges included.
//
// Inputs +-inf are checked against the row's limits, NaN inputs must give NaN. Zeros compare
// equal whatever their sign (the sign policies are tests/special_values_test.cpp's).

#include <bit>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include <mpfr.h>

#include <nonlin/nonlin.hpp>

#include "catalog/catalog.hpp"

namespace nonlin::test::accuracy {

template <storage16 T>
T correctly_rounded(reference::real const& v) {
  double d = mpfr_get_d(v.get(), MPFR_RNDZ);
  if (mpfr_cmp_d(v.get(), d) != 0) {
    d = std::bit_cast<double>(std::bit_cast<std::uint64_t>(d) | 1U);
  }
  return T::from_float(math::round_to_odd(d));
}

// d is a float exactly on a rounding midpoint of T: its two neighbouring floats round apart.
template <storage16 T>
bool on_midpoint(double d) {
  auto const f = static_cast<float>(d);
  if (static_cast<double>(f) != d || !std::isfinite(f) || f == 0) {
    return false;
  }
  auto const bits = std::bit_cast<std::uint32_t>(f);
  return T::from_float(std::bit_cast<float>(bits - 1)).bits !=
         T::from_float(std::bit_cast<float>(bits + 1)).bits;
}

// Results that are not correctly rounded, per member, with the first input of each; and the
// results (right or wrong) where the functor's double result is itself exactly on a midpoint of
// T: either the true value is that midpoint, or double's rounding lost its side, which only the
// functor's side_of_true_value (math/true_side.hpp, kernels.hpp value16) gives back.
struct storage16_count {
  std::int64_t wrong = 0;
  std::int64_t double_on_midpoint = 0;
  std::uint16_t first = 0;  // an input's bits (valid where wrong > 0)

  void take(bool ok, std::uint16_t bits, bool tie_in_double = false) {
    double_on_midpoint += tie_in_double ? 1 : 0;
    if (!ok) {
      if (wrong == 0) {
        first = bits;
      }
      ++wrong;
    }
  }
};
struct storage16_result {
  storage16_count forward;
  storage16_count derivative;
  // The same, had each float result been rounded once with no recomputation in double.
  storage16_count forward_float_only;
  storage16_count derivative_float_only;
};

template <storage16 T>
bool same_value(T got, T want) {
  auto const a = static_cast<float>(got);
  auto const b = static_cast<float>(want);
  return a == b || (std::isnan(a) && std::isnan(b));
}

// Inputs [begin, end) of the 65536 bit patterns (split so that threads can share the work).
template <storage16 T, class F>
storage16_result scan_storage16(F const& f, std::uint32_t begin = 0, std::uint32_t end = 0x10000,
                                std::uint32_t stride = 1) {
  std::size_t const n = (end - begin + stride - 1) / stride;
  std::vector<T> x(n);
  for (std::size_t i = 0; i < n; ++i) {
    x[i].bits = static_cast<std::uint16_t>(begin + i * stride);
  }
  std::vector<T> const ones(n, T::from_float(1.0F));
  std::vector<T> y(n);
  std::vector<T> d(n);
  nonlin::forward(f, std::span<T const>(x), std::span<T>(y));
  nonlin::backward(f, std::span<T const>(x), std::span<T const>(ones), std::span<T>(d));
  catalog::limits const limits = catalog::row_of<F>::at_infinity(f);
  storage16_result r;
  reference::values ref;
  for (std::size_t i = 0; i < n; ++i) {
    auto const xf = static_cast<float>(x[i]);
    T want_y{};
    T want_d{};
    if (std::isnan(xf)) {
      want_y = want_d = T::from_float(xf);
    } else if (std::isinf(xf)) {
      bool const minus = xf < 0;
      want_y = T::from_float(static_cast<float>(minus ? limits.at_minus_inf : limits.at_plus_inf));
      want_d = T::from_float(static_cast<float>(minus ? limits.derivative_at_minus_inf
                                                      : limits.derivative_at_plus_inf));
    } else {
      reference::evaluate(f, static_cast<double>(xf), ref);
      want_y = correctly_rounded<T>(ref.forward);
      want_d = correctly_rounded<T>(ref.derivative);
    }
    auto const xd = static_cast<double>(xf);
    r.forward.take(same_value(y[i], want_y), x[i].bits, on_midpoint<T>(f(xd)));
    r.derivative.take(same_value(d[i], want_d), x[i].bits, on_midpoint<T>(f.backward(xd, 1.0)));
    r.forward_float_only.take(same_value(T::from_float(f(xf)), want_y), x[i].bits);
    r.derivative_float_only.take(same_value(T::from_float(f.backward(xf, 1.0F)), want_d),
                                 x[i].bits);
  }
  return r;
}

inline void merge(storage16_count& into, storage16_count const& from) {
  if (into.wrong == 0) {
    into.first = from.first;
  }
  into.wrong += from.wrong;
  into.double_on_midpoint += from.double_on_midpoint;
}
inline void merge(storage16_result& into, storage16_result const& from) {
  merge(into.forward, from.forward);
  merge(into.derivative, from.derivative);
  merge(into.forward_float_only, from.forward_float_only);
  merge(into.derivative_float_only, from.derivative_float_only);
}

}  // namespace nonlin::test::accuracy
