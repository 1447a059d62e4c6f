// SPDX-License-Identifier: MIT
#pragma once
// Catalog row of nonlin/mish.hpp.

#include <cmath>

#include <nonlin/mish.hpp>

#include "row.hpp"

namespace nonlin::test::catalog {

struct mish_row : row_defaults {
  using functor = nonlin::mish;
  static constexpr std::string_view name = "mish";
  static constexpr std::string_view formula = "x·tanh(softplus x)";
  static constexpr ulp_bounds bounds{{}, {3.0, "u B / D^2 with B's inner sum rounded"}};
  static std::vector<instance<functor>> instances() { return {{name, {}}}; }
  static limits at_infinity(functor const&) { return {0, infinity, 0, 1}; }
  template <class T>
  static T textbook_forward(T x) {
    return x * std::tanh(std::log1p(std::exp(x)));
  }
  template <class T>
  static T textbook_backward(T x, T dy) {
    T const t = std::tanh(std::log1p(std::exp(x)));
    return dy * (t + x * textbook_sigmoid(x) * (T(1) - t * t));
  }
  // x tanh(sp), sp = softplus(x); derivative tanh(sp) + x sech^2(sp) sigma(x). With
  // w = (1 + e^x)^2: tanh(sp) = (w - 1)/(w + 1), sech^2(sp) = 4w/(w + 1)^2, written in e = e^-|x|:
  //   x >= 0: tanh(sp) = (1 + 2e)/(1 + 2e + 2e^2),  sech^2(sp) = 4 e^2 (1 + e)^2 / D^2
  //   x <  0: tanh(sp) = e (e + 2)/(e^2 + 2e + 2),  sech^2(sp) = 4 (1 + e)^2 / D^2
  // (D the denominator beside it): one exp, no cancellation, no overflow.
  static void reference(functor const&, double x, reference::values& out) {
    auto& w = reference::detail::ws();
    constexpr auto rn = reference::detail::rn;
    mpfr_set_d(w.t[0], x, rn);
    mpfr_set_d(w.t[1], -std::fabs(x), rn);
    mpfr_exp(w.t[1], w.t[1], rn);        // e
    mpfr_add_ui(w.t[2], w.t[1], 1, rn);  // 1 + e
    mpfr_sqr(w.t[6], w.t[1], rn);        // e^2
    if (x >= 0) {
      mpfr_mul_2ui(w.t[3], w.t[1], 1, rn);
      mpfr_add_ui(w.t[3], w.t[3], 1, rn);  // 1 + 2e
      mpfr_mul_2ui(w.t[4], w.t[6], 1, rn);
      mpfr_add(w.t[4], w.t[4], w.t[3], rn);  // D = 1 + 2e + 2e^2
      mpfr_div(w.t[5], w.t[3], w.t[4], rn);  // tanh(sp)
      mpfr_mul(w.t[3], w.t[6], w.t[2], rn);
      mpfr_mul(w.t[3], w.t[3], w.t[2], rn);  // e^2 (1 + e)^2
    } else {
      mpfr_add_ui(w.t[3], w.t[1], 2, rn);
      mpfr_mul(w.t[3], w.t[3], w.t[1], rn);  // e (e + 2)
      mpfr_add_ui(w.t[4], w.t[3], 2, rn);    // D = e^2 + 2e + 2
      mpfr_div(w.t[5], w.t[3], w.t[4], rn);  // tanh(sp)
      mpfr_sqr(w.t[3], w.t[2], rn);          // (1 + e)^2
    }
    mpfr_mul(out.forward.get(), w.t[0], w.t[5], rn);
    mpfr_mul_2ui(w.t[3], w.t[3], 2, rn);
    mpfr_sqr(w.t[4], w.t[4], rn);
    mpfr_div(w.t[3], w.t[3], w.t[4], rn);  // sech^2(sp)
    // sigma(x) = (x >= 0 ? 1 : e) / (1 + e)
    mpfr_div(w.t[3], w.t[3], w.t[2], rn);
    if (x < 0) {
      mpfr_mul(w.t[3], w.t[3], w.t[1], rn);
    }
    mpfr_mul(w.t[3], w.t[3], w.t[0], rn);
    mpfr_add(out.derivative.get(), w.t[5], w.t[3], rn);
  }
  template <class W>
  static reference::fast::values<W> estimate(functor const&, W x) {
    W const e = std::exp(-std::fabs(x));
    W const one_e = 1 + e;
    W t = 0;
    W sech2 = 0;
    if (x >= 0) {
      W const d = 1 + 2 * e + 2 * e * e;
      t = (1 + 2 * e) / d;
      sech2 = 4 * e * e * one_e * one_e / (d * d);
    } else {
      W const d = e * e + 2 * e + 2;
      t = e * (e + 2) / d;
      sech2 = 4 * one_e * one_e / (d * d);
    }
    W const sigma = (x >= 0 ? W(1) : e) / one_e;
    return {x * t, t + x * sech2 * sigma};
  }
};

using mish_rows = rows<mish_row>;

}  // namespace nonlin::test::catalog
