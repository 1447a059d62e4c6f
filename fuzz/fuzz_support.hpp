// SPDX-License-Identifier: MIT
#pragma once
// Shared by the libFuzzer targets: turning bytes into numbers, sizes and memory layouts, and the
// checks (any failure prints what went wrong and aborts, which libFuzzer reports as a crash).

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace nonlin::fuzz {

[[noreturn]] inline void fail(char const* what, char const* where, std::size_t index, double a,
                              double b) {
  std::fprintf(stderr, "nonlin fuzz: %s [%s] at index %zu: %.17g vs %.17g\n", what, where, index, a,
               b);
  std::abort();
}

inline void check(bool ok, char const* what, char const* where, std::size_t index = 0, double a = 0,
                  double b = 0) {
  if (!ok) {
    fail(what, where, index, a, b);
  }
}

// Bit for bit, except that any NaN equals any NaN (which payload survives is the hardware's
// choice).
template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0 || (std::isnan(a) && std::isnan(b));
}

// Bytes from the front; once they run out every read gives 0.
class reader {
 public:
  reader(std::uint8_t const* data, std::size_t size) : data_(data), size_(size) {}

  std::uint8_t byte() { return at_ < size_ ? data_[at_++] : 0; }
  bool flag() { return (byte() & 1U) != 0; }
  std::uint64_t bits(int bytes) {
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) {
      v = (v << 8U) | byte();
    }
    return v;
  }
  // A value in [0, n).
  std::size_t below(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(bits(2)) % n; }

  // Specials (signed zeros, infinities, NaN, extremes, subnormals, kinks), small values on a
  // 1/64 grid around the kinks, raw bit patterns of the whole range, and subnormals.
  template <class T>
  T value() {
    using L = std::numeric_limits<T>;
    using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
    static T const specials[] = {T(0),
                                 -T(0),
                                 L::infinity(),
                                 -L::infinity(),
                                 L::quiet_NaN(),
                                 -L::quiet_NaN(),
                                 L::max(),
                                 -L::max(),
                                 L::min(),
                                 -L::min(),
                                 L::denorm_min(),
                                 -L::denorm_min(),
                                 T(1),
                                 T(-1),
                                 T(3),
                                 T(-3),
                                 T(6),
                                 T(20),
                                 T(-20),
                                 T(88.72),
                                 T(-103.97),
                                 T(709.78),
                                 T(-745.13),
                                 std::sqrt(L::max()),
                                 -std::sqrt(L::max()),
                                 L::max() / 2,
                                 -L::max() / 2,
                                 L::epsilon(),
                                 T(1e30),
                                 T(-1e30)};
    std::uint8_t const kind = byte();
    if (kind < 80) {
      return specials[kind % std::size(specials)];
    }
    if (kind < 160) {
      return static_cast<T>(static_cast<std::int16_t>(bits(2))) / T(64);
    }
    U raw = static_cast<U>(bits(sizeof(T)));
    if (kind >= 224) {
      // Subnormal: keep the sign and the mantissa, clear the exponent.
      U const exponent_mask = static_cast<U>(~U(0) >> 1U) & ~((U(1) << (L::digits - 1)) - 1);
      raw &= ~exponent_mask;
    }
    T v;
    std::memcpy(&v, &raw, sizeof(T));
    return v;
  }

  // A parameter (alpha, beta, temperature, ...): usual values, invalid ones, extremes, raw bits.
  double parameter() {
    static double const table[] = {
        1.0,   0.01,   0.2,    0.5,          1.5,      2.0,       1.702, 10.0, 20.0,   0.0,
        -0.0,  -0.5,   -1.0,   -2.0,         1e-3,     1e3,       1e-30, 1e30, 1e-300, 1e300,
        1e-45, 3.5e38, 4e-324, std::nan(""), HUGE_VAL, -HUGE_VAL, 0.7,   64.0, 1e-8,   1e8};
    std::uint8_t const kind = byte();
    if (kind < 200) {
      return table[kind % std::size(table)];
    }
    std::uint64_t const raw = bits(8);
    double v;
    std::memcpy(&v, &raw, sizeof v);
    return v;
  }

 private:
  std::uint8_t const* data_;
  std::size_t size_;
  std::size_t at_ = 0;
};

// A parameter for which the finiteness checks apply: finite and of moderate size.
inline bool sane(double p) { return std::isfinite(p) && std::abs(p) >= 1e-3 && std::abs(p) <= 1e3; }

// Runs op; true if it threw std::invalid_argument. Any other exception escapes (a crash).
template <class Op>
bool throws_invalid_argument(Op&& op) {
  try {
    std::invoke(std::forward<Op>(op));
  } catch (std::invalid_argument const&) {
    return true;
  }
  return false;
}

// A region of an arena: where an array lives, so that outputs can be put apart from, on, or
// partly over their inputs.
struct place {
  std::size_t offset = 0;
  std::size_t size = 0;
};

inline bool partly_overlap(place a, place b) {
  if (a.size == 0 || b.size == 0 || a.offset == b.offset) {
    return false;
  }
  return a.offset < b.offset + b.size && b.offset < a.offset + a.size;
}

inline bool any_overlap(place a, place b) {
  return a.size != 0 && b.size != 0 && a.offset < b.offset + b.size && b.offset < a.offset + a.size;
}

// One buffer holding every array of a call; untouched elements are NaN with a marked payload.
template <class T>
struct arena {
  std::vector<T> memory;

  explicit arena(std::size_t n) : memory(n, std::numeric_limits<T>::quiet_NaN()) {}

  std::span<T> span(place p) { return std::span<T>(memory.data() + p.offset, p.size); }
  std::span<T const> cspan(place p) const {
    return std::span<T const>(memory.data() + p.offset, p.size);
  }
};

// The arena after a call equals `before` except inside `written`, where it equals `expected`
// (bit for bit, any NaN equal to any NaN). `unchanged`: exact bits everywhere else.
template <class T>
void check_only_written(char const* where, std::vector<T> const& before,
                        std::vector<T> const& after, std::span<place const> written,
                        std::span<std::vector<T> const> expected) {
  std::vector<char> inside(before.size(), 0);
  for (std::size_t k = 0; k < written.size(); ++k) {
    for (std::size_t i = 0; i < written[k].size; ++i) {
      std::size_t const at = written[k].offset + i;
      inside[at] = 1;
      check(same_bits(after[at], expected[k][i]), "span result differs from the scalar call", where,
            i, static_cast<double>(after[at]), static_cast<double>(expected[k][i]));
    }
  }
  for (std::size_t i = 0; i < before.size(); ++i) {
    if (inside[i] == 0) {
      check(std::memcmp(&before[i], &after[i], sizeof(T)) == 0, "wrote outside its output", where,
            i, static_cast<double>(before[i]), static_cast<double>(after[i]));
    }
  }
}

template <class T>
void check_untouched(char const* where, std::vector<T> const& before, std::vector<T> const& after) {
  check(before.size() == after.size() &&
            (before.empty() ||
             std::memcmp(before.data(), after.data(), before.size() * sizeof(T)) == 0),
        "threw but wrote something first", where);
}

// log2 of the magnitude, for bounds of products: |a b| < 2^(mag(a) + mag(b) + 2).
template <class T>
int magnitude(T v) {
  return v == T(0) ? std::numeric_limits<T>::min_exponent - 1 : std::ilogb(v);
}

}  // namespace nonlin::fuzz
