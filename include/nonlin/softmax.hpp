// SPDX-License-Identifier: MIT
#pragma once
// softmax and log_softmax with temperature and their backward passes from the saved output
// (softmax + cross-entropy from logits is in cross_entropy.hpp, which this header includes).
// They normalise one axis, so they work on arrays:
//   rows:  a contiguous (rows, cols) array, each row normalised ((B, T, V) over V is this case)
//   axis:  an (outer, axis, inner) array normalised over the middle axis ((N, C, H, W) over C)
//
//   p_i       = exp((z_i - m) / T) / s,  m = max z,  s = sum_j exp((z_j - m) / T)
//   log p_i   = (z_i - m) / T - log s                (finite where p_i underflows to 0)
//   softmax backward:      dz = p (dp - <p, dp>) / T
//   log_softmax backward:  dz = (g - p sum g) / T,  p = exp(log p)
//
// A contiguous row of finite (or -inf) entries takes three passes: its maximum, the compensated
// sum of the exps, then the outputs; other rows, and the strided layout, find the maximum and
// the sum together in one pass (the running sum is rescaled when a lane's maximum grows). z - m
// is carried as hi + lo into exp, so the subtraction costs no accuracy. The backward passes
// reduce with compensated sums of exact products. T must be finite and > 0: anything else
// throws std::invalid_argument naming it (T = 0 would be greedy selection, which is the
// caller's rule, not a softmax).
// Masking: -inf entries are masked positions: p = 0, log p = -inf, gradient 0 there. A row whose
// entries are all -inf gives p = 0, log p = -inf, zero gradients and zero loss (PyTorch gives
// NaN; masked attention wants zeros). A NaN or +inf anywhere in a row makes that row NaN, its
// masked entries included; other rows are not affected.
//
// bfloat16 and float16 arrays (float16.hpp) run through float: a block of whole slices
// (outer index) at a time is widened into float buffers, the float driver runs on it (sums and
// maxima in float, compensated as above) and the outputs are rounded once to 16 bits, so each
// p is within half a 16-bit ulp of the float result (itself within a few float ulp of p). The
// buffers (one per input, up to 16384 floats or one slice) are allocated once per call, before
// anything is written.
//
// The pieces: axis_layout.hpp (the layout), detail/softmax_checks.hpp (argument checks),
// detail/softmax_math.hpp (the running sum and the per-element math), detail/softmax_drivers.hpp
// (the loops).

#include <algorithm>
#include <array>
#include <bit>
#include <concepts>
#include <cstddef>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include <xsimd/xsimd.hpp>

#include "axis_layout.hpp"
#include "concepts.hpp"
#include "detail/checks.hpp"
#include "detail/ranges.hpp"
#include "detail/softmax_checks.hpp"
#include "detail/softmax_drivers.hpp"
#include "detail/softmax_math.hpp"
#include "math/exp.hpp"
#include "math/fast.hpp"
#include "math/ops.hpp"

namespace nonlin {

struct softmax {
  double temperature = 1.0;
};

struct log_softmax {
  double temperature = 1.0;
};

namespace fast {
// The fast tier's softmax and log_softmax (the counterparts of nonlin/fast.hpp's functors): the
// same arguments, checks and policies; in the rows layout, a row of finite (or -inf) entries
// takes its terms from the fast tier's table exp with z - m rounded (as the peers form it), sums
// them four batches at a time in the element type before the compensated sum, and the backward
// passes reduce rounded products the same way (log_softmax's e^y from the table exp too). Other
// rows (a NaN or +inf, all -inf) and the (outer, axis, inner) layout's forward are the default
// tier's. Bounds: README, "Fast tier".
struct softmax {
  double temperature = 1.0;
};

struct log_softmax {
  double temperature = 1.0;
};
}  // namespace fast

// softmax or log_softmax, of either tier: the normalisations of this header.
template <class F>
concept normalization = std::same_as<F, softmax> || std::same_as<F, log_softmax> ||
    std::same_as<F, fast::softmax> || std::same_as<F, fast::log_softmax>;

namespace detail {
template <class F>
inline constexpr bool is_log_normalization =
    std::same_as<F, log_softmax> || std::same_as<F, fast::log_softmax>;
template <class F>
inline constexpr bool is_fast_normalization =
    std::same_as<F, fast::softmax> || std::same_as<F, fast::log_softmax>;
template <class F>
concept softmax_kind = std::same_as<F, softmax> || std::same_as<F, fast::softmax>;
template <class F>
concept log_softmax_kind = std::same_as<F, log_softmax> || std::same_as<F, fast::log_softmax>;

// The exceptions' "where": the call and F's name.
template <class F>
constexpr char const* forward_where() {
  if constexpr (std::same_as<F, softmax>) {
    return "nonlin::forward(softmax)";
  } else if constexpr (std::same_as<F, log_softmax>) {
    return "nonlin::forward(log_softmax)";
  } else if constexpr (std::same_as<F, fast::softmax>) {
    return "nonlin::forward(fast::softmax)";
  } else {
    return "nonlin::forward(fast::log_softmax)";
  }
}
template <class F>
constexpr char const* parallel_forward_where() {
  if constexpr (std::same_as<F, softmax>) {
    return "nonlin::parallel::forward(softmax)";
  } else if constexpr (std::same_as<F, log_softmax>) {
    return "nonlin::parallel::forward(log_softmax)";
  } else if constexpr (std::same_as<F, fast::softmax>) {
    return "nonlin::parallel::forward(fast::softmax)";
  } else {
    return "nonlin::parallel::forward(fast::log_softmax)";
  }
}

template <class F>
constexpr char const* backward_where() {
  if constexpr (std::same_as<F, softmax>) {
    return "nonlin::backward_from_output(softmax)";
  } else if constexpr (std::same_as<F, log_softmax>) {
    return "nonlin::backward_from_output(log_softmax)";
  } else if constexpr (std::same_as<F, fast::softmax>) {
    return "nonlin::backward_from_output(fast::softmax)";
  } else {
    return "nonlin::backward_from_output(fast::log_softmax)";
  }
}
}  // namespace detail

namespace detail {
inline namespace NONLIN_ISA {

// The fast tier's reductions for backward_over_axis: sum += y dy (softmax) or dy (log_softmax),
// four batches combined in the element type first where the driver offers them (the products
// rounded; |y| <= 1 and |dy| <= max / 4 there, so nothing overflows).
struct fast_dot_add {
  static constexpr bool four_at_a_time = true;
  template <class S, class B>
  void operator()(S& sum, B const& p, B const& g) const {
    sum.add(p * g);
  }
  template <class S, class B>
  void operator()(S& sum, std::array<B, 4> const& p, std::array<B, 4> const& g) const {
    sum.add(math::fma(p[0], g[0], p[1] * g[1]) + math::fma(p[2], g[2], p[3] * g[3]));
  }
};
struct fast_sum_add {
  static constexpr bool four_at_a_time = true;
  template <class S, class B>
  void operator()(S& sum, B const& /*p*/, B const& g) const {
    sum.add(g);
  }
  template <class S, class B>
  void operator()(S& sum, std::array<B, 4> const& /*p*/, std::array<B, 4> const& g) const {
    sum.add((g[0] + g[1]) + (g[2] + g[3]));
  }
};

// run(block layout, float pointers...) over float copies of 16-bit arrays shaped `shape`, a block
// of whole outer slices at a time; the result, which run leaves in the first buffer, is rounded
// into out. The inputs are read into the buffers before out is written (out may be an input).
template <class Arch, storage16 T, std::size_t N, class Run>
void through_float(axis_layout shape, std::array<std::span<T const>, N> in, std::span<T> out,
                   Run const& run) {
  std::size_t const slice = shape.axis * shape.inner;
  if (slice == 0 || shape.outer == 0) {
    return;
  }
  constexpr std::size_t block_floats = 16384;
  std::size_t const slices = std::max<std::size_t>(1, std::min(shape.outer, block_floats / slice));
  std::array<std::vector<float>, N> buffers;
  for (auto& b : buffers) {
    b.resize(slices * slice);
  }
  for (std::size_t o = 0; o < shape.outer; o += slices) {
    std::size_t const count = std::min(slices, shape.outer - o);
    std::size_t const begin = o * slice;
    std::size_t const size = count * slice;
    for (std::size_t k = 0; k < N; ++k) {
      widen16<Arch>(in[k].subspan(begin, size), buffers[k].data());
    }
    axis_layout const block{count, shape.axis, shape.inner};
    [&]<std::size_t... k>(std::index_sequence<k...>) { run(block, buffers[k].data()...); }
    (std::make_index_sequence<N>{});
    narrow16<Arch>(buffers[0].data(), out.subspan(begin, size));
  }
}

// softmax's or log_softmax's backward from the output on 16-bit arrays: the float overload on
// float blocks of y and dy (found by argument-dependent lookup when instantiated), dx rounded
// once.
template <class Arch, class F, storage16 T>
void backward_from_output16(F const& f, std::span<T const> y, std::span<T const> dy,
                            std::span<T> dx, axis_layout shape) {
  through_float<Arch>(shape, std::array{y, dy}, dx, [&](axis_layout block, float* yb, float* dyb) {
    backward_from_output<Arch>(f, std::span<float const>(yb, block.size()),
                               std::span<float const>(dyb, block.size()),
                               std::span<float>(yb, block.size()), block);
  });
}

}  // namespace NONLIN_ISA
}  // namespace detail

inline namespace NONLIN_ISA {

// y = softmax(x / T) or log_softmax(x / T) over the axis of `shape`; y may be x itself.
template <class Arch = xsimd::default_arch, normalization F, detail::span_element T>
void forward(F const& f, std::span<T const> x, std::span<T> y, axis_layout shape) {
  constexpr bool log = detail::is_log_normalization<F>;
  constexpr bool fast = detail::is_fast_normalization<F>;
  char const* where = detail::forward_where<F>();
  detail::require_temperature<detail::compute_t<T>>(where, f.temperature);
  detail::require_layout(where, "x", x.size(), shape);
  detail::require_same_size<T>(where, "x", x, "y", y);
  detail::require_no_partial_overlap<T>(where, "y", y, "x", x);
  if constexpr (storage16<T>) {
    detail::through_float<Arch>(shape, std::array{x}, y, [&](axis_layout block, float* b) {
      detail::forward_over_axis<Arch, log, float, fast>(block, b, b,
                                                        static_cast<float>(f.temperature));
    });
  } else {
    detail::forward_over_axis<Arch, log, T, fast>(shape, x.data(), y.data(),
                                                  static_cast<T>(f.temperature));
  }
}

// softmax: dx = y (dy - <y, dy>) / T from the saved output y; dx may be y or dy itself.
// <y, dy> is compensated with exact products; 1/T is applied to y first where T <= 1 and last
// where T > 1, so that neither p / T nor p (dy - <y, dy>) underflows before the other factor
// brings it back (both orders round twice).
// fast::softmax: the products rounded, four batches' combined in the element type (rows layout),
// then the compensated sum: |dy| <= max / 4 keeps the combination finite too.
template <class Arch = xsimd::default_arch, detail::softmax_kind F, detail::span_element T>
void backward_from_output(F const& f, std::span<T const> y, std::span<T const> dy, std::span<T> dx,
                          axis_layout shape) {
  detail::require_backward_arguments(detail::backward_where<F>(), f, y, dy, dx, shape);
  if constexpr (storage16<T>) {
    detail::backward_from_output16<Arch>(f, y, dy, dx, shape);
  } else {
    T const t = static_cast<T>(f.temperature);
    // |dy| <= max / 4 keeps dy - <y, dy> finite (|<y, dy>| <= max |dy| since y sums to 1).
    constexpr int scale_bits = 2;
    auto exact_add = [](auto& sum, auto p, auto g) {
      if constexpr (requires { sum.add_small_product(p, g); }) {
        sum.add_small_product(p, g);  // |p| <= 1: p g cannot overflow
      } else {
        sum.add_product(p, g);
      }
    };
    auto add = [&] {
      if constexpr (detail::is_fast_normalization<F>) {
        return detail::fast_dot_add{};
      } else {
        return exact_add;
      }
    }();
    if (t == T(1)) {
      // The usual case without its multiplication by 1/T = 1 (the same bits, an operation less).
      detail::backward_over_axis<Arch>(
          shape, y.data(), dy.data(), dx.data(), t, scale_bits, add,
          [](auto p, auto g, auto dot, auto) { return p * (g - dot); });
    } else if (t < T(1)) {
      detail::backward_over_axis<Arch>(
          shape, y.data(), dy.data(), dx.data(), t, scale_bits, add,
          [](auto p, auto g, auto dot, auto inv_t) { return (p * inv_t) * (g - dot); });
    } else {
      detail::backward_over_axis<Arch>(
          shape, y.data(), dy.data(), dx.data(), t, scale_bits, add,
          [](auto p, auto g, auto dot, auto inv_t) { return (p * (g - dot)) * inv_t; });
    }
  }
}

// log_softmax: dx = (dy - softmax sum(dy)) / T from the saved output y = log p; 0 at masked
// positions (y = -inf). The sum runs over every entry, masked ones included: the derivative of
// sum_j dy_j log p_j (each log p_j, masked or not, has d log p_j / dz_i = delta_ij - p_i), as
// PyTorch computes it; leaving the masked dy_j out would give the unmasked entries the gradient
// of a different loss. The sum is compensated; where it could overflow (|dy| above
// max / 2^(bit_width(axis) + 1)) the row runs on dy scaled down and dx is scaled back.
// fast::log_softmax: dy summed four batches at a time in the element type (rows layout), then
// compensated; e^y from the fast tier's table exp.
template <class Arch = xsimd::default_arch, detail::log_softmax_kind F, detail::span_element T>
void backward_from_output(F const& f, std::span<T const> y, std::span<T const> dy, std::span<T> dx,
                          axis_layout shape) {
  detail::require_backward_arguments(detail::backward_where<F>(), f, y, dy, dx, shape);
  if constexpr (storage16<T>) {
    detail::backward_from_output16<Arch>(f, y, dy, dx, shape);
  } else {
    int const scale_bits = static_cast<int>(std::bit_width(shape.axis)) + 1;
    T const t = static_cast<T>(f.temperature);
    // At T = 1 without the multiplication by 1/T = 1 (the same bits, an operation less).
    auto add = [&] {
      if constexpr (detail::is_fast_normalization<F>) {
        return detail::fast_sum_add{};
      } else {
        return [](auto& sum, auto, auto g) { sum.add(g); };
      }
    }();
    auto run = [&]<bool unit_temperature>(std::bool_constant<unit_temperature>) {
      detail::backward_over_axis<Arch>(
          shape, y.data(), dy.data(), dx.data(), t, scale_bits, add,
          [](auto logp, auto g, auto total, auto inv_t) {
            using V = decltype(logp);
            V e;
            if constexpr (detail::is_fast_normalization<F>) {
              // logp <= 0; -inf (a masked entry) is clamped to where the value is 0.
              V const lowest(math::detail::exp_constants<scalar_t<V>>::min_arg);
              e = math::fast::exp_by_table<false>(math::clamp_below(logp, lowest)).value();
            } else {
              e = math::exp(logp);
            }
            V grad = math::fnma(e, total, g);
            if constexpr (!unit_temperature) {
              grad = grad * inv_t;
            }
            return math::select(logp == V(-std::numeric_limits<scalar_t<V>>::infinity()), V(0),
                                grad);
          });
    };
    if (t == T(1)) {
      run(std::true_type{});
    } else {
      run(std::false_type{});
    }
  }
}

// The rows layout: (rows, cols) with rows = x.size() / cols.
template <class Arch = xsimd::default_arch, normalization F, detail::span_element T>
void forward(F const& f, std::span<T const> x, std::span<T> y, std::size_t cols) {
  forward<Arch>(f, x, y, detail::rows_layout(detail::forward_where<F>(), "x", x.size(), cols));
}

template <class Arch = xsimd::default_arch, normalization F, detail::span_element T>
void backward_from_output(F const& f, std::span<T const> y, std::span<T const> dy, std::span<T> dx,
                          std::size_t cols) {
  backward_from_output<Arch>(f, y, dy, dx,
                             detail::rows_layout(detail::backward_where<F>(), "y", y.size(), cols));
}

// The same for any contiguous ranges (std::vector, std::array, ...): detail/ranges.hpp.
template <class Arch = xsimd::default_arch, normalization F, std::ranges::contiguous_range X,
          std::ranges::contiguous_range Y, class Shape>
requires detail::not_spans<detail::outputs<Y>, detail::inputs<X>> &&
    (std::same_as<Shape, axis_layout> ||
     std::convertible_to<Shape, std::size_t>)void forward(F const& f, X&& x, Y&& y, Shape shape) {
  if constexpr (std::same_as<Shape, axis_layout>) {
    forward<Arch>(f, detail::as_input(x), detail::as_output(y), shape);
  } else {
    forward<Arch>(f, detail::as_input(x), detail::as_output(y), static_cast<std::size_t>(shape));
  }
}

template <class Arch = xsimd::default_arch, normalization F, std::ranges::contiguous_range Y,
          std::ranges::contiguous_range DY, std::ranges::contiguous_range DX, class Shape>
requires detail::not_spans<detail::outputs<DX>, detail::inputs<Y, DY>> &&
    (std::same_as<Shape, axis_layout> ||
     std::convertible_to<Shape, std::size_t>)void backward_from_output(F const& f, Y&& y, DY&& dy,
                                                                       DX&& dx, Shape shape) {
  if constexpr (std::same_as<Shape, axis_layout>) {
    backward_from_output<Arch>(f, detail::as_input(y), detail::as_input(dy), detail::as_output(dx),
                               shape);
  } else {
    backward_from_output<Arch>(f, detail::as_input(y), detail::as_input(dy), detail::as_output(dx),
                               static_cast<std::size_t>(shape));
  }
}

}  // namespace NONLIN_ISA
}  // namespace nonlin

// The loss on top of these, for the code that includes this header for it.
#include "cross_entropy.hpp"
#include "isa.hpp"
