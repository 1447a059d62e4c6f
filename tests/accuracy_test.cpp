// SPDX-License-Identifier: MIT
// Max-ULP accuracy of every functor's forward value, derivative and derivative_from_output, in
// float and double, against an MPFR reference (support/reference.hpp, support/accuracy_scan.hpp).
//
// Inputs, through the scalar calls (scalar == SIMD is tested in kernels_test):
//   float:  the grid k/512 on [-20, 20]; 1024 consecutive floats on each side of 0, the kinks
//           and the derivatives' zero crossings; 200000 random bit patterns of finite floats.
//   double: 50000 points over [-40, 40] with full mantissas; 64 consecutive doubles on each
//           side of the same places; 50000 random bit patterns of finite doubles.
// Requirement: forward and derivative within 2 ulp (the rows of above_two: their own bound, at
// most 4). derivative_from_output(f(x)) is measured
// against f'(x) too, but it inherits the rounding of y = f(x) (up to 100% in the tails), so
// its bound is on the excess over that: max(0, raw - inherited) <= 4 units of
// ulp(f'(x)) + |g'(y)| ulp(y) (support/accuracy_scan.hpp); the raw figure is printed beside it.
// known_over_bound lists the rows allowed above their bound inside a stated x window, with the
// measured figure and the reason; every row, listed or not, must stay within it outside.
// Every measured maximum is printed (and recorded with RecordProperty), with its input.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <mutex>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include <nonlin/nonlin.hpp>

#include "support/accuracy_scan.hpp"
#include "support/reference.hpp"

namespace nonlin::test {
namespace {

using accuracy::member;
using accuracy::window;

// forward, derivative: the goal, 2 ulp, for every row not listed in above_two below. Without an
// FMA unit (x86-64-v2 and older) nonlin's polynomials and error terms round twice per step:
// there every row is held to 5 (4.6 measured, gelu_tanh' in double).
constexpr double ulp_bound = NONLIN_HAS_FMA ? 2.0 : 5.0;

// The rows that miss the 2-ulp goal (README, Accuracy), each with its own bound: the measured
// maximum (exhaustive float run, 10^7 doubles) rounded up, and why it is above 2.
struct above_two_entry {
  std::string_view functor;
  member which;
  std::string_view type;  // "f32", "f64" or "" for both
  double bound;
  std::string_view why;
};
std::vector<above_two_entry> const above_two = {
    {"gelu_exact", member::forward, "", 3.0, "x Phi(x) from the Mills-ratio tail and exp"},
    {"gelu_exact", member::derivative, "", 4.0, "Phi(x) + x phi(x): several rounded pieces"},
    {"mish", member::forward, "", 3.0, "x - x q near 0, q = 2e^2 / P up to 2/5"},
    {"mish", member::derivative, "", 4.0, "a quotient of rounded pieces"},
};

double default_tier_bound(std::string_view functor, member which, std::string_view type) {
  if constexpr (!NONLIN_HAS_FMA) {
    return ulp_bound;
  }
  for (auto const& e : above_two) {
    if (e.functor == functor && e.which == which && (e.type.empty() || e.type == type)) {
      return e.bound;
    }
  }
  return ulp_bound;
}
constexpr double from_output_bound = 4.0;  // excess of from_output, see accuracy_scan.hpp
// The fast tier (nonlin/fast.hpp): its own, looser bound, and the windows below where it does
// not hold (what the fast tier gives up, README "Fast tier").
constexpr double fast_ulp_bound = NONLIN_HAS_FMA ? 5.0 : 6.0;

// Rows with a derivative zero crossing (silu/swish/gelu_quick, gelu_exact, gelu_tanh, mish)
// that may exceed the bound inside `where`, with the figure measured there and why. The rest of
// each row is still held to the bound, and the inside maximum is printed. Figures from this
// file's inputs (g++ 12, -O3 -march=native, Zen 4); an entry whose row is back within the bound
// is printed as STALE.
struct known_over_bound_entry {
  std::string_view functor;
  member which;
  std::string_view type;  // "f32" or "f64"
  window where;
  std::string_view measured;
  std::string_view why;
};

// With symmetric +-0.5 root windows this held 9 rows, up to 7.8 ulp in mish' and gelu_tanh'
// just outside the windows; the asymmetric windows (-1, +1/2) left mish' f32 at 4.56 near
// x = -0.179 (accumulated roundings, not a cancellation), which the exact-square division
// brought to 2.8. No row needs an exception now.
// The fast tier's entries: its derivatives of x sigma(z) near their zeros (no fitted root
// neighbourhood: the relative error is unbounded at the zero itself), and the GELUs' left
// tails, where the argument z rounded once costs about |z| / 2 ulp in e^z.
std::vector<known_over_bound_entry> const known_over_bound = {
    {"fast::silu",
     member::derivative,
     "f32",
     {-2.0, -1.0},
     "1.5e5 ulp at the zero -1.2785",
     "root"},
    {"fast::silu", member::derivative, "f64", {-2.0, -1.0}, "49 ulp near -1.277", "root"},
    {"fast::gelu_quick", member::forward, "f32", {-1e300, -1.25}, "81 ulp at -52", "argument"},
    {"fast::gelu_quick", member::forward, "f64", {-1e300, -1.25}, "302 ulp at -348", "argument"},
    {"fast::gelu_quick", member::derivative, "f32", {-1e300, -0.55}, "root -0.7512, tail", "both"},
    {"fast::gelu_quick", member::derivative, "f64", {-1e300, -0.55}, "root -0.7512, tail", "both"},
    {"fast::gelu_tanh", member::forward, "f32", {-1e300, -1.25}, "196 ulp at -9.76", "argument"},
    {"fast::gelu_tanh", member::forward, "f64", {-1e300, -1.25}, "1216 ulp at -21.1", "argument"},
    {"fast::gelu_tanh", member::derivative, "f32", {-1e300, -0.55}, "root -0.7525, tail", "both"},
    {"fast::gelu_tanh", member::derivative, "f64", {-1e300, -0.55}, "root -0.7525, tail", "both"},
};

// ---- inputs -------------------------------------------------------------------------------

// x where f'(x) = 0, by bisection on the sign of the long double estimate of f'.
template <class F>
double derivative_root(F const& f, double lo, double hi) {
  auto d = [&](double x) {
    return reference::fast::estimate<long double>(f, static_cast<long double>(x)).derivative;
  };
  bool const lo_negative = d(lo) < 0;
  for (int i = 0; i < 200 && hi - lo > 0; ++i) {
    double const mid = lo + (hi - lo) / 2;
    if (mid <= lo || mid >= hi) {
      break;
    }
    ((d(mid) < 0) == lo_negative ? lo : hi) = mid;
  }
  return lo;
}

// 0, the kinks, PyTorch's softplus threshold, where double softplus' linear piece starts, and the
// derivatives' zero crossings.
std::vector<double> const& special_places() {
  static std::vector<double> const places = [] {
    std::vector<double> p = {0.0, -1.0, 1.0, -3.0, 3.0, 6.0, 20.0, -1.5, 37.5, 40.0};
    p.push_back(derivative_root(silu{}, -2.0, -1.0));
    p.push_back(derivative_root(gelu_quick{}, -1.0, -0.5));
    p.push_back(derivative_root(gelu_exact{}, -1.0, -0.5));
    p.push_back(derivative_root(gelu_tanh{}, -1.0, -0.5));
    p.push_back(derivative_root(mish{}, -1.5, -1.0));
    // The worst floats near those zeros found by a scan of every 3rd float on root +- 2 (g++ 12,
    // -march=native, Zen 4): silu', gelu_quick', gelu_exact', gelu_tanh', mish'.
    for (double worst : {-2.30975533, -1.3783319, -1.25642586, -1.28379536, -1.71324646}) {
      p.push_back(worst);
    }
    // The worst floats of tools/accuracy (every 16th bit pattern) with the asymmetric root
    // windows: gelu_tanh',
    // gelu_quick', mish'.
    for (double worst : {-3.74463701, -3.36664224, -0.178660065}) {
      p.push_back(worst);
    }
    // The worst of the exhaustive float run (and 10^6 doubles) with the +-0.005 window of the
    // x sigma(z) family: silu', gelu_quick', gelu_tanh' (float), the same (double).
    for (double worst : {-1.281, -0.7538, -0.7481, -1.276, -0.7524, -0.7484}) {
      p.push_back(worst);
    }
    return p;
  }();
  return places;
}

template <class T>
void add_neighbours(std::vector<T>& out, double place, int count) {
  T const c = static_cast<T>(place);
  T up = c;
  T down = c;
  out.push_back(c);
  for (int i = 0; i < count; ++i) {
    up = std::nextafter(up, std::numeric_limits<T>::infinity());
    down = std::nextafter(down, -std::numeric_limits<T>::infinity());
    out.push_back(up);
    out.push_back(down);
  }
}

std::vector<float> const& float_inputs() {
  static std::vector<float> const inputs = [] {
    std::vector<float> v;
    for (int k = -20 * 512; k <= 20 * 512; ++k) {
      v.push_back(static_cast<float>(k) / 512.0f);
    }
    for (double place : special_places()) {
      add_neighbours<float>(v, place, 1024);
    }
    accuracy::bit_source bits(0x5eed'f32);
    for (int i = 0; i < 200000; ++i) {
      v.push_back(bits.finite<float>());
    }
    return v;
  }();
  return inputs;
}

std::vector<double> const& double_inputs() {
  static std::vector<double> const inputs = [] {
    std::vector<double> v;
    constexpr int n = 50000;
    for (int k = 0; k < n; ++k) {
      v.push_back(-40.0 + (k + 0.3819660112501051) * (80.0 / n));
    }
    for (double place : special_places()) {
      add_neighbours<double>(v, place, 64);
    }
    accuracy::bit_source bits(0x5eed'f64);
    for (int i = 0; i < 50000; ++i) {
      v.push_back(bits.finite<double>());
    }
    return v;
  }();
  return inputs;
}

// ---- the table ----------------------------------------------------------------------------

struct table_line {
  std::string functor;
  std::string what;  // "forward f32" ...
  accuracy::maximum bounded;
  accuracy::maximum inside;
  std::string note;
};

std::vector<table_line>& table() {
  static std::vector<table_line> lines;
  return lines;
}

std::string format_x(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

std::string format_max(accuracy::maximum const& m) {
  if (m.value < 0) {
    return "-";
  }
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.3f at %s", m.value, format_x(m.at).c_str());
  return buf;
}

class print_table : public ::testing::Environment {
 public:
  void TearDown() override {
    std::printf("\n%-13s %-17s %-40s %s\n", "functor", "row", "max ulp (at x)", "note");
    for (table_line const& l : table()) {
      std::printf("%-13s %-17s %-40s %s\n", l.functor.c_str(), l.what.c_str(),
                  format_max(l.bounded).c_str(), l.note.c_str());
      if (l.inside.value >= 0) {
        std::printf("%-13s %-17s %-40s %s\n", "", "  inside window", format_max(l.inside).c_str(),
                    "known_over_bound");
      }
    }
    std::fflush(stdout);
  }
};
[[maybe_unused]] ::testing::Environment* const table_printer =
    ::testing::AddGlobalTestEnvironment(new print_table);

// ---- the check ----------------------------------------------------------------------------

known_over_bound_entry const* known(std::string_view functor, member which, std::string_view type) {
  for (auto const& e : known_over_bound) {
    if (e.functor == functor && e.which == which && e.type == type) {
      return &e;
    }
  }
  return nullptr;
}

template <class T, class F>
void check_type(std::string_view name, F const& f) {
  std::string_view const type = std::is_same_v<T, float> ? "f32" : "f64";
  accuracy::options opts;
  opts.validate_every = 61;
  for (int m = 0; m < accuracy::member_count; ++m) {
    if (auto const* e = known(name, static_cast<member>(m), type)) {
      opts.windows[static_cast<std::size_t>(m)] = e->where;
    }
  }
  accuracy::scanner<F, T> scan(f, opts);
  if constexpr (std::is_same_v<T, float>) {
    for (float x : float_inputs()) {
      scan.add(x);
    }
  } else {
    for (double x : double_inputs()) {
      scan.add(x);
    }
  }
  accuracy::result const& r = scan.get();

  for (int m = 0; m < accuracy::member_count; ++m) {
    auto const which = static_cast<member>(m);
    if (which == member::from_output && !accuracy::has_from_output<F, T>) {
      continue;
    }
    accuracy::row const& row = r.rows[static_cast<std::size_t>(m)];
    std::string what = std::string(accuracy::member_name(which)) + " " + std::string(type);
    bool const fast_tier = name.starts_with("fast::");
    double const bound = which == member::from_output ? from_output_bound
                         : fast_tier                  ? fast_ulp_bound
                                                      : default_tier_bound(name, which, type);
    std::string note;
    if (which == member::from_output) {
      note = "excess; raw " + format_max(r.raw_from_output) + ", inherited there " +
             format_max(r.inherited_at_raw);
    }
    auto const* k = known(name, which, type);
    if (k != nullptr) {
      note += std::string(note.empty() ? "" : "; ") + "known_over_bound in [" +
              format_x(k->where.lo) + ", " + format_x(k->where.hi) +
              "]: " + std::string(k->measured);
      if (row.inside.value <= bound) {
        note += " -- STALE: within the bound now";
      }
    }
    table().push_back({std::string(name), what, row.outside, row.inside, note});

    std::string const key = std::string(accuracy::member_name(which)) + "_" + std::string(type);
    ::testing::Test::RecordProperty(key + "_max_ulp", format_max(row.outside));
    if (row.inside.value >= 0) {
      ::testing::Test::RecordProperty(key + "_known_over_bound", format_max(row.inside));
    }
    std::printf("%-13s %-17s %-40s %s\n", std::string(name).c_str(), what.c_str(),
                format_max(row.outside).c_str(), note.c_str());
    if (row.inside.value >= 0) {
      std::printf("%-13s %-17s %-40s\n", "", "  inside window", format_max(row.inside).c_str());
    }
    EXPECT_LE(row.outside.value, bound) << name << " " << what << ": max " << row.outside.value
                                        << " ulp at x = " << format_x(row.outside.at);
  }
  // The screening never fell short of MPFR by more than a quarter of its margin.
  constexpr double allowed_shortfall = accuracy::scanner<F, T>::margin_scale / 4;
  EXPECT_LE(r.estimate_shortfall.value, allowed_shortfall)
      << name << " " << type
      << ": screening estimate short at x = " << format_x(r.estimate_shortfall.at);
  std::printf("%-13s %-17s points %lld, MPFR evaluations %lld\n", std::string(name).c_str(),
              std::string(type).c_str(), static_cast<long long>(r.points),
              static_cast<long long>(r.mpfr_points));
}

template <class F>
void check(std::string_view name, F const& f) {
  check_type<float>(name, f);
  check_type<double>(name, f);
}

TEST(Accuracy, Step) { check("step", step{}); }
TEST(Accuracy, Identity) { check("identity", identity{}); }
TEST(Accuracy, Relu) { check("relu", relu{}); }
TEST(Accuracy, Relu6) { check("relu6", relu6{}); }
TEST(Accuracy, Hardtanh) { check("hardtanh", hardtanh{}); }
TEST(Accuracy, LeakyRelu) { check("leaky_relu", leaky_relu{}); }
TEST(Accuracy, Elu) { check("elu", elu{}); }
TEST(Accuracy, Selu) { check("selu", selu{}); }
TEST(Accuracy, Celu) { check("celu", celu{}); }
TEST(Accuracy, Sigmoid) { check("sigmoid", sigmoid{}); }
TEST(Accuracy, Tanh) { check("tanh", nonlin::tanh{}); }
TEST(Accuracy, LogSigmoid) { check("log_sigmoid", log_sigmoid{}); }
TEST(Accuracy, Hardsigmoid) { check("hardsigmoid", hardsigmoid{}); }
TEST(Accuracy, Hardswish) { check("hardswish", hardswish{}); }
TEST(Accuracy, Softplus) { check("softplus", softplus{}); }
TEST(Accuracy, GeluExact) { check("gelu_exact", gelu_exact{}); }
TEST(Accuracy, GeluTanh) { check("gelu_tanh", gelu_tanh{}); }
TEST(Accuracy, GeluQuick) { check("gelu_quick", gelu_quick{}); }
TEST(Accuracy, Silu) { check("silu", silu{}); }
TEST(Accuracy, Swish) { check("swish", swish{}); }
TEST(Accuracy, Mish) { check("mish", mish{}); }
TEST(Accuracy, SquaredRelu) { check("squared_relu", squared_relu{}); }

// ---- the reference itself -----------------------------------------------------------------

TEST(AccuracyReference, UlpErrorConventions) {
  using reference::real;
  using reference::ulp_error;
  float const one = 1.0f;
  EXPECT_EQ(ulp_error<float>(one, real(1.0)), 0.0);
  EXPECT_EQ(ulp_error<float>(std::nextafter(one, 2.0f), real(1.0)), 1.0);
  EXPECT_EQ(ulp_error<float>(std::nextafter(one, 0.0f), real(1.0)), 0.5);  // ulp at 1 is 2^-23
  EXPECT_EQ(ulp_error<double>(1.0 + 0x1p-52, real(1.0)), 1.0);
  EXPECT_EQ(ulp_error<float>(std::numeric_limits<float>::denorm_min(), real(0.0)), 1.0);
  EXPECT_EQ(ulp_error<double>(std::numeric_limits<double>::denorm_min(), real(0.0)), 1.0);
  EXPECT_EQ(ulp_error<float>(0.0f, real(0x1p-150 * 3)), 1.5);  // subnormal spacing 2^-149
  EXPECT_EQ(ulp_error<float>(-0.0f, real(0.0)), 0.0);
  float const nan = std::numeric_limits<float>::quiet_NaN();
  float const inf = std::numeric_limits<float>::infinity();
  real nan_ref;
  mpfr_set_nan(nan_ref.get());
  EXPECT_EQ(ulp_error<float>(nan, nan_ref), 0.0);
  EXPECT_EQ(ulp_error<float>(1.0f, nan_ref), inf);
  EXPECT_EQ(ulp_error<float>(nan, real(1.0)), inf);
  EXPECT_EQ(ulp_error<float>(inf, real(1e39)), 0.0);  // 1e39 rounds to +inf in float
  EXPECT_EQ(ulp_error<float>(std::numeric_limits<float>::max(), real(1e39)), inf);
  EXPECT_EQ(ulp_error<float>(inf, real(1.0)), inf);
  EXPECT_EQ(ulp_error<float>(-inf, real(-1e39)), 0.0);
}

// The rewritten formulas (one exp for tanh and mish, the continued fraction for erfc) against
// the straightforward MPFR ones.
TEST(AccuracyReference, FormulasMatchTheDirectMpfrOnes) {
  using reference::real;
  constexpr auto rn = MPFR_RNDN;
  real a;
  real b;
  real t;
  real u;
  auto rel = [&](mpfr_srcptr p, mpfr_srcptr q) {
    mpfr_sub(t.get(), p, q, rn);
    if (mpfr_zero_p(q)) {
      return std::fabs(mpfr_get_d(t.get(), rn));
    }
    mpfr_div(t.get(), t.get(), q, rn);
    return std::fabs(mpfr_get_d(t.get(), rn));
  };
  for (double s : {2.5, 3.0, 4.5, 7.0, 9.25, 14.0, 20.0, 27.0}) {
    mpfr_set_d(a.get(), s, rn);
    reference::detail::erfc(a.get(), b.get());
    mpfr_erfc(u.get(), a.get(), rn);
    EXPECT_LE(rel(b.get(), u.get()), 0x1p-150) << "erfc(" << s << ")";
  }
  for (double x : {-700.0, -30.0, -3.5, -1.19, -0.25, -1e-5, 0.0, 1e-7, 0.5, 2.0, 9.0, 40.0}) {
    // tanh, sech^2
    auto const th = reference::evaluate(nonlin::tanh{}, x);
    mpfr_set_d(a.get(), x, rn);
    mpfr_tanh(u.get(), a.get(), rn);
    EXPECT_LE(rel(th.forward.get(), u.get()), 0x1p-150) << "tanh(" << x << ")";
    mpfr_sech(u.get(), a.get(), rn);
    mpfr_sqr(u.get(), u.get(), rn);
    EXPECT_LE(rel(th.derivative.get(), u.get()), 0x1p-150) << "tanh'(" << x << ")";
    // mish = x tanh(log1p(e^x)), derivative tanh(sp) + x sech^2(sp) sigma(x)
    auto const mi = reference::evaluate(nonlin::mish{}, x);
    mpfr_exp(b.get(), a.get(), rn);
    mpfr_log1p(b.get(), b.get(), rn);  // sp
    real th_sp;
    mpfr_tanh(th_sp.get(), b.get(), rn);
    mpfr_mul(u.get(), th_sp.get(), a.get(), rn);
    EXPECT_LE(rel(mi.forward.get(), u.get()), 0x1p-140) << "mish(" << x << ")";
    mpfr_sech(b.get(), b.get(), rn);
    mpfr_sqr(b.get(), b.get(), rn);
    mpfr_mul(b.get(), b.get(), a.get(), rn);
    mpfr_neg(u.get(), a.get(), rn);
    mpfr_exp(u.get(), u.get(), rn);
    mpfr_add_ui(u.get(), u.get(), 1, rn);
    mpfr_div(b.get(), b.get(), u.get(), rn);  // x sech^2 sigma
    mpfr_add(u.get(), th_sp.get(), b.get(), rn);
    EXPECT_LE(rel(mi.derivative.get(), u.get()), 0x1p-120) << "mish'(" << x << ")";
    // gelu_exact: x erfc(-x/sqrt2)/2
    if (x > -40) {
      auto const ge = reference::evaluate(nonlin::gelu_exact{}, x);
      mpfr_sqrt_ui(b.get(), 2, rn);
      mpfr_div(b.get(), a.get(), b.get(), rn);
      mpfr_neg(b.get(), b.get(), rn);
      mpfr_erfc(b.get(), b.get(), rn);
      mpfr_div_2ui(b.get(), b.get(), 1, rn);
      mpfr_mul(u.get(), b.get(), a.get(), rn);
      EXPECT_LE(rel(ge.forward.get(), u.get()), 0x1p-140) << "gelu_exact(" << x << ")";
    }
  }
  // Fixed values: sigma'(0) = 1/4, Phi(0) + 0 = 1/2, tanh'(0) = 1, gelu_quick'(0) = 1/2.
  EXPECT_EQ(reference::evaluate(nonlin::sigmoid{}, 0.0).derivative.to_double(), 0.25);
  EXPECT_EQ(reference::evaluate(nonlin::gelu_exact{}, 0.0).derivative.to_double(), 0.5);
  EXPECT_EQ(reference::evaluate(nonlin::gelu_quick{}, 0.0).derivative.to_double(), 0.5);
  EXPECT_EQ(reference::evaluate(nonlin::tanh{}, 0.0).derivative.to_double(), 1.0);
  // Kinks: left piece, 0 on closed saturation boundaries.
  EXPECT_EQ(reference::evaluate(nonlin::relu{}, 0.0).derivative.to_double(), 0.0);
  EXPECT_EQ(reference::evaluate(nonlin::leaky_relu{}, 0.0).derivative.to_double(), 0.01);
  EXPECT_EQ(reference::evaluate(nonlin::elu{.alpha = 0.5}, 0.0).derivative.to_double(), 0.5);
  EXPECT_EQ(reference::evaluate(nonlin::celu{.alpha = 2.0}, 0.0).derivative.to_double(), 1.0);
  EXPECT_EQ(reference::evaluate(nonlin::relu6{}, 6.0).derivative.to_double(), 0.0);
  EXPECT_EQ(reference::evaluate(nonlin::hardtanh{}, -1.0).derivative.to_double(), 0.0);
  EXPECT_EQ(reference::evaluate(nonlin::hardsigmoid{}, 3.0).derivative.to_double(), 0.0);
  EXPECT_EQ(reference::evaluate(nonlin::hardswish{}, -3.0).derivative.to_double(), 0.0);
  EXPECT_EQ(reference::evaluate(nonlin::hardswish{}, 3.0).derivative.to_double(), 1.0);
  // softplus: no threshold by default (20.27 is still log1p(e^20.27), 1.6e-9 above x); PyTorch's
  // 20 when asked for.
  EXPECT_DOUBLE_EQ(reference::evaluate(nonlin::softplus{}, 20.27).forward.to_double(),
                   std::log1p(std::exp(20.27)));
  EXPECT_NE(reference::evaluate(nonlin::softplus{}, 20.27).forward.to_double(), 20.27);
  EXPECT_DOUBLE_EQ(reference::evaluate(nonlin::softplus{.threshold = 20}, 20.0).forward.to_double(),
                   std::log1p(std::exp(20.0)));
  EXPECT_EQ(reference::evaluate(nonlin::softplus{.threshold = 20}, 20.000001).forward.to_double(),
            20.000001);
}

TEST(AccuracyFastTier, Sigmoid) { check("fast::sigmoid", fast::sigmoid{}); }
TEST(AccuracyFastTier, Tanh) { check("fast::tanh", fast::tanh{}); }
TEST(AccuracyFastTier, Silu) { check("fast::silu", fast::silu{}); }
TEST(AccuracyFastTier, GeluQuick) { check("fast::gelu_quick", fast::gelu_quick{}); }
TEST(AccuracyFastTier, GeluTanh) { check("fast::gelu_tanh", fast::gelu_tanh{}); }

}  // namespace
}  // namespace nonlin::test
