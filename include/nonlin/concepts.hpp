// SPDX-License-Identifier: MIT
#pragma once
// The value types every nonlin functor accepts, and the traits that say what a functor offers.

#include <concepts>
#include <cstdint>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include "isa.hpp"

namespace nonlin {

template <class T>
concept real_scalar = std::same_as<T, float> || std::same_as<T, double>;

namespace detail {
inline namespace NONLIN_ISA {
template <class V>
struct value_traits {};

template <real_scalar T>
struct value_traits<T> {
  using scalar = T;
  static constexpr bool is_batch = false;
};

template <real_scalar T, class A>
struct value_traits<xsimd::batch<T, A>> {
  using scalar = T;
  static constexpr bool is_batch = true;
};
}  // namespace NONLIN_ISA
}  // namespace detail

// float, double, or an xsimd::batch of either: one function text serves all four.
template <class V>
concept real_value = requires {
  typename detail::value_traits<V>::scalar;
};

template <real_value V>
using scalar_t = typename detail::value_traits<V>::scalar;

template <real_value V>
inline constexpr bool is_batch_v = detail::value_traits<V>::is_batch;

// An elementwise activation: forward, derivative and backward from the input x.
// f(x) and f'(x) together, for activations that share work between them (the gated units ask
// for both at the same x).
template <class V>
struct value_and_slope {
  V value;
  V derivative;
};

template <class F, class V>
concept unary_activation = real_value<V> && requires(F const& f, V x) {
  { f(x) } -> std::same_as<V>;
  { f.derivative(x) } -> std::same_as<V>;
  { f.backward(x, x) } -> std::same_as<V>;
};

// An activation whose derivative is a function of its output y = f(x), so that a network may
// keep y instead of x for the backward pass (sigmoid: y(1 - y)).
template <class F, class V>
concept output_differentiable = unary_activation<F, V> && requires(F const& f, V y) {
  { f.derivative_from_output(y) } -> std::same_as<V>;
  { f.backward_from_output(y, y) } -> std::same_as<V>;
};

}  // namespace nonlin
