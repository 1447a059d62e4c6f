// SPDX-License-Identifier: MIT
#pragma once
// Catalog rows of nonlin/silu.hpp: silu, swish, gelu_quick (x sigma(z) with z = x, beta x,
// 1.702 x) and hardswish.

#include <algorithm>
#include <cmath>

#include <nonlin/silu.hpp>

#include "row.hpp"

namespace nonlin::test::catalog {

struct silu_row : row_defaults {
  using functor = nonlin::silu;
  static constexpr std::string_view name = "silu";
  static constexpr std::string_view formula = "x·σ(x)";
  static std::vector<instance<functor>> instances() { return {{name, {}}}; }
  static limits at_infinity(functor const&) { return {0, infinity, 0, 1}; }
  template <class T>
  static T textbook_forward(T x) {
    return x * textbook_sigmoid(x);
  }
  template <class T>
  static T textbook_backward(T x, T dy) {
    T const s = textbook_sigmoid(x);
    return dy * s * (T(1) + x * (T(1) - s));
  }
  static void reference(functor const&, double x, reference::values& out) {
    auto& w = reference::detail::ws();
    mpfr_set_d(w.t[0], x, reference::detail::rn);
    reference::detail::x_sigmoid(w.t[0], w.t[0], w.t[0], out);
  }
  template <class W>
  static reference::fast::values<W> estimate(functor const&, W x) {
    return reference::fast::x_sigmoid(x, x, x);
  }
};

struct swish_row : row_defaults {
  using functor = nonlin::swish;
  static constexpr std::string_view name = "swish";
  static constexpr std::string_view formula = "x·σ(βx)";
  static constexpr std::string_view parameters = "`beta = 1`";
  static std::vector<instance<functor>> instances() {
    return {{name, {}}, {"swish(1.5)", {.beta = 1.5}}};
  }
  static limits at_infinity(functor const&) { return {0, infinity, 0, 1}; }
  // beta = 1, the functor's default.
  template <class T>
  static T textbook_forward(T x) {
    return x * textbook_sigmoid(T(1) * x);
  }
  template <class T>
  static T textbook_backward(T x, T dy) {
    T const s = textbook_sigmoid(T(1) * x);
    return dy * (s + T(1) * x * s * (T(1) - s));
  }
  // x sigma(beta x), beta the double it is.
  static void reference(functor const& f, double x, reference::values& out) {
    auto& w = reference::detail::ws();
    mpfr_set_d(w.t[0], x, reference::detail::rn);
    mpfr_mul_d(w.t[1], w.t[0], f.beta, reference::detail::rn);
    reference::detail::x_sigmoid(w.t[0], w.t[1], w.t[1], out);
  }
  template <class W>
  static reference::fast::values<W> estimate(functor const& f, W x) {
    return reference::fast::x_sigmoid(x, W(f.beta) * x, W(f.beta) * x);
  }
};

struct gelu_quick_row : row_defaults {
  using functor = nonlin::gelu_quick;
  static constexpr std::string_view name = "gelu_quick";
  static constexpr std::string_view formula = "x·σ(1.702x)";
  static constexpr std::string_view parameters = "`k = 1.702`";
  static std::vector<instance<functor>> instances() { return {{name, {}}}; }
  static limits at_infinity(functor const&) { return {0, infinity, 0, 1}; }
  template <class T>
  static T textbook_forward(T x) {
    return x * textbook_sigmoid(k<T>(1.702) * x);
  }
  template <class T>
  static T textbook_backward(T x, T dy) {
    T const s = textbook_sigmoid(k<T>(1.702) * x);
    return dy * (s + k<T>(1.702) * x * s * (T(1) - s));
  }
  // x sigma(k x), k = 1.702 the real number (unless the functor's k was changed from its default).
  static void reference(functor const& f, double x, reference::values& out) {
    auto& w = reference::detail::ws();
    mpfr_set_d(w.t[0], x, reference::detail::rn);
    if (f.k == nonlin::math::gelu_quick_k) {
      mpfr_mul(w.t[1], w.t[0], w.gelu_quick_k, reference::detail::rn);
    } else {
      mpfr_mul_d(w.t[1], w.t[0], f.k, reference::detail::rn);
    }
    reference::detail::x_sigmoid(w.t[0], w.t[1], w.t[1], out);
  }
  template <class W>
  static reference::fast::values<W> estimate(functor const& f, W x) {
    W const k =
        f.k == nonlin::math::gelu_quick_k ? reference::fast::constants<W>::gelu_quick_k : W(f.k);
    return reference::fast::x_sigmoid(x, k * x, k * x);
  }
};

struct hardswish_row : row_defaults {
  using functor = nonlin::hardswish;
  static constexpr std::string_view name = "hardswish";
  static constexpr std::string_view formula = "x·relu6(x + 3)/6";
  static constexpr std::string_view at_kinks = "0 at −3, 1 at 3";
  static std::vector<instance<functor>> instances() { return {{name, {}}}; }
  static std::vector<double> kinks(functor const&) { return {-3.0, 3.0}; }
  static limits at_infinity(functor const&) { return {0, infinity, 0, 1}; }
  template <class T>
  static T textbook_forward(T x) {
    return x * std::clamp(x + T(3), T(0), T(6)) / T(6);
  }
  template <class T>
  static T textbook_backward(T x, T dy) {
    return x <= T(-3) ? T(0) : x >= T(3) ? dy : dy * (T(2) * x + T(3)) / T(6);
  }
  // 0 | x (x + 3) / 6 | x; derivative 0 | (2x + 3) / 6 | 1.
  static void reference(functor const&, double x, reference::values& out) {
    auto& w = reference::detail::ws();
    constexpr auto rn = reference::detail::rn;
    if (x <= -3) {
      mpfr_set_zero(out.forward.get(), 1);
      mpfr_set_zero(out.derivative.get(), 1);
    } else if (x >= 3) {
      mpfr_set_d(out.forward.get(), x, rn);
      mpfr_set_ui(out.derivative.get(), 1, rn);
    } else {
      mpfr_set_d(w.t[0], x, rn);
      mpfr_add_ui(w.t[1], w.t[0], 3, rn);
      mpfr_mul(out.forward.get(), w.t[0], w.t[1], rn);
      mpfr_div_ui(out.forward.get(), out.forward.get(), 6, rn);
      mpfr_add(out.derivative.get(), w.t[1], w.t[0], rn);
      mpfr_div_ui(out.derivative.get(), out.derivative.get(), 6, rn);
    }
  }
  template <class W>
  static reference::fast::values<W> estimate(functor const&, W x) {
    if (x <= -3) {
      return {W(0), W(0)};
    }
    if (x >= 3) {
      return {x, W(1)};
    }
    return {x * (x + 3) / 6, (2 * x + 3) / 6};
  }
};

using silu_rows = rows<silu_row, swish_row, gelu_quick_row, hardswish_row>;

}  // namespace nonlin::test::catalog
