// SPDX-License-Identifier: MIT
#pragma once
// Catalog rows of nonlin/piecewise.hpp: step, identity, relu, relu6, hardtanh, leaky_relu,
// squared_relu. Exact in every type: their bound is 0 ulp in effect, held to the common 2.

#include <algorithm>
#include <cmath>

#include <nonlin/piecewise.hpp>

#include "row.hpp"

namespace nonlin::test::catalog {

namespace piecewise_detail {
constexpr auto rn = reference::detail::rn;
}  // namespace piecewise_detail

struct step_row : row_defaults {
  using functor = nonlin::step;
  static constexpr std::string_view name = "step";
  static constexpr std::string_view formula = "1 if x > 0 else 0 (step(0) = 0)";
  static constexpr std::string_view at_kinks = "0 everywhere";
  static constexpr std::string_view from_output = "yes";
  static constexpr bool has_output_derivative = true;
  static std::vector<instance<functor>> instances() { return {{name, {}}}; }
  static std::vector<double> kinks(functor const&) { return {0.0}; }
  static limits at_infinity(functor const&) { return {0, 1, 0, 0}; }
  template <class T>
  static T textbook_forward(T x) {
    return x > T(0) ? T(1) : T(0);
  }
  template <class T>
  static T textbook_backward(T, T) {
    return T(0);
  }
  template <class T>
  static T textbook_backward_from_output(T, T) {
    return T(0);
  }
  static void reference(functor const&, double x, reference::values& out) {
    mpfr_set_ui(out.forward.get(), x > 0 ? 1 : 0, piecewise_detail::rn);
    mpfr_set_zero(out.derivative.get(), 1);
  }
  template <class W>
  static reference::fast::values<W> estimate(functor const&, W x) {
    return {W(x > 0 ? 1 : 0), W(0)};
  }
  static void reference_given_output(functor const&, double, reference::real& out) {
    mpfr_set_zero(out.get(), 1);
  }
  template <class W>
  static W estimate_given_output(functor const&, W) {
    return 0;
  }
};

struct identity_row : row_defaults {
  using functor = nonlin::identity;
  static constexpr std::string_view name = "identity";
  static constexpr std::string_view formula = "x";
  static constexpr std::string_view at_kinks = "1";
  static constexpr std::string_view from_output = "yes";
  static constexpr bool has_output_derivative = true;
  static std::vector<instance<functor>> instances() { return {{name, {}}}; }
  static limits at_infinity(functor const&) { return {-infinity, infinity, 1, 1}; }
  template <class T>
  static T textbook_forward(T x) {
    return x;
  }
  template <class T>
  static T textbook_backward(T, T dy) {
    return dy;
  }
  template <class T>
  static T textbook_backward_from_output(T, T dy) {
    return dy;
  }
  static void reference(functor const&, double x, reference::values& out) {
    mpfr_set_d(out.forward.get(), x, piecewise_detail::rn);
    mpfr_set_ui(out.derivative.get(), 1, piecewise_detail::rn);
  }
  template <class W>
  static reference::fast::values<W> estimate(functor const&, W x) {
    return {x, W(1)};
  }
  static void reference_given_output(functor const&, double, reference::real& out) {
    mpfr_set_ui(out.get(), 1, piecewise_detail::rn);
  }
  template <class W>
  static W estimate_given_output(functor const&, W) {
    return 1;
  }
};

struct relu_row : row_defaults {
  using functor = nonlin::relu;
  static constexpr std::string_view name = "relu";
  static constexpr std::string_view formula = "max(x, 0), +0 for x ≤ 0";
  static constexpr std::string_view at_kinks = "relu′(0) = 0";
  static constexpr std::string_view from_output = "yes";
  static constexpr bool has_output_derivative = true;
  static std::vector<instance<functor>> instances() { return {{name, {}}}; }
  static std::vector<double> kinks(functor const&) { return {0.0}; }
  static limits at_infinity(functor const&) { return {0, infinity, 0, 1}; }
  template <class T>
  static T textbook_forward(T x) {
    return std::max(x, T(0));
  }
  template <class T>
  static T textbook_backward(T x, T dy) {
    return x > T(0) ? dy : T(0);
  }
  template <class T>
  static T textbook_backward_from_output(T y, T dy) {
    return y > T(0) ? dy : T(0);
  }
  static void reference(functor const&, double x, reference::values& out) {
    mpfr_set_d(out.forward.get(), x > 0 ? x : 0.0, piecewise_detail::rn);
    mpfr_set_ui(out.derivative.get(), x > 0 ? 1 : 0, piecewise_detail::rn);
  }
  template <class W>
  static reference::fast::values<W> estimate(functor const&, W x) {
    return x > 0 ? reference::fast::values<W>{x, W(1)} : reference::fast::values<W>{W(0), W(0)};
  }
  static void reference_given_output(functor const&, double y, reference::real& out) {
    mpfr_set_ui(out.get(), y > 0 ? 1 : 0, piecewise_detail::rn);
  }
  template <class W>
  static W estimate_given_output(functor const&, W y) {
    return y > 0 ? 1 : 0;
  }
};

struct relu6_row : row_defaults {
  using functor = nonlin::relu6;
  static constexpr std::string_view name = "relu6";
  static constexpr std::string_view formula = "min(max(x, 0), 6)";
  static constexpr std::string_view at_kinks = "0 at 0 and 6";
  static constexpr std::string_view from_output = "yes";
  static constexpr bool has_output_derivative = true;
  static std::vector<instance<functor>> instances() { return {{name, {}}}; }
  static std::vector<double> kinks(functor const&) { return {0.0, 6.0}; }
  static limits at_infinity(functor const&) { return {0, 6, 0, 0}; }
  template <class T>
  static T textbook_forward(T x) {
    return std::min(std::max(x, T(0)), T(6));
  }
  template <class T>
  static T textbook_backward(T x, T dy) {
    return x > T(0) && x < T(6) ? dy : T(0);
  }
  template <class T>
  static T textbook_backward_from_output(T y, T dy) {
    return y > T(0) && y < T(6) ? dy : T(0);
  }
  static void reference(functor const&, double x, reference::values& out) {
    reference::detail::clamp(x, 0.0, 6.0, out);
  }
  template <class W>
  static reference::fast::values<W> estimate(functor const&, W x) {
    return reference::fast::clamp(x, W(0), W(6));
  }
  static void reference_given_output(functor const&, double y, reference::real& out) {
    mpfr_set_ui(out.get(), (y > 0 && y < 6) ? 1 : 0, piecewise_detail::rn);
  }
  template <class W>
  static W estimate_given_output(functor const&, W y) {
    return (y > 0 && y < 6) ? 1 : 0;
  }
};

struct hardtanh_row : row_defaults {
  using functor = nonlin::hardtanh;
  static constexpr std::string_view name = "hardtanh";
  static constexpr std::string_view formula = "clamp(x, min, max)";
  static constexpr std::string_view parameters = "`min = -1`, `max = 1`";
  static constexpr std::string_view at_kinks = "0 at min and max";
  static constexpr std::string_view from_output = "yes";
  static constexpr bool has_output_derivative = true;
  static std::vector<instance<functor>> instances() {
    return {{name, {}}, {"hardtanh(-2,3)", {.min = -2.0, .max = 3.0}}};
  }
  static std::vector<double> kinks(functor const& f) { return {f.min, f.max}; }
  static limits at_infinity(functor const& f) { return {f.min, f.max, 0, 0}; }
  template <class T>
  static T textbook_forward(T x) {
    return std::clamp(x, T(-1), T(1));
  }
  template <class T>
  static T textbook_backward(T x, T dy) {
    return x > T(-1) && x < T(1) ? dy : T(0);
  }
  template <class T>
  static T textbook_backward_from_output(T y, T dy) {
    return y > T(-1) && y < T(1) ? dy : T(0);
  }
  static void reference(functor const& f, double x, reference::values& out) {
    reference::detail::clamp(x, f.min, f.max, out);
  }
  template <class W>
  static reference::fast::values<W> estimate(functor const& f, W x) {
    return reference::fast::clamp(x, W(f.min), W(f.max));
  }
  static void reference_given_output(functor const& f, double y, reference::real& out) {
    mpfr_set_ui(out.get(), (y > f.min && y < f.max) ? 1 : 0, piecewise_detail::rn);
  }
  template <class W>
  static W estimate_given_output(functor const& f, W y) {
    return (y > W(f.min) && y < W(f.max)) ? 1 : 0;
  }
};

struct leaky_relu_row : row_defaults {
  using functor = nonlin::leaky_relu;
  static constexpr std::string_view name = "leaky_relu";
  static constexpr std::string_view formula = "x > 0 ? x : αx";
  static constexpr std::string_view parameters = "`alpha = 0.01`";
  static constexpr std::string_view at_kinks = "α at 0";
  static constexpr std::string_view from_output = "yes (α > 0)";
  static constexpr bool has_output_derivative = true;
  static std::vector<instance<functor>> instances() {
    return {{name, {}}, {"leaky_relu(0.2)", {.alpha = 0.2}}};
  }
  static std::vector<double> kinks(functor const&) { return {0.0}; }
  static limits at_infinity(functor const& f) { return {-infinity, infinity, f.alpha, 1}; }
  template <class T>
  static T textbook_forward(T x) {
    return x > T(0) ? x : k<T>(0.01) * x;
  }
  template <class T>
  static T textbook_backward(T x, T dy) {
    return x > T(0) ? dy : k<T>(0.01) * dy;
  }
  template <class T>
  static T textbook_backward_from_output(T y, T dy) {
    return y > T(0) ? dy : k<T>(0.01) * dy;
  }
  static void reference(functor const& f, double x, reference::values& out) {
    if (x > 0) {
      mpfr_set_d(out.forward.get(), x, piecewise_detail::rn);
      mpfr_set_ui(out.derivative.get(), 1, piecewise_detail::rn);
    } else {
      mpfr_set_d(out.derivative.get(), f.alpha, piecewise_detail::rn);
      mpfr_mul_d(out.forward.get(), out.derivative.get(), x, piecewise_detail::rn);
    }
  }
  template <class W>
  static reference::fast::values<W> estimate(functor const& f, W x) {
    return x > 0 ? reference::fast::values<W>{x, W(1)}
                 : reference::fast::values<W>{W(f.alpha) * x, W(f.alpha)};
  }
  static void reference_given_output(functor const& f, double y, reference::real& out) {
    if (y > 0) {
      mpfr_set_ui(out.get(), 1, piecewise_detail::rn);
    } else {
      mpfr_set_d(out.get(), f.alpha, piecewise_detail::rn);
    }
  }
  template <class W>
  static W estimate_given_output(functor const& f, W y) {
    return y > 0 ? W(1) : W(f.alpha);
  }
};

struct squared_relu_row : row_defaults {
  using functor = nonlin::squared_relu;
  static constexpr std::string_view name = "squared_relu";
  static constexpr std::string_view formula = "max(x, 0)²";
  static constexpr std::string_view at_kinks = "0 at 0";
  static std::vector<instance<functor>> instances() { return {{name, {}}}; }
  static std::vector<double> kinks(functor const&) { return {0.0}; }
  static limits at_infinity(functor const&) { return {0, infinity, 0, infinity}; }
  template <class T>
  static T textbook_forward(T x) {
    T const r = std::max(x, T(0));
    return r * r;
  }
  template <class T>
  static T textbook_backward(T x, T dy) {
    return dy * T(2) * std::max(x, T(0));
  }
  static void reference(functor const&, double x, reference::values& out) {
    double const r = x > 0 ? x : 0.0;
    mpfr_set_d(out.derivative.get(), r, piecewise_detail::rn);
    mpfr_sqr(out.forward.get(), out.derivative.get(), piecewise_detail::rn);
    mpfr_mul_2ui(out.derivative.get(), out.derivative.get(), 1, piecewise_detail::rn);
  }
  template <class W>
  static reference::fast::values<W> estimate(functor const&, W x) {
    return x > 0 ? reference::fast::values<W>{x * x, x + x}
                 : reference::fast::values<W>{W(0), W(0)};
  }
};

using piecewise_rows = rows<step_row, identity_row, relu_row, relu6_row, hardtanh_row,
                            leaky_relu_row, squared_relu_row>;

}  // namespace nonlin::test::catalog
