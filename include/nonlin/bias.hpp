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
//
// The gated units take the bias of the projection that feeds them: x is the fused (rows, 2H)
// buffer of gated_forward_fused and the bias has 2H entries in the same layout (one per column
// of the concatenated [V W] weights):
//   out        = f(value + b_value, gate + b_gate)
//   dx         = the value and gate gradients at the pre-activation x + b, in x's layout
//   dbias[j]   = sum of dx[., j] over the rows
// again the kernels' results on x + b bit for bit, and dbias compensated.

#include <algorithm>
#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <xsimd/xsimd.hpp>

#include "concepts.hpp"
#include "detail/checks.hpp"
#include "detail/partial.hpp"
#include "glu.hpp"
#include "isa.hpp"
#include "kernels.hpp"
#include "math/ops.hpp"
#include "math/sum.hpp"
#include "prelu.hpp"

namespace nonlin {

namespace detail {
inline namespace NONLIN_ISA {
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

// The column sums of a (rows, width) array given a block of rows at a time, each compensated
// (math::compensated_sum), a batch of columns at a time, the rows added in order (so the sums do
// not depend on how the rows are blocked): the bias gradient where the bias runs along the rows
// (inner = 1, and the gated units' 2H columns). A column's sum and error stay in registers over
// a block (a row at a time, their loads and stores made the fused relu backward 0.75x the
// two-pass one in L1).
// 16-bit rows (T) are widened and summed in float (C); write() rounds each sum once.
template <class Arch, class T, class C = compute_t<T>>
class column_sums {
 public:
  // Rows per block: what the callers write before they sum (8 rows of 1024 floats: 32 KiB).
  static constexpr std::size_t block_rows = 8;

  explicit column_sums(std::size_t width) : sum_(width, C(0)), error_(width, C(0)) {}

  // block: rows of width() entries, contiguous.
  void add_rows(std::span<T const> block) noexcept {
    using batch = xsimd::batch<C, Arch>;
    std::size_t const width = sum_.size();
    std::size_t const rows = width == 0 ? 0 : block.size() / width;
    std::size_t c = 0;
    for (; c + batch::size <= width; c += batch::size) {
      math::compensated_sum<batch> s{batch::load_unaligned(sum_.data() + c),
                                     batch::load_unaligned(error_.data() + c)};
      for (std::size_t r = 0; r < rows; ++r) {
        s.add(load_batch<batch>(block.data() + r * width + c));
      }
      s.sum.store_unaligned(sum_.data() + c);
      s.error.store_unaligned(error_.data() + c);
    }
    for (; c < width; ++c) {
      math::compensated_sum<C> s{sum_[c], error_[c]};
      for (std::size_t r = 0; r < rows; ++r) {
        s.add(widened(block[r * width + c]));
      }
      sum_[c] = s.sum;
      error_[c] = s.error;
    }
  }
  void write(std::span<T> out) const noexcept {
    for (std::size_t c = 0; c < out.size(); ++c) {
      out[c] = narrowed<T>(math::compensated_sum<C>{sum_[c], error_[c]}.total());
    }
  }

 private:
  std::vector<C> sum_;
  std::vector<C> error_;
};
NONLIN_INTRINSIC_DIAGNOSTICS_POP

// The gated forms' bias: 2H entries for x's rows of 2H (any even number when there are no rows,
// whose H is unknown).
inline void require_gated_bias(char const* where, char const* name, std::size_t size,
                               std::size_t rows, std::size_t half) {
  bool const fits = rows == 0 ? size % 2 == 0 : size == 2 * half;
  if (!fits) {
    throw std::invalid_argument(std::string(where) + ": " + size_text(name, size) +
                                " but x's rows have 2H = " + std::to_string(2 * half) +
                                " entries; " + name + " must have one per column of x");
  }
}

// forward_with_bias's op, f(x + b): on 16-bit arrays through value16 (kernels.hpp), so that
// where double lands exactly on a midpoint of T the result still rounds toward f(x + b)'s side,
// as nonlin::forward's does (x + b is exact in double but for a b far below x).
template <class T, class F>
auto biased_forward_op(F const& f) {
  if constexpr (storage16<T>) {
    return [f](auto xb, auto bb) -> decltype(f(xb + bb)) { return detail::value16(f, xb + bb); };
  } else {
    return [f](auto xb, auto bb) -> decltype(f(xb + bb)) { return f(xb + bb); };
  }
}

// The gated backward kernel's op at the biased inputs (value + b_value, gate + b_gate) as a
// functor's backward that passes a tails argument on (math/exp.hpp: product_tails), so that
// backward_deferring_tails defers the act's product tails here as in gated_backward_fused (float
// and double arrays, where the act's backward takes the argument: glu.hpp, act_takes_tails).
template <class F>
struct gated_backward_at_biased {
  F f;
  template <class B, class... Tails>
  auto backward(B value, B gate, B dy, B b_value, B b_gate, Tails const&... tails) const
      -> decltype(f.backward(value + b_value, gate + b_gate, dy, tails...)) {
    return f.backward(value + b_value, gate + b_gate, dy, tails...);
  }
};
}  // namespace NONLIN_ISA
}  // namespace detail

inline namespace NONLIN_ISA {

// y = f(x + bias[c]).
template <class Arch = xsimd::default_arch, class F, detail::span_element T>
requires unary_activation<F, detail::compute_t<T>>
void forward_with_bias(F const& f, std::span<T const> x, std::span<T const> bias, std::span<T> y,
                       prelu_shape shape) {
  char const* where = "nonlin::forward_with_bias";
  detail::require_bias_arguments(where, shape, x.size(), bias.size());
  detail::require_same_size<T>(where, "x", x, "y", y);
  detail::require_no_partial_overlap<T>(where, "y", y, "x", x);
  detail::require_disjoint<T, T>(where, "y", y, "bias", bias);
  auto const op = detail::biased_forward_op<T>(f);
  if (shape.inner == 1) {  // (n, channels): the bias runs along each row
    for (std::size_t i = 0; i < shape.n; ++i) {
      std::size_t const offset = i * shape.channels;
      detail::elementwise_forward<F, Arch, detail::exact16::none>(
          op, y.subspan(offset, shape.channels), x.subspan(offset, shape.channels), bias);
    }
    return;
  }
  detail::for_each_block(shape, [&](std::size_t c, std::size_t offset) {
    auto const b = detail::widened(bias[c]);
    detail::elementwise_forward<F, Arch, detail::exact16::none>(
        [op, b](auto xb) -> decltype(op(xb, xb)) {
          using B = decltype(xb);
          return op(xb, B(b));
        },
        y.subspan(offset, shape.inner), x.subspan(offset, shape.inner));
  });
}

// dx = dy * f'(x + bias[c]) and dbias[c] = sum of dx over channel c, in one pass: each block's
// dx is summed right after it is written, while it is in cache.
NONLIN_INTRINSIC_DIAGNOSTICS_PUSH
template <class Arch = xsimd::default_arch, class F, detail::span_element T>
requires unary_activation<F, detail::compute_t<T>>
void backward_with_bias(F const& f, std::span<T const> x, std::span<T const> bias,
                        std::span<T const> dy, std::span<T> dx, std::span<T> dbias,
                        prelu_shape shape) {
  char const* where = "nonlin::backward_with_bias";
  detail::require_bias_arguments(where, shape, x.size(), bias.size());
  detail::require_channel_backward(where, x, "bias", bias, dy, dx, "dbias", dbias);
  using C = detail::compute_t<T>;
  using batch = xsimd::batch<C, Arch>;
  constexpr std::size_t width = batch::size;
  std::size_t const channels = shape.channels;
  if (shape.inner == 1) {
    // Per channel, a compensated sum down the rows.
    using sums_t = detail::column_sums<Arch, T>;
    sums_t sums(channels);
    for (std::size_t first = 0; first < shape.n; first += sums_t::block_rows) {
      std::size_t const last = std::min(shape.n, first + sums_t::block_rows);
      for (std::size_t i = first; i < last; ++i) {
        std::size_t const offset = i * channels;
        detail::elementwise<Arch>(
            [f](auto xb, auto bb, auto dyb) -> decltype(f.backward(xb + bb, dyb)) {
              return f.backward(xb + bb, dyb);
            },
            dx.subspan(offset, channels), x.subspan(offset, channels), bias,
            dy.subspan(offset, channels));
      }
      sums.add_rows(std::span<T const>(dx.subspan(first * channels, (last - first) * channels)));
    }
    sums.write(dbias);
    return;
  }
  std::vector<math::compensated_sum<batch>> lanes(channels);
  std::vector<math::compensated_sum<C>> rest(channels);
  detail::for_each_block(shape, [&](std::size_t c, std::size_t offset) {
    C const b = detail::widened(bias[c]);
    std::span<T> const g = dx.subspan(offset, shape.inner);
    detail::elementwise<Arch>(
        [f, b](auto xb, auto dyb) -> decltype(f.backward(xb, dyb)) {
          using B = decltype(xb);
          return f.backward(xb + B(b), dyb);
        },
        g, x.subspan(offset, shape.inner), dy.subspan(offset, shape.inner));
    std::size_t k = 0;
    for (; k + width <= shape.inner; k += width) {
      lanes[c].add(detail::load_batch<batch>(g.data() + k));
    }
    for (; k < shape.inner; ++k) {
      rest[c].add(detail::widened(g[k]));
    }
  });
  for (std::size_t c = 0; c < channels; ++c) {
    dbias[c] = detail::narrowed<T>(math::lanes_total(lanes[c], rest[c]));
  }
}
NONLIN_INTRINSIC_DIAGNOSTICS_POP

// out (rows, H) = f(value + b_value, gate + b_gate), value and gate the two halves of each row of
// x (rows, 2H) and of the bias (2H) as glu_split says. out must be apart from x and the bias.
template <class Arch = xsimd::default_arch, class F, detail::span_element T>
requires gated_activation<F, detail::compute_t<T>>
void gated_forward_fused_with_bias(F const& f, std::span<T const> x, std::span<T const> bias,
                                   std::span<T> out, std::size_t rows, glu_split split) {
  char const* where = "nonlin::gated_forward_fused_with_bias";
  std::size_t const half = detail::fused_half_width(where, x.size(), rows, "out", out.size());
  detail::require_gated_bias(where, "bias", bias.size(), rows, half);
  detail::require_disjoint<T, T>(where, "out", out, "x", x);
  detail::require_disjoint<T, T>(where, "out", out, "bias", bias);
  if (half == 0) {
    return;
  }
  auto const at = detail::offsets(split, half);
  // The gated kernels' own op (glu.hpp: value16 on 16-bit arrays) at the biased inputs.
  auto const op = [g = detail::gated_forward_op<T>(f)](auto v, auto gate, auto bv,
                                                       auto bg) -> decltype(f(v + bv, gate + bg)) {
    return g(v + bv, gate + bg);
  };
  for (std::size_t r = 0; r < rows; ++r) {
    auto const row = x.subspan(2 * half * r, 2 * half);
    detail::elementwise_forward<F, Arch, detail::exact16::none>(
        op, out.subspan(half * r, half), row.subspan(at.value, half), row.subspan(at.gate, half),
        bias.subspan(at.value, half), bias.subspan(at.gate, half));
  }
}

// dx (rows, 2H) = the value and gate gradients at x + b, in x's layout (dy is (rows, H)), and
// dbias (2H) = the column sums of dx. dx may be x itself; dx and dbias must be apart from dy and
// the bias, dbias from everything.
template <class Arch = xsimd::default_arch, class F, detail::span_element T>
requires gated_activation<F, detail::compute_t<T>>
void gated_backward_fused_with_bias(F const& f, std::span<T const> x, std::span<T const> bias,
                                    std::span<T const> dy, std::span<T> dx, std::span<T> dbias,
                                    std::size_t rows, glu_split split) {
  char const* where = "nonlin::gated_backward_fused_with_bias";
  std::size_t const half = detail::fused_half_width(where, x.size(), rows, "dy", dy.size());
  detail::require_gated_bias(where, "bias", bias.size(), rows, half);
  detail::require_same_size<T>(where, "bias", bias, "dbias", std::span<T const>(dbias));
  detail::require_same_size<T>(where, "x", x, "dx", dx);
  detail::require_no_partial_overlap<T>(where, "dx", dx, "x", x);
  detail::require_disjoint<T, T>(where, "dx", dx, "dy", dy);
  detail::require_disjoint<T, T>(where, "dx", dx, "bias", bias);
  detail::require_disjoint<T, T>(where, "dbias", dbias, "x", x);
  detail::require_disjoint<T, T>(where, "dbias", dbias, "bias", bias);
  detail::require_disjoint<T, T>(where, "dbias", dbias, "dy", dy);
  detail::require_disjoint<T, T>(where, "dbias", dbias, "dx", std::span<T const>(dx));
  using sums_t = detail::column_sums<Arch, T>;
  sums_t sums(bias.size());  // 2H, or any even size with no rows: zeros
  auto const at = detail::offsets(split, half);
  using batch = xsimd::batch<detail::compute_t<T>, Arch>;
  // Where the act's backward can defer its product tail, on float or double arrays, the two
  // batches of an iteration with the recorder, interleaved (glu.hpp: elementwise_pair_backward).
  auto const op = [&] {
    if constexpr (!storage16<T> && detail::gated_defers_product_tails<F, batch>) {
      return detail::backward_deferring_tails<detail::gated_backward_at_biased<F>>{{f}};
    } else {
      return
          [f](auto v, auto g, auto d, auto bv, auto bg) -> decltype(f.backward(v + bv, g + bg, d)) {
            return f.backward(v + bv, g + bg, d);
          };
    }
  }();
  for (std::size_t first = 0; first < rows && half > 0; first += sums_t::block_rows) {
    std::size_t const last = std::min(rows, first + sums_t::block_rows);
    for (std::size_t r = first; r < last; ++r) {
      auto const row = x.subspan(2 * half * r, 2 * half);
      auto const grad = dx.subspan(2 * half * r, 2 * half);
      detail::elementwise_pair_backward<Arch>(
          op, grad.subspan(at.value, half), grad.subspan(at.gate, half),
          row.subspan(at.value, half), row.subspan(at.gate, half), dy.subspan(half * r, half),
          bias.subspan(at.value, half), bias.subspan(at.gate, half));
    }
    sums.add_rows(std::span<T const>(dx.subspan(2 * half * first, 2 * half * (last - first))));
  }
  sums.write(dbias);
}

}  // namespace NONLIN_ISA
}  // namespace nonlin
