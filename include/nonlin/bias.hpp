// SPDX-License-Identifier: MIT
#pragma once
// Bias + activation in one pass: the Linear -> bias -> activation epilogue of a feed-forward
// block, over the (n, channels, inner) layout of prelu_shape (inner = 1 for (tokens, features),
// h * w for NCHW), with one bias per channel:
//   y        = f(x + b[c])
//   dx       = dy * f'(x + b[c])            (the gradient at the pre-activation x + b)
//   dbias[c] = sum of dx over the positions that share channel c
// x + b is rounded once before f, as a separate bias addition would round it, so y and dx are
// the span kernels' results on x + b bit for bit. dbias is overwritten (not accumulated into),
// its sums compensated (math::compensated_sum): within about an ulp of the sum of the dx as
// written. y may be x, and dx may be x or dy; the bias and dbias must be apart from every other
// array. Sizes that do not fit throw std::invalid_argument before anything is written.

#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <xsimd/xsimd.hpp>

#include "concepts.hpp"
#include "detail/checks.hpp"
#include "detail/partial.hpp"
#include "kernels.hpp"
#include "math/ops.hpp"
#include "math/sum.hpp"
#include "prelu.hpp"

namespace nonlin {

namespace detail {
inline void require_bias_arguments(char const* where, prelu_shape shape, std::size_t x_size,
                                   std::size_t bias_size) {
  std::size_t const size = prelu_size(where, shape.n, shape.channels, shape.inner);
  if (x_size != size) {
    throw std::invalid_argument(
        std::string(where) + ": " + size_text("x", x_size) + " but the shape " +
        shape_text({{"n", shape.n}, {"channels", shape.channels}, {"inner", shape.inner}}) +
        " has " + std::to_string(size));
  }
  if (bias_size != shape.channels) {
    throw std::invalid_argument(std::string(where) + ": bias has " + std::to_string(bias_size) +
                                " elements but channels=" + std::to_string(shape.channels));
  }
}
}  // namespace detail

// y = f(x + bias[c]).
template <class Arch = xsimd::default_arch, class F, real_scalar T>
requires unary_activation<F, T>
void forward_with_bias(F const& f, std::span<T const> x, std::span<T const> bias, std::span<T> y,
                       prelu_shape shape) {
  char const* where = "nonlin::forward_with_bias";
  detail::require_bias_arguments(where, shape, x.size(), bias.size());
  detail::require_same_size<T>(where, "x", x, "y", y);
  detail::require_no_partial_overlap<T>(where, "y", y, "x", x);
  detail::require_disjoint<T, T>(where, "y", y, "bias", bias);
  if (shape.inner == 1) {  // (n, channels): the bias runs along each row
    for (std::size_t i = 0; i < shape.n; ++i) {
      std::size_t const offset = i * shape.channels;
      detail::elementwise<Arch>([f](auto xb, auto bb) { return f(xb + bb); },
                                y.subspan(offset, shape.channels),
                                x.subspan(offset, shape.channels), bias);
    }
    return;
  }
  detail::for_each_block(shape, [&](std::size_t c, std::size_t offset) {
    T const b = bias[c];
    detail::elementwise<Arch>(
        [f, b](auto xb) {
          using B = decltype(xb);
          return f(xb + B(b));
        },
        y.subspan(offset, shape.inner), x.subspan(offset, shape.inner));
  });
}

// dx = dy * f'(x + bias[c]) and dbias[c] = sum of dx over channel c, in one pass: each block's
// dx is summed right after it is written, while it is in cache.
NONLIN_INTRINSIC_DIAGNOSTICS_PUSH
template <class Arch = xsimd::default_arch, class F, real_scalar T>
requires unary_activation<F, T>
void backward_with_bias(F const& f, std::span<T const> x, std::span<T const> bias,
                        std::span<T const> dy, std::span<T> dx, std::span<T> dbias,
                        prelu_shape shape) {
  char const* where = "nonlin::backward_with_bias";
  detail::require_bias_arguments(where, shape, x.size(), bias.size());
  detail::require_channel_backward(where, x, "bias", bias, dy, dx, "dbias", dbias);
  using batch = xsimd::batch<T, Arch>;
  constexpr std::size_t width = batch::size;
  std::size_t const channels = shape.channels;
  if (shape.inner == 1) {
    // Per channel, a compensated sum down the rows, kept in two arrays (sum, error) a batch of
    // channels at a time.
    std::vector<T> sum(channels, T(0));
    std::vector<T> error(channels, T(0));
    for (std::size_t i = 0; i < shape.n; ++i) {
      std::size_t const offset = i * channels;
      std::span<T> const g = dx.subspan(offset, channels);
      detail::elementwise<Arch>(
          [f](auto xb, auto bb, auto dyb) { return f.backward(xb + bb, dyb); }, g,
          x.subspan(offset, channels), bias, dy.subspan(offset, channels));
      std::size_t c = 0;
      for (; c + width <= channels; c += width) {
        math::compensated_sum<batch> s{batch::load_unaligned(sum.data() + c),
                                       batch::load_unaligned(error.data() + c)};
        s.add(batch::load_unaligned(g.data() + c));
        s.sum.store_unaligned(sum.data() + c);
        s.error.store_unaligned(error.data() + c);
      }
      for (; c < channels; ++c) {
        math::compensated_sum<T> s{sum[c], error[c]};
        s.add(g[c]);
        sum[c] = s.sum;
        error[c] = s.error;
      }
    }
    for (std::size_t c = 0; c < channels; ++c) {
      dbias[c] = math::compensated_sum<T>{sum[c], error[c]}.total();
    }
    return;
  }
  std::vector<math::compensated_sum<batch>> lanes(channels);
  std::vector<math::compensated_sum<T>> rest(channels);
  detail::for_each_block(shape, [&](std::size_t c, std::size_t offset) {
    T const b = bias[c];
    std::span<T> const g = dx.subspan(offset, shape.inner);
    detail::elementwise<Arch>(
        [f, b](auto xb, auto dyb) {
          using B = decltype(xb);
          return f.backward(xb + B(b), dyb);
        },
        g, x.subspan(offset, shape.inner), dy.subspan(offset, shape.inner));
    std::size_t k = 0;
    for (; k + width <= shape.inner; k += width) {
      lanes[c].add(batch::load_unaligned(g.data() + k));
    }
    for (; k < shape.inner; ++k) {
      rest[c].add(g[k]);
    }
  });
  for (std::size_t c = 0; c < channels; ++c) {
    dbias[c] = math::lanes_total(lanes[c], rest[c]);
  }
}
NONLIN_INTRINSIC_DIAGNOSTICS_POP

}  // namespace nonlin
