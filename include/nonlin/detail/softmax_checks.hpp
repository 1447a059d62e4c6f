// SPDX-License-Identifier: MIT
#pragma once
// The argument checks of softmax, log_softmax and their backward passes (cross_entropy.hpp adds
// its own): the temperature, the layout against the array sizes, the rows layout from cols.

#include <cmath>
#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "../axis_layout.hpp"
#include "../concepts.hpp"
#include "../isa.hpp"
#include "checks.hpp"

namespace nonlin::detail {
inline namespace NONLIN_ISA {

// T must be finite and > 0, also once rounded to the element type (1e-300 or 1e39 are valid
// doubles but 0 and inf as float), and 1/T must be finite.
template <class T>
void require_temperature(char const* where, double t) {
  T const rounded = static_cast<T>(t);
  if (!(std::isfinite(t) && t > 0.0 && std::isfinite(rounded) && rounded > T(0) &&
        std::isfinite(T(1) / rounded))) {
    throw std::invalid_argument(std::string(where) + ": temperature must be finite and > 0 (in " +
                                (sizeof(T) == 4 ? "float" : "double") + " too), got " +
                                number_text(t));
  }
}

inline void require_layout(char const* where, char const* name, std::size_t size,
                           axis_layout shape) {
  std::size_t const expected = layout_size(where, shape.outer, shape.axis, shape.inner);
  if (size != expected) {
    throw std::invalid_argument(
        std::string(where) + ": " + size_text(name, size) + " but the layout " +
        shape_text({{"outer", shape.outer}, {"axis", shape.axis}, {"inner", shape.inner}}) +
        " has " + std::to_string(expected));
  }
}

// The rows layout of `name` (size elements) as (size / cols, cols, 1).
inline axis_layout rows_layout(char const* where, char const* name, std::size_t size,
                               std::size_t cols) {
  if (cols == 0 ? size != 0 : size % cols != 0) {
    throw std::invalid_argument(std::string(where) + ": " + size_text(name, size) +
                                ", which do not make whole rows of cols=" + std::to_string(cols));
  }
  return {cols == 0 ? 0 : size / cols, cols, 1};
}

// Any F with a `temperature` (softmax, log_softmax).
// T: float, double or a 16-bit storage type (computed in float).
template <class F, class T>
void require_backward_arguments(char const* where, F const& f, std::span<T const> y,
                                std::span<T const> dy, std::span<T> dx, axis_layout shape) {
  require_temperature<std::conditional_t<real_scalar<T>, T, float>>(where, f.temperature);
  require_layout(where, "y", y.size(), shape);
  require_same_size<T>(where, "y", y, "dy", dy);
  require_same_size<T>(where, "y", y, "dx", dx);
  require_no_partial_overlap<T>(where, "dx", dx, "y", y);
  require_no_partial_overlap<T>(where, "dx", dx, "dy", dy);
}

}  // namespace NONLIN_ISA
}  // namespace nonlin::detail
