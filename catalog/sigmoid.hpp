// SPDX-License-Identifier: MIT
#pragma once
// Catalog rows of nonlin/sigmoid.hpp: sigmoid, log_sigmoid, softplus, hardsigmoid.

#include <algorithm>
#include <cmath>

#include <nonlin/sigmoid.hpp>

#include "row.hpp"

namespace nonlin::test::catalog {

namespace sigmoid_detail {
constexpr auto rn = reference::detail::rn;
}  // namespace sigmoid_detail

struct sigmoid_row : row_defaults {
  using functor = nonlin::sigmoid;
  static constexpr std::string_view name = "sigmoid";
  static constexpr std::string_view formula = "1/(1 + e⁻ˣ)";
  static constexpr std::string_view from_output = "yes: y(1−y)";
  static constexpr bool has_output_derivative = true;
  static std::vector<instance<functor>> instances() { return {{name, {}}}; }
  static limits at_infinity(functor const&) { return {0, 1, 0, 0}; }
  template <class T>
  static T textbook_forward(T x) {
    return textbook_sigmoid(x);
  }
  template <class T>
  static T textbook_backward(T x, T dy) {
    T const s = textbook_sigmoid(x);
    return dy * s * (T(1) - s);
  }
  template <class T>
  static T textbook_backward_from_output(T y, T dy) {
    return dy * y * (T(1) - y);
  }
  // sigma(x); sigma(x) sigma(-x).
  static void reference(functor const&, double x, reference::values& out) {
    auto& w = reference::detail::ws();
    mpfr_set_d(w.t[0], x, sigmoid_detail::rn);
    reference::detail::sigmoid_pair(w.t[0], out.forward.get(), w.t[1]);
    mpfr_mul(out.derivative.get(), out.forward.get(), w.t[1], sigmoid_detail::rn);
  }
  template <class W>
  static reference::fast::values<W> estimate(functor const&, W x) {
    W sp = 0;
    W sn = 0;
    reference::fast::sigmoid_pair(x, sp, sn);
    return {sp, sp * sn};
  }
  // y (1 - y).
  static void reference_given_output(functor const&, double y, reference::real& out) {
    auto& w = reference::detail::ws();
    mpfr_set_d(w.t[0], y, sigmoid_detail::rn);
    mpfr_ui_sub(w.t[1], 1, w.t[0], sigmoid_detail::rn);
    mpfr_mul(out.get(), w.t[0], w.t[1], sigmoid_detail::rn);
  }
  template <class W>
  static W estimate_given_output(functor const&, W y) {
    return y * (1 - y);
  }
  static double output_sensitivity(functor const&, double y) { return std::fabs(1.0 - 2.0 * y); }
};

struct log_sigmoid_row : row_defaults {
  using functor = nonlin::log_sigmoid;
  static constexpr std::string_view name = "log_sigmoid";
  static constexpr std::string_view formula = "log σ(x)";
  static constexpr std::string_view from_output = "yes: −expm1(y)";
  static constexpr bool has_output_derivative = true;
  static std::vector<instance<functor>> instances() { return {{name, {}}}; }
  static limits at_infinity(functor const&) { return {-infinity, 0, 1, 0}; }
  template <class T>
  static T textbook_forward(T x) {
    return -std::log1p(std::exp(-x));
  }
  template <class T>
  static T textbook_backward(T x, T dy) {
    return dy / (T(1) + std::exp(x));
  }
  template <class T>
  static T textbook_backward_from_output(T y, T dy) {
    return dy * (T(1) - std::exp(y));
  }
  // -softplus(-x); sigma(-x).
  static void reference(functor const&, double x, reference::values& out) {
    auto& w = reference::detail::ws();
    mpfr_set_d(w.t[0], -x, sigmoid_detail::rn);
    reference::detail::softplus(w.t[0], out.forward.get());
    mpfr_neg(out.forward.get(), out.forward.get(), sigmoid_detail::rn);
    reference::detail::sigmoid_pair(w.t[0], out.derivative.get(), w.t[1]);
  }
  template <class W>
  static reference::fast::values<W> estimate(functor const&, W x) {
    W sp = 0;
    W sn = 0;
    reference::fast::sigmoid_pair(-x, sp, sn);
    return {-reference::fast::softplus(-x), sp};
  }
  // -expm1(y).
  static void reference_given_output(functor const&, double y, reference::real& out) {
    mpfr_set_d(out.get(), y, sigmoid_detail::rn);
    mpfr_expm1(out.get(), out.get(), sigmoid_detail::rn);
    mpfr_neg(out.get(), out.get(), sigmoid_detail::rn);
  }
  template <class W>
  static W estimate_given_output(functor const&, W y) {
    return -std::expm1(y);
  }
  static double output_sensitivity(functor const&, double y) { return std::exp(y); }
};

struct softplus_row : row_defaults {
  using functor = nonlin::softplus;
  static constexpr std::string_view name = "softplus";
  static constexpr std::string_view formula = "log(1 + e^(βx))/β; x where βx > threshold";
  static constexpr std::string_view parameters =
      "`beta = 1`, `threshold = ∞` (none; `20` is PyTorch's)";
  static constexpr std::string_view from_output = "yes";
  static constexpr bool has_output_derivative = true;
  static std::vector<instance<functor>> instances() {
    return {{name, {}}, {"softplus(2,10)", {.beta = 2.0, .threshold = 10.0}}};
  }
  // The switch to the linear piece, where the threshold is finite.
  static std::vector<double> kinks(functor const& f) {
    if (std::isfinite(f.threshold)) {
      return {f.threshold / f.beta};
    }
    return {};
  }
  static limits at_infinity(functor const&) { return {0, infinity, 0, 1}; }
  template <class T>
  static T textbook_forward(T x) {
    return x > T(20) ? x : std::log1p(std::exp(x));
  }
  template <class T>
  static T textbook_backward(T x, T dy) {
    return x > T(20) ? dy : dy * textbook_sigmoid(x);
  }
  template <class T>
  static T textbook_backward_from_output(T y, T dy) {
    return y > T(20) ? dy : dy * (T(1) - std::exp(-y));
  }
  // x where beta x > threshold, else softplus(beta x) / beta; derivative 1 or sigma(beta x).
  static void reference(functor const& f, double x, reference::values& out) {
    auto& w = reference::detail::ws();
    mpfr_set_d(w.t[0], x, sigmoid_detail::rn);
    mpfr_mul_d(w.t[0], w.t[0], f.beta, sigmoid_detail::rn);  // exact: 106 bits
    if (mpfr_cmp_d(w.t[0], f.threshold) > 0) {
      mpfr_set_d(out.forward.get(), x, sigmoid_detail::rn);
      mpfr_set_ui(out.derivative.get(), 1, sigmoid_detail::rn);
      return;
    }
    reference::detail::sigmoid_pair(w.t[0], out.derivative.get(), w.t[1]);
    reference::detail::softplus(w.t[0], out.forward.get());
    mpfr_div_d(out.forward.get(), out.forward.get(), f.beta, sigmoid_detail::rn);
  }
  template <class W>
  static reference::fast::values<W> estimate(functor const& f, W x) {
    W const z = x * W(f.beta);
    if (z > W(f.threshold)) {
      return {x, W(1)};
    }
    W sp = 0;
    W sn = 0;
    reference::fast::sigmoid_pair(z, sp, sn);
    return {reference::fast::softplus(z) / W(f.beta), sp};
  }
  // 1 where beta y > softplus(threshold) (the linear piece), else -expm1(-beta y).
  static void reference_given_output(functor const& f, double y, reference::real& out) {
    auto& w = reference::detail::ws();
    mpfr_set_d(w.t[0], y, sigmoid_detail::rn);
    mpfr_mul_d(w.t[0], w.t[0], f.beta, sigmoid_detail::rn);
    mpfr_set_d(w.t[1], f.threshold, sigmoid_detail::rn);
    reference::detail::softplus(w.t[1], w.t[1]);
    if (mpfr_cmp(w.t[0], w.t[1]) > 0) {
      mpfr_set_ui(out.get(), 1, sigmoid_detail::rn);
    } else {
      mpfr_neg(w.t[0], w.t[0], sigmoid_detail::rn);
      mpfr_expm1(out.get(), w.t[0], sigmoid_detail::rn);
      mpfr_neg(out.get(), out.get(), sigmoid_detail::rn);
    }
  }
  template <class W>
  static W estimate_given_output(functor const& f, W y) {
    W const z = y * W(f.beta);
    return z > reference::fast::softplus(W(f.threshold)) ? W(1) : -std::expm1(-z);
  }
  static double output_sensitivity(functor const& f, double y) {
    double const z = y * f.beta;
    bool const linear =
        z > std::log1p(std::exp(-std::fabs(f.threshold))) + std::max(f.threshold, 0.0);
    return linear ? 0.0 : f.beta * std::exp(-z);
  }
};

struct hardsigmoid_row : row_defaults {
  using functor = nonlin::hardsigmoid;
  static constexpr std::string_view name = "hardsigmoid";
  static constexpr std::string_view formula = "relu6(x + 3)/6";
  static constexpr std::string_view at_kinks = "0 at ±3";
  static constexpr std::string_view from_output = "yes";
  static constexpr bool has_output_derivative = true;
  static std::vector<instance<functor>> instances() { return {{name, {}}}; }
  static std::vector<double> kinks(functor const&) { return {-3.0, 3.0}; }
  static limits at_infinity(functor const&) { return {0, 1, 0, 0}; }
  template <class T>
  static T textbook_forward(T x) {
    return std::clamp(x / T(6) + k<T>(0.5), T(0), T(1));
  }
  template <class T>
  static T textbook_backward(T x, T dy) {
    return x > T(-3) && x < T(3) ? dy / T(6) : T(0);
  }
  template <class T>
  static T textbook_backward_from_output(T y, T dy) {
    return y > T(0) && y < T(1) ? dy / T(6) : T(0);
  }
  // 0 | x/6 + 1/2 | 1 on x <= -3 | (-3, 3) | x >= 3; derivative 1/6 inside, else 0.
  static void reference(functor const&, double x, reference::values& out) {
    if (x <= -3) {
      mpfr_set_zero(out.forward.get(), 1);
      mpfr_set_zero(out.derivative.get(), 1);
    } else if (x >= 3) {
      mpfr_set_ui(out.forward.get(), 1, sigmoid_detail::rn);
      mpfr_set_zero(out.derivative.get(), 1);
    } else {
      mpfr_set_d(out.forward.get(), x, sigmoid_detail::rn);
      mpfr_add_ui(out.forward.get(), out.forward.get(), 3, sigmoid_detail::rn);
      mpfr_div_ui(out.forward.get(), out.forward.get(), 6, sigmoid_detail::rn);
      mpfr_set_ui(out.derivative.get(), 1, sigmoid_detail::rn);
      mpfr_div_ui(out.derivative.get(), out.derivative.get(), 6, sigmoid_detail::rn);
    }
  }
  template <class W>
  static reference::fast::values<W> estimate(functor const&, W x) {
    if (x <= -3) {
      return {W(0), W(0)};
    }
    if (x >= 3) {
      return {W(1), W(0)};
    }
    return {(x + 3) / 6, W(1) / 6};
  }
  // 1/6 on 0 < y < 1, else 0.
  static void reference_given_output(functor const&, double y, reference::real& out) {
    mpfr_set_ui(out.get(), (y > 0 && y < 1) ? 1 : 0, sigmoid_detail::rn);
    mpfr_div_ui(out.get(), out.get(), 6, sigmoid_detail::rn);
  }
  template <class W>
  static W estimate_given_output(functor const&, W y) {
    return (y > 0 && y < 1) ? W(1) / 6 : W(0);
  }
};

using sigmoid_rows = rows<sigmoid_row, log_sigmoid_row, softplus_row, hardsigmoid_row>;

}  // namespace nonlin::test::catalog
