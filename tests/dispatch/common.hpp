// SPDX-License-Identifier: MIT
#pragma once
// What dispatch_test's TUs share: the element types it runs, and a walk over the catalog's
// instances that hands one (by index) to a visitor with its functor.

#include <cstddef>
#include <span>
#include <tuple>
#include <utility>

#include <nonlin/dispatch.hpp>
#include <nonlin/nonlin.hpp>

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

// The kernels beyond the elementwise ones: softmax and log_softmax (rows and an axis layout) and
// the gated units (separate and fused), each run on arrays of kernel_size elements.
enum class kernel : int {
  softmax_rows,
  softmax_rows_backward,
  log_softmax_rows,
  log_softmax_rows_backward,
  softmax_axis,
  log_softmax_axis_backward,
  gated,
  gated_backward,
  gated_fused,
  gated_fused_backward,
};
inline constexpr int kernel_count = 10;
inline constexpr std::size_t kernel_size = 1110;
inline constexpr std::size_t kernel_cols = 37;               // 30 rows
inline constexpr nonlin::axis_layout kernel_axis{6, 37, 5};  // 1110
inline constexpr std::size_t kernel_fused_rows = 15;         // 15 x (2 x 37)
inline constexpr int gated_count = 2;                        // swiglu, geglu

// api and run_kernel are compiled into TUs of different levels (levels.cpp): like nonlin's
// own code they live in an inline namespace named for the target, or the linker would keep one
// level's copy for all (which it did: every reference level then computed v2's results).
inline namespace NONLIN_ISA {

// The calls: nonlin's own (direct, dispatched = false) or nonlin::dispatch's.
template <bool dispatched>
struct api {
  template <class... A>
  static void forward(A&&... a) {
    if constexpr (dispatched) {
      nonlin::dispatch::forward(std::forward<A>(a)...);
    } else {
      nonlin::forward(std::forward<A>(a)...);
    }
  }
  template <class... A>
  static void backward_from_output(A&&... a) {
    if constexpr (dispatched) {
      nonlin::dispatch::backward_from_output(std::forward<A>(a)...);
    } else {
      nonlin::backward_from_output(std::forward<A>(a)...);
    }
  }
  template <class... A>
  static void gated_forward(A&&... a) {
    if constexpr (dispatched) {
      nonlin::dispatch::gated_forward(std::forward<A>(a)...);
    } else {
      nonlin::gated_forward(std::forward<A>(a)...);
    }
  }
  template <class... A>
  static void gated_backward(A&&... a) {
    if constexpr (dispatched) {
      nonlin::dispatch::gated_backward(std::forward<A>(a)...);
    } else {
      nonlin::gated_backward(std::forward<A>(a)...);
    }
  }
  template <class... A>
  static void gated_forward_fused(A&&... a) {
    if constexpr (dispatched) {
      nonlin::dispatch::gated_forward_fused(std::forward<A>(a)...);
    } else {
      nonlin::gated_forward_fused(std::forward<A>(a)...);
    }
  }
  template <class... A>
  static void gated_backward_fused(A&&... a) {
    if constexpr (dispatched) {
      nonlin::dispatch::gated_backward_fused(std::forward<A>(a)...);
    } else {
      nonlin::gated_backward_fused(std::forward<A>(a)...);
    }
  }
};

// Kernel k through Api on a, b, c (kernel_size elements each) into out and out2 (the same size),
// with the gated unit number `unit`.
template <class Api, class T>
void run_kernel(kernel k, int unit, std::span<T const> a, std::span<T const> b,
                std::span<T const> c, std::span<T> out, std::span<T> out2) {
  auto with_unit = [&](auto const& run) {
    if (unit == 0) {
      run(nonlin::swiglu{});
    } else {
      run(nonlin::geglu{});
    }
  };
  std::size_t const half = kernel_size / 2;
  auto const split = nonlin::glu_split::gate_first;
  switch (k) {
    case kernel::softmax_rows:
      return Api::forward(nonlin::softmax{0.75}, a, out, kernel_cols);
    case kernel::softmax_rows_backward:
      return Api::backward_from_output(nonlin::softmax{}, a, b, out, kernel_cols);
    case kernel::log_softmax_rows:
      return Api::forward(nonlin::log_softmax{}, a, out, kernel_cols);
    case kernel::log_softmax_rows_backward:
      return Api::backward_from_output(nonlin::log_softmax{2.0}, a, b, out, kernel_cols);
    case kernel::softmax_axis:
      return Api::forward(nonlin::softmax{}, a, out, kernel_axis);
    case kernel::log_softmax_axis_backward:
      return Api::backward_from_output(nonlin::log_softmax{}, a, b, out, kernel_axis);
    case kernel::gated:
      return with_unit([&](auto const& g) { Api::gated_forward(g, a, b, out); });
    case kernel::gated_backward:
      return with_unit([&](auto const& g) { Api::gated_backward(g, a, b, c, out, out2); });
    case kernel::gated_fused:
      return with_unit([&](auto const& g) {
        Api::gated_forward_fused(g, a, out.first(half), kernel_fused_rows, split);
      });
    case kernel::gated_fused_backward:
      return with_unit([&](auto const& g) {
        Api::gated_backward_fused(g, a, c.first(half), out, kernel_fused_rows, split);
      });
  }
}

}  // namespace NONLIN_ISA

}  // namespace dispatch_test
