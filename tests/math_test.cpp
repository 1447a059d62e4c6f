// SPDX-License-Identifier: MIT
// The math layer's claims that are cheaper to check exhaustively than to trust: the division by
// a small integer without a divide instruction (math/divide.hpp) rounds as the division does;
// the fast tier's exp table holds the nearest values of 2^(j/N), and its exp (math/fast.hpp)
// is within its stated error and the same bits for scalars and batches; -|x| clamped below in
// one vrange (math::neg_abs_at_least) is the or and the max it replaces.
// NONLIN_ACCURACY_STRIDE=k (support/accuracy_stride.hpp; the aarch64 stage under qemu): the
// every-float loops keep every k-th batch of floats, the exp screen every 97k-th float.

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <limits>
#include <numbers>
#include <random>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include <xsimd/xsimd.hpp>

#include <nonlin/math/divide.hpp>
#include <nonlin/math/fast.hpp>
#include <nonlin/nonlin.hpp>

#include "support/accuracy_stride.hpp"

namespace nonlin::test {
namespace {

using fbatch = xsimd::batch<float>;

// Every float of the binades [2^lo, 2^hi), both signs, in batches (every k-th batch for
// NONLIN_ACCURACY_STRIDE=k): divide_by_integer against the division. Returns the number of
// mismatches (the first few are reported).
int float_mismatches(float d, int lo, int hi) {
  int bad = 0;
  std::uint32_t const first = std::bit_cast<std::uint32_t>(std::ldexp(1.0f, lo));
  std::uint32_t const last = std::bit_cast<std::uint32_t>(std::ldexp(1.0f, hi));
  alignas(64) float t[fbatch::size];
  alignas(64) float q[fbatch::size];
  auto const step =
      static_cast<std::uint32_t>(fbatch::size) * static_cast<std::uint32_t>(accuracy_stride());
  for (std::uint32_t sign : {0u, 0x80000000u}) {
    for (std::uint32_t bits = first; bits < last; bits += step) {
      for (std::size_t j = 0; j < fbatch::size; ++j) {
        t[j] = std::bit_cast<float>((bits + static_cast<std::uint32_t>(j)) | sign);
      }
      math::divide_by_integer(fbatch::load_aligned(t), d).store_aligned(q);
      for (std::size_t j = 0; j < fbatch::size; ++j) {
        float const want = t[j] / d;
        if (std::bit_cast<std::uint32_t>(q[j]) != std::bit_cast<std::uint32_t>(want) &&
            ++bad <= 5) {
          ADD_FAILURE() << t[j] << " / " << d << ": " << q[j] << ", want " << want;
        }
      }
    }
  }
  return bad;
}

// hardsigmoid divides x + 3 in (0, 6), hardswish x (x + 3) in [-2.25, 18) and 2x + 3 in (-3, 9):
// every float of [2^-24, 32) covers those (smaller t come only from x within 2^-22 of -3 or 0,
// and the binades below are the same mantissas).
TEST(DivideByInteger, EqualsTheDivisionOnEveryFloatOfTheRangeUsed) {
  EXPECT_EQ(float_mismatches(6.0f, -24, 5), 0);
}

TEST(DivideByInteger, EqualsTheDivisionForOtherDivisors) {
  for (float d : {3.0f, 7.0f, 10.0f, 1000.0f}) {
    EXPECT_EQ(float_mismatches(d, -2, 2), 0) << d;
  }
}

// double: random bit patterns of the normal range against the long double quotient, rounded to
// double (t / d is never within 2^-64 of a midpoint of doubles: see math/divide.hpp).
TEST(DivideByInteger, EqualsTheDivisionInDouble) {
  using dbatch = xsimd::batch<double>;
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<std::uint64_t> bits(std::bit_cast<std::uint64_t>(0x1p-900),
                                                    std::bit_cast<std::uint64_t>(0x1p900));
  alignas(64) double t[dbatch::size];
  alignas(64) double q[dbatch::size];
  int bad = 0;
  for (double d : {6.0, 3.0, 7.0}) {
    for (int i = 0; i < 200000; ++i) {
      for (std::size_t j = 0; j < dbatch::size; ++j) {
        t[j] = std::bit_cast<double>(bits(rng)) * ((i & 1) != 0 ? -1.0 : 1.0);
      }
      math::divide_by_integer(dbatch::load_aligned(t), d).store_aligned(q);
      for (std::size_t j = 0; j < dbatch::size; ++j) {
        double const want = t[j] / d;
        if (q[j] != want && ++bad <= 5) {
          ADD_FAILURE() << t[j] << " / " << d << ": " << q[j] << ", want " << want;
        }
        double const scalar = math::divide_by_integer(t[j], d);
        EXPECT_EQ(std::bit_cast<std::uint64_t>(scalar), std::bit_cast<std::uint64_t>(q[j]));
      }
    }
  }
  EXPECT_EQ(bad, 0);
}

// The functors that use it give what the division gave, on a dense grid of their inner piece.
TEST(DivideByInteger, HardsigmoidAndHardswishAsWithTheDivision) {
  for (float x = -3.0f; x <= 3.0f; x = std::nextafter(x, 4.0f) + 0x1p-12f) {
    EXPECT_EQ(hardsigmoid{}(x), x <= -3.0f ? 0.0f : (x + 3.0f) / 6.0f) << x;
    EXPECT_EQ(hardswish{}(x), x <= -3.0f ? 0.0f : x * (x + 3.0f) / 6.0f) << x;
    if (x > -3.0f && x < 3.0f) {
      EXPECT_EQ(hardswish{}.derivative(x), (x + x + 3.0f) / 6.0f) << x;
    }
  }
}

// Each entry is the value nearest 2^(j/N): closer to it than both neighbours (long double's 64
// bits decide: 2^(j/N) is irrational for j > 0, far from any midpoint at that precision).
template <class T>
void expect_nearest_exp2_fractions() {
  using E = math::fast::detail::exp2_fractions<T>;
  ASSERT_EQ(E::table.size(), static_cast<std::size_t>(E::size));
  for (int j = 0; j < E::size; ++j) {
    long double const want = std::exp2(static_cast<long double>(j) / E::size);
    T const entry = E::table[static_cast<std::size_t>(j)];
    long double const error = std::fabs(static_cast<long double>(entry) - want);
    for (T neighbour : {std::nextafter(entry, T(0)), std::nextafter(entry, T(4))}) {
      EXPECT_LT(error, std::fabs(static_cast<long double>(neighbour) - want))
          << "2^(" << j << "/" << E::size << ")";
    }
  }
}

TEST(FastExp, TableEntriesAreTheNearestValues) {
  expect_nearest_exp2_fractions<float>();
  expect_nearest_exp2_fractions<double>();
}

// e^a = u 2^n over exp's clamped range, every 97th float of [-115, 0] (97k-th for
// NONLIN_ACCURACY_STRIDE=k): within `bound` ulp, u in [2^(-1/32), 2) and n integral, the batch's
// bits those of the scalar's (the lookup is a vpermps on AVX-512, a gather or an index
// elsewhere). Returns the largest error. The reference is double's exp: its error, under 1 ulp
// of double, is 2^-28 ulp of u (long double is binary128 in software on aarch64: 10x the time
// under qemu).
template <bool low_column>
double expect_fast_exp_within(double bound) {
  alignas(64) float a[fbatch::size];
  alignas(64) float u[fbatch::size];
  alignas(64) float n[fbatch::size];
  std::uint32_t const last = std::bit_cast<std::uint32_t>(-115.0f);
  double worst = 0;
  std::uint32_t bits = std::bit_cast<std::uint32_t>(-0.0f);
  auto const step = 97 * static_cast<std::uint32_t>(accuracy_stride());
  while (bits <= last) {
    for (std::size_t j = 0; j < fbatch::size; ++j, bits += step) {
      a[j] = std::bit_cast<float>(std::min(bits, last));
    }
    auto const parts = math::fast::exp_by_table<low_column>(fbatch::load_aligned(a));
    parts.u.store_aligned(u);
    parts.n.store_aligned(n);
    for (std::size_t j = 0; j < fbatch::size; ++j) {
      auto const scalar = math::fast::exp_by_table<low_column>(a[j]);
      EXPECT_EQ(std::bit_cast<std::uint32_t>(scalar.u), std::bit_cast<std::uint32_t>(u[j])) << a[j];
      EXPECT_EQ(std::bit_cast<std::uint32_t>(scalar.n), std::bit_cast<std::uint32_t>(n[j])) << a[j];
      EXPECT_EQ(n[j], std::floor(n[j])) << a[j];
      EXPECT_GE(u[j], 0x1.f4p-1f) << a[j];
      EXPECT_LT(u[j], 2.0f) << a[j];
      // e^a / 2^n against u, in ulps of u (u's binade: [1, 2) or just below 1).
      double const want = std::exp(static_cast<double>(a[j])) / std::exp2(n[j]);
      double const ulp = std::ldexp(1.0, std::ilogb(static_cast<float>(want)) - 23);
      worst = std::max(worst, std::fabs(u[j] - want) / ulp);
    }
    if (::testing::Test::HasFailure()) {
      break;
    }
  }
  EXPECT_LE(worst, bound);
  return worst;
}

// With the low column (the derivatives'): measured 0.67 ulp with an FMA unit and without (m's
// error and the last addition's rounding).
TEST(FastExp, WithinItsErrorAndScalarEqualsBatch) {
  std::printf("fast exp: %.3f ulp\n", expect_fast_exp_within<true>(1.0));
}

// Without it (the forwards'): the entry's rounding too, measured 1.06 ulp.
TEST(FastExp, WithoutTheLowColumnWithinItsError) {
  std::printf("fast exp without the low column: %.3f ulp\n", expect_fast_exp_within<false>(1.1));
}

// math::neg_abs_at_least(x, bound) = max(-|x|, bound) for bound <= 0 (one vrangeps/pd on
// AVX-512, an or and a max elsewhere): the batch's bits against std::fmax(-|x|, bound), every
// 4099th float (4099k-th for NONLIN_ACCURACY_STRIDE=k) and the values around each bound, +-0, +-inf
// and subnormals (a NaN gives a NaN or, from vrange, the bound). Made to fail by the imm 0x0A (the
// sign cleared: the results positive) and 0x0F (the larger magnitude: the bound where |x| <
// |bound|).
template <class T>
void expect_neg_abs_at_least(T bound, std::vector<T> const& xs) {
  using batch = xsimd::batch<T>;
  alignas(64) T in[batch::size];
  alignas(64) T out[batch::size];
  for (std::size_t start = 0; start < xs.size(); start += batch::size) {
    for (std::size_t j = 0; j < batch::size; ++j) {
      in[j] = xs[std::min(start + j, xs.size() - 1)];
    }
    math::neg_abs_at_least(batch::load_aligned(in), batch(bound)).store_aligned(out);
    for (std::size_t j = 0; j < batch::size; ++j) {
      T const scalar = math::neg_abs_at_least(in[j], bound);
      if (std::isnan(in[j])) {
        // The portable form keeps the NaN; vrange returns the bound for a quiet NaN.
        ASSERT_TRUE(std::isnan(scalar));
        ASSERT_TRUE(std::isnan(out[j]) || out[j] == bound) << out[j];
        continue;
      }
      T const want = std::fmax(-std::fabs(in[j]), bound);
      // (Compared as doubles: a float widens exactly, -0 included.)
      ASSERT_EQ(std::bit_cast<std::uint64_t>(static_cast<double>(out[j])),
                std::bit_cast<std::uint64_t>(static_cast<double>(want)))
          << "x " << in[j] << ", bound " << bound << ": " << out[j] << ", want " << want;
      ASSERT_EQ(std::bit_cast<std::uint64_t>(static_cast<double>(scalar)),
                std::bit_cast<std::uint64_t>(static_cast<double>(out[j])))
          << "scalar, x " << in[j];
    }
  }
}

template <class T>
std::vector<T> neg_abs_inputs(T bound) {
  std::vector<T> xs = {T(0),
                       -T(0),
                       std::numeric_limits<T>::infinity(),
                       -std::numeric_limits<T>::infinity(),
                       std::numeric_limits<T>::quiet_NaN(),
                       -std::numeric_limits<T>::quiet_NaN(),
                       std::numeric_limits<T>::denorm_min(),
                       -std::numeric_limits<T>::denorm_min(),
                       std::numeric_limits<T>::max(),
                       std::numeric_limits<T>::lowest(),
                       T(1),
                       T(-1)};
  T x = bound;
  T y = bound;
  for (int k = 0; k < 8; ++k) {  // the bound and its neighbours, either sign
    for (T v : {x, y}) {
      xs.push_back(v);
      xs.push_back(-v);
    }
    x = std::nextafter(x, T(0));
    y = std::nextafter(y, -std::numeric_limits<T>::infinity());
  }
  return xs;
}

TEST(NegAbsAtLeast, IsTheMaxOfMinusAbsAndTheBound) {
  for (float bound : {-0.0f, -1.0f, -87.5f, -103.97208f, std::numeric_limits<float>::lowest()}) {
    std::vector<float> xs = neg_abs_inputs(bound);
    auto const step = 4099 * static_cast<std::uint64_t>(accuracy_stride());
    for (std::uint64_t bits = 0; bits <= 0xffffffffu; bits += step) {
      xs.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(bits)));
    }
    expect_neg_abs_at_least(bound, xs);
  }
  std::mt19937_64 random(7);
  for (double bound : {-0.0, -1.0, -708.25, std::numeric_limits<double>::lowest()}) {
    std::vector<double> xs = neg_abs_inputs(bound);
    for (int k = 0; k < 1 << 16; ++k) {
      xs.push_back(std::bit_cast<double>(random()));
    }
    expect_neg_abs_at_least(bound, xs);
  }
}

// math::where_positive(x, v) (v where x > 0, x where x is NaN, +0 elsewhere), positive_part(x)
// (relu), keep_nan(x, v), one_where_positive(x, v) (1 where x > 0, else v) and
// one_where_nonnegative(x, v) (1 where x >= 0, v where x < 0; a NaN x gives x from vfixupimm,
// v from the select) and x_where_zero_nan_or_plus_infinity(x, v) (silu's limits): one vfixupimm
// each on AVX-512 (arch::fixup_by_class), selects elsewhere. The batch's bits and the scalar call's
// against the selects written out here, for every 257th float (257k-th for
// NONLIN_ACCURACY_STRIDE=k) and the classes' edges (signaling NaNs, subnormals, +-0,
// +-1, +-inf), with v cycling through ordinary values, -0, inf and a NaN. Made to fail by the table
// 0x08080821 (a quieted signaling NaN), 0x08088811 (+0 for +1), and one_where_positive's and
// one_where_nonnegative's tables answering dst for positive numbers and for +-0 (and
// x_where_zero_nan_or_plus_infinity's answering dst for +inf).
template <class T>
void expect_class_fixups(std::vector<T> const& xs) {
  using batch = xsimd::batch<T>;
  T const vs[] = {T(1.5), -T(0), std::numeric_limits<T>::infinity(), T(-3.25),
                  std::numeric_limits<T>::quiet_NaN()};
  auto const bits = [](T v) {
    return std::bit_cast<std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>(v);
  };
  alignas(64) T in[batch::size];
  alignas(64) T v[batch::size];
  constexpr int functions = 6;
  alignas(64) T out[functions][batch::size];
  for (std::size_t start = 0; start < xs.size(); start += batch::size) {
    for (std::size_t j = 0; j < batch::size; ++j) {
      in[j] = xs[std::min(start + j, xs.size() - 1)];
      v[j] = vs[(start + j) % std::size(vs)];
    }
    batch const x = batch::load_aligned(in);
    batch const vb = batch::load_aligned(v);
    math::where_positive(x, vb).store_aligned(out[0]);
    math::positive_part(x).store_aligned(out[1]);
    math::keep_nan(x, vb).store_aligned(out[2]);
    math::one_where_positive(x, vb).store_aligned(out[3]);
    math::one_where_nonnegative(x, vb).store_aligned(out[4]);
    math::x_where_zero_nan_or_plus_infinity(x, vb).store_aligned(out[5]);
    for (std::size_t j = 0; j < batch::size; ++j) {
      T const xj = in[j];
      bool const nan = std::isnan(xj);
      T const nonnegative = xj >= T(0) ? T(1) : v[j];
      T const want[functions] = {
          nan ? xj : (xj > T(0) ? v[j] : T(0)),
          nan || xj > T(0) ? xj : T(0),
          nan ? xj : v[j],
          xj > T(0) ? T(1) : v[j],
          nan && math::arch::has_fixup_by_class<batch> ? xj : nonnegative,
          nan || xj == T(0) || xj == std::numeric_limits<T>::infinity() ? xj : v[j]};
      T const scalar[functions] = {math::where_positive(xj, v[j]),
                                   math::positive_part(xj),
                                   math::keep_nan(xj, v[j]),
                                   math::one_where_positive(xj, v[j]),
                                   math::one_where_nonnegative(xj, v[j]),
                                   math::x_where_zero_nan_or_plus_infinity(xj, v[j])};
      T const want_scalar[functions] = {want[0], want[1], want[2], want[3], nonnegative, want[5]};
      for (int f = 0; f < functions; ++f) {
        ASSERT_EQ(bits(out[f][j]), bits(want[f]))
            << "function " << f << ", x bits " << std::hex << bits(xj) << ", v " << v[j];
        ASSERT_EQ(bits(scalar[f]), bits(want_scalar[f]))
            << "scalar, function " << f << ", x bits " << std::hex << bits(xj);
      }
    }
  }
}

template <class T>
std::vector<T> class_edges() {
  using limits = std::numeric_limits<T>;
  std::vector<T> xs;
  for (T m : {T(0), T(1), limits::infinity(), limits::quiet_NaN(), limits::signaling_NaN(),
              limits::denorm_min(), limits::min(), limits::max(), std::nextafter(T(1), T(2)),
              std::nextafter(T(1), T(0)), std::nextafter(limits::min(), T(0))}) {
    xs.push_back(m);
    xs.push_back(-m);
  }
  return xs;
}

TEST(ClassFixups, MatchTheirSelects) {
  std::vector<float> xs = class_edges<float>();
  auto const step = 257 * static_cast<std::uint64_t>(accuracy_stride());
  for (std::uint64_t bits = 0; bits <= 0xffffffffu; bits += step) {
    xs.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(bits)));
  }
  expect_class_fixups(xs);
  std::vector<double> ds = class_edges<double>();
  std::mt19937_64 random(11);
  for (int k = 0; k < 1 << 16; ++k) {
    ds.push_back(std::bit_cast<double>(random()));
  }
  expect_class_fixups(ds);
}

// math::scale_unless(keep, y, n) (y where keep, scale(y, n) elsewhere) and fma_or_zero(zero, a,
// b, c) (+0 where zero, fma(a, b, c) elsewhere): one masked instruction each on 512-bit batches,
// selects elsewhere. The batch's bits and the scalar call's against the selects written out here,
// on random masks, y over every binade and the subnormals, n from -300 to 300 (results rounded
// once where subnormal) and products that cancel. Made to fail by inverting either mask in the
// arch layer.
template <class T>
void expect_masked_arithmetic() {
  using batch = xsimd::batch<T>;
  using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  std::mt19937_64 random(5);
  std::uniform_real_distribution<T> mantissa(T(-2), T(2));
  std::uniform_int_distribution<int> exponent(-160, 120);
  std::uniform_int_distribution<int> power(-300, 300);
  alignas(64) T y[batch::size];
  alignas(64) T n[batch::size];
  alignas(64) T c[batch::size];
  alignas(64) T out[2][batch::size];
  for (int round = 0; round < 4096; ++round) {
    std::uint64_t const lanes = random();
    typename batch::batch_bool_type keep{};
    bool keep_lane[batch::size];
    for (std::size_t j = 0; j < batch::size; ++j) {
      keep_lane[j] = ((lanes >> j) & 1U) != 0;
      y[j] = std::ldexp(mantissa(random), exponent(random));
      n[j] = static_cast<T>(power(random));
      c[j] = -y[j] * n[j] * T(0.75);
    }
    alignas(64) T keep_values[batch::size];
    for (std::size_t j = 0; j < batch::size; ++j) {
      keep_values[j] = keep_lane[j] ? T(1) : T(0);
    }
    keep = batch::load_aligned(keep_values) != batch(T(0));
    batch const yb = batch::load_aligned(y);
    batch const nb = batch::load_aligned(n);
    batch const cb = batch::load_aligned(c);
    math::scale_unless(keep, yb, nb).store_aligned(out[0]);
    math::fma_or_zero(keep, yb, nb, cb).store_aligned(out[1]);
    for (std::size_t j = 0; j < batch::size; ++j) {
      T const scaled = keep_lane[j] ? y[j] : math::scale(y[j], n[j]);
      T const product = keep_lane[j] ? T(0) : math::fma(y[j], n[j], c[j]);
      ASSERT_EQ(std::bit_cast<U>(out[0][j]), std::bit_cast<U>(scaled))
          << "scale_unless, y " << y[j] << ", n " << n[j] << ", keep " << keep_lane[j];
      ASSERT_EQ(std::bit_cast<U>(out[1][j]), std::bit_cast<U>(product))
          << "fma_or_zero, a " << y[j] << ", b " << n[j] << ", zero " << keep_lane[j];
      ASSERT_EQ(std::bit_cast<U>(math::scale_unless(keep_lane[j], y[j], n[j])),
                std::bit_cast<U>(scaled));
      ASSERT_EQ(std::bit_cast<U>(math::fma_or_zero(keep_lane[j], y[j], n[j], c[j])),
                std::bit_cast<U>(product));
    }
  }
}

TEST(MaskedArithmetic, MatchTheirSelects) {
  expect_masked_arithmetic<float>();
  expect_masked_arithmetic<double>();
}

// math::scale_without_underflow is math::scale (and std::ldexp) bit for bit: results below the
// normal range, ties at the smallest subnormal's multiples (y with few mantissa bits), results
// that round up to the smallest normal, normal results, zeros, infinities and NaN, on every batch
// width of the build and on scalars; and the exps' value_without_underflow is their value().
template <class V>
void expect_scale_without_underflow_is_scale() {
  using T = scalar_t<V>;
  using K = math::detail::exp_constants<T>;
  constexpr int low = -(K::bias + K::mantissa_bits);  // -150: below every subnormal
  std::vector<T> ys = {T(1),
                       T(1.5),
                       T(0.75),
                       T(1) + std::numeric_limits<T>::epsilon(),
                       std::nextafter(T(2), T(0)),
                       std::nextafter(T(1), T(0)),
                       T(0x1.8p-60),
                       T(0),
                       -T(0),
                       std::numeric_limits<T>::infinity(),
                       std::numeric_limits<T>::quiet_NaN()};
  for (int k = 1; k <= K::mantissa_bits; ++k) {
    ys.push_back(T(1) + std::ldexp(T(1), -k));  // a tie at 2^n for n = low + k
    ys.push_back(T(1) + std::ldexp(T(3), -k - 1));
  }
  std::mt19937 engine(3);
  std::uniform_real_distribution<T> unit(T(0.5), T(2));
  for (int i = 0; i < 300; ++i) {
    ys.push_back(unit(engine));
  }
  std::size_t const count = ys.size();
  for (std::size_t i = 0; i < count; ++i) {
    ys.push_back(-ys[i]);
  }
  while (ys.size() % V::size != 0) {
    ys.push_back(T(1));
  }
  std::vector<int> ns;
  for (int n = low - 3; n <= low + K::mantissa_bits + 30; ++n) {
    ns.push_back(n);
  }
  for (int n : {-30, 0, 20}) {
    ns.push_back(n);
  }
  using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  alignas(64) T in[V::size];
  alignas(64) T out[V::size];
  int bad = 0;
  for (int n : ns) {
    for (std::size_t i = 0; i < ys.size(); i += V::size) {
      std::copy_n(ys.begin() + static_cast<std::ptrdiff_t>(i), V::size, in);
      math::scale_without_underflow(V::load_aligned(in), V(T(n))).store_aligned(out);
      for (std::size_t j = 0; j < V::size; ++j) {
        T const want = std::ldexp(in[j], n);
        T const scalar = math::scale_without_underflow(in[j], T(n));
        bool const same = std::bit_cast<U>(out[j]) == std::bit_cast<U>(want) &&
                          std::bit_cast<U>(scalar) == std::bit_cast<U>(want) &&
                          std::bit_cast<U>(math::scale(in[j], T(n))) == std::bit_cast<U>(want);
        if (!same && !(std::isnan(want) && std::isnan(out[j]) && std::isnan(scalar)) &&
            ++bad <= 5) {
          ADD_FAILURE() << in[j] << " * 2^" << n << ": " << out[j] << " (scalar " << scalar
                        << "), want " << want;
        }
      }
    }
  }
  EXPECT_EQ(bad, 0);
  // The exps' values near and below the bottom of the range, where the cold path runs.
  std::vector<T> xs;
  T const bottom = T(low + 8) * std::numbers::ln2_v<T>;
  for (int i = 0; i < 64 * int(V::size); ++i) {
    xs.push_back(bottom - T(i) * T(0.0371));
  }
  xs.push_back(-std::numeric_limits<T>::infinity());
  xs.push_back(std::numeric_limits<T>::quiet_NaN());
  while (xs.size() % V::size != 0) {
    xs.push_back(T(-1));
  }
  for (std::size_t i = 0; i < xs.size(); i += V::size) {
    std::copy_n(xs.begin() + static_cast<std::ptrdiff_t>(i), V::size, in);
    V const x = V::load_aligned(in);
    alignas(64) T plain[V::size];
    alignas(64) T fast_plain[V::size];
    alignas(64) T fast_out[V::size];
    auto const e = math::exp_scaled_nonpositive(x);
    e.value().store_aligned(plain);
    e.value_without_underflow().store_aligned(out);
    auto const f = math::fast::exp_by_table<false>(math::clamp_below(x, V(K::min_arg)));
    f.value().store_aligned(fast_plain);
    f.value_without_underflow().store_aligned(fast_out);
    for (std::size_t j = 0; j < V::size; ++j) {
      EXPECT_TRUE(std::bit_cast<U>(out[j]) == std::bit_cast<U>(plain[j]) ||
                  (std::isnan(out[j]) && std::isnan(plain[j])))
          << "e^" << in[j] << ": " << out[j] << ", value() " << plain[j];
      EXPECT_TRUE(std::bit_cast<U>(fast_out[j]) == std::bit_cast<U>(fast_plain[j]) ||
                  (std::isnan(fast_out[j]) && std::isnan(fast_plain[j])))
          << "fast e^" << in[j] << ": " << fast_out[j] << ", value() " << fast_plain[j];
    }
  }
}

// math::product_without_underflow is a * b bit for bit for a >= 0 and b in [2^-126, 1]:
// subnormal a, products on both sides of the normal range's bottom, ties on the subnormal grid.
template <class V>
void expect_product_without_underflow_is_product() {
  std::mt19937 engine(8);
  std::uniform_int_distribution<std::uint32_t> subnormal_bits(1, 0x007fffff);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-150, 0);
  std::vector<float> as = {0.0f, 1.0f, std::numeric_limits<float>::min(),
                           std::numeric_limits<float>::denorm_min(),
                           std::numeric_limits<float>::quiet_NaN()};
  for (int i = 0; i < 4000; ++i) {
    as.push_back(std::bit_cast<float>(subnormal_bits(engine)));
    as.push_back(std::ldexp(unit(engine), exponent(engine)));
  }
  while (as.size() % V::size != 0) {
    as.push_back(0.5f);
  }
  std::vector<float> bs = {1.0f, 0.5f, 1.0f / 3.0f, 0.75f, std::numeric_limits<float>::min()};
  for (int i = 0; i < 20; ++i) {
    bs.push_back(std::ldexp(0.5f + unit(engine) / 2, -static_cast<int>(i)));
  }
  alignas(64) float in[V::size];
  alignas(64) float out[V::size];
  int bad = 0;
  for (float b : bs) {
    for (std::size_t i = 0; i < as.size(); i += V::size) {
      std::copy_n(as.begin() + static_cast<std::ptrdiff_t>(i), V::size, in);
      math::product_without_underflow(V::load_aligned(in), V(b)).store_aligned(out);
      for (std::size_t j = 0; j < V::size; ++j) {
        float const want = in[j] * b;
        if (std::bit_cast<std::uint32_t>(out[j]) != std::bit_cast<std::uint32_t>(want) &&
            !(std::isnan(want) && std::isnan(out[j])) && ++bad <= 5) {
          ADD_FAILURE() << in[j] << " * " << b << ": " << out[j] << ", want " << want;
        }
      }
    }
  }
  EXPECT_EQ(bad, 0);
}

TEST(ScaleWithoutUnderflow, IsScaleBitForBit) {
  expect_scale_without_underflow_is_scale<xsimd::batch<float>>();
  expect_scale_without_underflow_is_scale<xsimd::batch<double>>();
  expect_product_without_underflow_is_product<xsimd::batch<float>>();
#if XSIMD_WITH_AVX2
  expect_scale_without_underflow_is_scale<xsimd::batch<float, xsimd::avx2>>();
#endif
#if XSIMD_WITH_SSE4_2
  expect_scale_without_underflow_is_scale<xsimd::batch<float, xsimd::sse4_2>>();
  expect_scale_without_underflow_is_scale<xsimd::batch<double, xsimd::sse4_2>>();
#endif
}

// silu', sigmoid' (and tanh' at 2x) and gelu_tanh' from their tables (math/silu_slope.hpp), where
// the build has them: the 512-bit batch (one vpermt2ps a coefficient), a narrower batch of the
// same build (a gather) and the scalar (an index) give the same bits, for z = x and z = 1.702 x
// as hi + lo (gelu_quick), at every piece's ends (k / 2 and its neighbours), the range's ends
// (+-16) and NaN; other builds have no table.
template <class B>
void expect_silu_slope_lanes_equal_scalar() {
  using U = std::uint32_t;
  std::vector<float> xs;
  for (int k = -34; k <= 34; ++k) {
    float const end = static_cast<float>(k) / 2.0f;
    xs.push_back(end);
    xs.push_back(std::nextafter(end, -100.0f));
    xs.push_back(std::nextafter(end, 100.0f));
  }
  xs.push_back(std::numeric_limits<float>::quiet_NaN());
  xs.push_back(-std::numeric_limits<float>::infinity());
  std::mt19937 engine(5);
  std::uniform_real_distribution<float> wide(-20.0f, 20.0f);
  for (int i = 0; i < 4000; ++i) {
    xs.push_back(wide(engine));
  }
  while (xs.size() % B::size != 0) {
    xs.push_back(0.5f);
  }
  constexpr int functions = 5;
  char const* const names[functions] = {"silu'", "gelu_quick backward", "sigmoid'", "tanh backward",
                                        "gelu_tanh'"};
  alignas(64) float in[B::size];
  alignas(64) float out[functions][B::size];
  for (std::size_t i = 0; i < xs.size(); i += B::size) {
    std::copy_n(xs.begin() + static_cast<std::ptrdiff_t>(i), B::size, in);
    B const x = B::load_aligned(in);
    silu{}.derivative(x).store_aligned(out[0]);
    gelu_quick{}.backward(x, B(0.75f)).store_aligned(out[1]);
    sigmoid{}.derivative(x).store_aligned(out[2]);
    nonlin::tanh{}.backward(x, B(0.75f)).store_aligned(out[3]);
    gelu_tanh{}.derivative(x).store_aligned(out[4]);
    for (std::size_t j = 0; j < B::size; ++j) {
      float const want[functions] = {silu{}.derivative(in[j]), gelu_quick{}.backward(in[j], 0.75f),
                                     sigmoid{}.derivative(in[j]),
                                     nonlin::tanh{}.backward(in[j], 0.75f),
                                     gelu_tanh{}.derivative(in[j])};
      for (int f = 0; f < functions; ++f) {
        ASSERT_TRUE(std::bit_cast<U>(out[f][j]) == std::bit_cast<U>(want[f]) ||
                    (std::isnan(out[f][j]) && std::isnan(want[f])))
            << names[f] << " at " << in[j] << ": " << out[f][j] << " against the scalar's "
            << want[f];
      }
    }
  }
}

TEST(SiluSlopeTable, EveryBatchWidthEqualsTheScalar) {
  if constexpr (math::has_slope_tables<float>) {
    expect_silu_slope_lanes_equal_scalar<xsimd::batch<float>>();
#if XSIMD_WITH_AVX2
    expect_silu_slope_lanes_equal_scalar<xsimd::batch<float, xsimd::avx2>>();
#endif
#if XSIMD_WITH_SSE4_2
    expect_silu_slope_lanes_equal_scalar<xsimd::batch<float, xsimd::sse4_2>>();
#endif
  } else {
    GTEST_SKIP() << "no slope tables in this build (math/silu_slope.hpp)";
  }
}

}  // namespace
}  // namespace nonlin::test
