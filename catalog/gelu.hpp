// SPDX-License-Identifier: MIT
#pragma once
// Catalog rows of nonlin/gelu.hpp: gelu_exact and gelu_tanh (gelu_quick is x sigma(1.702 x):
// catalog/silu.hpp).

#include <cmath>
#include <numbers>

#include <nonlin/gelu.hpp>

#include "row.hpp"

namespace nonlin::test::catalog {

struct gelu_exact_row : row_defaults {
  using functor = nonlin::gelu_exact;
  static constexpr std::string_view name = "gelu_exact";
  static constexpr std::string_view formula = "x·Φ(x)";
  static constexpr ulp_bounds bounds{{3.0, "x Phi(x) from the Mills-ratio tail and exp"},
                                     {2.5, "Phi(x) + x phi(x) just below 1/2, where the ulp halves"}};
  static std::vector<instance<functor>> instances() { return {{name, {}}}; }
  static limits at_infinity(functor const&) { return {0, infinity, 0, 1}; }
  template <class T>
  static T textbook_forward(T x) {
    return k<T>(0.5) * x * std::erfc(-x * k<T>(std::numbers::sqrt2 / 2));
  }
  template <class T>
  static T textbook_backward(T x, T dy) {
    T const cdf = k<T>(0.5) * std::erfc(-x * k<T>(std::numbers::sqrt2 / 2));
    T const pdf =
        k<T>(0.5 * std::numbers::inv_sqrtpi * std::numbers::sqrt2) * std::exp(-k<T>(0.5) * x * x);
    return dy * (cdf + x * pdf);
  }
  // x Phi(x); derivative Phi(x) + x phi(x). Phi(x) = Q(-x) for x < 0, 1 - Q(x) otherwise, with
  // the tail Q(a) = erfc(a / sqrt 2) / 2 from reference::detail::erfc.
  static void reference(functor const&, double x, reference::values& out) {
    auto& w = reference::detail::ws();
    constexpr auto rn = reference::detail::rn;
    mpfr_set_d(w.t[0], x, rn);
    mpfr_mul(w.t[4], w.t[0], w.inv_sqrt2, rn);
    mpfr_abs(w.t[4], w.t[4], rn);
    reference::detail::erfc(w.t[4], w.t[5]);
    mpfr_div_2ui(w.t[5], w.t[5], 1, rn);  // Q(|x|)
    if (x < 0) {
      mpfr_set(w.t[1], w.t[5], rn);
    } else {
      mpfr_ui_sub(w.t[1], 1, w.t[5], rn);
    }  // Phi(x)
    mpfr_mul(out.forward.get(), w.t[0], w.t[1], rn);
    mpfr_sqr(w.t[2], w.t[0], rn);
    mpfr_div_2ui(w.t[2], w.t[2], 1, rn);
    mpfr_neg(w.t[2], w.t[2], rn);
    mpfr_exp(w.t[2], w.t[2], rn);
    mpfr_mul(w.t[2], w.t[2], w.inv_sqrt_2pi, rn);  // phi(x)
    mpfr_mul(w.t[2], w.t[2], w.t[0], rn);
    mpfr_add(out.derivative.get(), w.t[1], w.t[2], rn);
  }
  template <class W>
  static reference::fast::values<W> estimate(functor const&, W x) {
    using c = reference::fast::constants<W>;
    W const q = std::erfc(std::fabs(x) * c::inv_sqrt2) / 2;  // Phi(-|x|)
    W const cdf = x < 0 ? q : W(1) - q;
    W const pdf = c::inv_sqrt_2pi * std::exp(-x * x / 2);
    return {x * cdf, cdf + x * pdf};
  }
};

struct gelu_tanh_row : row_defaults {
  using functor = nonlin::gelu_tanh;
  static constexpr std::string_view name = "gelu_tanh";
  static constexpr std::string_view formula = "x·σ(2u), u = √(2/π)(x + 0.044715x³)";
  static std::vector<instance<functor>> instances() { return {{name, {}}}; }
  static limits at_infinity(functor const&) { return {0, infinity, 0, 1}; }
  static constexpr double c = 0.797884560802865355879892119868763737;  // sqrt(2/pi)
  template <class T>
  static T textbook_forward(T x) {
    return k<T>(0.5) * x * (T(1) + std::tanh(k<T>(c) * (x + k<T>(0.044715) * x * x * x)));
  }
  template <class T>
  static T textbook_backward(T x, T dy) {
    T const t = std::tanh(k<T>(c) * (x + k<T>(0.044715) * x * x * x));
    T const du = k<T>(c) * (T(1) + k<T>(3 * 0.044715) * x * x);
    return dy * (k<T>(0.5) * (T(1) + t) + k<T>(0.5) * x * (T(1) - t * t) * du);
  }
  // x sigma(2u), u = sqrt(2/pi) (x + 0.044715 x^3); v = 2u, x v' = 2 sqrt(2/pi) x (1 + 3 k x^2).
  static void reference(functor const&, double x, reference::values& out) {
    auto& w = reference::detail::ws();
    constexpr auto rn = reference::detail::rn;
    mpfr_set_d(w.t[0], x, rn);
    mpfr_sqr(w.t[3], w.t[0], rn);
    mpfr_mul(w.t[3], w.t[3], w.gelu_kappa, rn);  // k x^2
    mpfr_add_ui(w.t[1], w.t[3], 1, rn);
    mpfr_mul(w.t[1], w.t[1], w.t[0], rn);
    mpfr_mul(w.t[1], w.t[1], w.sqrt_2_over_pi, rn);
    mpfr_mul_2ui(w.t[1], w.t[1], 1, rn);  // v
    mpfr_mul_ui(w.t[2], w.t[3], 3, rn);
    mpfr_add_ui(w.t[2], w.t[2], 1, rn);
    mpfr_mul(w.t[2], w.t[2], w.t[0], rn);
    mpfr_mul(w.t[2], w.t[2], w.sqrt_2_over_pi, rn);
    mpfr_mul_2ui(w.t[2], w.t[2], 1, rn);  // x v'
    reference::detail::x_sigmoid(w.t[0], w.t[1], w.t[2], out);
  }
  template <class W>
  static reference::fast::values<W> estimate(functor const&, W x) {
    using cs = reference::fast::constants<W>;
    W const kx2 = cs::gelu_kappa * x * x;
    W const c2 = 2 * cs::sqrt_2_over_pi;
    return reference::fast::x_sigmoid(x, c2 * x * (1 + kx2), c2 * x * (1 + 3 * kx2));
  }
};

using gelu_rows = rows<gelu_exact_row, gelu_tanh_row>;

}  // namespace nonlin::test::catalog
