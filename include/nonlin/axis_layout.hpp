// SPDX-License-Identifier: MIT
#pragma once
// The (outer, axis, inner) layout that softmax and log_softmax normalise over the middle axis of;
// {rows, cols, 1} is the rows layout.

#include <cstddef>

#include "detail/checks.hpp"
#include "isa.hpp"

namespace nonlin {

namespace detail {
inline namespace NONLIN_ISA {
inline std::size_t layout_size(char const* where, std::size_t outer, std::size_t axis,
                               std::size_t inner) {
  return require_shape_size(where, "layout", {{"outer", outer}, {"axis", axis}, {"inner", inner}});
}
}  // namespace NONLIN_ISA
}  // namespace detail

// An (outer, axis, inner) array normalised over `axis`; {rows, cols, 1} is the rows layout.
struct axis_layout {
  std::size_t outer = 1;
  std::size_t axis = 1;
  std::size_t inner = 1;

  // outer * axis * inner; std::invalid_argument if that does not fit std::size_t.
  NONLIN_ISA_TAG std::size_t size() const {
    return detail::layout_size("nonlin::axis_layout::size", outer, axis, inner);
  }
  NONLIN_ISA_TAG bool empty() const noexcept { return outer == 0 || axis == 0 || inner == 0; }
};

}  // namespace nonlin
