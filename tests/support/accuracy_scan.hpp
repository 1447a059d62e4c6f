// SPDX-License-Identifier: MIT
#pragma once
// The max-ULP measurement shared by tests/accuracy_test.cpp and tools/accuracy.cpp: the functors
// of the catalog (catalog/catalog.hpp), and a scanner that takes inputs one at a time and keeps,
// per member (forward, derivative, derivative_from_output), the largest error seen and its input.
//
// Double inputs are measured against MPFR at every point. Float inputs are screened with the
// fast:: estimates of the catalog rows (within ~2^-20 ulp of the MPFR figure, checked by
// validate_every), and the `candidates` inputs with the largest estimated error of each row are
// re-evaluated with MPFR at the end: every reported figure is an MPFR one. (A running maximum
// instead would send every point of a steadily growing error, e.g. sigmoid near 0 or a
// from-output tail, to MPFR.) `validate_every = k` also evaluates every k-th point with MPFR
// and records how far the estimate fell short of it (estimate_shortfall).
//
// derivative_from_output(y) at y = f(x) rounded inherits |g(y) - f'(x)| from the rounding of y
// (g: the exact derivative as a function of the output), whatever its own accuracy; in the tails
// of sigmoid, tanh, elu, selu, softplus that is up to 100% (sigmoid at x = 20: y rounds to 1,
// so y(1 - y) = 0), and a constant in g rounded to T (selu's lambda alpha) costs as much as the
// rounding of y. Its rows report the raw error against f'(x), and as the bounded figure
//   excess = max(0, raw - inherited) / (1 + |g'(y)| ulp(y) / ulp(f'(x))),
// the error beyond the inherited one in units of one ulp of f' plus the effect of one ulp of y.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string_view>
#include <tuple>
#include <type_traits>

#include <nonlin/nonlin.hpp>

#include "catalog/catalog.hpp"

namespace nonlin::test::accuracy {

// The functors measured: every instance of every catalog row, named by its label (the default
// instance, the first, by the row's name; the others with their parameters: "elu(0.5)").
template <class F>
struct entry {
  std::string_view name;  // the instance's label
  std::string_view row;   // the row's name
  bool is_default;        // the row's first instance
  F f;
};

template <class Visitor>
void for_each_measured(Visitor&& visit) {
  catalog::for_each_row([&]<class Row>() {
    bool first = true;
    for (auto const& instance : Row::instances()) {
      visit(entry<typename Row::functor>{instance.label, Row::name, first, instance.f});
      first = false;
    }
  });
}

template <class F, class T>
inline constexpr bool has_from_output = output_differentiable<F, T>;

using catalog::member;
using catalog::member_count;
using catalog::member_name;

// The largest error taken so far and the input where it occurred (value -1: none yet).
struct maximum {
  double value = -1.0;
  double at = std::numeric_limits<double>::quiet_NaN();

  void take(double error, double x) {
    if (error > value) {
      value = error;
      at = x;
    }
  }
  void merge(maximum const& other) {
    if (other.value > value || (other.value == value && other.at < at)) {
      value = other.value;
      at = other.at;
    }
  }
};

// A closed x interval; the default one is empty.
struct window {
  double lo = 1.0;
  double hi = 0.0;
  bool contains(double x) const { return x >= lo && x <= hi; }
  bool empty() const { return lo > hi; }
};

struct options {
  // Per member: inputs here are kept apart (known_over_bound regions of accuracy_test).
  std::array<window, member_count> windows{};
  std::int64_t validate_every = 0;  // float only; 0: never
};

struct row {
  maximum outside;  // the bounded figure (the excess for from_output)
  maximum inside;   // inputs inside the member's window
  maximum all() const {
    maximum m = outside;
    m.merge(inside);
    return m;
  }
  void merge(row const& other) {
    outside.merge(other.outside);
    inside.merge(other.inside);
  }
};

struct result {
  std::array<row, member_count> rows{};
  maximum raw_from_output;     // from_output against f'(x), with no allowance
  maximum inherited_at_raw;    // (at the same x as raw_from_output's running maximum)
  maximum estimate_shortfall;  // max (exact - estimate) / (1 + exact) over validated points
  std::int64_t points = 0;
  std::int64_t mpfr_points = 0;
  void merge(result const& other) {
    for (int m = 0; m < member_count; ++m) {
      rows[static_cast<std::size_t>(m)].merge(other.rows[static_cast<std::size_t>(m)]);
    }
    if (other.raw_from_output.value > raw_from_output.value) {
      raw_from_output = other.raw_from_output;
      inherited_at_raw = other.inherited_at_raw;
    }
    estimate_shortfall.merge(other.estimate_shortfall);
    points += other.points;
    mpfr_points += other.mpfr_points;
  }
};

// Feed inputs of type T with add(x); read result() at the end. W: the screening type for float.
template <class F, class T, class W = long double>
class scanner {
 public:
  static constexpr bool from_output = has_from_output<F, T>;
  // Allowed shortfall of an estimate below MPFR, as a fraction of 1 + error (validate_every).
  static constexpr double margin_scale = 0x1p-10;
  // Candidates kept per maximum (by estimate) for the MPFR pass.
  static constexpr std::size_t candidates = 8;

  scanner(F const& f, options const& opts) : f_(f), opts_(opts) {}

  void add(T x) {
    T const y = f_(x);
    T dfo = T(0);
    if constexpr (from_output) {
      dfo = f_.derivative_from_output(y);
    }
    add_computed(x, y, f_.derivative(x), dfo);
  }

  // Another implementation's results at x (a peer's forward y and derivative d) measured
  // against the reference of F; the from-output member is not measured.
  void add_given(T x, T y, T d) {
    given_only_ = true;
    add_computed(x, y, d, T(0));
  }

  // Float results computed by the caller in bulk, with the caller's screening estimates of
  // f(x), f'(x) and g(y) (tools/accuracy.cpp --exhaustive: nonlin's double span kernels); the
  // candidates are verified with MPFR as always, so only the ranking depends on the estimates.
  void add_screened(T x, T y, T d, T dfo, W est_forward, W est_derivative, W est_given) {
    static_assert(std::is_same_v<T, float>);
    ++res_.points;
    screen(x, y, d, dfo, {est_forward, est_derivative}, est_given);
  }

 private:
  void add_computed(T x, T y, T d, T dfo) {
    ++res_.points;
    if constexpr (std::is_same_v<T, float>) {
      auto const est = reference::fast::estimate<W>(f_, static_cast<W>(x));
      W given = W(0);
      if constexpr (from_output) {
        if (!given_only_) {
          given = reference::fast::given_output<W>(f_, static_cast<W>(y));
        }
      }
      screen(x, y, d, dfo, est, given);
    } else {
      measure(sample{x, y, d, dfo});
    }
  }

  void screen(T x, T y, T d, T dfo, reference::fast::values<W> const& est, W given) {
    {
      double const e_fwd = reference::fast::ulp_error<T>(y, est.forward);
      double const e_der = reference::fast::ulp_error<T>(d, est.derivative);
      double const xd = static_cast<double>(x);
      sample const at{x, y, d, dfo};
      top(member::forward, xd).offer(e_fwd, at);
      top(member::derivative, xd).offer(e_der, at);
      double e_raw = 0.0;
      if constexpr (from_output) {
        if (!given_only_) {
          W const g = given;
          e_raw = reference::fast::ulp_error<T>(dfo, est.derivative);
          double const e_inh = reference::fast::ulp_distance<T>(g, est.derivative);
          int const e_d = reference::fast::ulp_exponent<T>(est.derivative);
          top(member::from_output, xd).offer(excess(e_raw, e_inh, y, e_d), at);
          raw_top_.offer(e_raw, at);
        }
      }
      if (opts_.validate_every > 0 && res_.points % opts_.validate_every == 0) {
        exact const measured = measure(at);
        shortfall(xd, e_fwd, measured.forward);
        shortfall(xd, e_der, measured.derivative);
        if (from_output && !given_only_) {
          shortfall(xd, e_raw, measured.raw);
        }
      }
    }
  }

 public:
  // The MPFR pass over the float candidates (idempotent); get() runs it.
  void finish() {
    for (auto& t : tops_) {
      for (std::size_t i = 0; i < t.size; ++i) {
        measure(t.at[i]);
      }
      t = {};
    }
    for (std::size_t i = 0; i < raw_top_.size; ++i) {
      measure(raw_top_.at[i]);
    }
    raw_top_ = {};
  }

  result const& get() {
    finish();
    return res_;
  }

 private:
  struct exact {
    double forward = 0;
    double derivative = 0;
    double raw = 0;
  };

  row& row_of(member m) { return res_.rows[static_cast<std::size_t>(m)]; }
  maximum& bucket(member m, double x) {
    bool const in = opts_.windows[static_cast<std::size_t>(m)].contains(x);
    return in ? row_of(m).inside : row_of(m).outside;
  }
  // The `candidates` largest estimates seen, with their inputs. The true maximum is among them
  // unless more than that many estimates lie within the screening error (~2^-20 ulp) of it, and
  // then they all share its value to that accuracy.
  // An input and the results measured there (forward, derivative, derivative from output).
  struct sample {
    T x;
    T y;
    T d;
    T dfo;
  };
  struct top_k {
    std::array<double, candidates> error{};
    std::array<sample, candidates> at{};
    std::size_t size = 0;
    std::size_t low = 0;  // once full: the smallest kept error, the one to replace
    void offer(double e, sample const& s) {
      if (size < candidates) {
        error[size] = e;
        at[size] = s;
        ++size;
      } else if (e > error[low]) {  // almost always false: one comparison per point
        error[low] = e;
        at[low] = s;
      } else {
        return;
      }
      if (size == candidates) {
        low = 0;
        for (std::size_t i = 1; i < candidates; ++i) {
          if (error[i] < error[low]) {
            low = i;
          }
        }
      }
    }
  };
  top_k& top(member m, double x) {
    bool const in = opts_.windows[static_cast<std::size_t>(m)].contains(x);
    return tops_[static_cast<std::size_t>(m) * 2 + (in ? 1 : 0)];
  }

  // max(0, raw - inherited) / (1 + |g'(y)| ulp(y) / ulp(f')), ulp(f') = 2^derivative_ulp.
  double excess(double raw, double inherited, T y, int derivative_ulp) const {
    if (std::isinf(raw) && std::isinf(inherited)) {
      return 0.0;
    }
    double const over = std::max(0.0, raw - inherited);
    double const unit = 1.0 + reference::output_sensitivity(f_, static_cast<double>(y)) *
                                  std::ldexp(1.0, reference::ulp_exponent<T>(y) - derivative_ulp);
    return over / unit;
  }
  void shortfall(double x, double estimate, double exact_error) {
    double const gap = (exact_error - estimate) / (1.0 + exact_error);
    if (std::isfinite(gap) || std::isinf(exact_error) != std::isinf(estimate)) {
      res_.estimate_shortfall.take(std::isfinite(gap) ? gap : 1.0, x);
    }
  }

  exact measure(sample const& s) {
    T const x = s.x;
    T const y = s.y;
    T const d = s.d;
    T const dfo = s.dfo;
    ++res_.mpfr_points;
    double const xd = static_cast<double>(x);
    reference::evaluate(f_, xd, ref_);
    exact out;
    out.forward = reference::ulp_error<T>(y, ref_.forward);
    out.derivative = reference::ulp_error<T>(d, ref_.derivative);
    bucket(member::forward, xd).take(out.forward, xd);
    bucket(member::derivative, xd).take(out.derivative, xd);
    if constexpr (from_output) {
      if (given_only_) {
        return out;
      }
      reference::derivative_given_output(f_, static_cast<double>(y), given_);
      out.raw = reference::ulp_error<T>(dfo, ref_.derivative);
      double const inherited = reference::ulp_error<T>(given_, ref_.derivative);
      int const e_d = reference::ulp_exponent<T>(ref_.derivative.rounded<T>());
      bucket(member::from_output, xd).take(excess(out.raw, inherited, y, e_d), xd);
      if (out.raw > res_.raw_from_output.value) {
        res_.raw_from_output = {out.raw, xd};
        res_.inherited_at_raw = {inherited, xd};
      }
    }
    return out;
  }

  F f_;
  bool given_only_ = false;
  options opts_;
  result res_;
  std::array<top_k, 2 * member_count> tops_{};
  top_k raw_top_{};
  reference::values ref_;
  reference::real given_;
};

// Uniform random bit patterns of finite T (splitmix64: the same numbers on every platform).
class bit_source {
 public:
  explicit bit_source(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  template <class T>
  T finite() {
    for (;;) {
      T x;
      if constexpr (std::is_same_v<T, float>) {
        auto const bits = static_cast<std::uint32_t>(next() >> 32);
        std::memcpy(&x, &bits, sizeof x);
      } else {
        std::uint64_t const bits = next();
        std::memcpy(&x, &bits, sizeof x);
      }
      if (std::isfinite(x)) {
        return x;
      }
    }
  }

 private:
  std::uint64_t state_;
};

}  // namespace nonlin::test::accuracy
