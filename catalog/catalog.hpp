// SPDX-License-Identifier: MIT
#pragma once
// The activation catalog: one row per elementwise functor (catalog/row.hpp says what a row
// holds; one header per family of nonlin's headers holds the rows). Everything that needs to
// know every function iterates it: the gradient, kernel, special-value, accuracy and fuzz tests,
// tools/accuracy.cpp (and through it the README's function and accuracy tables), the benchmark
// and its report. Adding a function: its functor, and its row in the family's header (and in
// that header's row list). tests/catalog_test.cpp fails for a public functor without a row.

#include <cstddef>
#include <string_view>
#include <type_traits>

#include <nonlin/nonlin.hpp>

#include "elu.hpp"
#include "fast.hpp"
#include "gelu.hpp"
#include "mish.hpp"
#include "piecewise.hpp"
#include "row.hpp"
#include "sigmoid.hpp"
#include "silu.hpp"
#include "tanh.hpp"

namespace nonlin::test::catalog {

namespace detail {
template <class... Lists>
struct join;
template <class... A>
struct join<rows<A...>> {
  using type = rows<A...>;
};
template <class... A, class... B, class... Rest>
struct join<rows<A...>, rows<B...>, Rest...> {
  using type = typename join<rows<A..., B...>, Rest...>::type;
};
}  // namespace detail

// Every row, in the order the tables print them: the default tier by family, then the fast tier.
using all_rows = typename detail::join<piecewise_rows, elu_rows, sigmoid_rows, tanh_rows, silu_rows,
                                       gelu_rows, mish_rows, fast_rows>::type;

// visit.template operator()<Row>() for every row, in order.
template <class Visit, class... Rows>
void visit_rows(rows<Rows...>, Visit&& visit) {
  (visit.template operator()<Rows>(), ...);
}
template <class Visit>
void for_each_row(Visit&& visit) {
  visit_rows(all_rows{}, visit);
}

// The row of functor type F.
namespace detail {
template <class F, class... Rows>
struct find_row;
template <class F>
struct find_row<F> {
  using type = void;
};
template <class F, class R, class... Rest>
struct find_row<F, R, Rest...> {
  using type = std::conditional_t<std::is_same_v<typename R::functor, F>, R,
                                  typename find_row<F, Rest...>::type>;
};
template <class F, class List>
struct find_in;
template <class F, class... Rows>
struct find_in<F, rows<Rows...>> : find_row<F, Rows...> {};
}  // namespace detail
template <class F>
using row_of = typename detail::find_in<std::remove_cvref_t<F>, all_rows>::type;

// A row's claims checked against its functor: one row per functor, from_output as the concept
// says, the same number of instances labelled with the row's name first.
template <class Row>
constexpr bool row_is_consistent() {
  using F = typename Row::functor;
  static_assert(std::is_same_v<row_of<F>, Row>, "a functor has one row");
  static_assert(Row::has_output_derivative == output_differentiable<F, float> &&
                    Row::has_output_derivative == output_differentiable<F, double>,
                "has_output_derivative must say what nonlin::output_differentiable says");
  static_assert(unary_activation<F, float> && unary_activation<F, xsimd::batch<double>>);
  return true;
}
template <class... Rows>
constexpr bool rows_are_consistent(rows<Rows...>) {
  return (row_is_consistent<Rows>() && ...);
}
static_assert(rows_are_consistent(all_rows{}));

// Every (row, instance) pair: visit.template operator()<Row>(instance), in order.
template <class Visit>
void for_each_instance(Visit&& visit) {
  for_each_row([&]<class Row>() {
    for (auto const& i : Row::instances()) {
      visit.template operator()<Row>(i);
    }
  });
}

inline std::size_t row_count() {
  std::size_t n = 0;
  for_each_row([&]<class>() { ++n; });
  return n;
}

}  // namespace nonlin::test::catalog

// The references by functor, for code that holds a functor (accuracy_scan.hpp).
namespace nonlin::test::reference {

template <class F>
void evaluate(F const& f, double x, values& out) {
  catalog::row_of<F>::reference(f, x, out);
}
template <class F>
values evaluate(F const& f, double x) {
  values out;
  evaluate(f, x, out);
  return out;
}
// The derivative as the exact function g of the output that nonlin's derivative_from_output
// implements (g(f(x)) = f'(x)), at a given y. With y = the rounded f(x), |g(y) - f'(x)| is the
// error every from-output derivative inherits from the rounding of y, whatever its own accuracy.
template <class F>
void derivative_given_output(F const& f, double y, real& out) {
  catalog::row_of<F>::reference_given_output(f, y, out);
}
// |g'(y)|, in double: how much one unit of y moves g(y). A from-output derivative is judged in
// units of ulp(f'(x)) + |g'(y)| ulp(y) (accuracy_scan.hpp).
template <class F>
double output_sensitivity(F const& f, double y) {
  return catalog::row_of<F>::output_sensitivity(f, y);
}

namespace fast {
template <class W, class F>
values<W> estimate(F const& f, W x) {
  return catalog::row_of<F>::template estimate<W>(f, x);
}
template <class W, class F>
W given_output(F const& f, W y) {
  return catalog::row_of<F>::template estimate_given_output<W>(f, y);
}
}  // namespace fast

}  // namespace nonlin::test::reference
