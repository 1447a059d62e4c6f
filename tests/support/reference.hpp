// SPDX-License-Identifier: MIT
#pragma once
// The high-precision reference for accuracy measurements: every nonlin functor's forward value
// and derivative at a double input, evaluated with MPFR at `precision` bits, and the ULP error
// of a float or double result against it. Used by tests/accuracy_test.cpp and tools/accuracy.cpp.
//
// Definitions are the mathematical ones of the header comments, with every constant as the
// real number it names: sqrt(2/pi), 0.044715 and 1.702 exactly (decimal strings), selu's alpha
// and lambda to the 30 digits of math/constants.hpp, and the functors' double members (alpha,
// beta, threshold, min, max) as the doubles they are. Kinks follow nonlin's policy: the left
// piece's derivative at an inner kink, 0 on a closed saturation boundary (1 on hardswish's
// right one, where the piece is x).
//
// Values are kept as MPFR numbers (`real`): a long double cannot hold the exact reference of a
// double result, nor resolve a subnormal one. Every formula below takes e^(-|z|) only, so MPFR
// never overflows; underflow (|x| beyond ~7e8) returns 0 or the limit, as the true values
// round there. Inputs must be finite (the measurements sample finite inputs only).
//
// Each thread keeps its own scratch numbers and constants (thread_local), so evaluation does no
// allocation after the first call and tools/accuracy.cpp may call it from several threads.

#include <mpfr.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include <nonlin/nonlin.hpp>

namespace nonlin::test::reference {

// Working precision in bits. Well above what the worst cancellation needs: the derivative zero
// crossings lose at most ~53 bits at a double input, the normal tail ~2 log2|x| bits.
inline constexpr mpfr_prec_t precision = 160;

// An MPFR number with value semantics.
class real {
 public:
  real() {
    mpfr_init2(v_, precision);
    mpfr_set_zero(v_, 1);
  }
  explicit real(double x) {
    mpfr_init2(v_, precision);
    mpfr_set_d(v_, x, MPFR_RNDN);
  }
  real(real const& other) {
    mpfr_init2(v_, mpfr_get_prec(other.v_));
    mpfr_set(v_, other.v_, MPFR_RNDN);
  }
  real(real&& other) noexcept : real() { mpfr_swap(v_, other.v_); }
  real& operator=(real const& other) {
    if (this != &other) {
      mpfr_set_prec(v_, mpfr_get_prec(other.v_));
      mpfr_set(v_, other.v_, MPFR_RNDN);
    }
    return *this;
  }
  real& operator=(real&& other) noexcept {
    mpfr_swap(v_, other.v_);
    return *this;
  }
  ~real() { mpfr_clear(v_); }

  mpfr_ptr get() noexcept { return v_; }
  mpfr_srcptr get() const noexcept { return v_; }

  // Rounded to nearest (subnormal results included; beyond the range: +-inf).
  double to_double() const { return mpfr_get_d(v_, MPFR_RNDN); }
  float to_float() const { return mpfr_get_flt(v_, MPFR_RNDN); }
  long double to_long_double() const { return mpfr_get_ld(v_, MPFR_RNDN); }
  template <class T>
  T rounded() const {
    if constexpr (std::is_same_v<T, float>) {
      return to_float();
    } else {
      return to_double();
    }
  }

 private:
  mpfr_t v_;
};

// Forward value and derivative at one input.
struct values {
  real forward;
  real derivative;
};

namespace detail {

// Scratch numbers and the constants, one set per thread.
struct workspace {
  static constexpr int scratch = 8;
  mpfr_t t[scratch];
  mpfr_t sqrt_2_over_pi;  // sqrt(2/pi)
  mpfr_t gelu_kappa;      // 0.044715
  mpfr_t gelu_quick_k;    // 1.702
  mpfr_t selu_alpha;      // 30 digits, as in math/constants.hpp
  mpfr_t selu_lambda;
  mpfr_t inv_sqrt2;     // 1/sqrt(2)
  mpfr_t inv_sqrt_2pi;  // 1/sqrt(2 pi)
  mpfr_t inv_sqrt_pi;   // 1/sqrt(pi)

  workspace() {
    // The widest exponent range, so nothing a double can hold over- or underflows (the
    // exponent range is per thread in a thread-safe MPFR build, as Debian's is).
    mpfr_set_emin(mpfr_get_emin_min());
    mpfr_set_emax(mpfr_get_emax_max());
    for (auto& v : t) {
      mpfr_init2(v, precision);
    }
    for (mpfr_ptr v : {sqrt_2_over_pi, gelu_kappa, gelu_quick_k, selu_alpha, selu_lambda, inv_sqrt2,
                       inv_sqrt_2pi, inv_sqrt_pi}) {
      mpfr_init2(v, precision);
    }
    mpfr_const_pi(t[0], MPFR_RNDN);
    mpfr_ui_div(t[1], 2, t[0], MPFR_RNDN);
    mpfr_sqrt(sqrt_2_over_pi, t[1], MPFR_RNDN);
    mpfr_mul_ui(t[1], t[0], 2, MPFR_RNDN);
    mpfr_rec_sqrt(inv_sqrt_2pi, t[1], MPFR_RNDN);
    mpfr_rec_sqrt(inv_sqrt_pi, t[0], MPFR_RNDN);
    mpfr_set_ui(t[1], 2, MPFR_RNDN);
    mpfr_rec_sqrt(inv_sqrt2, t[1], MPFR_RNDN);
    mpfr_set_str(gelu_kappa, "0.044715", 10, MPFR_RNDN);
    mpfr_set_str(gelu_quick_k, "1.702", 10, MPFR_RNDN);
    mpfr_set_str(selu_alpha, "1.67326324235437728481704299167171", 10, MPFR_RNDN);
    mpfr_set_str(selu_lambda, "1.05070098735548049341933498529460", 10, MPFR_RNDN);
  }
  ~workspace() {
    for (auto& v : t) {
      mpfr_clear(v);
    }
    for (mpfr_ptr v : {sqrt_2_over_pi, gelu_kappa, gelu_quick_k, selu_alpha, selu_lambda, inv_sqrt2,
                       inv_sqrt_2pi, inv_sqrt_pi}) {
      mpfr_clear(v);
    }
  }
  workspace(workspace const&) = delete;
  workspace& operator=(workspace const&) = delete;
};

inline workspace& ws() {
  thread_local workspace w;
  return w;
}

constexpr mpfr_rnd_t rn = MPFR_RNDN;

// s_pos = sigma(z), s_neg = sigma(-z), from e = e^(-|z|) (never overflows). Uses t[6], t[7].
inline void sigmoid_pair(mpfr_srcptr z, mpfr_ptr s_pos, mpfr_ptr s_neg) {
  workspace& w = ws();
  mpfr_ptr e = w.t[6];
  mpfr_ptr d = w.t[7];
  mpfr_abs(e, z, rn);
  mpfr_neg(e, e, rn);
  mpfr_exp(e, e, rn);
  mpfr_add_ui(d, e, 1, rn);
  bool const positive = mpfr_sgn(z) >= 0;
  mpfr_ui_div(positive ? s_pos : s_neg, 1, d, rn);
  mpfr_div(positive ? s_neg : s_pos, e, d, rn);
}

// log(1 + e^z) = max(z, 0) + log1p(e^-|z|). Uses t[7]; out may alias z.
inline void softplus(mpfr_srcptr z, mpfr_ptr out) {
  mpfr_ptr e = ws().t[7];
  mpfr_abs(e, z, rn);
  mpfr_neg(e, e, rn);
  mpfr_exp(e, e, rn);
  mpfr_log1p(e, e, rn);
  if (mpfr_sgn(z) > 0) {
    mpfr_add(out, z, e, rn);
  } else {
    mpfr_set(out, e, rn);
  }
}

// x sigma(z) and its derivative sigma(z) (1 + dz sigma(-z)), where dz = x z'(x). Uses t[4..7].
inline void x_sigmoid(mpfr_srcptr x, mpfr_srcptr z, mpfr_srcptr dz, values& out) {
  workspace& w = ws();
  mpfr_ptr s_pos = w.t[4];
  mpfr_ptr s_neg = w.t[5];
  sigmoid_pair(z, s_pos, s_neg);
  mpfr_mul(out.forward.get(), x, s_pos, rn);
  mpfr_mul(out.derivative.get(), dz, s_neg, rn);
  mpfr_add_ui(out.derivative.get(), out.derivative.get(), 1, rn);
  mpfr_mul(out.derivative.get(), out.derivative.get(), s_pos, rn);
}

// The piecewise-linear family clamp(x, lo, hi) scaled: used by hardtanh and relu6.
inline void clamp(double x, double lo, double hi, values& out) {
  if (x <= lo) {
    mpfr_set_d(out.forward.get(), lo, rn);
    mpfr_set_zero(out.derivative.get(), 1);
  } else if (x >= hi) {
    mpfr_set_d(out.forward.get(), hi, rn);
    mpfr_set_zero(out.derivative.get(), 1);
  } else {
    mpfr_set_d(out.forward.get(), x, rn);
    mpfr_set_ui(out.derivative.get(), 1, rn);
  }
}

// scale * (x > 0 ? x : alpha expm1(x / width)), derivative scale * (x > 0 ? 1 : alpha/width
// e^(x/width)); scale and alpha as MPFR numbers, width as a double (elu, selu, celu).
inline void exponential_linear(double x, mpfr_srcptr scale, mpfr_srcptr alpha, double width,
                               values& out) {
  workspace& w = ws();
  if (x > 0) {
    mpfr_set_d(w.t[0], x, rn);
    mpfr_mul(out.forward.get(), w.t[0], scale, rn);
    mpfr_set(out.derivative.get(), scale, rn);
    return;
  }
  mpfr_set_d(w.t[0], x, rn);
  mpfr_div_d(w.t[0], w.t[0], width, rn);
  mpfr_expm1(w.t[1], w.t[0], rn);
  mpfr_mul(w.t[1], w.t[1], alpha, rn);
  mpfr_mul(out.forward.get(), w.t[1], scale, rn);
  mpfr_exp(w.t[1], w.t[0], rn);
  mpfr_mul(w.t[1], w.t[1], alpha, rn);
  mpfr_div_d(w.t[1], w.t[1], width, rn);
  mpfr_mul(out.derivative.get(), w.t[1], scale, rn);
}

// out = erfc(s) for s >= 0. MPFR's own erfc is correctly rounded but takes up to ~0.6 ms per
// call for s in [3, 20] at this precision; there the Laplace continued fraction
//   erfc(s) = e^(-s^2) / sqrt(pi) / (s + (1/2) / (s + (2/2) / (s + (3/2) / (s + ...))))
// evaluated backward from term N is 10-50 times faster. N = (111 / 2s)^2 / 2 + 60 terms agree
// with mpfr_erfc to the last bit on s in [2.5, 27] (checked in accuracy_test). Uses t[6], t[7].
inline void erfc(mpfr_srcptr s, mpfr_ptr out) {
  workspace& w = ws();
  double const sd = mpfr_get_d(s, rn);
  if (sd < 2.5) {
    mpfr_erfc(out, s, rn);
    return;
  }
  mpfr_ptr r = w.t[6];
  mpfr_ptr q = w.t[7];
  double const k = 111.0 / (2.0 * sd);
  auto const terms = static_cast<unsigned long>(k * k / 2.0) + 60;
  mpfr_set(r, s, rn);
  for (unsigned long n = terms; n >= 1; --n) {
    mpfr_ui_div(q, n, r, rn);
    mpfr_div_2ui(q, q, 1, rn);
    mpfr_add(r, s, q, rn);
  }
  mpfr_sqr(q, s, rn);
  mpfr_neg(q, q, rn);
  mpfr_exp(q, q, rn);
  mpfr_mul(q, q, w.inv_sqrt_pi, rn);
  mpfr_div(out, q, r, rn);
}

}  // namespace detail

// ---------------------------------------------------------------------------------------------
// evaluate(f, x, out): out.forward = f(x), out.derivative = f'(x), at `precision` bits.

inline void evaluate(nonlin::step const&, double x, values& out) {
  mpfr_set_ui(out.forward.get(), x > 0 ? 1 : 0, detail::rn);
  mpfr_set_zero(out.derivative.get(), 1);
}

inline void evaluate(nonlin::identity const&, double x, values& out) {
  mpfr_set_d(out.forward.get(), x, detail::rn);
  mpfr_set_ui(out.derivative.get(), 1, detail::rn);
}

inline void evaluate(nonlin::relu const&, double x, values& out) {
  mpfr_set_d(out.forward.get(), x > 0 ? x : 0.0, detail::rn);
  mpfr_set_ui(out.derivative.get(), x > 0 ? 1 : 0, detail::rn);
}

inline void evaluate(nonlin::relu6 const&, double x, values& out) {
  detail::clamp(x, 0.0, 6.0, out);
}

inline void evaluate(nonlin::hardtanh const& f, double x, values& out) {
  detail::clamp(x, f.min, f.max, out);
}

inline void evaluate(nonlin::leaky_relu const& f, double x, values& out) {
  if (x > 0) {
    mpfr_set_d(out.forward.get(), x, detail::rn);
    mpfr_set_ui(out.derivative.get(), 1, detail::rn);
  } else {
    mpfr_set_d(out.derivative.get(), f.alpha, detail::rn);
    mpfr_mul_d(out.forward.get(), out.derivative.get(), x, detail::rn);
  }
}

inline void evaluate(nonlin::squared_relu const&, double x, values& out) {
  double const r = x > 0 ? x : 0.0;
  mpfr_set_d(out.derivative.get(), r, detail::rn);
  mpfr_sqr(out.forward.get(), out.derivative.get(), detail::rn);
  mpfr_mul_2ui(out.derivative.get(), out.derivative.get(), 1, detail::rn);
}

inline void evaluate(nonlin::elu const& f, double x, values& out) {
  auto& w = detail::ws();
  mpfr_set_ui(w.t[2], 1, detail::rn);
  mpfr_set_d(w.t[3], f.alpha, detail::rn);
  detail::exponential_linear(x, w.t[2], w.t[3], 1.0, out);
}

inline void evaluate(nonlin::selu const&, double x, values& out) {
  auto& w = detail::ws();
  detail::exponential_linear(x, w.selu_lambda, w.selu_alpha, 1.0, out);
}

inline void evaluate(nonlin::celu const& f, double x, values& out) {
  auto& w = detail::ws();
  mpfr_set_ui(w.t[2], 1, detail::rn);
  mpfr_set_d(w.t[3], f.alpha, detail::rn);
  detail::exponential_linear(x, w.t[2], w.t[3], f.alpha, out);
}

// sigma(x); sigma(x) sigma(-x).
inline void evaluate(nonlin::sigmoid const&, double x, values& out) {
  auto& w = detail::ws();
  mpfr_set_d(w.t[0], x, detail::rn);
  detail::sigmoid_pair(w.t[0], out.forward.get(), w.t[1]);
  mpfr_mul(out.derivative.get(), out.forward.get(), w.t[1], detail::rn);
}

// tanh x = sign(x) m / (m + 2), m = expm1(2|x|); sech^2 x = 4e / (1 + e)^2, e = e^(-2|x|)
// (no 1 - tanh^2 cancellation; one exp, no overflow).
inline void evaluate(nonlin::tanh const&, double x, values& out) {
  auto& w = detail::ws();
  mpfr_set_d(w.t[0], std::fabs(x), detail::rn);
  mpfr_mul_2ui(w.t[0], w.t[0], 1, detail::rn);
  mpfr_neg(w.t[0], w.t[0], detail::rn);
  mpfr_exp(w.t[1], w.t[0], detail::rn);        // e
  mpfr_add_ui(w.t[2], w.t[1], 1, detail::rn);  // 1 + e
  mpfr_ui_sub(w.t[3], 1, w.t[1], detail::rn);  // 1 - e (tanh|x| = (1 - e)/(1 + e))
  if (mpfr_cmp_d(w.t[1], 0.5) > 0) {           // |x| small: 1 - e = -expm1(-2|x|)
    mpfr_expm1(w.t[3], w.t[0], detail::rn);
    mpfr_neg(w.t[3], w.t[3], detail::rn);
  }
  mpfr_div(out.forward.get(), w.t[3], w.t[2], detail::rn);
  if (x < 0) {
    mpfr_neg(out.forward.get(), out.forward.get(), detail::rn);
  }
  mpfr_sqr(w.t[2], w.t[2], detail::rn);
  mpfr_mul_2ui(w.t[1], w.t[1], 2, detail::rn);
  mpfr_div(out.derivative.get(), w.t[1], w.t[2], detail::rn);
}

// -softplus(-x); sigma(-x).
inline void evaluate(nonlin::log_sigmoid const&, double x, values& out) {
  auto& w = detail::ws();
  mpfr_set_d(w.t[0], -x, detail::rn);
  detail::softplus(w.t[0], out.forward.get());
  mpfr_neg(out.forward.get(), out.forward.get(), detail::rn);
  detail::sigmoid_pair(w.t[0], out.derivative.get(), w.t[1]);
}

// x where beta x > threshold, else softplus(beta x) / beta; derivative 1 or sigma(beta x).
inline void evaluate(nonlin::softplus const& f, double x, values& out) {
  auto& w = detail::ws();
  mpfr_set_d(w.t[0], x, detail::rn);
  mpfr_mul_d(w.t[0], w.t[0], f.beta, detail::rn);  // exact: 106 bits
  if (mpfr_cmp_d(w.t[0], f.threshold) > 0) {
    mpfr_set_d(out.forward.get(), x, detail::rn);
    mpfr_set_ui(out.derivative.get(), 1, detail::rn);
    return;
  }
  detail::sigmoid_pair(w.t[0], out.derivative.get(), w.t[1]);
  detail::softplus(w.t[0], out.forward.get());
  mpfr_div_d(out.forward.get(), out.forward.get(), f.beta, detail::rn);
}

// 0 | x/6 + 1/2 | 1 on x <= -3 | (-3, 3) | x >= 3; derivative 1/6 inside, else 0.
inline void evaluate(nonlin::hardsigmoid const&, double x, values& out) {
  if (x <= -3) {
    mpfr_set_zero(out.forward.get(), 1);
    mpfr_set_zero(out.derivative.get(), 1);
  } else if (x >= 3) {
    mpfr_set_ui(out.forward.get(), 1, detail::rn);
    mpfr_set_zero(out.derivative.get(), 1);
  } else {
    mpfr_set_d(out.forward.get(), x, detail::rn);
    mpfr_add_ui(out.forward.get(), out.forward.get(), 3, detail::rn);
    mpfr_div_ui(out.forward.get(), out.forward.get(), 6, detail::rn);
    mpfr_set_ui(out.derivative.get(), 1, detail::rn);
    mpfr_div_ui(out.derivative.get(), out.derivative.get(), 6, detail::rn);
  }
}

// 0 | x (x + 3) / 6 | x; derivative 0 | (2x + 3) / 6 | 1.
inline void evaluate(nonlin::hardswish const&, double x, values& out) {
  auto& w = detail::ws();
  if (x <= -3) {
    mpfr_set_zero(out.forward.get(), 1);
    mpfr_set_zero(out.derivative.get(), 1);
  } else if (x >= 3) {
    mpfr_set_d(out.forward.get(), x, detail::rn);
    mpfr_set_ui(out.derivative.get(), 1, detail::rn);
  } else {
    mpfr_set_d(w.t[0], x, detail::rn);
    mpfr_add_ui(w.t[1], w.t[0], 3, detail::rn);
    mpfr_mul(out.forward.get(), w.t[0], w.t[1], detail::rn);
    mpfr_div_ui(out.forward.get(), out.forward.get(), 6, detail::rn);
    mpfr_add(out.derivative.get(), w.t[1], w.t[0], detail::rn);
    mpfr_div_ui(out.derivative.get(), out.derivative.get(), 6, detail::rn);
  }
}

// x Phi(x); derivative Phi(x) + x phi(x). Phi(x) = Q(-x) for x < 0, 1 - Q(x) otherwise, with
// the tail Q(a) = erfc(a / sqrt 2) / 2 from detail::erfc.
inline void evaluate(nonlin::gelu_exact const&, double x, values& out) {
  auto& w = detail::ws();
  mpfr_set_d(w.t[0], x, detail::rn);
  mpfr_mul(w.t[4], w.t[0], w.inv_sqrt2, detail::rn);
  mpfr_abs(w.t[4], w.t[4], detail::rn);
  detail::erfc(w.t[4], w.t[5]);
  mpfr_div_2ui(w.t[5], w.t[5], 1, detail::rn);  // Q(|x|)
  if (x < 0) {
    mpfr_set(w.t[1], w.t[5], detail::rn);
  } else {
    mpfr_ui_sub(w.t[1], 1, w.t[5], detail::rn);
  }  // Phi(x)
  mpfr_mul(out.forward.get(), w.t[0], w.t[1], detail::rn);
  mpfr_sqr(w.t[2], w.t[0], detail::rn);
  mpfr_div_2ui(w.t[2], w.t[2], 1, detail::rn);
  mpfr_neg(w.t[2], w.t[2], detail::rn);
  mpfr_exp(w.t[2], w.t[2], detail::rn);
  mpfr_mul(w.t[2], w.t[2], w.inv_sqrt_2pi, detail::rn);  // phi(x)
  mpfr_mul(w.t[2], w.t[2], w.t[0], detail::rn);
  mpfr_add(out.derivative.get(), w.t[1], w.t[2], detail::rn);
}

// x sigma(2u), u = sqrt(2/pi) (x + 0.044715 x^3); v = 2u, x v' = 2 sqrt(2/pi) x (1 + 3 k x^2).
inline void evaluate(nonlin::gelu_tanh const&, double x, values& out) {
  auto& w = detail::ws();
  mpfr_set_d(w.t[0], x, detail::rn);
  mpfr_sqr(w.t[3], w.t[0], detail::rn);
  mpfr_mul(w.t[3], w.t[3], w.gelu_kappa, detail::rn);  // k x^2
  mpfr_add_ui(w.t[1], w.t[3], 1, detail::rn);
  mpfr_mul(w.t[1], w.t[1], w.t[0], detail::rn);
  mpfr_mul(w.t[1], w.t[1], w.sqrt_2_over_pi, detail::rn);
  mpfr_mul_2ui(w.t[1], w.t[1], 1, detail::rn);  // v
  mpfr_mul_ui(w.t[2], w.t[3], 3, detail::rn);
  mpfr_add_ui(w.t[2], w.t[2], 1, detail::rn);
  mpfr_mul(w.t[2], w.t[2], w.t[0], detail::rn);
  mpfr_mul(w.t[2], w.t[2], w.sqrt_2_over_pi, detail::rn);
  mpfr_mul_2ui(w.t[2], w.t[2], 1, detail::rn);  // x v'
  detail::x_sigmoid(w.t[0], w.t[1], w.t[2], out);
}

// x sigma(k x), k = 1.702 the real number (unless the functor's k was changed from its default).
inline void evaluate(nonlin::gelu_quick const& f, double x, values& out) {
  auto& w = detail::ws();
  mpfr_set_d(w.t[0], x, detail::rn);
  if (f.k == nonlin::math::gelu_quick_k) {
    mpfr_mul(w.t[1], w.t[0], w.gelu_quick_k, detail::rn);
  } else {
    mpfr_mul_d(w.t[1], w.t[0], f.k, detail::rn);
  }
  detail::x_sigmoid(w.t[0], w.t[1], w.t[1], out);
}

// x sigma(beta x), beta the double it is.
inline void evaluate(nonlin::swish const& f, double x, values& out) {
  auto& w = detail::ws();
  mpfr_set_d(w.t[0], x, detail::rn);
  mpfr_mul_d(w.t[1], w.t[0], f.beta, detail::rn);
  detail::x_sigmoid(w.t[0], w.t[1], w.t[1], out);
}

inline void evaluate(nonlin::silu const&, double x, values& out) {
  auto& w = detail::ws();
  mpfr_set_d(w.t[0], x, detail::rn);
  detail::x_sigmoid(w.t[0], w.t[0], w.t[0], out);
}

// x tanh(sp), sp = softplus(x); derivative tanh(sp) + x sech^2(sp) sigma(x). With
// w = (1 + e^x)^2: tanh(sp) = (w - 1)/(w + 1), sech^2(sp) = 4w/(w + 1)^2, written in e = e^-|x|:
//   x >= 0: tanh(sp) = (1 + 2e)/(1 + 2e + 2e^2),  sech^2(sp) = 4 e^2 (1 + e)^2 / D^2
//   x <  0: tanh(sp) = e (e + 2)/(e^2 + 2e + 2),  sech^2(sp) = 4 (1 + e)^2 / D^2
// (D the denominator beside it): one exp, no cancellation, no overflow.
inline void evaluate(nonlin::mish const&, double x, values& out) {
  auto& w = detail::ws();
  constexpr auto rn = detail::rn;
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

template <class F>
values evaluate(F const& f, double x) {
  values out;
  evaluate(f, x, out);
  return out;
}

// ---------------------------------------------------------------------------------------------
// derivative_given_output(f, y, out): the derivative as the exact function g of the output that
// nonlin's derivative_from_output implements (g(f(x)) = f'(x)), evaluated at a given y. With
// y = the rounded f(x), |g(y) - f'(x)| is the error every from-output derivative inherits from
// the rounding of y, whatever its own accuracy. Only for functors with derivative_from_output.

inline void derivative_given_output(nonlin::step const&, double, real& out) {
  mpfr_set_zero(out.get(), 1);
}
inline void derivative_given_output(nonlin::identity const&, double, real& out) {
  mpfr_set_ui(out.get(), 1, detail::rn);
}
inline void derivative_given_output(nonlin::relu const&, double y, real& out) {
  mpfr_set_ui(out.get(), y > 0 ? 1 : 0, detail::rn);
}
inline void derivative_given_output(nonlin::hardtanh const& f, double y, real& out) {
  mpfr_set_ui(out.get(), (y > f.min && y < f.max) ? 1 : 0, detail::rn);
}
inline void derivative_given_output(nonlin::relu6 const&, double y, real& out) {
  mpfr_set_ui(out.get(), (y > 0 && y < 6) ? 1 : 0, detail::rn);
}
inline void derivative_given_output(nonlin::leaky_relu const& f, double y, real& out) {
  if (y > 0) {
    mpfr_set_ui(out.get(), 1, detail::rn);
  } else {
    mpfr_set_d(out.get(), f.alpha, detail::rn);
  }
}
// y + alpha for y <= 0.
inline void derivative_given_output(nonlin::elu const& f, double y, real& out) {
  mpfr_set_d(out.get(), y, detail::rn);
  if (y > 0) {
    mpfr_set_ui(out.get(), 1, detail::rn);
  } else {
    mpfr_add_d(out.get(), out.get(), f.alpha, detail::rn);
  }
}
// lambda or y + lambda alpha.
inline void derivative_given_output(nonlin::selu const&, double y, real& out) {
  auto& w = detail::ws();
  if (y > 0) {
    mpfr_set(out.get(), w.selu_lambda, detail::rn);
  } else {
    mpfr_mul(out.get(), w.selu_lambda, w.selu_alpha, detail::rn);
    mpfr_add_d(out.get(), out.get(), y, detail::rn);
  }
}
// 1 + y / alpha for y <= 0.
inline void derivative_given_output(nonlin::celu const& f, double y, real& out) {
  if (y > 0) {
    mpfr_set_ui(out.get(), 1, detail::rn);
  } else {
    mpfr_set_d(out.get(), y, detail::rn);
    mpfr_div_d(out.get(), out.get(), f.alpha, detail::rn);
    mpfr_add_ui(out.get(), out.get(), 1, detail::rn);
  }
}
// y (1 - y).
inline void derivative_given_output(nonlin::sigmoid const&, double y, real& out) {
  auto& w = detail::ws();
  mpfr_set_d(w.t[0], y, detail::rn);
  mpfr_ui_sub(w.t[1], 1, w.t[0], detail::rn);
  mpfr_mul(out.get(), w.t[0], w.t[1], detail::rn);
}
// 1 - y^2.
inline void derivative_given_output(nonlin::tanh const&, double y, real& out) {
  auto& w = detail::ws();
  mpfr_set_d(w.t[0], y, detail::rn);
  mpfr_sqr(w.t[0], w.t[0], detail::rn);
  mpfr_ui_sub(out.get(), 1, w.t[0], detail::rn);
}
// -expm1(y).
inline void derivative_given_output(nonlin::log_sigmoid const&, double y, real& out) {
  mpfr_set_d(out.get(), y, detail::rn);
  mpfr_expm1(out.get(), out.get(), detail::rn);
  mpfr_neg(out.get(), out.get(), detail::rn);
}
// 1 where beta y > softplus(threshold) (the linear piece), else -expm1(-beta y).
inline void derivative_given_output(nonlin::softplus const& f, double y, real& out) {
  auto& w = detail::ws();
  mpfr_set_d(w.t[0], y, detail::rn);
  mpfr_mul_d(w.t[0], w.t[0], f.beta, detail::rn);
  mpfr_set_d(w.t[1], f.threshold, detail::rn);
  detail::softplus(w.t[1], w.t[1]);
  if (mpfr_cmp(w.t[0], w.t[1]) > 0) {
    mpfr_set_ui(out.get(), 1, detail::rn);
  } else {
    mpfr_neg(w.t[0], w.t[0], detail::rn);
    mpfr_expm1(out.get(), w.t[0], detail::rn);
    mpfr_neg(out.get(), out.get(), detail::rn);
  }
}
// 1/6 on 0 < y < 1, else 0.
inline void derivative_given_output(nonlin::hardsigmoid const&, double y, real& out) {
  mpfr_set_ui(out.get(), (y > 0 && y < 1) ? 1 : 0, detail::rn);
  mpfr_div_ui(out.get(), out.get(), 6, detail::rn);
}

// output_sensitivity(f, y) = |g'(y)|, in double: how much one unit of y moves g(y). A
// from-output derivative is judged in units of ulp(f'(x)) + |g'(y)| ulp(y) (accuracy_scan.hpp);
// 0 for the piecewise-constant g (a jump of g shows up in the inherited error instead).
template <class F>
double output_sensitivity(F const&, double) {
  return 0.0;  // step, identity, relu, relu6, hardtanh, leaky_relu, hardsigmoid
}
inline double output_sensitivity(nonlin::elu const&, double y) { return y > 0 ? 0.0 : 1.0; }
inline double output_sensitivity(nonlin::selu const&, double y) { return y > 0 ? 0.0 : 1.0; }
inline double output_sensitivity(nonlin::celu const& f, double y) {
  return y > 0 ? 0.0 : 1.0 / std::fabs(f.alpha);
}
inline double output_sensitivity(nonlin::sigmoid const&, double y) {
  return std::fabs(1.0 - 2.0 * y);
}
inline double output_sensitivity(nonlin::tanh const&, double y) { return std::fabs(2.0 * y); }
inline double output_sensitivity(nonlin::log_sigmoid const&, double y) { return std::exp(y); }
inline double output_sensitivity(nonlin::softplus const& f, double y) {
  double const z = y * f.beta;
  bool const linear =
      z > std::log1p(std::exp(-std::fabs(f.threshold))) + std::max(f.threshold, 0.0);
  return linear ? 0.0 : f.beta * std::exp(-z);
}

// The fast tier (nonlin/fast.hpp) computes the same mathematical functions as the default
// tier: it is measured against the same references.
inline nonlin::sigmoid exact_of(nonlin::fast::sigmoid const&) { return {}; }
inline nonlin::tanh exact_of(nonlin::fast::tanh const&) { return {}; }
inline nonlin::swish exact_of(nonlin::fast::swish const& f) { return {.beta = f.beta}; }
inline nonlin::silu exact_of(nonlin::fast::silu const&) { return {}; }
inline nonlin::gelu_quick exact_of(nonlin::fast::gelu_quick const&) { return {}; }
inline nonlin::gelu_tanh exact_of(nonlin::fast::gelu_tanh const&) { return {}; }

template <class F>
concept fast_tier = requires(F const& f) {
  reference::exact_of(f);
};

template <fast_tier F>
void evaluate(F const& f, double x, values& out) {
  evaluate(exact_of(f), x, out);
}
template <fast_tier F>
void derivative_given_output(F const& f, double y, real& out) {
  derivative_given_output(exact_of(f), y, out);
}
template <fast_tier F>
double output_sensitivity(F const& f, double y) {
  return output_sensitivity(exact_of(f), y);
}

// ---------------------------------------------------------------------------------------------
// ULP error.

// The exponent of one ulp of T at the (already rounded) value r: the power-of-two spacing of
// |r|'s binade, 2^-149 / 2^-1074 in the subnormal range and for r = 0.
template <class T>
int ulp_exponent(T r) {
  constexpr int digits = std::numeric_limits<T>::digits;                       // 24 / 53
  constexpr int min_exponent = std::numeric_limits<T>::min_exponent - digits;  // -149 / -1074
  if (r == T(0)) {
    return min_exponent;
  }
  int e = 0;
  (void)std::frexp(r, &e);  // |r| in [2^(e-1), 2^e)
  int const ulp = e - digits;
  return ulp < min_exponent ? min_exponent : ulp;
}

// |computed - ref| in ulps of T at ref rounded to nearest in T. NaN against NaN is 0; an
// infinity (computed, or ref rounded) must match exactly, else the error is +inf; a NaN on one
// side only is +inf. The sign of a zero is not looked at.
template <class T>
double ulp_error(T computed, real const& ref) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
  constexpr double infinity = std::numeric_limits<double>::infinity();
  bool const ref_nan = mpfr_nan_p(ref.get()) != 0;
  if (ref_nan || std::isnan(computed)) {
    return (ref_nan && std::isnan(computed)) ? 0.0 : infinity;
  }
  T const r = ref.rounded<T>();
  if (std::isinf(r) || std::isinf(computed)) {
    return r == computed ? 0.0 : infinity;
  }
  mpfr_ptr d = detail::ws().t[0];
  mpfr_set_d(d, static_cast<double>(computed), detail::rn);
  mpfr_sub(d, d, ref.get(), detail::rn);
  mpfr_abs(d, d, detail::rn);
  mpfr_mul_2si(d, d, -ulp_exponent(r), detail::rn);
  return mpfr_get_d(d, detail::rn);
}

// |value - ref| in ulps of T at ref rounded to T: how far apart two exact numbers are, measured
// like ulp_error (used for the error a from-output derivative inherits from its input y).
template <class T>
double ulp_error(real const& value, real const& ref) {
  T const r = ref.rounded<T>();
  if (mpfr_nan_p(value.get()) || mpfr_nan_p(ref.get()) || std::isinf(r)) {
    return std::numeric_limits<double>::infinity();
  }
  mpfr_ptr d = detail::ws().t[0];
  mpfr_sub(d, value.get(), ref.get(), detail::rn);
  mpfr_abs(d, d, detail::rn);
  mpfr_mul_2si(d, d, -ulp_exponent(r), detail::rn);
  return mpfr_get_d(d, detail::rn);
}

// ---------------------------------------------------------------------------------------------
// Screening estimates. MPFR takes microseconds per value (erfc up to tens of them), too slow to
// look at 10^5..10^8 float inputs. The fast:: functions compute the same definitions in a wider
// type W (double or long double, with the C library's exp/expm1/log1p/erfc), which is within a
// few 2^-50 relative of the truth for a float input: 2^-20 float ulp and less, except where the
// result cancels (the derivatives' zero crossings), where the estimate is still good relative to
// the error it measures. The measurements use them only to decide which points to re-evaluate
// with MPFR: a point is verified when its estimated error could reach the running maximum, and
// every figure reported is an MPFR one. accuracy_test checks the estimates against MPFR.
// For float inputs only (x, y exact in W; no double-word tricks for double inputs).
namespace fast {

template <class W>
struct values {
  W forward;
  W derivative;
};

// e with |v| in [2^(e-1), 2^e) for finite nonzero v (frexp's exponent; bit reads for double).
template <class W>
inline int binade(W v) {
  if constexpr (std::is_same_v<W, double>) {
    auto const bits = std::bit_cast<std::uint64_t>(v);
    auto const field = static_cast<int>((bits >> 52) & 0x7ff);
    if (field != 0) {
      return field - 1022;
    }
  }
  int e = 0;
  (void)std::frexp(v, &e);
  return e;
}
// v * 2^k, k in [-1022, 1023] for double.
template <class W>
inline W times_pow2(W v, int k) {
  if constexpr (std::is_same_v<W, double>) {
    if (k >= -1022 && k <= 1023) {
      return v * std::bit_cast<double>(static_cast<std::uint64_t>(k + 1023) << 52);
    }
  }
  return std::ldexp(v, k);
}

template <class W>
struct constants {
  static constexpr W sqrt_2_over_pi = W(0.797884560802865355879892119868763737L);
  static constexpr W inv_sqrt2 = W(0.707106781186547524400844362104849039L);
  static constexpr W inv_sqrt_2pi = W(0.398942280401432677939946059934381868L);
  static constexpr W gelu_kappa = W(0.044715L);
  static constexpr W gelu_quick_k = W(1.702L);
  static constexpr W selu_alpha = W(1.67326324235437728481704299167171L);
  static constexpr W selu_lambda = W(1.05070098735548049341933498529460L);
};

// sigma(z) and sigma(-z).
template <class W>
inline void sigmoid_pair(W z, W& s_pos, W& s_neg) {
  W const e = std::exp(-std::fabs(z));
  W const d = W(1) + e;
  s_pos = (z >= 0 ? W(1) : e) / d;
  s_neg = (z >= 0 ? e : W(1)) / d;
}
template <class W>
inline W softplus(W z) {
  return (z > 0 ? z : W(0)) + std::log1p(std::exp(-std::fabs(z)));
}
template <class W>
inline values<W> x_sigmoid(W x, W z, W dz) {
  W sp = 0;
  W sn = 0;
  sigmoid_pair(z, sp, sn);
  return {x * sp, sp * (W(1) + dz * sn)};
}
template <class W>
inline values<W> clamp(W x, W lo, W hi) {
  if (x <= lo) return {lo, W(0)};
  if (x >= hi) return {hi, W(0)};
  return {x, W(1)};
}
template <class W>
inline values<W> exponential_linear(W x, W scale, W alpha, W width) {
  if (x > 0) return {scale * x, scale};
  W const z = x / width;
  return {scale * alpha * std::expm1(z), scale * alpha / width * std::exp(z)};
}

template <class W>
values<W> estimate(nonlin::step const&, W x) {
  return {W(x > 0 ? 1 : 0), W(0)};
}
template <class W>
values<W> estimate(nonlin::identity const&, W x) {
  return {x, W(1)};
}
template <class W>
values<W> estimate(nonlin::relu const&, W x) {
  return x > 0 ? values<W>{x, W(1)} : values<W>{W(0), W(0)};
}
template <class W>
values<W> estimate(nonlin::relu6 const&, W x) {
  return clamp(x, W(0), W(6));
}
template <class W>
values<W> estimate(nonlin::hardtanh const& f, W x) {
  return clamp(x, W(f.min), W(f.max));
}
template <class W>
values<W> estimate(nonlin::leaky_relu const& f, W x) {
  return x > 0 ? values<W>{x, W(1)} : values<W>{W(f.alpha) * x, W(f.alpha)};
}
template <class W>
values<W> estimate(nonlin::squared_relu const&, W x) {
  return x > 0 ? values<W>{x * x, x + x} : values<W>{W(0), W(0)};
}
template <class W>
values<W> estimate(nonlin::elu const& f, W x) {
  return exponential_linear(x, W(1), W(f.alpha), W(1));
}
template <class W>
values<W> estimate(nonlin::selu const&, W x) {
  return exponential_linear(x, constants<W>::selu_lambda, constants<W>::selu_alpha, W(1));
}
template <class W>
values<W> estimate(nonlin::celu const& f, W x) {
  return exponential_linear(x, W(1), W(f.alpha), W(f.alpha));
}
template <class W>
values<W> estimate(nonlin::sigmoid const&, W x) {
  W sp = 0;
  W sn = 0;
  sigmoid_pair(x, sp, sn);
  return {sp, sp * sn};
}
template <class W>
values<W> estimate(nonlin::tanh const&, W x) {
  W const e = std::exp(-2 * std::fabs(x));
  W const d = W(1) + e;
  return {std::tanh(x), 4 * e / (d * d)};
}
template <class W>
values<W> estimate(nonlin::log_sigmoid const&, W x) {
  W sp = 0;
  W sn = 0;
  sigmoid_pair(-x, sp, sn);
  return {-softplus(-x), sp};
}
template <class W>
values<W> estimate(nonlin::softplus const& f, W x) {
  W const z = x * W(f.beta);
  if (z > W(f.threshold)) return {x, W(1)};
  W sp = 0;
  W sn = 0;
  sigmoid_pair(z, sp, sn);
  return {softplus(z) / W(f.beta), sp};
}
template <class W>
values<W> estimate(nonlin::hardsigmoid const&, W x) {
  if (x <= -3) return {W(0), W(0)};
  if (x >= 3) return {W(1), W(0)};
  return {(x + 3) / 6, W(1) / 6};
}
template <class W>
values<W> estimate(nonlin::hardswish const&, W x) {
  if (x <= -3) return {W(0), W(0)};
  if (x >= 3) return {x, W(1)};
  return {x * (x + 3) / 6, (2 * x + 3) / 6};
}
template <class W>
values<W> estimate(nonlin::gelu_exact const&, W x) {
  W const q = std::erfc(std::fabs(x) * constants<W>::inv_sqrt2) / 2;  // Phi(-|x|)
  W const cdf = x < 0 ? q : W(1) - q;
  W const pdf = constants<W>::inv_sqrt_2pi * std::exp(-x * x / 2);
  return {x * cdf, cdf + x * pdf};
}
template <class W>
values<W> estimate(nonlin::gelu_tanh const&, W x) {
  W const kx2 = constants<W>::gelu_kappa * x * x;
  W const c = 2 * constants<W>::sqrt_2_over_pi;
  return x_sigmoid(x, c * x * (1 + kx2), c * x * (1 + 3 * kx2));
}
template <class W>
values<W> estimate(nonlin::gelu_quick const& f, W x) {
  W const k = f.k == nonlin::math::gelu_quick_k ? constants<W>::gelu_quick_k : W(f.k);
  return x_sigmoid(x, k * x, k * x);
}
template <class W>
values<W> estimate(nonlin::swish const& f, W x) {
  return x_sigmoid(x, W(f.beta) * x, W(f.beta) * x);
}
template <class W>
values<W> estimate(nonlin::silu const&, W x) {
  return x_sigmoid(x, x, x);
}
template <class W>
values<W> estimate(nonlin::mish const&, W x) {
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

// The derivative as the function of the output (see reference::derivative_given_output).
template <class W>
W given_output(nonlin::step const&, W) {
  return 0;
}
template <class W>
W given_output(nonlin::identity const&, W) {
  return 1;
}
template <class W>
W given_output(nonlin::relu const&, W y) {
  return y > 0 ? 1 : 0;
}
template <class W>
W given_output(nonlin::hardtanh const& f, W y) {
  return (y > W(f.min) && y < W(f.max)) ? 1 : 0;
}
template <class W>
W given_output(nonlin::relu6 const&, W y) {
  return (y > 0 && y < 6) ? 1 : 0;
}
template <class W>
W given_output(nonlin::leaky_relu const& f, W y) {
  return y > 0 ? W(1) : W(f.alpha);
}
template <class W>
W given_output(nonlin::elu const& f, W y) {
  return y > 0 ? W(1) : y + W(f.alpha);
}
template <class W>
W given_output(nonlin::selu const&, W y) {
  return y > 0 ? constants<W>::selu_lambda
               : y + constants<W>::selu_lambda * constants<W>::selu_alpha;
}
template <class W>
W given_output(nonlin::celu const& f, W y) {
  return y > 0 ? W(1) : 1 + y / W(f.alpha);
}
template <class W>
W given_output(nonlin::sigmoid const&, W y) {
  return y * (1 - y);
}
template <class W>
W given_output(nonlin::tanh const&, W y) {
  return (1 - y) * (1 + y);
}
template <class W>
W given_output(nonlin::log_sigmoid const&, W y) {
  return -std::expm1(y);
}
template <class W>
W given_output(nonlin::softplus const& f, W y) {
  W const z = y * W(f.beta);
  return z > softplus(W(f.threshold)) ? W(1) : -std::expm1(-z);
}
template <class W>
W given_output(nonlin::hardsigmoid const&, W y) {
  return (y > 0 && y < 1) ? W(1) / 6 : W(0);
}

template <class W, reference::fast_tier F>
values<W> estimate(F const& f, W x) {
  return estimate<W>(exact_of(f), x);
}
template <class W, reference::fast_tier F>
W given_output(F const& f, W y) {
  return given_output<W>(exact_of(f), y);
}

// The exponent of the ulp of T in the binade of the estimate ref (see ulp_error below).
template <class T, class W>
int ulp_exponent(W ref) {
  constexpr int digits = std::numeric_limits<T>::digits;
  constexpr int min_exponent = std::numeric_limits<T>::min_exponent - digits;
  int const e = (ref != 0 && std::isfinite(ref)) ? binade(ref) : min_exponent + digits;
  return std::max(e - digits, min_exponent);
}

// The ulp error of computed against the estimate ref, as ulp_error does it, except that the ulp
// is the spacing of the binade of ref itself (never larger than at ref rounded): near a power of
// two the estimate errs high, never low.
template <class T, class W>
double ulp_error(T computed, W ref) {
  constexpr double infinity = std::numeric_limits<double>::infinity();
  if (std::isnan(ref) || std::isnan(computed)) {
    return (std::isnan(ref) && std::isnan(computed)) ? 0.0 : infinity;
  }
  T const r = static_cast<T>(ref);
  if (std::isinf(r) || std::isinf(computed)) {
    return r == computed ? 0.0 : infinity;
  }
  constexpr int digits = std::numeric_limits<T>::digits;
  constexpr int min_exponent = std::numeric_limits<T>::min_exponent - digits;
  int const e = ref != 0 ? binade(ref) : min_exponent + digits;
  int const ulp = std::max(e - digits, min_exponent);
  return static_cast<double>(times_pow2(std::fabs(static_cast<W>(computed) - ref), -ulp));
}

// |value - ref| for two estimates, in the ulps of T that ulp_error would use at ref.
template <class T, class W>
double ulp_distance(W value, W ref) {
  if (std::isnan(value) || std::isnan(ref) || std::isinf(static_cast<T>(ref))) {
    return std::numeric_limits<double>::infinity();
  }
  constexpr int digits = std::numeric_limits<T>::digits;
  constexpr int min_exponent = std::numeric_limits<T>::min_exponent - digits;
  int const e = ref != 0 ? binade(ref) : min_exponent + digits;
  int const ulp = std::max(e - digits, min_exponent);
  return static_cast<double>(times_pow2(std::fabs(value - ref), -ulp));
}

}  // namespace fast

}  // namespace nonlin::test::reference
