// SPDX-License-Identifier: MIT
#pragma once
// The machinery of the high-precision references the catalog rows (catalog/*.hpp) are written
// in: an MPFR number with value semantics (`real`) at `precision` bits, per-thread scratch
// numbers and constants, the pieces several rows share (sigma, softplus, x sigma(z), clamp, the
// exponential-linear family, erfc), the ULP error of a float or double result against a
// reference, and the same pieces in a wide floating type for the screening estimates (fast::).
//
// Definitions are the mathematical ones of the functors' header comments, with every constant as
// the real number it names: sqrt(2/pi), 0.044715 and 1.702 exactly (decimal strings), selu's
// alpha and lambda to the 30 digits of math/constants.hpp, and the functors' double members
// (alpha, beta, threshold, min, max) as the doubles they are. Kinks follow nonlin's policy: the
// left piece's derivative at an inner kink, 0 on a closed saturation boundary (1 on hardswish's
// right one, where the piece is x).
//
// Values are kept as MPFR numbers (`real`): a long double cannot hold the exact reference of a
// double result, nor resolve a subnormal one. Every formula takes e^(-|z|) only, so MPFR never
// overflows; underflow (|x| beyond ~7e8) returns 0 or the limit, as the true values round
// there. Inputs must be finite (the measurements sample finite inputs only).
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
