// SPDX-License-Identifier: MIT
// The math layer's claims that are cheaper to check exhaustively than to trust: the division by
// a small integer without a divide instruction (math/divide.hpp) rounds as the division does.

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>

#include <gtest/gtest.h>

#include <xsimd/xsimd.hpp>

#include <nonlin/math/divide.hpp>
#include <nonlin/nonlin.hpp>

namespace nonlin::test {
namespace {

using fbatch = xsimd::batch<float>;

// Every float of the binades [2^lo, 2^hi), both signs, in batches: divide_by_integer against
// the division. Returns the number of mismatches (the first few are reported).
int float_mismatches(float d, int lo, int hi) {
  int bad = 0;
  std::uint32_t const first = std::bit_cast<std::uint32_t>(std::ldexp(1.0f, lo));
  std::uint32_t const last = std::bit_cast<std::uint32_t>(std::ldexp(1.0f, hi));
  alignas(64) float t[fbatch::size];
  alignas(64) float q[fbatch::size];
  for (std::uint32_t sign : {0u, 0x80000000u}) {
    for (std::uint32_t bits = first; bits < last; bits += fbatch::size) {
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

}  // namespace
}  // namespace nonlin::test
