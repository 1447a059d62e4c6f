// SPDX-License-Identifier: MIT
#pragma once
// PReLU (He et al. 2015): leaky_relu with a learned slope per channel (or one shared slope).
//
// Layout: x, y, dy, dx are contiguous (n, channels, inner) arrays (inner = 1 for (n, channels);
// inner = h * w for NCHW). alpha has `channels` entries (per channel) or 1 (shared).
//   y      = x > 0 ? x : alpha[c] x
//   dx     = x > 0 ? dy : alpha[c] dy          (at x = 0: alpha, the left derivative)
//   dalpha[c] = sum of dy * x over the positions with x < 0 that share alpha[c]
// dalpha is overwritten (not accumulated into); the sums run in batch lanes, then across them,
// compensated and with exact products (math::compensated_sum).

#include <array>
#include <cmath>
#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>

#include "isa.hpp"
#include "kernels.hpp"
#include "math/double_float.hpp"
#include "math/ops.hpp"
#include "math/sum.hpp"
#include "piecewise.hpp"

namespace nonlin {

namespace detail {
inline namespace NONLIN_ISA {
inline std::size_t prelu_size(char const* where, std::size_t n, std::size_t channels,
                              std::size_t inner) {
  return require_shape_size(where, "shape", {{"n", n}, {"channels", channels}, {"inner", inner}});
}
}  // namespace NONLIN_ISA
}  // namespace detail

struct prelu_shape {
  std::size_t n = 1;
  std::size_t channels = 1;
  std::size_t inner = 1;

  // n * channels * inner; std::invalid_argument if that does not fit std::size_t.
  NONLIN_ISA_TAG std::size_t size() const {
    return detail::prelu_size("nonlin::prelu_shape::size", n, channels, inner);
  }
};

namespace detail {
inline namespace NONLIN_ISA {
inline void require_prelu_arguments(char const* where, prelu_shape shape, std::size_t x_size,
                                    std::size_t alpha_size) {
  std::size_t const size = prelu_size(where, shape.n, shape.channels, shape.inner);
  if (x_size != size) {
    throw std::invalid_argument(
        std::string(where) + ": " + size_text("x", x_size) + " but the shape " +
        shape_text({{"n", shape.n}, {"channels", shape.channels}, {"inner", shape.inner}}) +
        " has " + std::to_string(size));
  }
  if (alpha_size != shape.channels && alpha_size != 1) {
    throw std::invalid_argument(std::string(where) + ": alpha has " + std::to_string(alpha_size) +
                                " elements; it must have 1 (shared) "
                                "or channels=" +
                                std::to_string(shape.channels));
  }
}

// f(channel, offset) for every (n, channel) block of `inner` elements; nothing for empty work,
// however large the other dimensions.
template <class F>
void for_each_block(prelu_shape shape, F&& f) {
  if (shape.inner == 0) {
    return;
  }
  for (std::size_t i = 0; i < shape.n; ++i) {
    for (std::size_t c = 0; c < shape.channels; ++c) {
      f(c, (i * shape.channels + c) * shape.inner);
    }
  }
}
// The arrays of a backward with a per-channel parameter p (PReLU's alpha, a bias): dy and dx the
// size of x, dp the size of p; dx may be x or dy itself but must be apart from p; dp is written
// first (or accumulated while dx is), so it must be apart from everything else.
template <class T>
void require_channel_backward(char const* where, std::span<T const> x, char const* p_name,
                              std::span<T const> p, std::span<T const> dy, std::span<T> dx,
                              char const* dp_name, std::span<T> dp) {
  require_same_size<T>(where, "x", x, "dy", dy);
  require_same_size<T>(where, "x", x, "dx", dx);
  require_same_size<T>(where, p_name, p, dp_name, std::span<T const>(dp));
  require_no_partial_overlap<T>(where, "dx", dx, "x", x);
  require_no_partial_overlap<T>(where, "dx", dx, "dy", dy);
  require_disjoint<T, T>(where, "dx", dx, p_name, p);
  require_disjoint<T, T>(where, dp_name, dp, "x", x);
  require_disjoint<T, T>(where, dp_name, dp, p_name, p);
  require_disjoint<T, T>(where, dp_name, dp, "dy", dy);
  require_disjoint<T, T>(where, dp_name, dp, "dx", std::span<T const>(dx));
}

// The sum of dy x over the positions with x < 0: each product exact, the sum compensated
// (math::compensated_sum), so that terms which cancel (mixed signs) leave the exact sum rounded
// about once (issue 10 measured 9-14 ulp lost by the plain sum).
template <class V>
void add_negative_part(math::compensated_sum<V>& sum, V const& x, V const& dy) noexcept {
  auto negative = x < V(0);
  auto p = math::two_product(dy, x);
  sum.add(math::select(negative, p.hi, V(0)), math::select(negative, p.lo, V(0)));
}

}  // namespace NONLIN_ISA
}  // namespace detail

inline namespace NONLIN_ISA {

// 16-bit arrays (bfloat16, float16: x, alpha, y and the gradients) are computed in float: each
// y and dx correctly rounded as in kernels.hpp, dalpha's compensated sum in float rounded once.
template <class Arch = xsimd::default_arch, detail::span_element T>
void prelu_forward(std::span<T const> x, std::span<T const> alpha, std::span<T> y,
                   prelu_shape shape) {
  char const* where = "nonlin::prelu_forward";
  detail::require_prelu_arguments(where, shape, x.size(), alpha.size());
  detail::require_same_size<T>(where, "x", x, "y", y);
  detail::require_no_partial_overlap<T>(where, "y", y, "x", x);
  detail::require_disjoint<T, T>(where, "y", y, "alpha", alpha);
  detail::for_each_block(shape, [&](std::size_t c, std::size_t offset) {
    leaky_relu const f{.alpha =
                           static_cast<double>(detail::widened(alpha[alpha.size() == 1 ? 0 : c]))};
    forward<Arch>(f, x.subspan(offset, shape.inner), y.subspan(offset, shape.inner));
  });
}

// dx and dalpha; dx may be x or dy itself.
NONLIN_INTRINSIC_DIAGNOSTICS_PUSH
template <class Arch = xsimd::default_arch, detail::span_element T>
void prelu_backward(std::span<T const> x, std::span<T const> alpha, std::span<T const> dy,
                    std::span<T> dx, std::span<T> dalpha, prelu_shape shape) {
  char const* where = "nonlin::prelu_backward";
  detail::require_prelu_arguments(where, shape, x.size(), alpha.size());
  detail::require_channel_backward(where, x, "alpha", alpha, dy, dx, "dalpha", dalpha);
  using C = detail::compute_t<T>;
  using batch = xsimd::batch<C, Arch>;
  // The alpha gradient is summed before dx is written, since dx may overwrite x or dy: for each
  // alpha entry, one compensated sum over every block that shares it.
  bool const shared = alpha.size() == 1;
  for (std::size_t a = 0; a < alpha.size(); ++a) {
    math::compensated_sum<batch> lanes;
    math::compensated_sum<C> rest;
    for (std::size_t i = 0; i < shape.n && shape.inner > 0; ++i) {
      for (std::size_t c = shared ? 0 : a; c < (shared ? shape.channels : a + 1); ++c) {
        std::size_t const offset = (i * shape.channels + c) * shape.inner;
        T const* xs = x.data() + offset;
        T const* dys = dy.data() + offset;
        std::size_t k = 0;
        for (; k + batch::size <= shape.inner; k += batch::size) {
          detail::add_negative_part(lanes, detail::load_batch<batch>(xs + k),
                                    detail::load_batch<batch>(dys + k));
        }
        for (; k < shape.inner; ++k) {
          detail::add_negative_part(rest, detail::widened(xs[k]), detail::widened(dys[k]));
        }
      }
    }
    dalpha[a] = detail::narrowed<T>(math::lanes_total(lanes, rest));
  }
  detail::for_each_block(shape, [&](std::size_t c, std::size_t offset) {
    leaky_relu const f{.alpha =
                           static_cast<double>(detail::widened(alpha[alpha.size() == 1 ? 0 : c]))};
    backward<Arch>(f, x.subspan(offset, shape.inner), dy.subspan(offset, shape.inner),
                   dx.subspan(offset, shape.inner));
  });
}
NONLIN_INTRINSIC_DIAGNOSTICS_POP

}  // namespace NONLIN_ISA
}  // namespace nonlin
