// SPDX-License-Identifier: MIT
#pragma once
// The (outer, axis, inner) layout that softmax and log_softmax normalise over the middle axis of;
// {rows, cols, 1} is the rows layout.

#include <cstddef>

#include "detail/checks.hpp"

namespace nonlin {

namespace detail {
inline std::size_t layout_size(char const* where, std::size_t outer, std::size_t axis,
                               std::size_t inner) {
  return require_shape_size(where, "layout", {{"outer", outer}, {"axis", axis}, {"inner", inner}});
}
}  // namespace detail

// An (outer, axis, inner) array normalised over `axis`; {rows, cols, 1} is the rows layout.
struct axis_layout {
  std::size_t outer = 1;
  std::size_t axis = 1;
  std::size_t inner = 1;

  // outer * axis * inner; std::invalid_argument if that does not fit std::size_t.
  std::size_t size() const {
    return detail::layout_size("nonlin::axis_layout::size", outer, axis, inner);
  }
  bool empty() const noexcept { return outer == 0 || axis == 0 || inner == 0; }
};

}  // namespace nonlin
