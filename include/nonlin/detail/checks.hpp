// SPDX-License-Identifier: MIT
#pragma once
// Argument checks shared by every span kernel. Each throws std::invalid_argument whose message
// starts with the operation ("nonlin::forward(softmax)"), names the argument and shows its value,
// and runs before anything is written.
//
//   require_same_size            two arrays of one shape
//   require_no_partial_overlap   an output and an input: the very same array, or apart
//   require_disjoint             pairs that must be apart (two outputs; arrays of other shapes
//                                or element types, where "the same array" means nothing)
//   require_shape_size           the product of a shape's dimensions, which must fit size_t
//   number_text                  a double as it is: shortest round-trip (1e-40, not 0.000000)

#include <array>
#include <charconv>
#include <cstddef>
#include <functional>
#include <initializer_list>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>

#include "../isa.hpp"

namespace nonlin::detail {
inline namespace NONLIN_ISA {

// The shortest text that reads back as the same double ("1e-40", "1e+300", "nan", "-inf").
inline std::string number_text(double value) {
  std::array<char, 32> buffer{};
  auto const result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  return std::string(buffer.data(), result.ptr);
}

inline std::string size_text(char const* name, std::size_t size) {
  return std::string(name) + " has " + std::to_string(size) + " element" + (size == 1 ? "" : "s");
}

template <class T>
void require_same_size(char const* where, char const* a_name, std::span<T const> a,
                       char const* b_name, std::span<T const> b) {
  if (a.size() != b.size()) {
    throw std::invalid_argument(std::string(where) + ": " + size_text(a_name, a.size()) + " but " +
                                size_text(b_name, b.size()) + "; they must be the same length");
  }
}

// Whether two arrays share any byte; empty arrays share none.
template <class A, class B>
bool overlap(std::span<A const> a, std::span<B const> b) noexcept {
  if (a.empty() || b.empty()) {
    return false;
  }
  // std::less gives a total order even for pointers into different arrays.
  auto const* a_begin = reinterpret_cast<unsigned char const*>(a.data());
  auto const* b_begin = reinterpret_cast<unsigned char const*>(b.data());
  auto const less = std::less<unsigned char const*>{};
  return less(a_begin, b_begin + b.size_bytes()) && less(b_begin, a_begin + a.size_bytes());
}

// Overlap other than the very same array (same start, same type and length).
template <class T>
bool partly_overlap(std::span<T const> a, std::span<T const> b) noexcept {
  return a.data() != b.data() && overlap(a, b);
}

template <class T>
void require_no_partial_overlap(char const* where, char const* out_name, std::span<T const> out,
                                char const* in_name, std::span<T const> in) {
  if (partly_overlap(out, in)) {
    throw std::invalid_argument(std::string(where) + ": " + out_name + " partly overlaps " +
                                in_name + " (" + out_name + " may be " + in_name +
                                " itself, or apart from it)");
  }
}

// Any overlap at all, the same start included.
template <class A, class B>
void require_disjoint(char const* where, char const* a_name, std::span<A const> a,
                      char const* b_name, std::span<B const> b) {
  if (overlap(a, b)) {
    throw std::invalid_argument(std::string(where) + ": " + a_name + " overlaps " + b_name +
                                " (they must be separate arrays)");
  }
}

// One dimension of a shape, named for messages.
struct dimension {
  char const* name;
  std::size_t size;
};

// "(outer=4, axis=3, inner=1)"
inline std::string shape_text(std::initializer_list<dimension> dims) {
  std::string text = "(";
  for (dimension const& d : dims) {
    text += (text.size() > 1 ? ", " : "") + std::string(d.name) + "=" + std::to_string(d.size);
  }
  return text + ")";
}

// The number of elements of a shape. A product that does not fit size_t would wrap and pass
// the size check with a small number while the loops walk the true dimensions, so it throws.
// A zero dimension makes the product 0 whatever the others are.
inline std::size_t require_shape_size(char const* where, char const* what,
                                      std::initializer_list<dimension> dims) {
  for (dimension const& d : dims) {
    if (d.size == 0) {
      return 0;
    }
  }
  std::size_t product = 1;
  for (dimension const& d : dims) {
    if (product > std::numeric_limits<std::size_t>::max() / d.size) {
      throw std::invalid_argument(std::string(where) + ": the " + what + " " + shape_text(dims) +
                                  " has more elements than std::size_t can count");
    }
    product *= d.size;
  }
  return product;
}

}  // namespace NONLIN_ISA
}  // namespace nonlin::detail
