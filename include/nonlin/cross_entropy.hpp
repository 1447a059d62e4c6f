// SPDX-License-Identifier: MIT
#pragma once
// softmax + cross-entropy from logits, hard targets (a class per row, or ignore_index) and soft
// targets (a distribution per row), with the loss reduced as none, sum or mean:
//   loss = -sum q log p,  dz = (p sum q - q) / T  (/ rows that count, for mean; p - q where q
//   sums to 1, as hard targets do)
// p and log p come from the row's (max, compensated sum), as softmax.hpp computes them.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>

#include <xsimd/xsimd.hpp>

#include "axis_layout.hpp"
#include "concepts.hpp"
#include "detail/checks.hpp"
#include "detail/softmax_checks.hpp"
#include "detail/softmax_drivers.hpp"
#include "detail/softmax_math.hpp"
#include "kernels.hpp"
#include "math/ops.hpp"
#include "math/sum.hpp"
#include "softmax.hpp"

namespace nonlin {

enum class reduction { none, sum, mean };

namespace detail {
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
  axis_layout const shape = detail::require_logits(where, f, logits, dz, cols);
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
  axis_layout const shape = detail::require_logits(where, f, logits, dz, cols);
  detail::require_same_size<T>(where, "logits", logits, "q", q);
  // dz is written row by row while the later rows of q are still to be read; dz = q itself is
  // rejected too (it was a silent wrong result before the rows were computed from p).
  detail::require_disjoint<T, T>(where, "dz", dz, "q", q);
  detail::require_losses(where, losses, shape.outer, r, logits, dz, "q", q);
  return detail::cross_entropy_rows<Arch>(f, logits, dz, cols, r, losses, q,
                                          [&](std::size_t) { return cols; });
}

}  // namespace nonlin
