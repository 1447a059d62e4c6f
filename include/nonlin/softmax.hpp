// SPDX-License-Identifier: MIT
#pragma once
// softmax and log_softmax with temperature, their backward passes from the saved output, and
// softmax + cross-entropy from logits. They normalise one axis, so they work on arrays:
//   rows:  a contiguous (rows, cols) array, each row normalised ((B, T, V) over V is this case)
//   axis:  an (outer, axis, inner) array normalised over the middle axis ((N, C, H, W) over C)
//
//   p_i       = exp((z_i - m) / T) / s,  m = max z,  s = sum_j exp((z_j - m) / T)
//   log p_i   = (z_i - m) / T - log s                (finite where p_i underflows to 0)
//   softmax backward:      dz = p (dp - <p, dp>) / T
//   log_softmax backward:  dz = (g - p sum g) / T,  p = exp(log p)
//   cross-entropy:         loss = -sum q log p,  dz = (p sum q - q) / T  (/ rows that count, for
//                          mean; p - q where q sums to 1, as hard targets do)
//
// One pass finds m and s together (the running sum is rescaled when a lane's maximum grows), one
// more writes the outputs. z - m is carried as hi + lo into exp, so the subtraction costs no
// accuracy. T must be finite and > 0: anything else throws std::invalid_argument naming it
// (T = 0 would be greedy selection, which is the caller's rule, not a softmax).
// Masking: -inf entries are masked positions: p = 0, log p = -inf, gradient 0 there. A row whose
// entries are all -inf gives p = 0, log p = -inf, zero gradients and zero loss (PyTorch gives
// NaN; masked attention wants zeros). A NaN or +inf anywhere in a row makes that row NaN, its
// masked entries included; other rows are not affected.

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include "concepts.hpp"
#include "detail/checks.hpp"
#include "kernels.hpp"
#include "math/double_float.hpp"
#include "math/exp.hpp"
#include "math/log.hpp"
#include "math/ops.hpp"
#include "math/sum.hpp"

namespace nonlin {

struct softmax {
  double temperature = 1.0;
};

struct log_softmax {
  double temperature = 1.0;
};

namespace detail {
inline std::size_t layout_size(char const* where, std::size_t outer, std::size_t axis,
                               std::size_t inner) {
  return require_shape_size(where, "layout", {{"outer", outer}, {"axis", axis}, {"inner", inner}});
}
}  // namespace detail

// An (outer, axis, inner) array normalised over `axis`; {rows, cols, 1} is the rows layout.
struct axis_layout {
  std::size_t outer = 1;
  std::size_t axis = 1;
  std::size_t inner = 1;

  // outer * axis * inner; std::invalid_argument if that does not fit std::size_t.
  std::size_t size() const {
    return detail::layout_size("nonlin::axis_layout::size", outer, axis, inner);
  }
  bool empty() const noexcept { return outer == 0 || axis == 0 || inner == 0; }
};

enum class reduction { none, sum, mean };

namespace detail {

// T must be finite and > 0, also once rounded to the element type (1e-300 or 1e39 are valid
// doubles but 0 and inf as float), and 1/T must be finite.
template <class T>
void require_temperature(char const* where, double t) {
  T const rounded = static_cast<T>(t);
  if (!(std::isfinite(t) && t > 0.0 && std::isfinite(rounded) && rounded > T(0) &&
        std::isfinite(T(1) / rounded))) {
    throw std::invalid_argument(std::string(where) + ": temperature must be finite and > 0 (in " +
                                (sizeof(T) == 4 ? "float" : "double") + " too), got " +
                                number_text(t));
  }
}

inline void require_layout(char const* where, char const* name, std::size_t size,
                           axis_layout shape) {
  std::size_t const expected = layout_size(where, shape.outer, shape.axis, shape.inner);
  if (size != expected) {
    throw std::invalid_argument(
        std::string(where) + ": " + size_text(name, size) + " but the layout " +
        shape_text({{"outer", shape.outer}, {"axis", shape.axis}, {"inner", shape.inner}}) +
        " has " + std::to_string(expected));
  }
}

// The rows layout of `name` (size elements) as (size / cols, cols, 1).
inline axis_layout rows_layout(char const* where, char const* name, std::size_t size,
                               std::size_t cols) {
  if (cols == 0 ? size != 0 : size % cols != 0) {
    throw std::invalid_argument(std::string(where) + ": " + size_text(name, size) +
                                ", which do not make whole rows of cols=" + std::to_string(cols));
  }
  return {cols == 0 ? 0 : size / cols, cols, 1};
}

// Running maximum and sum of exp((z - m) / T), per lane. The sum is compensated (sum + error,
// each addition's rounding kept by two_sum): terms of at most 1 added onto a sum of at least 1
// lose up to half an ulp each, in the same direction when they are alike (one large logit and
// many equal small ones), which would make the row's error grow with its length.
template <class V>
struct running {
  V max = V(-std::numeric_limits<scalar_t<V>>::infinity());
  V sum = V(0);
  V error = V(0);
  // The roundings of error's own additions: a plain error sum drifted with the number of alike
  // terms per lane (148 eps at 1e6 in the strided layout, 18 eps at 1e6 columns with 4-lane
  // SSE, and log p of a dominant entry, which is -error, up to 28 ulp).
  V error_lo = V(0);

  V low() const { return error + error_lo; }
  V total() const { return sum + low(); }

  // sum += term, the rounding into error, error's own rounding into error_lo.
  void add(V const& term) {
    auto added = math::two_sum(sum, term);
    sum = added.hi;
    auto low_sum = math::two_sum(error, added.lo);
    error = low_sum.hi;
    error_lo = error_lo + low_sum.lo;
  }
};

// (z - m) / T as hi + lo: z - m exactly (two_sum_ordered: z and m may be near the largest
// float and of opposite signs), the quotient's rounding recovered from the
// exact residual d - q T (two_product), so that neither costs accuracy in exp or log. At
// T = 1 (unit_temperature, the caller's promise) the quotient is the difference itself, and a
// difference that overflows is already the limit.
template <bool unit_temperature = false, class V>
inline math::double_float<V> shifted_quotient(V z, V m, V inv_t, V t) {
  auto d = math::two_sum_ordered(z, math::neg(m));
  if constexpr (unit_temperature) {
    return d;
  }
  V const q = d.hi * inv_t;
  auto qt = math::two_product(q, t);
  V const lo = (((d.hi - qt.hi) - qt.lo) + d.lo) * inv_t;
  // Finite z and m more than the largest float apart: z - m overflows, (z - m) / T may not.
  constexpr auto inf = std::numeric_limits<scalar_t<V>>::infinity();
  auto overflowed = math::both(math::abs(d.hi) == V(inf), math::abs(z) < V(inf));
  V const scaled = z * inv_t - m * inv_t;
  return {math::select(overflowed, scaled, q), math::select(overflowed, V(0), lo)};
}

// exp((z - m) / T) with (z - m) / T carried as hi + lo into exp.
template <bool unit_temperature = false, class V>
inline math::exp_split<V> shifted_exp(V z, V m, V inv_t, V t) {
  auto q = shifted_quotient<unit_temperature>(z, m, inv_t, t);
  // Where z = m = -inf the difference is NaN; such a lane has nothing to add.
  return math::exp_parts_nonpositive(q.hi, q.lo);
}

// log s for the row's compensated sum s = hi + lo >= 1 (the maximum contributes e^0):
// log1p((hi - 1) + lo), hi - 1 exact below 2. The low part counts where the other entries add
// less than an ulp to 1: then s - 1 is all in lo, and log p of the maximum is -lo, not 0.
template <class V>
inline V log_of_sum(V hi, V lo) {
  return math::log1p((hi - math::c<V>(1)) + lo);
}

// log p = (z - m) / T - log s for a row's log s. Where (z - m) / T is -inf (a masked entry, or
// finite z and m so far apart, or T so small, that the quotient overflows: the true log p is
// below -max) log p is -inf; the low part, NaN there (inf - inf), is left out.
template <bool unit_temperature = false, class V>
inline V log_probability_given(V z, V m, V log_sum, V inv_t, V t) {
  auto q = shifted_quotient<unit_temperature>(z, m, inv_t, t);
  V const value = (q.hi - log_sum) + q.lo;
  return math::select(q.hi == V(-std::numeric_limits<scalar_t<V>>::infinity()), q.hi, value);
}

template <class V>
inline void update(running<V>& r, V z, V inv_t, V t) {
  V const m = math::select(z > r.max, z, r.max);
  auto grew = z > r.max;
  if (math::any(grew)) {
    // Rescale the lanes whose maximum grew: sum * exp((old - new) / T); a lane that was empty
    // (old = -inf) has sum 0 and stays 0.
    V const factor = shifted_exp(r.max, m, inv_t, t).value();
    r.sum = math::select(grew, math::select(r.sum == V(0), V(0), r.sum * factor), r.sum);
    r.error = math::select(grew, math::select(r.error == V(0), V(0), r.error * factor), r.error);
    r.error_lo =
        math::select(grew, math::select(r.error_lo == V(0), V(0), r.error_lo * factor), r.error_lo);
  }
  // A masked entry (z = -inf) in a lane still at -inf adds nothing.
  V const term = shifted_exp(z, m, inv_t, t).value();
  r.add(math::select(z == V(-std::numeric_limits<scalar_t<V>>::infinity()), V(0), term));
  // NaN anywhere: propagate (z > max is false for NaN, so the NaN enters through the sum).
  r.sum = math::select(math::is_nan(z), z, r.sum);
  r.max = m;
}

// Combines the lanes of two batch states into one (max, sum): the sums are rescaled to the
// overall maximum in SIMD, then added across lanes. A NaN lane sum (a NaN entry) or an infinite
// maximum (a +inf entry: inf - inf) makes the total NaN, as the policy says; lanes still at
// -inf (empty or fully masked) add 0.
NONLIN_INTRINSIC_DIAGNOSTICS_PUSH
template <class B>
inline running<scalar_t<B>> combine(running<B> const& a, running<B> const& b, scalar_t<B> inv_t,
                                    scalar_t<B> t) {
  using T = scalar_t<B>;
  constexpr T inf = std::numeric_limits<T>::infinity();
  B const lane_max = math::select(b.max > a.max, b.max, a.max);
  alignas(64) std::array<T, B::size> lanes;
  lane_max.store_aligned(lanes.data());
  T m = -inf;
  for (T const v : lanes) {
    m = v > m ? v : m;
  }
  if (m == -inf) {
    // Every lane empty or masked, unless a lane saw a NaN.
    return {m, xsimd::hadd(a.sum + b.sum), T(0), T(0)};
  }
  // The lanes' compensated sums rescaled to m, then added across lanes, still compensated.
  alignas(64) std::array<T, B::size> sums;
  alignas(64) std::array<T, B::size> errors;
  running<T> total{m, T(0), T(0), T(0)};
  for (running<B> const* r : {&a, &b}) {
    B const factor = shifted_exp(r->max, B(m), B(inv_t), B(t)).value();
    auto empty = r->max == B(-inf);
    math::select(empty, math::select(math::is_nan(r->sum), r->sum, B(0)), r->sum * factor)
        .store_aligned(sums.data());
    math::select(empty, B(0), r->low() * factor).store_aligned(errors.data());
    for (std::size_t i = 0; i < B::size; ++i) {
      auto added = math::two_sum(total.sum, sums[i]);
      total.sum = added.hi;
      total.error += added.lo + errors[i];
    }
  }
  return {m, total.total(), T(0), T(0)};
}
NONLIN_INTRINSIC_DIAGNOSTICS_POP

// The first `used` lanes of a batch from p (the rest 0), and back: the partial blocks at the
// end of an inner dimension run the same batch code as full ones.
template <class B>
inline B load_lanes(scalar_t<B> const* p, std::size_t used) {
  if (used == B::size) {
    return B::load_unaligned(p);
  }
  alignas(64) std::array<scalar_t<B>, B::size> buffer{};
  std::copy_n(p, used, buffer.begin());
  return B::load_aligned(buffer.data());
}

template <class B>
inline void store_lanes(B const& value, scalar_t<B>* p, std::size_t used) {
  if (used == B::size) {
    value.store_unaligned(p);
    return;
  }
  alignas(64) std::array<scalar_t<B>, B::size> buffer;
  value.store_aligned(buffer.data());
  std::copy_n(buffer.begin(), used, p);
}

// A contiguous row's maximum, skipping NaN, and whether the row holds a NaN or +inf (its
// outputs are then NaN: the general path handles it).
template <class Arch, class T>
inline bool row_maximum(T const* z, std::size_t n, T& m) {
  using B = xsimd::batch<T, Arch>;
  constexpr std::size_t width = B::size;
  constexpr T inf = std::numeric_limits<T>::infinity();
  B lanes(-inf);
  auto poisoned = B(T(0)) != B(T(0));
  std::size_t i = 0;
  for (; i + width <= n; i += width) {
    B const v = B::load_unaligned(z + i);
    lanes = math::select(v > lanes, v, lanes);
    poisoned = math::either(poisoned, math::either(math::is_nan(v), v == B(inf)));
  }
  alignas(Arch::alignment()) std::array<T, width> buffer;
  lanes.store_aligned(buffer.data());
  m = -inf;
  for (T const v : buffer) {
    m = v > m ? v : m;
  }
  bool bad = math::any(poisoned);
  for (; i < n; ++i) {
    m = z[i] > m ? z[i] : m;
    bad = bad || math::is_nan(z[i]) || z[i] == inf;
  }
  return bad;
}

// The compensated sum of exp((z - m) / T) over a contiguous row whose maximum m is finite;
// with `terms`, each term is stored there too (softmax scales them in place afterwards).
template <class Arch, bool unit_temperature, class T>
inline math::double_float<T> row_sum(T const* z, T* terms, std::size_t n, T m, T inv_t, T t) {
  using B = xsimd::batch<T, Arch>;
  constexpr std::size_t width = B::size;
  B const bm(m);
  B const binv_t(inv_t);
  B const bt(t);
  running<B> lanes{bm, B(T(0)), B(T(0)), B(T(0))};
  std::size_t i = 0;
  for (; i + width <= n; i += width) {
    B const term = shifted_exp<unit_temperature>(B::load_unaligned(z + i), bm, binv_t, bt).value();
    if (terms != nullptr) {
      term.store_unaligned(terms + i);
    }
    lanes.add(term);
  }
  if (i < n) {
    alignas(Arch::alignment()) std::array<T, width> tail;
    tail.fill(-std::numeric_limits<T>::infinity());
    std::copy_n(z + i, n - i, tail.begin());
    B const term =
        shifted_exp<unit_temperature>(B::load_aligned(tail.data()), bm, binv_t, bt).value();
    lanes.add(term);
    if (terms != nullptr) {
      term.store_aligned(tail.data());
      std::copy_n(tail.begin(), n - i, terms + i);
    }
  }
  alignas(Arch::alignment()) std::array<T, width> sums;
  alignas(Arch::alignment()) std::array<T, width> errors;
  lanes.sum.store_aligned(sums.data());
  lanes.low().store_aligned(errors.data());
  running<T> total{m, T(0), T(0), T(0)};
  for (std::size_t k = 0; k < width; ++k) {
    auto added = math::two_sum(total.sum, sums[k]);
    total.sum = added.hi;
    total.error += added.lo + errors[k];
  }
  return {total.sum, total.error};
}

// A contiguous row's (max, compensated sum of exp((z - m) / T)) in one pass, the running sum
// rescaled when a lane's maximum grows: any row (NaN or +inf anywhere: the sum is NaN; all -inf:
// max = -inf, sum 0).
template <class Arch, class T>
inline running<T> row_statistics_general(T const* z, std::size_t n, T inv_t, T t) {
  using B = xsimd::batch<T, Arch>;
  constexpr std::size_t width = B::size;
  // Two independent accumulators, so that one batch's exp overlaps the other's update.
  running<B> even;
  running<B> odd;
  std::size_t i = 0;
  for (; i + 2 * width <= n; i += 2 * width) {
    update(even, B::load_unaligned(z + i), B(inv_t), B(t));
    update(odd, B::load_unaligned(z + i + width), B(inv_t), B(t));
  }
  for (; i + width <= n; i += width) {
    update(even, B::load_unaligned(z + i), B(inv_t), B(t));
  }
  if (i < n) {
    alignas(Arch::alignment()) std::array<T, width> tail;
    tail.fill(-std::numeric_limits<T>::infinity());
    std::copy_n(z + i, n - i, tail.begin());
    update(odd, B::load_aligned(tail.data()), B(inv_t), B(t));
  }
  return combine(even, odd, inv_t, t);
}

// The same for any row, through the two-pass path (maximum, then sum) where the row is finite
// or -inf and not all -inf; the sum's low part is in `error`.
template <class Arch, class T>
inline running<T> row_statistics(T const* z, std::size_t n, T inv_t, T t) {
  T m;
  bool const bad = row_maximum<Arch>(z, n, m);
  if (bad || m == -std::numeric_limits<T>::infinity()) {
    return row_statistics_general<Arch>(z, n, inv_t, t);
  }
  auto const sum = t == T(1) ? row_sum<Arch, true>(z, static_cast<T*>(nullptr), n, m, inv_t, t)
                             : row_sum<Arch, false>(z, static_cast<T*>(nullptr), n, m, inv_t, t);
  return {m, sum.hi, sum.lo, T(0)};
}

// Normalises every row of `shape` over its axis. Rows of the rows layout whose entries are
// finite or -inf (not all -inf): the maximum in one pass, the sum of the exps in a second
// (softmax keeps each exp in y), then the outputs (softmax: y *= 1 / s; log_softmax from the
// row's (m, s), with no exp). Other rows of the rows layout: (max, sum) together in one pass
// (a lane's running sum is rescaled when its maximum grows), then y = out(z, m, s). In the
// (outer, axis, inner) layout each lane is a row of its own, as in the second scheme.
template <class Arch, bool keep_terms, class T, class Out>
void normalise(axis_layout shape, T const* x, T* y, T t, Out const& out) {
  using B = xsimd::batch<T, Arch>;
  constexpr std::size_t width = B::size;
  if (shape.empty()) {
    return;  // no work, however large the other dimensions
  }
  T const inv_t = T(1) / t;
  if (shape.inner == 1) {
    for (std::size_t r = 0; r < shape.outer; ++r) {
      T const* z = x + r * shape.axis;
      T* row_out = y + r * shape.axis;
      T row_max;
      bool const bad = row_maximum<Arch>(z, shape.axis, row_max);
      if (!bad && row_max > -std::numeric_limits<T>::infinity()) {
        T* const terms = keep_terms ? row_out : nullptr;
        auto sum = t == T(1) ? row_sum<Arch, true>(z, terms, shape.axis, row_max, inv_t, t)
                             : row_sum<Arch, false>(z, terms, shape.axis, row_max, inv_t, t);
        if constexpr (keep_terms) {
          // p = e * (1/s): 1/s rounded once, each p once more (s >= 1, so no overflow).
          B const inv_sum(T(1) / (sum.hi + sum.lo));
          elementwise<Arch>([&](B e) { return e * inv_sum; }, std::span<T>(row_out, shape.axis),
                            std::span<T const>(row_out, shape.axis));
        } else {
          // log s once per row (s >= 1: log1p(s - 1), s - 1 exact below 2).
          B const m(row_max);
          B const log_sum(log_of_sum(sum.hi, sum.lo));
          B const binv_t(inv_t);
          B const bt(t);
          std::span<T> const out_row(row_out, shape.axis);
          std::span<T const> const in_row(z, shape.axis);
          if (t == T(1)) {
            elementwise<Arch>(
                [&](B zb) { return log_probability_given<true>(zb, m, log_sum, binv_t, bt); },
                out_row, in_row);
          } else {
            elementwise<Arch>(
                [&](B zb) { return log_probability_given<false>(zb, m, log_sum, binv_t, bt); },
                out_row, in_row);
          }
        }
        continue;
      }
      running<T> const stats = row_statistics_general<Arch>(z, shape.axis, inv_t, t);
      B const m(stats.max);
      B const sum(stats.sum);
      B const sum_lo(stats.error);
      elementwise<Arch>([&](B zb) { return out(zb, m, sum, sum_lo, B(inv_t), B(t)); },
                        std::span<T>(y + r * shape.axis, shape.axis),
                        std::span<T const>(z, shape.axis));
    }
    return;
  }
  // Lanes across inner positions; the tail block goes through zero-padded copies.
  for (std::size_t o = 0; o < shape.outer; ++o) {
    for (std::size_t j = 0; j < shape.inner; j += width) {
      std::size_t const used = std::min(width, shape.inner - j);
      auto at = [&](std::size_t a) { return (o * shape.axis + a) * shape.inner + j; };
      running<B> lanes;
      for (std::size_t a = 0; a < shape.axis; ++a) {
        update(lanes, load_lanes<B>(x + at(a), used), B(inv_t), B(t));
      }
      // The compensated sum as hi + lo: log_softmax keeps the low part (log s - 0 where the
      // other entries add less than an ulp to the maximum's 1).
      for (std::size_t a = 0; a < shape.axis; ++a) {
        B const z = load_lanes<B>(x + at(a), used);
        store_lanes(out(z, lanes.max, lanes.sum, lanes.low(), B(inv_t), B(t)), y + at(a), used);
      }
    }
  }
}

// The row's largest |dy| so far, per lane (NaN is skipped: it reaches the result anyway).
template <class V>
inline V max_magnitude(V const& so_far, V const& g) {
  return math::clamp_below(so_far, math::abs(g));  // one max: so_far where |g| is NaN
}

// dx = grad(y, dy, reduce, 1/T) with reduce = the compensated sum over the axis of
// add(sum, y, dy). Rows (or, in the strided layout, blocks of lanes) whose largest |dy| is above
// max * 2^-scale_bits run on dy * 2^-scale_bits and the result is scaled back: the sum and the
// differences inside grad would overflow there while dx itself may be finite (dy near +-max;
// the scaling is exact except for subnormal dy, which cannot matter beside such a dy).
template <class Arch, class T, class Add, class Grad>
void backward_over_axis(axis_layout shape, T const* y, T const* dy, T* dx, T t, int scale_bits,
                        Add const& add, Grad const& grad) {
  using B = xsimd::batch<T, Arch>;
  using sum_t = math::compensated_sum<B>;
  constexpr std::size_t width = B::size;
  if (shape.empty()) {
    return;
  }
  B const inv_t(T(1) / t);
  T const limit = std::ldexp(std::numeric_limits<T>::max(), -scale_bits);
  T const down = std::ldexp(T(1), -scale_bits);
  T const up = std::ldexp(T(1), scale_bits);
  if (shape.inner == 1) {
    for (std::size_t r = 0; r < shape.outer; ++r) {
      std::size_t const base = r * shape.axis;
      std::span<T> const dx_row(dx + base, shape.axis);
      std::span<T const> const y_row(y + base, shape.axis);
      std::span<T const> const dy_row(dy + base, shape.axis);
      // The sum, and the largest |dy| unless `scaled` (then dy is multiplied by `down`).
      auto reduce_row = [&]<bool scaled>(std::bool_constant<scaled>, B& largest) {
        sum_t lanes;
        math::compensated_sum<T> rest;
        std::size_t i = 0;
        for (; i + width <= shape.axis; i += width) {
          B g = B::load_unaligned(dy + base + i);
          if constexpr (scaled) {
            g = g * B(down);
          } else {
            largest = max_magnitude(largest, g);
          }
          add(lanes, B::load_unaligned(y + base + i), g);
        }
        T largest_rest = T(0);
        for (; i < shape.axis; ++i) {
          T const g = scaled ? dy[base + i] * down : dy[base + i];
          add(rest, y[base + i], g);
          largest_rest = max_magnitude(largest_rest, g);
        }
        largest = max_magnitude(largest, B(largest_rest));
        return B(math::lanes_total(lanes, rest));
      };
      B largest(T(0));
      B const reduce = reduce_row(std::false_type{}, largest);
      if (!math::any(largest > B(limit))) {
        elementwise<Arch>([&](B yb, B dyb) { return grad(yb, dyb, reduce, inv_t); }, dx_row, y_row,
                          dy_row);
      } else {
        B unused(T(0));
        B const scaled = reduce_row(std::true_type{}, unused);
        elementwise<Arch>(
            [&](B yb, B dyb) { return grad(yb, dyb * B(down), scaled, inv_t) * B(up); }, dx_row,
            y_row, dy_row);
      }
    }
    return;
  }
  for (std::size_t o = 0; o < shape.outer; ++o) {
    for (std::size_t j = 0; j < shape.inner; j += width) {
      std::size_t const used = std::min(width, shape.inner - j);
      auto at = [&](std::size_t a) { return (o * shape.axis + a) * shape.inner + j; };
      auto reduce_block = [&]<bool scaled>(std::bool_constant<scaled>, B& largest) {
        sum_t lanes;
        for (std::size_t a = 0; a < shape.axis; ++a) {
          B g = load_lanes<B>(dy + at(a), used);
          if constexpr (scaled) {
            g = g * B(down);
          } else {
            largest = max_magnitude(largest, g);
          }
          add(lanes, load_lanes<B>(y + at(a), used), g);
        }
        return lanes.total();
      };
      B largest(T(0));
      B reduce = reduce_block(std::false_type{}, largest);
      bool const scaled = math::any(largest > B(limit));
      if (scaled) {
        B unused(T(0));
        reduce = reduce_block(std::true_type{}, unused);
      }
      B const g_scale(scaled ? down : T(1));
      B const dx_scale(scaled ? up : T(1));
      for (std::size_t a = 0; a < shape.axis; ++a) {
        B const g = load_lanes<B>(dy + at(a), used) * g_scale;
        B const result = grad(load_lanes<B>(y + at(a), used), g, reduce, inv_t) * dx_scale;
        store_lanes(result, dx + at(a), used);
      }
    }
  }
}

NONLIN_INTRINSIC_DIAGNOSTICS_POP

// The per-element outputs, one text for batches and scalars.
template <class V>
V probability(V z, V m, V sum, V sum_lo, V inv_t, V t) {
  constexpr auto inf = std::numeric_limits<scalar_t<V>>::infinity();
  V const p = shifted_exp(z, m, inv_t, t).times(math::c<V>(1) / (sum + sum_lo));
  // A fully masked row (m = -inf, and no NaN seen: sum == sum) and masked entries give 0; a row
  // with a NaN or +inf (sum is NaN) is NaN throughout, masked entries included.
  auto masked_row = math::both(m == V(-inf), sum == sum);
  auto masked_entry = math::both(z == V(-inf), sum == sum);
  return math::select(math::either(masked_row, masked_entry), V(0), p);
}

template <class V>
V log_probability(V z, V m, V sum, V sum_lo, V inv_t, V t) {
  constexpr auto inf = std::numeric_limits<scalar_t<V>>::infinity();
  V const value = log_probability_given(z, m, log_of_sum(sum, sum_lo), inv_t, t);
  auto masked_row = math::both(m == V(-inf), sum == sum);
  return math::select(masked_row, V(-inf), math::select(sum == sum, value, sum));
}

}  // namespace detail

// softmax or log_softmax: the two normalisations of this header.
template <class F>
concept normalization = std::same_as<F, softmax> || std::same_as<F, log_softmax>;

namespace detail {
template <normalization F, real_scalar T>
void require_backward_arguments(char const* where, F const& f, std::span<T const> y,
                                std::span<T const> dy, std::span<T> dx, axis_layout shape) {
  require_temperature<T>(where, f.temperature);
  require_layout(where, "y", y.size(), shape);
  require_same_size<T>(where, "y", y, "dy", dy);
  require_same_size<T>(where, "y", y, "dx", dx);
  require_no_partial_overlap<T>(where, "dx", dx, "y", y);
  require_no_partial_overlap<T>(where, "dx", dx, "dy", dy);
}
}  // namespace detail

// y = softmax(x / T) or log_softmax(x / T) over the axis of `shape`; y may be x itself.
template <class Arch = xsimd::default_arch, normalization F, real_scalar T>
void forward(F const& f, std::span<T const> x, std::span<T> y, axis_layout shape) {
  constexpr bool log = std::same_as<F, log_softmax>;
  char const* where = log ? "nonlin::forward(log_softmax)" : "nonlin::forward(softmax)";
  detail::require_temperature<T>(where, f.temperature);
  detail::require_layout(where, "x", x.size(), shape);
  detail::require_same_size<T>(where, "x", x, "y", y);
  detail::require_no_partial_overlap<T>(where, "y", y, "x", x);
  detail::normalise<Arch, !log>(shape, x.data(), y.data(), static_cast<T>(f.temperature),
                                [](auto z, auto m, auto s, auto s_lo, auto it, auto t) {
                                  if constexpr (log) {
                                    return detail::log_probability(z, m, s, s_lo, it, t);
                                  } else {
                                    return detail::probability(z, m, s, s_lo, it, t);
                                  }
                                });
}

// softmax: dx = y (dy - <y, dy>) / T from the saved output y; dx may be y or dy itself.
// <y, dy> is compensated with exact products; 1/T is applied to y first where T <= 1 and last
// where T > 1, so that neither p / T nor p (dy - <y, dy>) underflows before the other factor
// brings it back (both orders round twice).
template <class Arch = xsimd::default_arch, real_scalar T>
void backward_from_output(softmax const& f, std::span<T const> y, std::span<T const> dy,
                          std::span<T> dx, axis_layout shape) {
  detail::require_backward_arguments("nonlin::backward_from_output(softmax)", f, y, dy, dx, shape);
  T const t = static_cast<T>(f.temperature);
  // |dy| <= max / 4 keeps dy - <y, dy> finite (|<y, dy>| <= max |dy| since y sums to 1).
  constexpr int scale_bits = 2;
  auto add = [](auto& sum, auto p, auto g) { sum.add_product(p, g); };
  if (t <= T(1)) {
    detail::backward_over_axis<Arch>(
        shape, y.data(), dy.data(), dx.data(), t, scale_bits, add,
        [](auto p, auto g, auto dot, auto inv_t) { return (p * inv_t) * (g - dot); });
  } else {
    detail::backward_over_axis<Arch>(
        shape, y.data(), dy.data(), dx.data(), t, scale_bits, add,
        [](auto p, auto g, auto dot, auto inv_t) { return (p * (g - dot)) * inv_t; });
  }
}

// log_softmax: dx = (dy - softmax sum(dy)) / T from the saved output y = log p; 0 at masked
// positions (y = -inf). The sum runs over every entry, masked ones included: the derivative of
// sum_j dy_j log p_j (each log p_j, masked or not, has d log p_j / dz_i = delta_ij - p_i), as
// PyTorch computes it; leaving the masked dy_j out would give the unmasked entries the gradient
// of a different loss. The sum is compensated; where it could overflow (|dy| above
// max / 2^(bit_width(axis) + 1)) the row runs on dy scaled down and dx is scaled back.
template <class Arch = xsimd::default_arch, real_scalar T>
void backward_from_output(log_softmax const& f, std::span<T const> y, std::span<T const> dy,
                          std::span<T> dx, axis_layout shape) {
  detail::require_backward_arguments("nonlin::backward_from_output(log_softmax)", f, y, dy, dx,
                                     shape);
  int const scale_bits = static_cast<int>(std::bit_width(shape.axis)) + 1;
  detail::backward_over_axis<Arch>(
      shape, y.data(), dy.data(), dx.data(), static_cast<T>(f.temperature), scale_bits,
      [](auto& sum, auto, auto g) { sum.add(g); },
      [](auto logp, auto g, auto total, auto inv_t) {
        using V = decltype(logp);
        V const grad = math::fma(math::neg(math::exp(logp)), total, g) * inv_t;
        return math::select(logp == V(-std::numeric_limits<scalar_t<V>>::infinity()), V(0), grad);
      });
}

// The rows layout: (rows, cols) with rows = x.size() / cols.
template <class Arch = xsimd::default_arch, normalization F, real_scalar T>
void forward(F const& f, std::span<T const> x, std::span<T> y, std::size_t cols) {
  char const* where =
      std::same_as<F, log_softmax> ? "nonlin::forward(log_softmax)" : "nonlin::forward(softmax)";
  forward<Arch>(f, x, y, detail::rows_layout(where, "x", x.size(), cols));
}

template <class Arch = xsimd::default_arch, normalization F, real_scalar T>
void backward_from_output(F const& f, std::span<T const> y, std::span<T const> dy, std::span<T> dx,
                          std::size_t cols) {
  char const* where = std::same_as<F, log_softmax> ? "nonlin::backward_from_output(log_softmax)"
                                                   : "nonlin::backward_from_output(softmax)";
  backward_from_output<Arch>(f, y, dy, dx, detail::rows_layout(where, "y", y.size(), cols));
}

namespace detail {
// losses: one per row (reduction none, or given), and apart from every other array: it is
// written row by row while the later rows of the others are still to be read.
template <class T, class Q>
void require_losses(char const* where, std::span<T> losses, std::size_t rows, reduction r,
                    std::span<T const> logits, std::span<T> dz, char const* targets_name,
                    std::span<Q const> targets) {
  if ((r == reduction::none || !losses.empty()) && losses.size() != rows) {
    throw std::invalid_argument(
        std::string(where) + ": losses has " + std::to_string(losses.size()) +
        " elements but there are " + std::to_string(rows) + " rows" +
        (r == reduction::none ? " (reduction none needs one per row)" : ""));
  }
  std::span<T const> const out(losses);
  require_disjoint<T, T>(where, "losses", out, "logits", logits);
  require_disjoint<T, T>(where, "losses", out, "dz", std::span<T const>(dz));
  require_disjoint<T, Q>(where, "losses", out, targets_name, targets);
}

// Shared by hard and soft targets, row by row: the row's (max, sum) from the logits, the loss
// from log p (read only), then dz from p itself (not exp(log p), which inherits log p's
// absolute error |z - m| u / T as a relative one: 105-177 units of the condition at T = 0.1).
// Hard targets: target(row) is the class or cols for a row that does not count; soft: q holds
// the rows. dz may be logits itself: each element is read before it is written.
template <class Arch, class T, class Target>
T cross_entropy_rows(softmax const& f, std::span<T const> logits, std::span<T> dz, std::size_t cols,
                     reduction r, std::span<T> losses, std::span<T const> q, Target const& target) {
  using B = xsimd::batch<T, Arch>;
  bool const soft = !q.empty();
  std::size_t const rows = cols == 0 ? 0 : logits.size() / cols;
  T const t = static_cast<T>(f.temperature);
  T const inv_t = T(1) / t;
  auto counts = [&](std::size_t row) { return soft || target(row) < cols; };
  std::size_t counted = 0;
  for (std::size_t row = 0; row < rows; ++row) {
    counted += counts(row) ? 1 : 0;
  }
  T const scale = (r == reduction::mean && counted > 0) ? T(1) / T(counted) : T(1);
  T total = 0;
  constexpr T inf = std::numeric_limits<T>::infinity();
  for (std::size_t row = 0; row < rows; ++row) {
    T const* z = logits.data() + row * cols;
    T const* q_row = soft ? q.data() + row * cols : nullptr;
    std::span<T> const g(dz.data() + row * cols, cols);
    running<T> const stats = row_statistics<Arch>(z, cols, inv_t, t);
    bool const masked = stats.max == -inf && stats.sum == stats.sum;  // every entry -inf
    if (!counts(row) || masked) {
      std::fill(g.begin(), g.end(), T(0));
      if (!losses.empty()) {
        losses[row] = T(0);
      }
      continue;
    }
    // loss = -sum q log p, log p = (z - m) / T - log s (NaN throughout a poisoned row).
    T const log_sum = log_of_sum(stats.sum, stats.error);
    auto log_p = [&](std::size_t i) {
      return stats.sum == stats.sum ? log_probability_given(z[i], stats.max, log_sum, inv_t, t)
                                    : stats.sum;
    };
    // Both sums compensated: a plain sum of q drifted by up to 57 u at 10^5 classes, and
    // dz inherits that through p sum q.
    T loss = 0;
    T q_sum = 1;  // soft targets need not sum to 1
    if (soft) {
      math::compensated_sum<T> q_total;
      math::compensated_sum<T> loss_total;
      for (std::size_t i = 0; i < cols; ++i) {
        if (q_row[i] != T(0)) {
          loss_total.add_product(q_row[i], math::neg(log_p(i)));
        }
        q_total.add(q_row[i]);
      }
      loss = loss_total.total();
      q_sum = q_total.total();
    } else {
      loss = T(0) - log_p(target(row));  // +0 where log p = 0, as the soft sum gives
    }
    // d loss / d z = (p sum q - q) / T (p - q where q sums to 1), scaled for the mean: the
    // difference first, in one rounding (fma; p - 1 at a hard target is exact for p >= 1/2),
    // then / T, then the mean's 1/counted, so that mean's dz is sum's times 1/counted exactly.
    auto p_of = [&](auto zv) {
      using V = decltype(zv);
      return probability(zv, V(stats.max), V(stats.sum), V(stats.error), V(inv_t), V(t));
    };
    auto gradient = [&](auto p, auto qv) {
      using V = decltype(p);
      return (math::fma(p, V(q_sum), math::neg(qv)) * V(inv_t)) * V(scale);
    };
    std::span<T const> const z_row(z, cols);
    if (soft) {
      elementwise<Arch>([&](B zb, B qb) { return gradient(p_of(zb), qb); }, g, z_row,
                        std::span<T const>(q_row, cols));
    } else {
      std::size_t const k = target(row);
      T const z_k = z[k];  // dz may be the logits: read before the row is written
      elementwise<Arch>([&](B zb) { return gradient(p_of(zb), B(T(0))); }, g, z_row);
      g[k] = gradient(p_of(z_k), T(1));
    }
    if (!losses.empty()) {
      losses[row] = loss;
    }
    total += loss;
  }
  return r == reduction::mean ? total * scale : total;
}
}  // namespace detail

// softmax + cross-entropy from logits with hard targets: targets[row] is the class index, or
// ignore_index (the row then has loss 0, gradient 0, and does not count in the mean).
// Writes dz = d loss / d logits (= (p - onehot) / T, / counted rows for the mean); dz may be
// logits itself. Returns the loss reduced as asked; with reduction::none (or a non-empty
// `losses`) the per-row losses go to `losses`. An index outside [0, cols) that is not
// ignore_index throws std::invalid_argument before anything is written.
template <class Arch = xsimd::default_arch, real_scalar T>
T softmax_cross_entropy(softmax const& f, std::span<T const> logits,
                        std::span<std::int64_t const> targets, std::span<T> dz, std::size_t cols,
                        reduction r = reduction::mean, std::int64_t ignore_index = -100,
                        std::span<T> losses = {}) {
  char const* where = "nonlin::softmax_cross_entropy";
  detail::require_temperature<T>(where, f.temperature);
  axis_layout const shape = detail::rows_layout(where, "logits", logits.size(), cols);
  detail::require_same_size<T>(where, "logits", logits, "dz", dz);
  detail::require_no_partial_overlap<T>(where, "dz", dz, "logits", logits);
  // dz is written row by row while the later rows' targets are still to be read.
  detail::require_disjoint<T, std::int64_t>(where, "dz", dz, "targets", targets);
  if (targets.size() != shape.outer) {
    throw std::invalid_argument(std::string(where) + ": targets has " +
                                std::to_string(targets.size()) + " elements but there are " +
                                std::to_string(shape.outer) + " rows");
  }
  for (std::size_t row = 0; row < targets.size(); ++row) {
    std::int64_t const k = targets[row];
    if (k != ignore_index && (k < 0 || static_cast<std::size_t>(k) >= cols)) {
      throw std::invalid_argument(std::string(where) + ": targets[" + std::to_string(row) +
                                  "] = " + std::to_string(k) + " is not a class in [0, " +
                                  std::to_string(cols) +
                                  ") nor ignore_index=" + std::to_string(ignore_index));
    }
  }
  detail::require_losses(where, losses, shape.outer, r, logits, dz, "targets", targets);
  return detail::cross_entropy_rows<Arch>(
      f, logits, dz, cols, r, losses, std::span<T const>(), [&](std::size_t row) {
        return targets[row] == ignore_index ? cols : static_cast<std::size_t>(targets[row]);
      });
}

// The same with soft targets: q holds a distribution per row. A row of q that does not sum to 1
// (label weights, a mixture) is taken as it is: dz is the gradient of the loss returned,
// (p sum q - q) / T, not p - q.
template <class Arch = xsimd::default_arch, real_scalar T>
T softmax_cross_entropy(softmax const& f, std::span<T const> logits, std::span<T const> q,
                        std::span<T> dz, std::size_t cols, reduction r = reduction::mean,
                        std::span<T> losses = {}) {
  char const* where = "nonlin::softmax_cross_entropy";
  detail::require_temperature<T>(where, f.temperature);
  axis_layout const shape = detail::rows_layout(where, "logits", logits.size(), cols);
  detail::require_same_size<T>(where, "logits", logits, "dz", dz);
  detail::require_same_size<T>(where, "logits", logits, "q", q);
  detail::require_no_partial_overlap<T>(where, "dz", dz, "logits", logits);
  // dz is written row by row while the later rows of q are still to be read; dz = q itself is
  // rejected too (it was a silent wrong result before the rows were computed from p).
  detail::require_disjoint<T, T>(where, "dz", dz, "q", q);
  detail::require_losses(where, losses, shape.outer, r, logits, dz, "q", q);
  return detail::cross_entropy_rows<Arch>(f, logits, dz, cols, r, losses, q,
                                          [&](std::size_t) { return cols; });
}

}  // namespace nonlin
