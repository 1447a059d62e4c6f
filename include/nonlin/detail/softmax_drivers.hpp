// SPDX-License-Identifier: MIT
#pragma once
// The loops of softmax and log_softmax over an axis_layout: a contiguous row's maximum and sum,
// the forward driver (forward_over_axis) for both layouts, and the backward driver
// (backward_over_axis) with its compensated reduction. The per-element math is in softmax_math.hpp.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include "../axis_layout.hpp"
#include "../concepts.hpp"
#include "../isa.hpp"
#include "../kernels.hpp"
#include "../math/double_float.hpp"
#include "../math/ops.hpp"
#include "../math/sum.hpp"
#include "partial.hpp"
#include "softmax_math.hpp"

namespace nonlin::detail {
inline namespace NONLIN_ISA {

// The first `used` lanes of a batch from p (the rest 0), and back: the partial blocks at the
// end of an inner dimension run the same batch code as full ones.
template <class B>
inline B load_lanes(scalar_t<B> const* p, std::size_t used) {
  return used == B::size ? B::load_unaligned(p) : load_partial<B>(p, used, scalar_t<B>(0));
}

template <class B>
inline void store_lanes(B const& value, scalar_t<B>* p, std::size_t used) {
  if (used == B::size) {
    value.store_unaligned(p);
  } else {
    store_partial(value, p, used);
  }
}

// A contiguous row's maximum and minimum, skipping NaN, and whether the row holds a NaN or +inf
// (its outputs are then NaN: the general path handles it). Four running maxima, each one max a
// batch ("v > lanes ? v : lanes", lanes where v is NaN: x86's max with v first): with one, the
// loop waited on the previous batch's compare and blend (5.1 cycles a batch on this machine, the
// row's maximum a seventh of softmax's time). NaN or +inf is one unordered compare, !(v < inf).
// The minimum (one min a batch more, in a pass that waits on memory) gives the row's reach.
template <class Arch, class T>
inline bool row_maximum(T const* z, std::size_t n, T& m, T& lowest) {
  using B = xsimd::batch<T, Arch>;
  constexpr std::size_t width = B::size;
  constexpr T inf = std::numeric_limits<T>::infinity();
  std::array<B, 4> lanes;
  lanes.fill(B(-inf));
  std::array<B, 4> lows;
  lows.fill(B(inf));
  auto poisoned = B(T(0)) != B(T(0));
  auto take = [&](std::size_t k, B const& v) {
    lanes[k] = math::clamp_below(lanes[k], v);
    lows[k] = math::clamp_above(lows[k], v);
    poisoned = math::either(poisoned, !(v < B(inf)));
  };
  std::size_t i = 0;
  for (; i + 4 * width <= n; i += 4 * width) {
    for (std::size_t k = 0; k < 4; ++k) {
      take(k, B::load_unaligned(z + i + k * width));
    }
  }
  for (; i + width <= n; i += width) {
    take(0, B::load_unaligned(z + i));
  }
  if (i < n) {
    // Lanes past the row: z[i], which changes neither the maximum nor the minimum.
    take(1, load_partial<B>(z + i, n - i, z[i]));
  }
  B const all = math::clamp_below(math::clamp_below(lanes[0], lanes[1]),
                                  math::clamp_below(lanes[2], lanes[3]));
  B const all_low =
      math::clamp_above(math::clamp_above(lows[0], lows[1]), math::clamp_above(lows[2], lows[3]));
  alignas(Arch::alignment()) std::array<T, width> buffer;
  all.store_aligned(buffer.data());
  m = -inf;
  for (T const v : buffer) {
    m = v > m ? v : m;
  }
  all_low.store_aligned(buffer.data());
  lowest = inf;
  for (T const v : buffer) {
    lowest = v < lowest ? v : lowest;
  }
  return math::any(poisoned);
}

// How far below its maximum m a row's entries reach, from its minimum: near (every term a normal
// number: (lowest - m) / T >= -86, e^-86 = 2^-124.1, a margin of about 2 over the bottom of
// float's normal range), far (some terms below it: shifted_exp_value's far), masked (some at
// least 1024 T below, as masked entries are: -inf, -1e9, the lowest float; a batch all below
// m + (min_arg - 1) T skips the exp, its terms being 0). The last test costs wide rows without
// such stretches 10% (a compare and a branch a batch), so they are far, not masked. For double,
// whose terms leave the normal range only at -708, far rows pay the far forms for nothing (the
// same bits; rows spread so wide are rare in double).
enum class reach { near, far, masked };

template <class T>
inline reach reach_of(T m, T lowest, T inv_t) {
  T const d = (lowest - m) * inv_t;
  if (d >= T(-86)) {
    return reach::near;
  }
  return d < T(-1024) ? reach::masked : reach::far;
}

// The compensated sum of exp((z - m) / T) over a contiguous row whose maximum m is finite;
// with `terms`, each term is stored there too (softmax scales them in place afterwards).
// fast (nonlin::fast::softmax): the terms from fast_shifted_exp_value, and four batches added in
// float (two roundings of at most 2^-24 of their sum: the terms are positive) before the wide
// sum takes them: 1.9x the default's pass over a row of 1000 in L1 (8.3 TSC cycles a batch
// against 15.7; every term in the wide sum 10.9, a plain float sum 7.1).
template <class Arch, bool unit_temperature, class T, bool fast = false,
          reach entries = reach::near>
inline math::double_float<T> row_sum(T const* z, T* terms, std::size_t n, T m, T inv_t, T t) {
  using B = xsimd::batch<T, Arch>;
  constexpr std::size_t width = B::size;
  B const bm(m);
  B const binv_t(inv_t);
  B const bt(t);
  math::wide_sum<B> lanes;
  // Below m + (min_arg - 1) t every term is exactly 0 ((z - m) / T < min_arg, where exp's value
  // is 0): in a masked row a batch all below skips the exp, the same bits.
  B const zero_below(m + (math::detail::exp_constants<T>::min_arg - T(1)) * t);
  constexpr bool far = entries != reach::near;
  auto term_of = [&](B zb) {
    if constexpr (entries == reach::masked) {
      if (!math::any(zb >= zero_below)) {
        return B(T(0));
      }
    }
    if constexpr (fast) {
      return fast_shifted_exp_value<unit_temperature, far>(zb, bm, binv_t);
    } else {
      return shifted_exp_value<unit_temperature, far>(zb, bm, binv_t, bt);
    }
  };
  std::size_t i = 0;
  if constexpr (fast) {
    for (; i + 4 * width <= n; i += 4 * width) {
      std::array<B, 4> e;
      for (std::size_t k = 0; k < 4; ++k) {
        e[k] = term_of(B::load_unaligned(z + i + k * width));
        if (terms != nullptr) {
          e[k].store_unaligned(terms + i + k * width);
        }
      }
      lanes.add((e[0] + e[1]) + (e[2] + e[3]));
    }
  }
  for (; i + width <= n; i += width) {
    B const term = term_of(B::load_unaligned(z + i));
    if (terms != nullptr) {
      term.store_unaligned(terms + i);
    }
    lanes.add(term);
  }
  if (i < n) {
    // The lanes past the row hold m (a term of 1), then 0: filled with -inf, their e^-inf = 0
    // came from an exp whose scale underflowed, and an underflowing vscalef (or multiply) takes
    // a microcode assist on Intel cores (~190 cycles on this Golden Cove machine, measured):
    // 4.4 cycles a batch over a row of 1000 floats, a sixth of softmax's time.
    B const term =
        math::select(first_lanes<B>(n - i), term_of(load_partial<B>(z + i, n - i, m)), B(T(0)));
    lanes.add(term);
    if (terms != nullptr) {
      store_partial(term, terms + i, n - i);
    }
  }
  return lanes.total();
}

// row_sum for a row of maximum m and the given reach: unit_temperature where t = 1.
template <class Arch, class T, bool fast = false>
inline math::double_float<T> row_sum_of(T const* z, T* terms, std::size_t n, T m, reach entries,
                                        T inv_t, T t) {
  auto with = [&]<bool unit, reach entries>() {
    return row_sum<Arch, unit, T, fast, entries>(z, terms, n, m, inv_t, t);
  };
  auto with_reach = [&]<bool unit>() {
    switch (entries) {
      case reach::near:
        return with.template operator()<unit, reach::near>();
      case reach::far:
        return with.template operator()<unit, reach::far>();
      default:
        return with.template operator()<unit, reach::masked>();
    }
  };
  return t == T(1) ? with_reach.template operator()<true>()
                   : with_reach.template operator()<false>();
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
  T lowest;
  bool const bad = row_maximum<Arch>(z, n, m, lowest);
  if (bad || m == -std::numeric_limits<T>::infinity()) {
    return row_statistics_general<Arch>(z, n, inv_t, t);
  }
  auto const sum =
      row_sum_of<Arch>(z, static_cast<T*>(nullptr), n, m, reach_of(m, lowest, inv_t), inv_t, t);
  return running_of(m, sum.hi, sum.lo);
}

// Normalises every row of `shape` over its axis. Rows of the rows layout whose entries are
// finite or -inf (not all -inf): the maximum in one pass, the sum of the exps in a second
// (softmax keeps each exp in y), then the outputs (softmax: y *= 1 / s; log_softmax from the
// row's (m, s), with no exp). Other rows of the rows layout: (max, sum) together in one pass
// (a lane's running sum is rescaled when its maximum grows), then y = p or log p from (z, m, s). In
// the (outer, axis, inner) layout each lane is a row of its own, as in the second scheme.
// fast (the fast tier): the first scheme's sum is row_sum's fast one; the other rows and the
// strided layout are the default tier's.
template <class Arch, bool log, class T, bool fast = false>
void forward_over_axis(axis_layout shape, T const* x, T* y, T t) {
  using B = xsimd::batch<T, Arch>;
  constexpr bool keep_terms = !log;  // softmax keeps each exp in y; log_softmax needs none
  auto out = [](auto z, auto m, auto s, auto s_lo, auto it, auto tb) {
    if constexpr (log) {
      return log_probability(z, m, s, s_lo, it, tb);
    } else {
      return probability(z, m, s, s_lo, it, tb);
    }
  };
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
      T row_min;
      bool const bad = row_maximum<Arch>(z, shape.axis, row_max, row_min);
      if (!bad && row_max > -std::numeric_limits<T>::infinity()) {
        T* const terms = keep_terms ? row_out : nullptr;
        reach const entries = reach_of(row_max, row_min, inv_t);
        auto sum = row_sum_of<Arch, T, fast>(z, terms, shape.axis, row_max, entries, inv_t, t);
        if constexpr (keep_terms) {
          // p = e * (1/s): 1/s rounded once, each p once more (s >= 1, so no overflow). The
          // general path and the strided layout form p as exp_split.times(1/s) instead (1/s
          // folded in before exp's final scale, one rounding less) because they compute each
          // exp anew; here the terms are already in y from the sum's pass, and a second exp per
          // element would cost more than that rounding saves.
          T const s = sum.hi + sum.lo;
          B const inv_sum(T(1) / s);
          std::span<T> const out_row(row_out, shape.axis);
          std::span<T const> const terms_row(row_out, shape.axis);
          if (entries != reach::near) {
            // A term e > 0 below 2 s 2^-126 may give a p below the normal range (or be
            // subnormal itself): such batches multiply without underflowing (an assist each).
            B const small(T(2) * s * std::numeric_limits<T>::min());
            elementwise<Arch>(
                [&](B e) {
                  auto const tiny = e < small;
                  auto const nonzero = e > B(T(0));
                  if (math::any(math::both(tiny, nonzero))) {
                    return math::product_without_underflow(e, inv_sum);
                  }
                  return e * inv_sum;
                },
                out_row, terms_row);
          } else {
            elementwise<Arch>([&](B e) { return e * inv_sum; }, out_row, terms_row);
          }
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
// add(sum, y, dy); an Add with a member four_at_a_time (the fast tier's) also takes four
// batches at once, add(sum, y[4], dy[4]), in the rows layout. Rows (or, in the strided layout,
// blocks of lanes) whose largest |dy| is above max * 2^-scale_bits run on dy * 2^-scale_bits and
// the result is scaled back: the sum and the differences inside grad would overflow there while dx
// itself may be finite (dy near +-max; the scaling is exact except for subnormal dy, which cannot
// matter beside such a dy).
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
        math::wide_sum<B> lanes;
        auto take = [&](B g, B y_i) {
          if constexpr (scaled) {
            g = g * B(down);
          } else {
            largest = max_magnitude(largest, g);
          }
          add(lanes, y_i, g);
        };
        std::size_t i = 0;
        if constexpr (requires { Add::four_at_a_time; }) {
          // The fast tier's adds: four batches combined in the batch type first.
          for (; i + 4 * width <= shape.axis; i += 4 * width) {
            std::array<B, 4> g;
            std::array<B, 4> y_k;
            for (std::size_t k = 0; k < 4; ++k) {
              g[k] = B::load_unaligned(dy + base + i + k * width);
              y_k[k] = B::load_unaligned(y + base + i + k * width);
              if constexpr (scaled) {
                g[k] = g[k] * B(down);
              } else {
                largest = max_magnitude(largest, g[k]);
              }
            }
            add(lanes, y_k, g);
          }
        }
        for (; i + width <= shape.axis; i += width) {
          take(B::load_unaligned(dy + base + i), B::load_unaligned(y + base + i));
        }
        if (i < shape.axis) {
          // The tail as one batch padded with zeros: y 0 and dy 0 add nothing.
          take(load_partial<B>(dy + base + i, shape.axis - i, T(0)),
               load_partial<B>(y + base + i, shape.axis - i, T(0)));
        }
        return B(lanes.value());
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
      // The scaling only in the rare scaled blocks (no multiplications by 1 on the hot path).
      auto write_block = [&]<bool scaled_block>(std::bool_constant<scaled_block>) {
        for (std::size_t a = 0; a < shape.axis; ++a) {
          B const g = load_lanes<B>(dy + at(a), used);
          B const y_a = load_lanes<B>(y + at(a), used);
          if constexpr (scaled_block) {
            store_lanes(grad(y_a, g * B(down), reduce, inv_t) * B(up), dx + at(a), used);
          } else {
            store_lanes(grad(y_a, g, reduce, inv_t), dx + at(a), used);
          }
        }
      };
      if (scaled) {
        write_block(std::true_type{});
      } else {
        write_block(std::false_type{});
      }
    }
  }
}

NONLIN_INTRINSIC_DIAGNOSTICS_POP

}  // namespace NONLIN_ISA
}  // namespace nonlin::detail
