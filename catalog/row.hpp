// SPDX-License-Identifier: MIT
#pragma once
// What a catalog row says about one activation, and the defaults a row inherits. A row is a
// struct with static members only (catalog/*.hpp, one per functor):
//
//   functor                  the nonlin functor type
//   name, formula,           its name (as the bench, the tools and the README print it), f(x) and
//   parameters, at_kinks,    its parameters in the README's words, f' at the kinks, and whether
//   from_output, has_output_derivative   and how the derivative follows from the output
//   instances()              the functor objects the tests run: the default one first (the one
//                            the accuracy tool and the bench measure), then parameter variants
//   kinks(f), at_infinity(f) where f' or f'' jumps (a central difference must not straddle one)
//                            and f, f' at -inf and +inf
//   bounds                   the forward / derivative ULP bounds, with why where above 2
//   windows()                x windows where a row may exceed its bound (the fast tier),
//                            per instance or for all
//   textbook_forward<T>(x), textbook_backward<T>(x, dy)[, textbook_backward_from_output<T>(y,
//   dy)]                     the std:: formula frameworks write (the benchmark's "std" and
//                            "fastmath" baselines)
//   reference(f, x, out), estimate<W>(f, x), reference_given_output(f, y, out),
//   estimate_given_output<W>(f, y), output_sensitivity(f, y)
//                            the MPFR reference (catalog/reference.hpp), its screening estimate
//                            in a wide type, and the same for the derivative as a function of the
//                            output (for rows with a from-output derivative)
//
// catalog/catalog.hpp lists the rows and checks each against its functor.

#include <limits>
#include <string_view>
#include <vector>

#include "reference.hpp"

namespace nonlin::test::catalog {

// Which result of a functor a bound or a measurement is about.
enum class member : int { forward = 0, derivative = 1, from_output = 2 };
inline constexpr int member_count = 3;

inline char const* member_name(member m) {
  switch (m) {
    case member::forward:
      return "forward";
    case member::derivative:
      return "derivative";
    case member::from_output:
      return "from_output";
  }
  return "?";
}

// One functor object the tests run, with the label they print.
template <class F>
struct instance {
  std::string_view label;
  F f;
};

// f(-inf), f(+inf), f'(-inf), f'(+inf), as doubles the tests convert to T.
struct limits {
  double at_minus_inf;
  double at_plus_inf;
  double derivative_at_minus_inf;
  double derivative_at_plus_inf;
};

inline constexpr double infinity = std::numeric_limits<double>::infinity();

// A max-ULP bound of one member, in both types (with an FMA unit; without one every row is held
// to the accuracy test's common no-FMA bound), and why it is above the goal of 2 where it is.
struct ulp_bound {
  double ulp = 2.0;
  std::string_view why = "";
};
struct ulp_bounds {
  ulp_bound forward{};
  ulp_bound derivative{};
};

// An x window where a row may exceed its bound, with the figure measured there and why.
struct exempt_window {
  member which;
  std::string_view type;  // "f32" or "f64"
  double lo;
  double hi;
  std::string_view measured;
  std::string_view why;
  // The catalog instance it applies to (its label), or every instance of the row where empty.
  std::string_view instance = {};
};

enum class tier { default_tier, fast };

// A list of rows (each family header ends with one; catalog.hpp joins them).
template <class... Rows>
struct rows {};

// What a row does not say differs from these.
struct row_defaults {
  static constexpr tier level = tier::default_tier;
  static constexpr std::string_view parameters = "";
  static constexpr std::string_view at_kinks = "";
  static constexpr std::string_view from_output = "no";
  static constexpr bool has_output_derivative = false;
  static constexpr ulp_bounds bounds{};
  static std::vector<exempt_window> windows() { return {}; }
  template <class F>
  static std::vector<double> kinks(F const&) {
    return {};
  }
  // |g'(y)| for the derivative g as a function of the output: 0 for a piecewise-constant g (a
  // jump of g shows up in the inherited error instead). See catalog/reference.hpp.
  template <class F>
  static double output_sensitivity(F const&, double) {
    return 0.0;
  }
};

// A fast-tier row: the same mathematical function as the default-tier row Exact (measured
// against its reference, benchmarked against its textbook formula), with its own bound.
// Self::exact(f) gives the default-tier functor with the same parameters.
template <class Self, class Exact>
struct fast_row : Exact {
  using exact_row = Exact;
  static constexpr tier level = tier::fast;
  static constexpr ulp_bounds bounds{{5.0, "the fast tier's bound"},
                                     {5.0, "the fast tier's bound"}};
  template <class F>
  static std::vector<double> kinks(F const& f) {
    return Exact::kinks(Self::exact(f));
  }
  template <class F>
  static limits at_infinity(F const& f) {
    return Exact::at_infinity(Self::exact(f));
  }
  template <class F>
  static void reference(F const& f, double x, reference::values& out) {
    Exact::reference(Self::exact(f), x, out);
  }
  template <class W, class F>
  static reference::fast::values<W> estimate(F const& f, W x) {
    return Exact::template estimate<W>(Self::exact(f), x);
  }
  template <class F>
  static void reference_given_output(F const& f, double y, reference::real& out) {
    Exact::reference_given_output(Self::exact(f), y, out);
  }
  template <class W, class F>
  static W estimate_given_output(F const& f, W y) {
    return Exact::template estimate_given_output<W>(Self::exact(f), y);
  }
  template <class F>
  static double output_sensitivity(F const& f, double y) {
    return Exact::output_sensitivity(Self::exact(f), y);
  }
};

// Textbook constants in T.
template <class T>
constexpr T k(double v) {
  return static_cast<T>(v);
}
template <class T>
T textbook_sigmoid(T x) {
  return T(1) / (T(1) + std::exp(-x));
}

}  // namespace nonlin::test::catalog
