// SPDX-License-Identifier: MIT
#pragma once
// What the range overloads of the span kernels share. Every kernel is written once on spans
// (std::span<T const> for an input, std::span<T> for an output); its range overload takes any
// contiguous ranges (std::vector, std::array, a span of another extent ...), converts them with
// as_input / as_output and calls it. The range overload steps aside (not_spans) when its
// arguments already are those spans, where it would only call itself.

#include <ranges>
#include <span>
#include <type_traits>

#include "../isa.hpp"

namespace nonlin::detail {
inline namespace NONLIN_ISA {

template <class R>
using element_t = std::remove_cv_t<std::ranges::range_value_t<R>>;

template <class R>
inline constexpr bool is_input_span =
    std::is_same_v<std::remove_cvref_t<R>, std::span<element_t<R> const>>;
template <class R>
inline constexpr bool is_output_span =
    std::is_same_v<std::remove_cvref_t<R>, std::span<element_t<R>>>;

template <class... R>
struct outputs {};
template <class... R>
struct inputs {};

template <class Outputs, class Inputs>
inline constexpr bool are_spans = false;
template <class... Out, class... In>
inline constexpr bool are_spans<outputs<Out...>, inputs<In...>> = (is_output_span<Out> && ...) &&
                                                                  (is_input_span<In> && ...);

// The range overload applies: some argument is not yet the span the span overload takes.
template <class Outputs, class Inputs>
concept not_spans = !are_spans<Outputs, Inputs>;

template <std::ranges::contiguous_range R>
std::span<element_t<R> const> as_input(R&& r) {
  return std::span<element_t<R> const>(r);
}
template <std::ranges::contiguous_range R>
std::span<element_t<R>> as_output(R&& r) {
  return std::span<element_t<R>>(r);
}

}  // namespace NONLIN_ISA
}  // namespace nonlin::detail
