// SPDX-License-Identifier: MIT
#pragma once
// What dispatch_test's TUs share: the element types it runs, and a walk over the catalog's
// instances that hands one (by index) to a visitor with its functor.

#include <cstddef>
#include <tuple>

#include "catalog/catalog.hpp"

namespace dispatch_test {

using element_types = std::tuple<float, double, nonlin::bfloat16>;
inline constexpr int element_type_count = 3;

enum class op : int { forward = 0, backward = 1, from_output = 2 };

// visit(f, ...) for the instance-th catalog instance (0-based, for_each_instance's order).
template <class Visit>
void with_instance(std::size_t instance, Visit&& visit) {
  std::size_t k = 0;
  nonlin::test::catalog::for_each_instance([&]<class Row>(auto const& i) {
    if (k++ == instance) {
      visit(i.f);
    }
  });
}

inline std::size_t instance_count() {
  std::size_t k = 0;
  nonlin::test::catalog::for_each_instance([&]<class Row>(auto const&) { ++k; });
  return k;
}

}  // namespace dispatch_test
