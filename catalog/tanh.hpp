// SPDX-License-Identifier: MIT
#pragma once
// Catalog rows of nonlin/tanh.hpp: tanh, softsign.

#include <cmath>

#include <nonlin/tanh.hpp>

#include "row.hpp"

namespace nonlin::test::catalog {

struct tanh_row : row_defaults {
  using functor = nonlin::tanh;
  static constexpr std::string_view name = "tanh";
  static constexpr std::string_view formula = "tanh x";
  static constexpr std::string_view from_output = "yes: (1−y)(1+y)";
  static constexpr bool has_output_derivative = true;
  static std::vector<instance<functor>> instances() { return {{name, {}}}; }
  static limits at_infinity(functor const&) { return {-1, 1, 0, 0}; }
  template <class T>
  static T textbook_forward(T x) {
    return std::tanh(x);
  }
  template <class T>
  static T textbook_backward(T x, T dy) {
    T const t = std::tanh(x);
    return dy * (T(1) - t * t);
  }
  template <class T>
  static T textbook_backward_from_output(T y, T dy) {
    return dy * (T(1) - y * y);
  }
  // tanh x = sign(x) m / (m + 2), m = expm1(2|x|); sech^2 x = 4e / (1 + e)^2, e = e^(-2|x|)
  // (no 1 - tanh^2 cancellation; one exp, no overflow).
  static void reference(functor const&, double x, reference::values& out) {
    auto& w = reference::detail::ws();
    constexpr auto rn = reference::detail::rn;
    mpfr_set_d(w.t[0], std::fabs(x), rn);
    mpfr_mul_2ui(w.t[0], w.t[0], 1, rn);
    mpfr_neg(w.t[0], w.t[0], rn);
    mpfr_exp(w.t[1], w.t[0], rn);        // e
    mpfr_add_ui(w.t[2], w.t[1], 1, rn);  // 1 + e
    mpfr_ui_sub(w.t[3], 1, w.t[1], rn);  // 1 - e (tanh|x| = (1 - e)/(1 + e))
    if (mpfr_cmp_d(w.t[1], 0.5) > 0) {   // |x| small: 1 - e = -expm1(-2|x|)
      mpfr_expm1(w.t[3], w.t[0], rn);
      mpfr_neg(w.t[3], w.t[3], rn);
    }
    mpfr_div(out.forward.get(), w.t[3], w.t[2], rn);
    if (x < 0) {
      mpfr_neg(out.forward.get(), out.forward.get(), rn);
    }
    mpfr_sqr(w.t[2], w.t[2], rn);
    mpfr_mul_2ui(w.t[1], w.t[1], 2, rn);
    mpfr_div(out.derivative.get(), w.t[1], w.t[2], rn);
  }
  template <class W>
  static reference::fast::values<W> estimate(functor const&, W x) {
    W const e = std::exp(-2 * std::fabs(x));
    W const d = W(1) + e;
    return {std::tanh(x), 4 * e / (d * d)};
  }
  // 1 - y^2.
  static void reference_given_output(functor const&, double y, reference::real& out) {
    auto& w = reference::detail::ws();
    constexpr auto rn = reference::detail::rn;
    mpfr_set_d(w.t[0], y, rn);
    mpfr_sqr(w.t[0], w.t[0], rn);
    mpfr_ui_sub(out.get(), 1, w.t[0], rn);
  }
  template <class W>
  static W estimate_given_output(functor const&, W y) {
    return (1 - y) * (1 + y);
  }
  static double output_sensitivity(functor const&, double y) { return std::fabs(2.0 * y); }
};

struct softsign_row : row_defaults {
  using functor = nonlin::softsign;
  static constexpr std::string_view name = "softsign";
  // The pipes escaped: the text goes into a markdown table.
  static constexpr std::string_view formula = "x/(1 + \\|x\\|)";
  static constexpr std::string_view from_output = "yes: (1−\\|y\\|)²";
  static constexpr bool has_output_derivative = true;
  static std::vector<instance<functor>> instances() { return {{name, {}}}; }
  static std::vector<double> kinks(functor const&) { return {0.0}; }  // f'' jumps
  static limits at_infinity(functor const&) { return {-1, 1, 0, 0}; }
  template <class T>
  static T textbook_forward(T x) {
    return x / (T(1) + std::fabs(x));
  }
  template <class T>
  static T textbook_backward(T x, T dy) {
    T const d = T(1) + std::fabs(x);
    return dy / (d * d);
  }
  template <class T>
  static T textbook_backward_from_output(T y, T dy) {
    T const gap = T(1) - std::fabs(y);
    return dy * gap * gap;
  }
  // x / (1 + |x|); 1 / (1 + |x|)^2.
  static void reference(functor const&, double x, reference::values& out) {
    auto& w = reference::detail::ws();
    constexpr auto rn = reference::detail::rn;
    mpfr_set_d(w.t[0], std::fabs(x), rn);
    mpfr_add_ui(w.t[0], w.t[0], 1, rn);
    mpfr_set_d(w.t[1], x, rn);
    mpfr_div(out.forward.get(), w.t[1], w.t[0], rn);
    mpfr_sqr(w.t[0], w.t[0], rn);
    mpfr_ui_div(out.derivative.get(), 1, w.t[0], rn);
  }
  template <class W>
  static reference::fast::values<W> estimate(functor const&, W x) {
    W const d = 1 + std::fabs(x);
    return {x / d, 1 / (d * d)};
  }
  // (1 - |y|)^2.
  static void reference_given_output(functor const&, double y, reference::real& out) {
    auto& w = reference::detail::ws();
    constexpr auto rn = reference::detail::rn;
    mpfr_set_d(w.t[0], std::fabs(y), rn);
    mpfr_ui_sub(w.t[0], 1, w.t[0], rn);
    mpfr_sqr(out.get(), w.t[0], rn);
  }
  template <class W>
  static W estimate_given_output(functor const&, W y) {
    W const gap = 1 - std::fabs(y);
    return gap * gap;
  }
  static double output_sensitivity(functor const&, double y) { return 2.0 * (1.0 - std::fabs(y)); }
};

using tanh_rows = rows<tanh_row, softsign_row>;

}  // namespace nonlin::test::catalog
