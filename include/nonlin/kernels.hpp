// SPDX-License-Identifier: MIT
#pragma once
// Span kernels: apply an activation to whole arrays.
//
//   nonlin::forward(f, x, y)                      y  = f(x)
//   nonlin::backward(f, x, dy, dx)                dx = dy * f'(x)
//   nonlin::backward_from_output(f, y, dy, dx)    dx = dy * f'(x), from y = f(x)
//
// Any length and alignment; an output may be the very same array as an input (in place). The
// body runs the functor on xsimd::batch<T, Arch>; the tail is loaded into a zero-padded batch
// and runs the same code, so an element's result does not depend on the span's length or on
// its position, and equals the scalar call f(x[i]) bit for bit. Sizes that differ, or an output
// that partly overlaps an input, throw std::invalid_argument before anything is written.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <ranges>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include "concepts.hpp"
#include "detail/checks.hpp"
#include "detail/partial.hpp"
#include "detail/ranges.hpp"
#include "math/ops.hpp"

namespace nonlin {

namespace detail {

// elu, celu and leaky_relu with alpha <= 0 (or NaN) are not invertible on the left: y does not
// give x there, so the derivative cannot come from y.
template <class F>
void require_output_backward_defined(F const& f) {
  if constexpr (requires { f.output_backward_defined(); }) {
    if (!f.output_backward_defined()) {
      throw std::invalid_argument(
          "nonlin::backward_from_output: alpha = " + number_text(static_cast<double>(f.alpha)) +
          ", but the output determines the derivative only for alpha > 0; use nonlin::backward "
          "from x");
    }
  }
}

// out[i] = op(in0[i], ..., ink[i]) over batches, the tail through a zero-padded batch.
//
// The op is copied into the kernel, and the span kernels capture the functor by value: a vector
// store may alias anything, so a functor reached through a reference has its parameters reloaded
// (and converted, double to float, split into hi + lo) in every iteration. hardtanh's forward
// spent 2.7x the time of relu6's on that; a local whose address does not escape stays in
// registers.
NONLIN_LOOP_DIAGNOSTICS_PUSH
template <class Arch, class T, class Op, class... In>
NONLIN_FLATTEN void elementwise(Op const& shared_op, std::span<T> out, In... in) {
  Op const op = shared_op;
  using batch = xsimd::batch<T, Arch>;
  constexpr std::size_t width = batch::size;
  std::size_t const n = out.size();
  std::size_t i = 0;
  // Four batches an iteration, all loaded before any is stored (so out may be an input itself):
  // 1.02-1.08x on the exp-based kernels at 4K floats, 1.1-1.5x on the piecewise ones in L1,
  // 0.96-0.97x where four copies spill (gelu_exact, softplus, gelu_quick backward); same run,
  // alternated.
  for (; i + 4 * width <= n; i += 4 * width) {
    batch r0 = op(batch::load_unaligned(in.data() + i)...);
    batch r1 = op(batch::load_unaligned(in.data() + i + width)...);
    batch r2 = op(batch::load_unaligned(in.data() + i + 2 * width)...);
    batch r3 = op(batch::load_unaligned(in.data() + i + 3 * width)...);
    r0.store_unaligned(out.data() + i);
    r1.store_unaligned(out.data() + i + width);
    r2.store_unaligned(out.data() + i + 2 * width);
    r3.store_unaligned(out.data() + i + 3 * width);
  }
  for (; i + width <= n; i += width) {
    op(batch::load_unaligned(in.data() + i)...).store_unaligned(out.data() + i);
  }
  if (i < n) {
    std::size_t const rest = n - i;
    detail::store_partial(op(detail::load_partial<batch>(in.data() + i, rest, T(0))...),
                          out.data() + i, rest);
  }
}
NONLIN_LOOP_DIAGNOSTICS_POP

}  // namespace detail

// y = f(x).
template <class Arch = xsimd::default_arch, class F, real_scalar T>
requires unary_activation<F, T>
void forward(F const& f, std::span<T const> x, std::span<T> y) {
  detail::require_same_size<T>("nonlin::forward", "x", x, "y", y);
  detail::require_no_partial_overlap<T>("nonlin::forward", "y", y, "x", x);
  detail::elementwise<Arch>([f](auto xb) { return f(xb); }, y, x);
}

// dx = dy * f'(x).
template <class Arch = xsimd::default_arch, class F, real_scalar T>
requires unary_activation<F, T>
void backward(F const& f, std::span<T const> x, std::span<T const> dy, std::span<T> dx) {
  char const* where = "nonlin::backward";
  detail::require_same_size<T>(where, "x", x, "dy", dy);
  detail::require_same_size<T>(where, "x", x, "dx", dx);
  detail::require_no_partial_overlap<T>(where, "dx", dx, "x", x);
  detail::require_no_partial_overlap<T>(where, "dx", dx, "dy", dy);
  detail::elementwise<Arch>([f](auto xb, auto dyb) { return f.backward(xb, dyb); }, dx, x, dy);
}

// dx = dy * f'(x) computed from the saved output y = f(x).
template <class Arch = xsimd::default_arch, class F, real_scalar T>
requires output_differentiable<F, T>
void backward_from_output(F const& f, std::span<T const> y, std::span<T const> dy,
                          std::span<T> dx) {
  char const* where = "nonlin::backward_from_output";
  detail::require_same_size<T>(where, "y", y, "dy", dy);
  detail::require_same_size<T>(where, "y", y, "dx", dx);
  detail::require_no_partial_overlap<T>(where, "dx", dx, "y", y);
  detail::require_no_partial_overlap<T>(where, "dx", dx, "dy", dy);
  detail::require_output_backward_defined(f);
  detail::elementwise<Arch>([f](auto yb, auto dyb) { return f.backward_from_output(yb, dyb); }, dx,
                            y, dy);
}

// The same for any contiguous ranges (std::vector, std::array, ...): detail/ranges.hpp.
template <class Arch = xsimd::default_arch, class F, std::ranges::contiguous_range X,
          std::ranges::contiguous_range Y>
requires detail::not_spans<detail::outputs<Y>, detail::inputs<X>>
void forward(F const& f, X&& x, Y&& y) {
  forward<Arch>(f, detail::as_input(x), detail::as_output(y));
}

template <class Arch = xsimd::default_arch, class F, std::ranges::contiguous_range X,
          std::ranges::contiguous_range DY, std::ranges::contiguous_range DX>
requires detail::not_spans<detail::outputs<DX>, detail::inputs<X, DY>>
void backward(F const& f, X&& x, DY&& dy, DX&& dx) {
  backward<Arch>(f, detail::as_input(x), detail::as_input(dy), detail::as_output(dx));
}

template <class Arch = xsimd::default_arch, class F, std::ranges::contiguous_range Y,
          std::ranges::contiguous_range DY, std::ranges::contiguous_range DX>
requires detail::not_spans<detail::outputs<DX>, detail::inputs<Y, DY>>
void backward_from_output(F const& f, Y&& y, DY&& dy, DX&& dx) {
  backward_from_output<Arch>(f, detail::as_input(y), detail::as_input(dy), detail::as_output(dx));
}

}  // namespace nonlin
