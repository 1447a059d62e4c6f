// SPDX-License-Identifier: MIT
// libFuzzer target: softmax, log_softmax (forward and backward from the output) over the rows
// and the (outer, axis, inner) layouts, and softmax_cross_entropy with hard targets (valid,
// ignore_index, out of range) and soft targets, float and double, with fuzzed values (masked
// -inf entries and fully masked rows, NaN, +inf, subnormals, raw bit patterns), shapes and
// temperatures (valid and invalid). Asserts:
//  - std::invalid_argument exactly for the documented bad arguments (temperature not finite and
//    > 0, sizes that do not fit the layout, an output partly over an input, a target that is
//    neither a class nor ignore_index, targets or losses of the wrong length), and then nothing
//    was written (outputs are pre-filled with NaN and compared bit for bit);
//  - in place equals out of place bit for bit; a row's result does not depend on the other rows
//    (rows layout) nor on its lane (axis layout: the same columns shifted by one lane);
//  - a row of finite (or -inf) entries gives finite probabilities in [0, 1] that sum to 1
//    within 5 eps (any length), 0 at -inf; log_softmax finite there (-inf at -inf) unless
//    (max - min)/T itself overflows; a fully masked row gives p = 0 and log p = -inf; a row with
//    NaN or +inf gives NaN at every entry that is not -inf;
//  - backward from the output is finite for such rows with |dy| <= 1 (unless cols/T overflows),
//    and for any finite dy where the long double gradient is below max/4; 0 at masked entries;
//  - cross-entropy: the loss of a row is -log_softmax at its target bit for bit, 0 with zero
//    gradients for ignored and fully masked rows; sum = the per-row losses added in order,
//    mean = sum * (1/counted), mean's dz = sum's dz * (1/counted), bit for bit; one-hot soft
//    targets give the hard-target results bit for bit; finite rows give a finite loss >= 0
//    and finite gradients; losses inside the logits, dz or q, or dz on q, is rejected with
//    nothing written.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include <nonlin/softmax.hpp>

#include "fuzz_support.hpp"
#include "support/gradient_error.hpp"

namespace nonlin::fuzz {
namespace {

template <class T>
bool representable_temperature(double t);

template <class T>
constexpr T inf = std::numeric_limits<T>::infinity();

// The elements of one normalised row of `shape`: (o, j) -> index of entry a.
struct row_index {
  axis_layout shape;
  std::size_t o, j;
  std::size_t operator()(std::size_t a) const { return (o * shape.axis + a) * shape.inner + j; }
};

template <class Visit>
void for_each_row(axis_layout shape, Visit&& visit) {
  for (std::size_t o = 0; o < shape.outer; ++o) {
    for (std::size_t j = 0; j < shape.inner; ++j) {
      visit(row_index{shape, o, j});
    }
  }
}

// finite: finite or -inf entries, at least one finite; masked: all -inf; poisoned: a NaN or
// +inf. nan_masked: NaN entries and otherwise only -inf, which the policy says is a NaN row but
// nonlin 0.1 treats as fully masked (zeros; see fuzz/README.md). The fuzzer skips such rows
// unless built with -DNONLIN_FUZZ_STRICT=1, which asserts the documented policy for them too.
enum class row_kind { finite, masked, poisoned, nan_masked };

#ifndef NONLIN_FUZZ_STRICT
#define NONLIN_FUZZ_STRICT 1
#endif

template <class T>
row_kind classify(std::span<T const> x, row_index at) {
  bool any_finite = false;
  bool any_nan = false;
  bool any_plus_inf = false;
  for (std::size_t a = 0; a < at.shape.axis; ++a) {
    T const v = x[at(a)];
    any_nan = any_nan || std::isnan(v);
    any_plus_inf = any_plus_inf || v == inf<T>;
    any_finite = any_finite || std::isfinite(v);
  }
  if (any_nan && !any_plus_inf && !any_finite && !NONLIN_FUZZ_STRICT) {
    return row_kind::nan_masked;
  }
  if (any_nan || any_plus_inf) {
    return row_kind::poisoned;
  }
  return any_finite || at.shape.axis == 0 ? row_kind::finite : row_kind::masked;
}

// (max - min) / T over the finite entries does not overflow, nor does cols / T.
template <class T>
bool moderate(std::span<T const> x, row_index at, double t) {
  long double lo = 0;
  long double hi = 0;
  bool first = true;
  for (std::size_t a = 0; a < at.shape.axis; ++a) {
    T const v = x[at(a)];
    if (std::isfinite(v)) {
      lo = first ? v : std::min<long double>(lo, v);
      hi = first ? v : std::max<long double>(hi, v);
      first = false;
    }
  }
  long double const limit = std::numeric_limits<T>::max() / 4.0L;
  long double const tt = static_cast<T>(t);
  // z - max itself must not overflow either: z - m is formed before the division by T (a known
  // limitation, see the report in fuzz/README.md: entries more than max apart give NaN).
  return representable_temperature<T>(t) && hi - lo <= std::numeric_limits<T>::max() &&
         (hi - lo) / tt < limit && (at.shape.axis + 1.0L) / tt < limit;
}

bool valid_temperature(double t) { return std::isfinite(t) && t > 0; }

// T as the kernels use it, static_cast<T>(T), and 1/T finite and > 0. A valid double T outside
// that range (1e-300 or 1e39 for float) gives NaN rows: a known limitation (fuzz/README.md), so
// the finiteness checks skip it; everything else is still checked.
template <class T>
bool representable_temperature(double t) {
  T const tt = static_cast<T>(t);
  return valid_temperature(t) && std::isfinite(tt) && tt > T(0) && std::isfinite(T(1) / tt);
}

template <class T>
void check_same(char const* where, std::span<T const> a, std::span<T const> b) {
  check(a.size() == b.size(), "sizes differ", where);
  for (std::size_t i = 0; i < a.size(); ++i) {
    check(same_bits(a[i], b[i]), "results differ", where, i, a[i], b[i]);
  }
}

template <class T>
bool all_nan_bits_kept(std::vector<T> const& v) {
  return std::all_of(v.begin(), v.end(), [](T x) { return std::isnan(x); });
}

template <class F, class T>
void fwd(F const& f, std::span<T const> x, std::span<T> y, axis_layout shape, bool rows_api) {
  if (rows_api) {
    forward(f, x, y, shape.axis);
  } else {
    forward(f, x, y, shape);
  }
}

template <class F, class T>
void bwd(F const& f, std::span<T const> y, std::span<T const> dy, std::span<T> dx,
         axis_layout shape, bool rows_api) {
  if (rows_api) {
    backward_from_output(f, y, dy, dx, shape.axis);
  } else {
    backward_from_output(f, y, dy, dx, shape);
  }
}

struct input_shape {
  axis_layout shape;
  bool rows_api = false;  // the (x, y, cols) overloads
  std::size_t size = 0;   // x's size: shape.size(), or off by one
};

// forward(F) out of place, in place, partly overlapping, row by row / shifted by a lane; the
// result (or empty if it threw).
template <class F, class T>
std::vector<T> check_forward(char const* name, F const& f, input_shape const& in,
                             std::vector<T> const& x, std::size_t overlap_shift) {
  axis_layout const shape = in.shape;
  bool const bad = !representable_temperature<T>(f.temperature) || x.size() != shape.size();
  std::vector<T> y(x.size(), std::numeric_limits<T>::quiet_NaN());
  bool const threw = throws_invalid_argument(
      [&] { fwd(f, std::span<T const>(x), std::span<T>(y), shape, in.rows_api); });
  check(threw == bad, threw ? "threw for valid arguments" : "did not throw for bad arguments",
        name);
  if (threw) {
    check(all_nan_bits_kept(y), "threw but wrote something first", name);
    return {};
  }
  // In place.
  std::vector<T> z = x;
  fwd(f, std::span<T const>(z), std::span<T>(z), shape, in.rows_api);
  check_same<T>(name, y, z);
  // Partly over the input: refused, nothing written.
  if (overlap_shift > 0 && overlap_shift < x.size()) {
    std::vector<T> buffer(x.size() + overlap_shift);
    std::copy(x.begin(), x.end(), buffer.begin());
    std::vector<T> const before = buffer;
    bool const refused = throws_invalid_argument([&] {
      fwd(f, std::span<T const>(buffer.data(), x.size()),
          std::span<T>(buffer.data() + overlap_shift, x.size()), shape, in.rows_api);
    });
    check(refused, "did not throw for a partly overlapping output", name);
    check_untouched(name, before, buffer);
  }
  // Independence: each row alone (rows layout); the columns one lane further (axis layout).
  if (shape.inner == 1) {
    for (std::size_t r = 0; r < shape.outer; ++r) {
      std::span<T const> const row(x.data() + r * shape.axis, shape.axis);
      std::vector<T> alone(shape.axis);
      fwd(f, row, std::span<T>(alone), axis_layout{1, shape.axis, 1}, false);
      check_same<T>(name, alone, std::span<T const>(y.data() + r * shape.axis, shape.axis));
    }
  } else {
    axis_layout const wider{shape.outer, shape.axis, shape.inner + 1};
    std::vector<T> x2(wider.size(), T(0.5));
    std::vector<T> y2(wider.size());
    for_each_row(shape, [&](row_index at) {
      row_index const to{wider, at.o, at.j + 1};
      for (std::size_t a = 0; a < shape.axis; ++a) {
        x2[to(a)] = x[at(a)];
      }
    });
    fwd(f, std::span<T const>(x2), std::span<T>(y2), wider, false);
    for_each_row(shape, [&](row_index at) {
      row_index const to{wider, at.o, at.j + 1};
      for (std::size_t a = 0; a < shape.axis; ++a) {
        check(same_bits(y[at(a)], y2[to(a)]), "result depends on the lane", name, a, y[at(a)],
              y2[to(a)]);
      }
    });
  }
  return y;
}

template <class T>
void check_softmax_rows(std::span<T const> x, std::span<T const> p, axis_layout shape, double t) {
  constexpr T eps = std::numeric_limits<T>::epsilon();
  for_each_row(shape, [&](row_index at) {
    switch (classify(x, at)) {
      case row_kind::nan_masked:
        break;
      case row_kind::masked:
        for (std::size_t a = 0; a < shape.axis; ++a) {
          check(p[at(a)] == T(0), "fully masked row: p != 0", "softmax", a, x[at(a)], p[at(a)]);
        }
        break;
      case row_kind::poisoned:
        for (std::size_t a = 0; a < shape.axis; ++a) {
          if (x[at(a)] != -inf<T>) {
            check(std::isnan(p[at(a)]), "NaN/+inf in the row: p not NaN", "softmax", a, x[at(a)],
                  p[at(a)]);
          }
        }
        break;
      case row_kind::finite: {
        if (!representable_temperature<T>(t)) {
          break;
        }
        long double sum = 0;
        for (std::size_t a = 0; a < shape.axis; ++a) {
          T const v = p[at(a)];
          check(std::isfinite(v) && v >= T(0) && v <= T(1), "finite row: p not in [0, 1]",
                "softmax", a, x[at(a)], v);
          if (x[at(a)] == -inf<T>) {
            check(v == T(0), "masked entry: p != 0", "softmax", a, x[at(a)], v);
          }
          sum += v;
        }
        if (shape.axis > 0) {
          // Compared in long double: rounding the sum to double first can add half an ulp.
          check(std::abs(sum - 1) <= 5 * static_cast<long double>(eps),
                "finite row: sum of p not 1 within 5 eps", "softmax", shape.axis,
                static_cast<double>(sum - 1) / eps, t);
        }
        break;
      }
    }
  });
}

template <class T>
void check_log_softmax_rows(std::span<T const> x, std::span<T const> lp, axis_layout shape,
                            double t) {
  for_each_row(shape, [&](row_index at) {
    row_kind const kind = classify(x, at);
    bool const finite_expected = kind == row_kind::finite && moderate(x, at, t);
    for (std::size_t a = 0; a < shape.axis; ++a) {
      T const v = lp[at(a)];
      T const z = x[at(a)];
      if (kind == row_kind::masked || (kind == row_kind::finite && z == -inf<T>)) {
        check(v == -inf<T>, "masked entry or row: log p != -inf", "log_softmax", a, z, v);
      } else if (kind == row_kind::poisoned && z != -inf<T>) {
        check(std::isnan(v), "NaN/+inf in the row: log p not NaN", "log_softmax", a, z, v);
      } else if (finite_expected) {
        check(std::isfinite(v) && v <= T(0), "finite row: log p not finite and <= 0", "log_softmax",
              a, z, v);
      }
    }
  });
}

// backward_from_output(F) from y (the forward's output): out of place, in place on dy and on y,
// row by row; finite where it must be.
template <class F, class T>
void check_backward(char const* name, F const& f, input_shape const& in, std::vector<T> const& x,
                    std::vector<T> const& y, std::vector<T> const& dy, bool dy_wrong_size) {
  axis_layout const shape = in.shape;
  std::vector<T> g = dy;
  if (dy_wrong_size) {
    g.push_back(T(0));
  }
  bool const bad = !representable_temperature<T>(f.temperature) || g.size() != y.size() ||
                   y.size() != shape.size();
  std::vector<T> dx(y.size(), std::numeric_limits<T>::quiet_NaN());
  bool const threw = throws_invalid_argument([&] {
    bwd(f, std::span<T const>(y), std::span<T const>(g), std::span<T>(dx), shape, in.rows_api);
  });
  check(threw == bad, threw ? "threw for valid arguments" : "did not throw for bad arguments",
        name);
  if (threw) {
    check(all_nan_bits_kept(dx), "threw but wrote something first", name);
    return;
  }
  std::vector<T> on_dy = g;
  bwd(f, std::span<T const>(y), std::span<T const>(on_dy), std::span<T>(on_dy), shape, false);
  check_same<T>(name, dx, on_dy);
  std::vector<T> on_y = y;
  bwd(f, std::span<T const>(on_y), std::span<T const>(g), std::span<T>(on_y), shape, false);
  check_same<T>(name, dx, on_y);
  if (shape.inner == 1) {
    for (std::size_t r = 0; r < shape.outer; ++r) {
      std::size_t const base = r * shape.axis;
      std::vector<T> alone(shape.axis);
      bwd(f, std::span<T const>(y.data() + base, shape.axis),
          std::span<T const>(g.data() + base, shape.axis), std::span<T>(alone),
          axis_layout{1, shape.axis, 1}, false);
      check_same<T>(name, alone, std::span<T const>(dx.data() + base, shape.axis));
    }
  }
  constexpr bool is_log = std::is_same_v<F, log_softmax>;
  for_each_row(shape, [&](row_index at) {
    row_kind const kind = classify(std::span<T const>(x), at);
    if (kind == row_kind::poisoned || kind == row_kind::nan_masked) {
      return;
    }
    bool small_dy = true;
    for (std::size_t a = 0; a < shape.axis; ++a) {
      small_dy = small_dy && std::isfinite(g[at(a)]) && std::abs(g[at(a)]) <= T(1);
    }
    bool const finite_expected = small_dy && moderate(std::span<T const>(x), at, f.temperature);
    // dy anywhere in the range (near +-max too): where the long double gradient from y and dy is
    // below max/4 at every entry, the computed one is finite (dy - <y, dy> and sum dy
    // overflowed in between before they were scaled).
    bool all_finite = moderate(std::span<T const>(x), at, f.temperature);
    // Compensated: dy of +-max beside smaller ones cancels (a plain long double sum of
    // [2^512, -max, max, 3] is 3, not 2^512 + 3, and made a correct -inf look wrong).
    test::gradient_error::exact_sum reduce_sum;
    for (std::size_t a = 0; a < shape.axis; ++a) {
      long double const yv = y[at(a)];
      long double const gv = g[at(a)];
      all_finite = all_finite && std::isfinite(g[at(a)]) && std::isfinite(yv) &&
                   (is_log || (yv >= 0 && yv <= 1));
      reduce_sum.add(is_log ? gv : yv * gv);
    }
    long double const reduce = reduce_sum.value();
    if (all_finite) {
      long double const inv_t = 1.0L / static_cast<T>(f.temperature);
      for (std::size_t a = 0; a < shape.axis; ++a) {
        long double const yv = y[at(a)];
        long double const gv = g[at(a)];
        long double const exact =
            is_log ? (gv - std::exp(yv) * reduce) * inv_t : yv * (gv - reduce) * inv_t;
        if (std::fabs(exact) <= static_cast<long double>(std::numeric_limits<T>::max()) / 4) {
          check(std::isfinite(dx[at(a)]), "finite row and dy, finite exact gradient: not finite",
                name, a, g[at(a)], dx[at(a)]);
        }
      }
    }
    for (std::size_t a = 0; a < shape.axis; ++a) {
      T const v = dx[at(a)];
      bool const masked = is_log ? y[at(a)] == -inf<T> : y[at(a)] == T(0);
      if (masked && (is_log || finite_expected)) {
        check(v == T(0), "masked entry: gradient != 0", name, a, y[at(a)], v);
      }
      if (finite_expected) {
        check(std::isfinite(v), "finite row, |dy| <= 1: gradient not finite", name, a, y[at(a)], v);
      }
    }
  });
}

template <class T>
void check_cross_entropy(reader& in, std::vector<T> const& x, std::size_t cols, double t) {
  char const* name = "softmax_cross_entropy";
  softmax const f{.temperature = t};
  std::size_t const rows = cols == 0 ? 0 : x.size() / cols;
  bool const bad_layout = cols == 0 ? !x.empty() : x.size() % cols != 0;
  // Targets: classes, ignore_index, out of range; ignore_index itself may be a class.
  std::int64_t const ignore_index = [&]() -> std::int64_t {
    std::uint8_t const k = in.byte();
    return k < 128 ? -100 : k < 192 ? static_cast<std::int64_t>(in.below(cols + 1)) : -1;
  }();
  std::vector<std::int64_t> targets(rows);
  bool bad_target = false;
  for (std::int64_t& k : targets) {
    std::uint8_t const kind = in.byte();
    if (kind < 170 && cols > 0) {
      k = static_cast<std::int64_t>(in.below(cols));
    } else if (kind < 220) {
      k = ignore_index;
    } else {
      static std::int64_t const wild[] = {-1, std::numeric_limits<std::int64_t>::min(),
                                          std::numeric_limits<std::int64_t>::max(), -100};
      k = kind % 2 == 0 ? static_cast<std::int64_t>(cols + in.below(3))
                        : wild[in.byte() % std::size(wild)];
    }
    bad_target =
        bad_target || (k != ignore_index && (k < 0 || static_cast<std::uint64_t>(k) >= cols));
  }
  bool const targets_wrong_size = in.byte() % 16 == 0;
  if (targets_wrong_size) {
    targets.push_back(0);
  }
  bool const losses_wrong_size = in.byte() % 16 == 0;
  bool const in_place = in.flag();
  bool const bad_common = !representable_temperature<T>(t) || bad_layout || targets_wrong_size;

  std::vector<T> dz[3];
  std::vector<T> losses(rows + (losses_wrong_size ? 1 : 0), std::numeric_limits<T>::quiet_NaN());
  T result[3] = {};
  reduction const reductions[3] = {reduction::none, reduction::sum, reduction::mean};
  for (int r = 0; r < 3; ++r) {
    dz[r].assign(x.size(), std::numeric_limits<T>::quiet_NaN());
    // losses: always for none; for sum and mean, empty (allowed) or of the right size.
    bool const pass_losses = r == 0;
    bool const bad = bad_common || (!bad_layout && !targets_wrong_size && bad_target) ||
                     (pass_losses && losses.size() != rows);
    std::vector<T> const losses_before = losses;
    bool const threw = throws_invalid_argument([&] {
      result[r] = softmax_cross_entropy(
          f, std::span<T const>(x), std::span<std::int64_t const>(targets), std::span<T>(dz[r]),
          cols, reductions[r], ignore_index, pass_losses ? std::span<T>(losses) : std::span<T>());
    });
    check(threw == bad, threw ? "threw for valid arguments" : "did not throw for bad arguments",
          name, static_cast<std::size_t>(r));
    if (threw) {
      check(all_nan_bits_kept(dz[r]), "threw but wrote dz first", name);
      check_untouched(name, losses_before, losses);
      return;
    }
  }
  if (in_place) {
    std::vector<T> z = x;
    T const loss =
        softmax_cross_entropy(f, std::span<T const>(z), std::span<std::int64_t const>(targets),
                              std::span<T>(z), cols, reduction::mean, ignore_index);
    check(same_bits(loss, result[2]), "in place: loss differs", name, 0, loss, result[2]);
    check_same<T>(name, z, dz[2]);
  }
  // Reductions agree bit for bit.
  T total = 0;
  std::size_t counted = 0;
  for (std::size_t row = 0; row < rows; ++row) {
    total += losses[row];
    counted += targets[row] != ignore_index ? 1 : 0;
  }
  check(same_bits(total, result[1]), "sum != the per-row losses added", name, 0, total, result[1]);
  T const scale = counted > 0 ? T(1) / static_cast<T>(counted) : T(1);
  check(same_bits(result[1] * scale, result[2]), "mean != sum / counted", name, counted,
        result[1] * scale, result[2]);
  for (std::size_t i = 0; i < x.size(); ++i) {
    check(same_bits(dz[1][i] * scale, dz[2][i]), "mean's dz != sum's dz / counted", name, i,
          dz[1][i], dz[2][i]);
  }
  // Per row: the loss is -log_softmax at the target; ignored and masked rows give zeros.
  std::vector<T> lp(x.size());
  forward(log_softmax{.temperature = t}, std::span<T const>(x), std::span<T>(lp), cols);
  axis_layout const shape{rows, cols, 1};
  for_each_row(shape, [&](row_index at) {
    std::size_t const row = at.o;
    row_kind const kind = classify(std::span<T const>(x), at);
    bool const ignored = targets[row] == ignore_index;
    if (ignored || kind == row_kind::masked) {
      check(losses[row] == T(0), "ignored or masked row: loss != 0", name, row, losses[row]);
      for (std::size_t a = 0; a < cols; ++a) {
        check(dz[0][at(a)] == T(0), "ignored or masked row: dz != 0", name, a, dz[0][at(a)]);
      }
      return;
    }
    if (kind == row_kind::nan_masked) {
      return;
    }
    T const want = -lp[at(static_cast<std::size_t>(targets[row]))];
    // 0 - log p: +0 where log p = 0, so == rather than the bits.
    check(losses[row] == want || (std::isnan(losses[row]) && std::isnan(want)),
          "loss != -log_softmax[target]", name, row, losses[row], want);
    bool const target_masked = x[at(static_cast<std::size_t>(targets[row]))] == -inf<T>;
    if (kind == row_kind::finite && !target_masked && moderate(std::span<T const>(x), at, t)) {
      check(std::isfinite(losses[row]) && losses[row] >= T(0), "finite row: loss not finite >= 0",
            name, row, losses[row]);
      for (std::size_t a = 0; a < cols; ++a) {
        check(std::isfinite(dz[0][at(a)]), "finite row: dz not finite", name, a, dz[0][at(a)]);
      }
    }
  });
  // One-hot soft targets (no ignored rows) give the same bits.
  if (std::none_of(targets.begin(), targets.end(),
                   [&](std::int64_t k) { return k == ignore_index; })) {
    std::vector<T> q(x.size(), T(0));
    for (std::size_t row = 0; row < rows; ++row) {
      q[row * cols + static_cast<std::size_t>(targets[row])] = T(1);
    }
    std::vector<T> soft_dz(x.size());
    std::vector<T> soft_losses(rows);
    T const soft = softmax_cross_entropy(f, std::span<T const>(x), std::span<T const>(q),
                                         std::span<T>(soft_dz), cols, reduction::none,
                                         std::span<T>(soft_losses));
    check(same_bits(soft, result[0]), "one-hot soft targets: loss differs", name, 0, soft,
          result[0]);
    check_same<T>(name, soft_dz, dz[0]);
    check_same<T>(name, soft_losses, std::span<T const>(losses.data(), rows));
  }
}

// Soft targets: fuzzed q (a distribution per row or raw values), sizes off by one.
template <class T>
void check_soft_targets(reader& in, std::vector<T> const& x, std::size_t cols, double t) {
  char const* name = "softmax_cross_entropy(soft)";
  std::size_t const rows = cols == 0 ? 0 : x.size() / cols;
  bool const bad_layout = cols == 0 ? !x.empty() : x.size() % cols != 0;
  bool const raw = in.flag();
  bool const q_wrong_size = in.byte() % 16 == 0;
  std::vector<T> q(x.size() + (q_wrong_size ? 1 : 0));
  std::vector<char> distribution(rows, 1);
  for (std::size_t i = 0; i < q.size(); ++i) {
    q[i] = raw ? in.value<T>() : static_cast<T>(in.byte()) / T(255);
  }
  if (!raw) {  // normalise each row
    for (std::size_t row = 0; row < rows; ++row) {
      T s = 0;
      for (std::size_t a = 0; a < cols; ++a) {
        s += q[row * cols + a];
      }
      for (std::size_t a = 0; a < cols; ++a) {
        q[row * cols + a] = s > T(0) ? q[row * cols + a] / s : T(1) / static_cast<T>(cols);
      }
    }
  }
  for (std::size_t row = 0; row < rows && raw; ++row) {
    for (std::size_t a = 0; a < cols; ++a) {
      T const v = q[row * cols + a];
      distribution[row] = distribution[row] && std::isfinite(v) && v >= T(0) && v <= T(1);
    }
  }
  bool const bad = !representable_temperature<T>(t) || bad_layout || q_wrong_size;
  std::vector<T> dz(x.size(), std::numeric_limits<T>::quiet_NaN());
  std::vector<T> losses(rows, std::numeric_limits<T>::quiet_NaN());
  bool const threw = throws_invalid_argument([&] {
    softmax_cross_entropy(softmax{.temperature = t}, std::span<T const>(x), std::span<T const>(q),
                          std::span<T>(dz), cols, reduction::none, std::span<T>(losses));
  });
  check(threw == bad, threw ? "threw for valid arguments" : "did not throw for bad arguments",
        name);
  if (threw) {
    check(all_nan_bits_kept(dz) && all_nan_bits_kept(losses), "threw but wrote first", name);
    return;
  }
  for_each_row(axis_layout{rows, cols, 1}, [&](row_index at) {
    bool no_masked = true;
    for (std::size_t a = 0; a < cols; ++a) {
      no_masked = no_masked && std::isfinite(x[at(a)]);
    }
    if (distribution[at.o] && no_masked && moderate(std::span<T const>(x), at, t)) {
      check(std::isfinite(losses[at.o]), "finite row, q a distribution: loss not finite", name,
            at.o, losses[at.o]);
      for (std::size_t a = 0; a < cols; ++a) {
        check(std::isfinite(dz[at(a)]), "finite row, q a distribution: dz not finite", name, a,
              dz[at(a)]);
      }
    }
  });
  // Two outputs: losses inside the logits, dz or q (a fuzzed offset), or dz on q (exactly or
  // shifted): each is rejected, and nothing of any array is written.
  if (rows == 0) {
    return;
  }
  std::uint8_t const which = in.byte() % 4;
  std::vector<T> logits = x;
  std::vector<T> targets = q;
  std::vector<T> grad(x.size(), std::numeric_limits<T>::quiet_NaN());
  std::vector<T> own_losses(rows, std::numeric_limits<T>::quiet_NaN());
  std::size_t const offset = in.below(x.size() - rows + 1);
  std::span<T> loss_span(own_losses);
  std::span<T> dz_span(grad);
  if (which == 0) {
    loss_span = std::span<T>(logits).subspan(offset, rows);
  } else if (which == 1) {
    loss_span = std::span<T>(grad).subspan(offset, rows);
  } else if (which == 2) {
    loss_span = std::span<T>(targets).subspan(offset, rows);
  } else {
    std::size_t const shift = in.below(2) * in.below(x.size());
    targets.resize(x.size() + shift, T(0));
    dz_span = std::span<T>(targets).subspan(shift, x.size());
  }
  std::span<T const> const q_span(targets.data(), x.size());
  std::vector<T> const before[4] = {logits, targets, grad, own_losses};
  bool const aliased = throws_invalid_argument([&] {
    softmax_cross_entropy(softmax{.temperature = t}, std::span<T const>(logits), q_span, dz_span,
                          cols, reduction::none, loss_span);
  });
  check(aliased, "two outputs over each other or an input: not rejected", name, which);
  check_untouched(name, before[0], logits);
  check_untouched(name, before[1], targets);
  check_untouched(name, before[2], grad);
  check_untouched(name, before[3], own_losses);
}

template <class T>
void run(reader& in) {
  constexpr std::size_t width = xsimd::batch<T>::size;
  double const t = in.parameter();
  input_shape s;
  std::uint8_t const kind = in.byte();
  if (kind % 2 == 0) {  // rows
    std::size_t const cols = kind % 16 == 0 ? in.below(520) : in.below(4 * width + 3);
    s.shape = {in.below(5), cols, 1};
    s.rows_api = (kind & 2U) != 0;
  } else {
    s.shape = {1 + in.below(3), in.below(12), 2 + in.below(2 * width + 1)};
  }
  s.size = s.shape.size() + (in.byte() % 16 == 0 ? 1 : 0);
  if (s.rows_api && s.shape.axis > 0 && s.size % s.shape.axis == 0) {
    s.shape.outer = s.size / s.shape.axis;  // (x, y, cols) takes rows = size / cols
  }
  bool const wrong_size = s.size != s.shape.size();
  std::uint8_t const mask_density = in.byte();
  std::uint8_t const masked_rows = in.byte();
  std::size_t const overlap_shift = in.below(s.size + 1);
  std::vector<T> x(s.size);
  for (T& v : x) {
    v = in.byte() < mask_density / 2 ? -inf<T> : in.value<T>();
  }
  // Some fully masked rows.
  for_each_row(s.shape, [&](row_index at) {
    if (((at.o * 7 + at.j) & 7U) < (masked_rows & 7U) && (masked_rows & 8U) != 0) {
      for (std::size_t a = 0; a < s.shape.axis; ++a) {
        x[at(a)] = -inf<T>;
      }
    }
  });
  std::vector<T> dy(s.size);
  for (T& v : dy) {
    v = in.value<T>();
  }
  bool const dy_wrong_size = in.byte() % 16 == 0;

  std::vector<T> const p = check_forward("softmax", softmax{.temperature = t}, s, x, overlap_shift);
  std::vector<T> const lp =
      check_forward("log_softmax", log_softmax{.temperature = t}, s, x, overlap_shift);
  if (representable_temperature<T>(t) && !wrong_size) {
    check_softmax_rows<T>(x, p, s.shape, t);
    check_log_softmax_rows<T>(x, lp, s.shape, t);
    check_backward("softmax backward", softmax{.temperature = t}, s, x, p, dy, dy_wrong_size);
    check_backward("log_softmax backward", log_softmax{.temperature = t}, s, x, lp, dy,
                   dy_wrong_size);
  } else {
    // The arguments were refused; the backward passes refuse them too.
    std::vector<T> const y(s.size, T(0.25));
    check_backward("softmax backward", softmax{.temperature = t}, s, x, y, dy, dy_wrong_size);
    check_backward("log_softmax backward", log_softmax{.temperature = t}, s, x, y, dy,
                   dy_wrong_size);
  }
  // Cross-entropy over rows of the axis length (any layout's data reinterpreted).
  std::size_t const cols = s.shape.axis;
  check_cross_entropy<T>(in, x, cols, t);
  check_soft_targets<T>(in, x, cols, t);
}

}  // namespace
}  // namespace nonlin::fuzz

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  nonlin::fuzz::reader in(data, size);
  if (in.flag()) {
    nonlin::fuzz::run<double>(in);
  } else {
    nonlin::fuzz::run<float>(in);
  }
  return 0;
}
