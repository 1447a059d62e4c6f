// SPDX-License-Identifier: MIT
#pragma once
// Catalog rows of nonlin/fast.hpp, the fast tier: the default tier's functions (their
// references and textbook formulas), with the fast tier's own bound and the x windows where
// it does not hold (what the fast tier gives up, README "Fast tier"): the derivatives of
// x sigma(z) and of mish near their zeros (no fitted root neighbourhood: the relative error
// is unbounded at the zero itself), and the GELUs' left tails, where the argument z rounded
// once costs about |z|/2 ulp in e^z. Figures from tests/accuracy_test.cpp's inputs (g++ 12,
// -O3 -march=native, Zen 4); the GELU derivatives' windows end at -0.45 since every float was
// checked (2026-12-04): up to 6.4 ulp between -0.55 and -0.45 (gelu_tanh'; 5.9 before the
// one-path derivative, 5.7 before the table exp), within 5 above; gelu_tanh' with the split form
// on its whole left side (2026-12-05): 5.9 ulp at -0.515 in the window, 4.8 at -0.344 above.

#include <nonlin/fast.hpp>

#include "elu.hpp"
#include "gelu.hpp"
#include "mish.hpp"
#include "row.hpp"
#include "sigmoid.hpp"
#include "silu.hpp"
#include "tanh.hpp"

namespace nonlin::test::catalog {

struct fast_sigmoid_row : fast_row<fast_sigmoid_row, sigmoid_row> {
  using functor = nonlin::fast::sigmoid;
  static constexpr std::string_view name = "fast::sigmoid";
  static std::vector<instance<functor>> instances() { return {{name, {}}}; }
  static nonlin::sigmoid exact(functor const&) { return {}; }
};

struct fast_tanh_row : fast_row<fast_tanh_row, tanh_row> {
  using functor = nonlin::fast::tanh;
  static constexpr std::string_view name = "fast::tanh";
  static std::vector<instance<functor>> instances() { return {{name, {}}}; }
  static nonlin::tanh exact(functor const&) { return {}; }
};

struct fast_log_sigmoid_row : fast_row<fast_log_sigmoid_row, log_sigmoid_row> {
  using functor = nonlin::fast::log_sigmoid;
  static constexpr std::string_view name = "fast::log_sigmoid";
  static std::vector<instance<functor>> instances() { return {{name, {}}}; }
  static nonlin::log_sigmoid exact(functor const&) { return {}; }
};

struct fast_softplus_row : fast_row<fast_softplus_row, softplus_row> {
  using functor = nonlin::fast::softplus;
  static constexpr std::string_view name = "fast::softplus";
  static std::vector<instance<functor>> instances() {
    return {{name, {}}, {"fast::softplus(2,10)", {.beta = 2.0, .threshold = 10.0}}};
  }
  static nonlin::softplus exact(functor const& f) {
    return {.beta = f.beta, .threshold = f.threshold};
  }
};

struct fast_elu_row : fast_row<fast_elu_row, elu_row> {
  using functor = nonlin::fast::elu;
  static constexpr std::string_view name = "fast::elu";
  static std::vector<instance<functor>> instances() {
    return {{name, {}}, {"fast::elu(0.5)", {.alpha = 0.5}}};
  }
  static nonlin::elu exact(functor const& f) { return {.alpha = f.alpha}; }
};

struct fast_selu_row : fast_row<fast_selu_row, selu_row> {
  using functor = nonlin::fast::selu;
  static constexpr std::string_view name = "fast::selu";
  static std::vector<instance<functor>> instances() { return {{name, {}}}; }
  static nonlin::selu exact(functor const&) { return {}; }
};

struct fast_celu_row : fast_row<fast_celu_row, celu_row> {
  using functor = nonlin::fast::celu;
  static constexpr std::string_view name = "fast::celu";
  static std::vector<instance<functor>> instances() {
    return {{name, {}}, {"fast::celu(2)", {.alpha = 2.0}}, {"fast::celu(0.3)", {.alpha = 0.3}}};
  }
  static nonlin::celu exact(functor const& f) { return {.alpha = f.alpha}; }
};

struct fast_silu_row : fast_row<fast_silu_row, silu_row> {
  using functor = nonlin::fast::silu;
  static constexpr std::string_view name = "fast::silu";
  static std::vector<instance<functor>> instances() { return {{name, {}}}; }
  static nonlin::silu exact(functor const&) { return {}; }
  // The fast x sigma(x) derivative's, at its zero (fast::swish's too).
  static std::vector<exempt_window> root_windows() {
    return {{member::derivative, "f32", -2.0, -1.0, "5.6e7 ulp at the zero -1.2785", "root"},
            {member::derivative, "f64", -2.0, -1.0, "7.1e15 ulp at the zero -1.2785", "root"}};
  }
  // fast::silu's float derivative comes from silu's table where the build has it
  // (math/silu_slope.hpp), within the bound at the zero too.
  static std::vector<exempt_window> windows() {
    auto w = root_windows();
    if (nonlin::math::has_slope_tables<float>) {
      std::erase_if(w, [](exempt_window const& e) { return e.type == "f32"; });
    }
    return w;
  }
};

struct fast_swish_row : fast_row<fast_swish_row, swish_row> {
  using functor = nonlin::fast::swish;
  static constexpr std::string_view name = "fast::swish";
  static std::vector<instance<functor>> instances() {
    return {{name, {}}, {"fast::swish(1.5)", {.beta = 1.5}}};
  }
  static nonlin::swish exact(functor const& f) { return {.beta = f.beta}; }
  // beta = 1: fast::silu's function, and its windows. beta = 1.5: z = 1.5 x rounded once costs
  // about |z| / 2 ulp in e^z (the GELUs' "argument"; above 5 ulp for x < -3.05 in float, every
  // float checked), and the derivative's zero is silu's over 1.5 (above 5 ulp in [-0.96, -0.69]
  // and, the argument again, below -3.22).
  static std::vector<exempt_window> windows() {
    auto silu = fast_silu_row::root_windows();
    for (auto& w : silu) {
      w.instance = name;
    }
    constexpr std::string_view other = "fast::swish(1.5)";
    silu.push_back({member::forward, "f32", -1e300, -3.0, "63 ulp at -55.8", "argument", other});
    silu.push_back({member::forward, "f64", -1e300, -3.0, "372 ulp at -429", "argument", other});
    silu.push_back(
        {member::derivative, "f32", -1e300, -0.65, "root -0.8523, tail; 1757 ulp", "both", other});
    silu.push_back(
        {member::derivative, "f64", -1e300, -0.65, "root -0.8523, tail; 4867 ulp", "both", other});
    return silu;
  }
};

struct fast_gelu_quick_row : fast_row<fast_gelu_quick_row, gelu_quick_row> {
  using functor = nonlin::fast::gelu_quick;
  static constexpr std::string_view name = "fast::gelu_quick";
  static std::vector<instance<functor>> instances() { return {{name, {}}}; }
  static nonlin::gelu_quick exact(functor const&) { return {}; }
  static std::vector<exempt_window> windows() {
    return {
        {member::forward, "f32", -1e300, -1.25, "81 ulp at -52", "argument"},
        {member::forward, "f64", -1e300, -1.25, "302 ulp at -348", "argument"},
        {member::derivative, "f32", -1e300, -0.45, "root -0.7512, tail; 5.1 ulp at -0.503", "both"},
        {member::derivative, "f64", -1e300, -0.45, "root -0.7512, tail", "both"}};
  }
};

struct fast_gelu_exact_row : fast_row<fast_gelu_exact_row, gelu_exact_row> {
  using functor = nonlin::fast::gelu_exact;
  static constexpr std::string_view name = "fast::gelu_exact";
  static std::vector<instance<functor>> instances() { return {{name, {}}}; }
  static nonlin::gelu_exact exact(functor const&) { return {}; }
  // Only the derivative's zero: a^2's low part keeps the left tail (every float checked: above
  // 5 ulp only in [-0.95, -0.5], 313 ulp at -0.704).
  static std::vector<exempt_window> windows() {
    return {{member::derivative, "f32", -1.0, -0.5, "1.4e7 ulp at the zero -0.7518", "root"},
            {member::derivative, "f64", -1.0, -0.5, "at the zero -0.7518", "root"}};
  }
};

struct fast_gelu_tanh_row : fast_row<fast_gelu_tanh_row, gelu_tanh_row> {
  using functor = nonlin::fast::gelu_tanh;
  static constexpr std::string_view name = "fast::gelu_tanh";
  static std::vector<instance<functor>> instances() { return {{name, {}}}; }
  static nonlin::gelu_tanh exact(functor const&) { return {}; }
  static std::vector<exempt_window> windows() {
    return {
        {member::forward, "f32", -1e300, -1.25, "196 ulp at -9.76", "argument"},
        {member::forward, "f64", -1e300, -1.25, "1216 ulp at -21.1", "argument"},
        {member::derivative, "f32", -1e300, -0.45, "root -0.7525, tail; 5.9 ulp at -0.515", "both"},
        {member::derivative, "f64", -1e300, -0.45, "root -0.7525, tail", "both"}};
  }
};

struct fast_mish_row : fast_row<fast_mish_row, mish_row> {
  using functor = nonlin::fast::mish;
  static constexpr std::string_view name = "fast::mish";
  static std::vector<instance<functor>> instances() { return {{name, {}}}; }
  static nonlin::mish exact(functor const&) { return {}; }
  static std::vector<exempt_window> windows() {
    return {{member::derivative, "f32", -1.35, -1.0, "2.8e7 ulp at the zero -1.1924", "root"},
            {member::derivative, "f64", -1.35, -1.0, "1.3e15 ulp at the zero -1.1924", "root"}};
  }
};

using fast_rows = rows<fast_elu_row, fast_selu_row, fast_celu_row, fast_sigmoid_row, fast_tanh_row,
                       fast_log_sigmoid_row, fast_softplus_row, fast_silu_row, fast_swish_row,
                       fast_gelu_quick_row, fast_gelu_exact_row, fast_gelu_tanh_row, fast_mish_row>;

}  // namespace nonlin::test::catalog
