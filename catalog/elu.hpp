// SPDX-License-Identifier: MIT
#pragma once
// Catalog rows of nonlin/elu.hpp: elu, selu, celu.

#include <cmath>

#include <nonlin/elu.hpp>

#include "row.hpp"

namespace nonlin::test::catalog {

namespace elu_detail {
constexpr auto rn = reference::detail::rn;
// selu's lambda alpha: the product of the two constants rounded once to T (its limit at -inf and
// its derivative at the kink), not the product of the rounded constants.
constexpr double selu_lambda_alpha = nonlin::math::selu_lambda_alpha.hi;
}  // namespace elu_detail

struct elu_row : row_defaults {
  using functor = nonlin::elu;
  static constexpr std::string_view name = "elu";
  static constexpr std::string_view formula = "x > 0 ? x : α(eˣ − 1)";
  static constexpr std::string_view parameters = "`alpha = 1`";
  static constexpr std::string_view at_kinks = "α at 0";
  static constexpr std::string_view from_output = "yes (α > 0)";
  static constexpr bool has_output_derivative = true;
  static std::vector<instance<functor>> instances() {
    return {{name, {}}, {"elu(0.5)", {.alpha = 0.5}}};
  }
  static std::vector<double> kinks(functor const&) { return {0.0}; }
  static limits at_infinity(functor const& f) { return {-f.alpha, infinity, 0, 1}; }
  template <class T>
  static T textbook_forward(T x) {
    return x > T(0) ? x : std::expm1(x);
  }
  template <class T>
  static T textbook_backward(T x, T dy) {
    return x > T(0) ? dy : dy * std::exp(x);
  }
  template <class T>
  static T textbook_backward_from_output(T y, T dy) {
    return y > T(0) ? dy : dy * (y + T(1));
  }
  static void reference(functor const& f, double x, reference::values& out) {
    auto& w = reference::detail::ws();
    mpfr_set_ui(w.t[2], 1, elu_detail::rn);
    mpfr_set_d(w.t[3], f.alpha, elu_detail::rn);
    reference::detail::exponential_linear(x, w.t[2], w.t[3], 1.0, out);
  }
  template <class W>
  static reference::fast::values<W> estimate(functor const& f, W x) {
    return reference::fast::exponential_linear(x, W(1), W(f.alpha), W(1));
  }
  // y + alpha for y <= 0.
  static void reference_given_output(functor const& f, double y, reference::real& out) {
    mpfr_set_d(out.get(), y, elu_detail::rn);
    if (y > 0) {
      mpfr_set_ui(out.get(), 1, elu_detail::rn);
    } else {
      mpfr_add_d(out.get(), out.get(), f.alpha, elu_detail::rn);
    }
  }
  template <class W>
  static W estimate_given_output(functor const& f, W y) {
    return y > 0 ? W(1) : y + W(f.alpha);
  }
  static double output_sensitivity(functor const&, double y) { return y > 0 ? 0.0 : 1.0; }
};

struct selu_row : row_defaults {
  using functor = nonlin::selu;
  static constexpr std::string_view name = "selu";
  static constexpr std::string_view formula = "λ·elu_α(x), α = 1.6732632…, λ = 1.0507009…";
  static constexpr std::string_view at_kinks = "λα at 0";
  static constexpr std::string_view from_output = "yes";
  static constexpr bool has_output_derivative = true;
  static std::vector<instance<functor>> instances() { return {{name, {}}}; }
  static std::vector<double> kinks(functor const&) { return {0.0}; }
  static limits at_infinity(functor const&) {
    return {-elu_detail::selu_lambda_alpha, infinity, 0, nonlin::math::selu_lambda};
  }
  static constexpr double alpha = nonlin::math::selu_alpha;
  static constexpr double lambda = nonlin::math::selu_lambda;
  template <class T>
  static T textbook_forward(T x) {
    return k<T>(lambda) * (x > T(0) ? x : k<T>(alpha) * std::expm1(x));
  }
  template <class T>
  static T textbook_backward(T x, T dy) {
    return x > T(0) ? dy * k<T>(lambda) : dy * k<T>(lambda * alpha) * std::exp(x);
  }
  template <class T>
  static T textbook_backward_from_output(T y, T dy) {
    return y > T(0) ? dy * k<T>(lambda) : dy * (y + k<T>(lambda * alpha));
  }
  static void reference(functor const&, double x, reference::values& out) {
    auto& w = reference::detail::ws();
    reference::detail::exponential_linear(x, w.selu_lambda, w.selu_alpha, 1.0, out);
  }
  template <class W>
  static reference::fast::values<W> estimate(functor const&, W x) {
    using c = reference::fast::constants<W>;
    return reference::fast::exponential_linear(x, c::selu_lambda, c::selu_alpha, W(1));
  }
  // lambda or y + lambda alpha.
  static void reference_given_output(functor const&, double y, reference::real& out) {
    auto& w = reference::detail::ws();
    if (y > 0) {
      mpfr_set(out.get(), w.selu_lambda, elu_detail::rn);
    } else {
      mpfr_mul(out.get(), w.selu_lambda, w.selu_alpha, elu_detail::rn);
      mpfr_add_d(out.get(), out.get(), y, elu_detail::rn);
    }
  }
  template <class W>
  static W estimate_given_output(functor const&, W y) {
    using c = reference::fast::constants<W>;
    return y > 0 ? c::selu_lambda : y + c::selu_lambda * c::selu_alpha;
  }
  static double output_sensitivity(functor const&, double y) { return y > 0 ? 0.0 : 1.0; }
};

struct celu_row : row_defaults {
  using functor = nonlin::celu;
  static constexpr std::string_view name = "celu";
  static constexpr std::string_view formula = "max(0,x) + min(0, α(e^(x/α) − 1))";
  static constexpr std::string_view parameters = "`alpha = 1`";
  static constexpr std::string_view at_kinks = "1 at 0";
  static constexpr std::string_view from_output = "yes (α > 0)";
  static constexpr bool has_output_derivative = true;
  static std::vector<instance<functor>> instances() {
    // alpha = 0.3: x / alpha is not exact (powers of two are), which the exps must not amplify.
    return {{name, {}}, {"celu(2)", {.alpha = 2.0}}, {"celu(0.3)", {.alpha = 0.3}}};
  }
  static std::vector<double> kinks(functor const&) { return {0.0}; }
  static limits at_infinity(functor const& f) { return {-f.alpha, infinity, 0, 1}; }
  template <class T>
  static T textbook_forward(T x) {
    return std::max(T(0), x) + std::min(T(0), std::expm1(x / T(1)));
  }
  template <class T>
  static T textbook_backward(T x, T dy) {
    return x > T(0) ? dy : dy * std::exp(x / T(1));
  }
  template <class T>
  static T textbook_backward_from_output(T y, T dy) {
    return y > T(0) ? dy : dy * (T(1) + y / T(1));
  }
  static void reference(functor const& f, double x, reference::values& out) {
    auto& w = reference::detail::ws();
    mpfr_set_ui(w.t[2], 1, elu_detail::rn);
    mpfr_set_d(w.t[3], f.alpha, elu_detail::rn);
    reference::detail::exponential_linear(x, w.t[2], w.t[3], f.alpha, out);
  }
  template <class W>
  static reference::fast::values<W> estimate(functor const& f, W x) {
    return reference::fast::exponential_linear(x, W(1), W(f.alpha), W(f.alpha));
  }
  // 1 + y / alpha for y <= 0.
  static void reference_given_output(functor const& f, double y, reference::real& out) {
    if (y > 0) {
      mpfr_set_ui(out.get(), 1, elu_detail::rn);
    } else {
      mpfr_set_d(out.get(), y, elu_detail::rn);
      mpfr_div_d(out.get(), out.get(), f.alpha, elu_detail::rn);
      mpfr_add_ui(out.get(), out.get(), 1, elu_detail::rn);
    }
  }
  template <class W>
  static W estimate_given_output(functor const& f, W y) {
    return y > 0 ? W(1) : 1 + y / W(f.alpha);
  }
  static double output_sensitivity(functor const& f, double y) {
    return y > 0 ? 0.0 : 1.0 / std::fabs(f.alpha);
  }
};

using elu_rows = rows<elu_row, selu_row, celu_row>;

}  // namespace nonlin::test::catalog
