// SPDX-License-Identifier: MIT
#pragma once
// The four value types every functor is tested on, and lane access that works for all of them.

#include <cstddef>
#include <vector>

#include <gtest/gtest.h>
#include <xsimd/xsimd.hpp>

#include <nonlin/concepts.hpp>

namespace nonlin::test {

using value_types = ::testing::Types<float, double, xsimd::batch<float>, xsimd::batch<double>>;

template <class V>
constexpr std::size_t lanes() {
  if constexpr (is_batch_v<V>) {
    return V::size;
  } else {
    return 1;
  }
}

// A V whose lanes are values[0], values[1], ... (repeating).
template <class V>
V make(std::vector<scalar_t<V>> const& values) {
  if constexpr (is_batch_v<V>) {
    alignas(64) scalar_t<V> buffer[V::size];
    for (std::size_t i = 0; i < V::size; ++i) {
      buffer[i] = values[i % values.size()];
    }
    return V::load_aligned(buffer);
  } else {
    return values[0];
  }
}

template <class V>
V broadcast(scalar_t<V> value) {
  return V(value);
}

template <class V>
scalar_t<V> lane(V const& v, std::size_t i) {
  if constexpr (is_batch_v<V>) {
    return v.get(i);
  } else {
    (void)i;
    return v;
  }
}

}  // namespace nonlin::test
