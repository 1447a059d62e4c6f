// SPDX-License-Identifier: MIT
#pragma once
// Inputs and comparison shared by the span-kernel tests.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

namespace nonlin::test {

// Bit for bit, except that any NaN equals any NaN (the payload is the hardware's choice).
template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0 || (std::isnan(a) && std::isnan(b));
}

// Random values over [-30, 30], special values, and random bit patterns of the whole range.
template <class T>
std::vector<T> inputs(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-30, 30);
  using L = std::numeric_limits<T>;
  std::vector<T> const special = {
      T(0),      -T(0),           L::infinity(),    -L::infinity(), L::quiet_NaN(), L::max(),
      -L::max(), L::denorm_min(), -L::denorm_min(), L::min(),       T(1),           T(-1)};
  std::vector<T> values(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (i % 7 == 3) {
      values[i] = special[(i + seed) % special.size()];
    } else if (i % 5 == 1) {
      using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
      U const bits = static_cast<U>(rng());
      std::memcpy(&values[i], &bits, sizeof(T));
    } else {
      values[i] = static_cast<T>(uniform(rng));
    }
  }
  return values;
}

}  // namespace nonlin::test
