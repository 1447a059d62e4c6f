// SPDX-License-Identifier: MIT
#pragma once
// softmax + cross-entropy from logits, hard targets (a class per row, or ignore_index) and soft
// targets (a distribution per row), with the loss reduced as none, sum or mean:
//   loss = -sum a log p,  dz = (p sum a - a) / T  (p - a where a sums to 1)
// with a row's target weights a = q (soft) or the one-hot of the class (hard), and, as PyTorch's
// cross_entropy defines them, per-class weights w and label smoothing e:
//   hard: a_c = w_c ((1 - e) [c = k] + e / C);  soft: a_c = w_c ((1 - e) q_c + e / C).
// mean divides by the rows that count (hard: not ignore_index; soft: every row), and with
// weights and hard targets by the sum of w over their classes (PyTorch's weighted mean); 0 where
// nothing counts (PyTorch: NaN). Ignored rows are left out of the smoothing term too (PyTorch
// issue 73205). p and log p come from the row's (max, compensated sum), as softmax.hpp computes.
// bfloat16/float16 logits (and q) are computed in float, a row at a time through a float copy:
// the loss, the per-row losses and the class weights are float, dz is rounded once to 16 bits.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <xsimd/xsimd.hpp>

#include "axis_layout.hpp"
#include "concepts.hpp"
#include "detail/checks.hpp"
#include "detail/softmax_checks.hpp"
#include "detail/softmax_drivers.hpp"
#include "detail/softmax_math.hpp"
#include "isa.hpp"
#include "kernels.hpp"
#include "math/ops.hpp"
#include "math/sum.hpp"
#include "softmax.hpp"

namespace nonlin {

enum class reduction { none, sum, mean };

// PyTorch's knobs of cross_entropy, for the overloads that take them.
template <real_scalar T>
struct cross_entropy_options {
  reduction reduce = reduction::mean;
  std::int64_t ignore_index = -100;  // hard targets only
  double label_smoothing = 0.0;      // e in [0, 1]
  std::span<T const> weight = {};    // one per class, finite and >= 0; empty: all 1
  std::span<T> losses = {};          // one per row (needed for reduction::none)
};

namespace detail {
inline namespace NONLIN_ISA {
// What both kinds of targets check first: T, the rows layout of the logits, and dz their size
// and on them or apart. Returns the layout.
template <real_scalar T>
axis_layout require_logits(char const* where, softmax const& f, std::span<T const> logits,
                           std::span<T> dz, std::size_t cols) {
  require_temperature<T>(where, f.temperature);
  axis_layout const shape = rows_layout(where, "logits", logits.size(), cols);
  require_same_size<T>(where, "logits", logits, "dz", dz);
  require_no_partial_overlap<T>(where, "dz", dz, "logits", logits);
  return shape;
}

// losses: one per row (reduction none, or given), and apart from every other array: it is
// written row by row while the later rows of the others are still to be read.
template <class L, class T, class Q>
void require_losses(char const* where, std::span<L> losses, std::size_t rows, reduction r,
                    std::span<T const> logits, std::span<T> dz, char const* targets_name,
                    std::span<Q const> targets) {
  if ((r == reduction::none || !losses.empty()) && losses.size() != rows) {
    throw std::invalid_argument(
        std::string(where) + ": losses has " + std::to_string(losses.size()) +
        " elements but there are " + std::to_string(rows) + " rows" +
        (r == reduction::none ? " (reduction none needs one per row)" : ""));
  }
  std::span<L const> const out(losses);
  require_disjoint<L, T>(where, "losses", out, "logits", logits);
  require_disjoint<L, T>(where, "losses", out, "dz", std::span<T const>(dz));
  require_disjoint<L, Q>(where, "losses", out, targets_name, targets);
}

// Hard targets: one per row (or position), each a class in [0, classes) or ignore_index, and
// apart from dz, which is written row by row while the later rows' targets are still to be read.
template <class T>
void require_targets(char const* where, std::span<std::int64_t const> targets, std::span<T> dz,
                     std::size_t count, char const* what, std::size_t classes,
                     std::int64_t ignore_index) {
  require_disjoint<T, std::int64_t>(where, "dz", dz, "targets", targets);
  if (targets.size() != count) {
    throw std::invalid_argument(std::string(where) + ": targets has " +
                                std::to_string(targets.size()) + " elements but there are " +
                                std::to_string(count) + " " + what);
  }
  for (std::size_t k = 0; k < targets.size(); ++k) {
    std::int64_t const c = targets[k];
    if (c != ignore_index && (c < 0 || static_cast<std::size_t>(c) >= classes)) {
      throw std::invalid_argument(std::string(where) + ": targets[" + std::to_string(k) +
                                  "] = " + std::to_string(c) + " is not a class in [0, " +
                                  std::to_string(classes) +
                                  ") nor ignore_index=" + std::to_string(ignore_index));
    }
  }
}

// label_smoothing in [0, 1]; weight one finite, non-negative value per class, apart from the
// outputs.
// T: the options' type (float for 16-bit logits); D: dz's element type.
template <class T, class D>
void require_cross_entropy_options(char const* where, cross_entropy_options<T> const& o,
                                   std::size_t cols, std::span<D> dz) {
  double const e = o.label_smoothing;
  if (!(e >= 0.0 && e <= 1.0)) {
    throw std::invalid_argument(std::string(where) + ": label_smoothing must be in [0, 1], got " +
                                number_text(e));
  }
  if (o.weight.empty()) {
    return;
  }
  if (o.weight.size() != cols) {
    throw std::invalid_argument(std::string(where) + ": weight has " +
                                std::to_string(o.weight.size()) + " elements but there are " +
                                std::to_string(cols) + " classes");
  }
  for (std::size_t c = 0; c < cols; ++c) {
    T const w = o.weight[c];
    if (!(w >= T(0) && w <= std::numeric_limits<T>::max())) {
      throw std::invalid_argument(std::string(where) + ": weight[" + std::to_string(c) +
                                  "] = " + number_text(static_cast<double>(w)) +
                                  " (class weights must be finite and >= 0)");
    }
  }
  require_disjoint<D, T>(where, "dz", dz, "weight", o.weight);
  require_disjoint<T, T>(where, "losses", std::span<T const>(o.losses), "weight", o.weight);
}

// Shared by hard and soft targets, row by row: the row's (max, sum) from the logits, the loss
// from log p (read only), then dz from p itself (not exp(log p), which inherits log p's
// absolute error |z - m| u / T as a relative one: 105-177 units of the condition at T = 0.1).
// Hard targets: target(row) is the class or cols for a row that does not count; soft: q holds
// the rows. dz may be logits itself: each element is read before it is written.
template <class Arch, class T, class Target>
T cross_entropy_rows(softmax const& f, std::span<T const> logits, std::span<T> dz, std::size_t cols,
                     cross_entropy_options<T> const& o, std::span<T const> q,
                     Target const& target) {
  using B = xsimd::batch<T, Arch>;
  bool const soft = !q.empty();
  std::span<T> const losses = o.losses;
  std::span<T const> const w = o.weight;
  // Hard targets without weights or smoothing keep the one-hot path (a single log p, no scratch).
  bool const spread = !w.empty() || o.label_smoothing != 0.0;
  T const keep = static_cast<T>(1.0 - o.label_smoothing);
  T const share = static_cast<T>(o.label_smoothing / static_cast<double>(cols == 0 ? 1 : cols));
  std::size_t const rows = cols == 0 ? 0 : logits.size() / cols;
  T const t = static_cast<T>(f.temperature);
  T const inv_t = T(1) / t;
  auto counts = [&](std::size_t row) { return soft || target(row) < cols; };
  // The mean's denominator: the rows that count, or (hard targets with weights) the sum of the
  // weights of their classes.
  math::compensated_sum<T> denominator;
  for (std::size_t row = 0; row < rows; ++row) {
    if (counts(row)) {
      denominator.add(!soft && !w.empty() ? w[target(row)] : T(1));
    }
  }
  T const counted = denominator.total();
  T const scale = o.reduce != reduction::mean ? T(1) : (counted > T(0) ? T(1) / counted : T(0));
  std::vector<T> spread_row(spread ? cols : 0);
  T total = 0;
  constexpr T inf = std::numeric_limits<T>::infinity();
  for (std::size_t row = 0; row < rows; ++row) {
    T const* z = logits.data() + row * cols;
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
    // The row's target weights a: q itself, the smoothed and weighted ones, or the one-hot.
    T const* a = soft ? q.data() + row * cols : nullptr;
    if (spread) {
      for (std::size_t c = 0; c < cols; ++c) {
        T const base =
            soft ? math::fma(keep, a[c], share) : (c == target(row) ? keep + share : share);
        spread_row[c] = w.empty() ? base : w[c] * base;
      }
      a = spread_row.data();
    }
    // loss = -sum a log p, log p = (z - m) / T - log s (NaN throughout a poisoned row).
    // At T = 1 a row with a finite maximum takes log_softmax's T = 1 formula, as its forward over
    // rows does: the loss is -log_softmax's output at the target, bit for bit.
    T const log_sum = log_of_sum(stats.sum, stats.error);
    bool const unit = t == T(1) && stats.max > -std::numeric_limits<T>::infinity();
    auto log_p = [&](std::size_t i) {
      if (stats.sum != stats.sum) {
        return stats.sum;
      }
      return unit ? log_probability_given<true>(z[i], stats.max, log_sum, inv_t, t)
                  : log_probability_given(z[i], stats.max, log_sum, inv_t, t);
    };
    // Both sums compensated: a plain sum of q drifted by up to 57 u at 10^5 classes, and
    // dz inherits that through p sum a.
    T loss = 0;
    T a_sum = 1;  // soft targets need not sum to 1, weighted ones do not
    if (a != nullptr) {
      math::compensated_sum<T> a_total;
      math::compensated_sum<T> loss_total;
      for (std::size_t i = 0; i < cols; ++i) {
        if (a[i] != T(0)) {
          loss_total.add_product(a[i], math::neg(log_p(i)));
        }
        a_total.add(a[i]);
      }
      loss = loss_total.total();
      a_sum = a_total.total();
    } else {
      loss = T(0) - log_p(target(row));  // +0 where log p = 0, as the soft sum gives
    }
    // d loss / d z = (p sum a - a) / T (p - a where a sums to 1), scaled for the mean: the
    // difference first, in one rounding (fma; p - 1 at a hard target is exact for p >= 1/2),
    // then / T, then the mean's 1/denominator, so that mean's dz is sum's times it exactly.
    auto p_of = [&](auto zv) {
      using V = decltype(zv);
      return probability(zv, V(stats.max), V(stats.sum), V(stats.error), V(inv_t), V(t));
    };
    auto gradient = [&](auto p, auto av) {
      using V = decltype(p);
      return (math::fms(p, V(a_sum), av) * V(inv_t)) * V(scale);
    };
    std::span<T const> const z_row(z, cols);
    if (a != nullptr) {
      elementwise<Arch>([&](B zb, B ab) { return gradient(p_of(zb), ab); }, g, z_row,
                        std::span<T const>(a, cols));
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
  return o.reduce == reduction::mean ? total * scale : total;
}

// The (outer, classes, inner) layout: one (n, d) position is a row of `classes` logits at stride
// inner. Checks as the rows overloads, on the whole arrays, then block n by block n through the
// rows code on a transposed copy; the mean's denominator and the loss's sum over every position,
// in the rows layout's order, so that the bits are those of the rows overloads.
// 16-bit logits, q and dz (T) run the same way, the scratch blocks, the losses, the options
// and the sums in float (C): the logits widened on the copy, dz rounded once on the way back.
template <class Arch, class T, class C = compute_t<T>>
C cross_entropy_over_axis(softmax const& f, std::span<T const> logits,
                          std::span<std::int64_t const> targets, std::span<T const> q,
                          std::span<T> dz, axis_layout shape, cross_entropy_options<C> const& o) {
  char const* where = "nonlin::softmax_cross_entropy";
  bool const soft = targets.empty() && !q.empty();
  require_temperature<C>(where, f.temperature);
  require_layout(where, "logits", logits.size(), shape);
  require_same_size<T>(where, "logits", logits, "dz", dz);
  require_no_partial_overlap<T>(where, "dz", dz, "logits", logits);
  std::size_t const classes = shape.axis;
  std::size_t const inner = shape.inner;
  std::size_t const positions = shape.outer * inner;
  if (soft) {
    require_same_size<T>(where, "logits", logits, "q", q);
    require_disjoint<T, T>(where, "dz", dz, "q", q);
    require_losses(where, o.losses, positions, o.reduce, logits, dz, "q", q);
  } else {
    require_targets(where, targets, dz, positions, "positions (outer x inner)", classes,
                    o.ignore_index);
    require_losses(where, o.losses, positions, o.reduce, logits, dz, "targets", targets);
  }
  require_cross_entropy_options(where, o, classes, dz);
  auto target_of = [&](std::size_t k) {
    return targets[k] == o.ignore_index ? classes : static_cast<std::size_t>(targets[k]);
  };
  // The mean's denominator, as cross_entropy_rows counts it.
  math::compensated_sum<C> denominator;
  for (std::size_t k = 0; k < positions; ++k) {
    if (soft || target_of(k) < classes) {
      denominator.add(!soft && !o.weight.empty() ? o.weight[target_of(k)] : C(1));
    }
  }
  C const counted = denominator.total();
  C const scale = o.reduce != reduction::mean ? C(1) : (counted > C(0) ? C(1) / counted : C(0));
  std::vector<C> z_block(inner * classes);
  std::vector<C> g_block(inner * classes);
  std::vector<C> losses_block(inner);
  std::vector<C> q_block(soft ? inner * classes : 0);
  cross_entropy_options<C> block = o;
  block.reduce = reduction::sum;
  block.losses = std::span<C>(losses_block);
  C total = 0;
  auto const narrow = [](C v) {
    if constexpr (storage16<T>) {
      return T::from_float(v);
    } else {
      return v;
    }
  };
  for (std::size_t n = 0; n < shape.outer; ++n) {
    std::size_t const base = n * classes * inner;
    for (std::size_t c = 0; c < classes; ++c) {
      for (std::size_t d = 0; d < inner; ++d) {
        z_block[d * classes + c] = static_cast<C>(logits[base + c * inner + d]);
        if (soft) {
          q_block[d * classes + c] = static_cast<C>(q[base + c * inner + d]);
        }
      }
    }
    cross_entropy_rows<Arch>(f, std::span<C const>(z_block), std::span<C>(g_block), classes, block,
                             std::span<C const>(q_block), [&](std::size_t row) {
                               return soft ? classes : target_of(n * inner + row);
                             });
    for (std::size_t c = 0; c < classes; ++c) {
      for (std::size_t d = 0; d < inner; ++d) {
        dz[base + c * inner + d] = narrow(g_block[d * classes + c] * scale);
      }
    }
    for (std::size_t d = 0; d < inner; ++d) {
      total += losses_block[d];
      if (!o.losses.empty()) {
        o.losses[n * inner + d] = losses_block[d];
      }
    }
  }
  return o.reduce == reduction::mean ? total * scale : total;
}
}  // namespace NONLIN_ISA
}  // namespace detail

inline namespace NONLIN_ISA {

// softmax + cross-entropy from logits with hard targets: targets[row] is the class index, or
// o.ignore_index (the row then has loss 0, gradient 0, and counts neither in the mean nor in the
// smoothing term). o.weight and o.label_smoothing as PyTorch's cross_entropy (header comment).
// Writes dz = d loss / d logits (= (p - onehot) / T, / counted rows for the mean, without
// weights or smoothing); dz may be logits itself. Returns the loss reduced as asked; with
// reduction::none (or a non-empty o.losses) the per-row losses go to o.losses. An index outside
// [0, cols) that is not ignore_index, a label_smoothing outside [0, 1], or a weight of the wrong
// length, negative or not finite throws std::invalid_argument before anything is written.
template <class Arch = xsimd::default_arch, real_scalar T>
T softmax_cross_entropy(softmax const& f, std::span<T const> logits,
                        std::span<std::int64_t const> targets, std::span<T> dz, std::size_t cols,
                        cross_entropy_options<T> const& o) {
  char const* where = "nonlin::softmax_cross_entropy";
  axis_layout const shape = detail::require_logits(where, f, logits, dz, cols);
  detail::require_targets(where, targets, dz, shape.outer, "rows", cols, o.ignore_index);
  detail::require_losses(where, o.losses, shape.outer, o.reduce, logits, dz, "targets", targets);
  detail::require_cross_entropy_options(where, o, cols, dz);
  return detail::cross_entropy_rows<Arch>(
      f, logits, dz, cols, o, std::span<T const>(), [&](std::size_t row) {
        return targets[row] == o.ignore_index ? cols : static_cast<std::size_t>(targets[row]);
      });
}

template <class Arch = xsimd::default_arch, real_scalar T>
T softmax_cross_entropy(softmax const& f, std::span<T const> logits,
                        std::span<std::int64_t const> targets, std::span<T> dz, std::size_t cols,
                        reduction r = reduction::mean, std::int64_t ignore_index = -100,
                        std::span<T> losses = {}) {
  return softmax_cross_entropy<Arch>(
      f, logits, targets, dz, cols,
      cross_entropy_options<T>{.reduce = r, .ignore_index = ignore_index, .losses = losses});
}

// The same with soft targets: q holds a distribution per row. A row of q that does not sum to 1
// (label weights, a mixture) is taken as it is: dz is the gradient of the loss returned,
// (p sum a - a) / T, not p - a. The mean divides by the number of rows (PyTorch's, for class
// probabilities: weights do not enter it); o.ignore_index is not used.
template <class Arch = xsimd::default_arch, real_scalar T>
T softmax_cross_entropy(softmax const& f, std::span<T const> logits, std::span<T const> q,
                        std::span<T> dz, std::size_t cols, cross_entropy_options<T> const& o) {
  char const* where = "nonlin::softmax_cross_entropy";
  axis_layout const shape = detail::require_logits(where, f, logits, dz, cols);
  detail::require_same_size<T>(where, "logits", logits, "q", q);
  // dz is written row by row while the later rows of q are still to be read; dz = q itself is
  // rejected too (it was a silent wrong result before the rows were computed from p).
  detail::require_disjoint<T, T>(where, "dz", dz, "q", q);
  detail::require_losses(where, o.losses, shape.outer, o.reduce, logits, dz, "q", q);
  detail::require_cross_entropy_options(where, o, cols, dz);
  return detail::cross_entropy_rows<Arch>(f, logits, dz, cols, o, q,
                                          [&](std::size_t) { return cols; });
}

template <class Arch = xsimd::default_arch, real_scalar T>
T softmax_cross_entropy(softmax const& f, std::span<T const> logits, std::span<T const> q,
                        std::span<T> dz, std::size_t cols, reduction r = reduction::mean,
                        std::span<T> losses = {}) {
  return softmax_cross_entropy<Arch>(f, logits, q, dz, cols,
                                     cross_entropy_options<T>{.reduce = r, .losses = losses});
}

// The (N, C, d1, ...) layout PyTorch's cross_entropy takes: shape = {N, C, d1 * d2 * ...}, the
// class axis in the middle, one target (or one distribution, q in the same layout) per (n, d)
// position; losses and targets in (N, d1, ...) order. The same results, bit for bit, as the rows
// overloads on the array transposed to (N * d, C): each block of N is transposed into a scratch
// row block, run through the rows code, and its gradient transposed back (dz may be the logits).
template <class Arch = xsimd::default_arch, detail::span_element T>
detail::compute_t<T> softmax_cross_entropy(softmax const& f, std::span<T const> logits,
                                           std::span<std::int64_t const> targets, std::span<T> dz,
                                           axis_layout shape,
                                           cross_entropy_options<detail::compute_t<T>> const& o) {
  return detail::cross_entropy_over_axis<Arch>(f, logits, targets, std::span<T const>(), dz, shape,
                                               o);
}

template <class Arch = xsimd::default_arch, detail::span_element T>
detail::compute_t<T> softmax_cross_entropy(softmax const& f, std::span<T const> logits,
                                           std::span<T const> q, std::span<T> dz, axis_layout shape,
                                           cross_entropy_options<detail::compute_t<T>> const& o) {
  return detail::cross_entropy_over_axis<Arch>(f, logits, std::span<std::int64_t const>(), q, dz,
                                               shape, o);
}

// 16-bit logits (bfloat16, float16) in the rows layout: computed in float, as the float rows
// overloads on the widened logits (the (rows, cols, 1) axis layout, a row at a time), dz
// rounded once to T; the loss, the per-row losses and the class weights are float.
template <class Arch = xsimd::default_arch, storage16 T>
float softmax_cross_entropy(softmax const& f, std::span<T const> logits,
                            std::span<std::int64_t const> targets, std::span<T> dz,
                            std::size_t cols, cross_entropy_options<float> const& o = {}) {
  axis_layout const shape =
      detail::rows_layout("nonlin::softmax_cross_entropy", "logits", logits.size(), cols);
  return detail::cross_entropy_over_axis<Arch>(f, logits, targets, std::span<T const>(), dz, shape,
                                               o);
}

template <class Arch = xsimd::default_arch, storage16 T>
float softmax_cross_entropy(softmax const& f, std::span<T const> logits, std::span<T const> q,
                            std::span<T> dz, std::size_t cols,
                            cross_entropy_options<float> const& o = {}) {
  axis_layout const shape =
      detail::rows_layout("nonlin::softmax_cross_entropy", "logits", logits.size(), cols);
  return detail::cross_entropy_over_axis<Arch>(f, logits, std::span<std::int64_t const>(), q, dz,
                                               shape, o);
}

}  // namespace NONLIN_ISA
}  // namespace nonlin
