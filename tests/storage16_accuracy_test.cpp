// SPDX-License-Identifier: MIT
// The span kernels on bfloat16 and float16 arrays give the correctly rounded forward value and
// derivative (backward with dy = 1) for every one of the 65536 inputs of every instance of every
// default-tier catalog row (elu(0.5), softplus(2, 10), swish(1.5), ... beside the defaults),
// against MPFR (support/storage16_scan.hpp). Rounding the float results once
// instead misrounds some of them: counted too, so that the recomputation in double is seen to
// matter (the test of math::near_midpoint16 itself is in float16_test), and the functors that
// declare their results exact are checked to be so. Every k-th input where
// NONLIN_ACCURACY_STRIDE=k (support/accuracy_stride.hpp; the aarch64 stage under qemu).

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <vector>

#include <mpfr.h>

#include <gtest/gtest.h>

#include "support/accuracy_stride.hpp"
#include "support/storage16_scan.hpp"

namespace nonlin::test {
namespace {

template <storage16 T, class F>
accuracy::storage16_result scan_on_two_threads(F const& f) {
  auto const stride = static_cast<std::uint32_t>(accuracy_stride());
  accuracy::storage16_result low;
  accuracy::storage16_result high;
  std::thread other([&] {
    high = accuracy::scan_storage16<T>(f, 0x8000, 0x10000, stride);
    mpfr_free_cache();  // MPFR's per-thread constant caches, which LeakSanitizer reports
  });
  low = accuracy::scan_storage16<T>(f, 0, 0x8000, stride);
  other.join();
  accuracy::merge(low, high);
  return low;
}

template <storage16 T>
void expect_correctly_rounded(char const* type) {
  std::int64_t float_only = 0;
  catalog::for_each_row([&]<class Row>() {
    for (auto const& instance : Row::instances()) {
      accuracy::storage16_result const r = scan_on_two_threads<T>(instance.f);
      std::printf(
          "%-22s %s  forward %lld (double on a midpoint %lld; float only %lld)  derivative %lld "
          "(%lld; %lld)\n",
          std::string(instance.label).c_str(), type, static_cast<long long>(r.forward.wrong),
          static_cast<long long>(r.forward.double_on_midpoint),
          static_cast<long long>(r.forward_float_only.wrong),
          static_cast<long long>(r.derivative.wrong),
          static_cast<long long>(r.derivative.double_on_midpoint),
          static_cast<long long>(r.derivative_float_only.wrong));
      if constexpr (Row::level == catalog::tier::default_tier) {
        // Every result correctly rounded, also where double rounds the true value onto a
        // midpoint (x g(x) at the bfloat16 inputs below 2^-125: x/2 exactly; elu(0.5) there;
        // leaky_relu's 0.01 x within 2^-53 of a tie): the functors' side_of_true_value
        // (math/true_side.hpp) decides those, 963 bfloat16 and 21 float16 results without it.
        EXPECT_EQ(r.forward.wrong, 0)
            << instance.label << " " << type << ", first at bits 0x" << std::hex << r.forward.first;
        EXPECT_EQ(r.derivative.wrong, 0) << instance.label << " " << type << ", first at bits 0x"
                                         << std::hex << r.derivative.first;
        float_only += r.forward_float_only.wrong + r.derivative_float_only.wrong;
      }
    }
  });
  // Without the recomputation some results would be misrounded: the test above can fail
  // (the inputs that show it are rare: every 8th pattern finds none for bfloat16).
  if (accuracy_stride() == 1) {
    EXPECT_GT(float_only, 0);
  }
}

TEST(Storage16Accuracy, BFloat16IsCorrectlyRoundedOnEveryInput) {
  expect_correctly_rounded<bfloat16>("bf16");
}
TEST(Storage16Accuracy, Float16IsCorrectlyRoundedOnEveryInput) {
  expect_correctly_rounded<float16>("fp16");
}

// A functor that declares its float results from 16-bit inputs exact, or its forward's rounded
// once correct (kernels.hpp: exactness16, backward_exactness16, forward_exactness16,
// exact_forward_results), has them rounded once, unrecomputed,
// wherever the declaration applies (every result, or every result that is not subnormal; the
// forward, the backward directions or both; for every instance of its row whose parameters
// make the run-time declaration true): there that must be what the recomputation would store,
// T::from_float(round_to_odd(double result)), and where it declares them values of T
// (exact16::representable, stored with no rounding), r itself. Forward on every input; backward
// (and from the output, the input as y) on every input with every 251st pattern as dy. Made to fail
// by declaring sigmoid's normal results exact: 1074771 (bfloat16) and 28780 (float16) differ; and
// by declaring hardtanh's forward exact for any bounds, with an instance of bounds just beyond
// a midpoint, -(1 + 2^-8 + 2^-30) and 1 + 2^-11 + 2^-30, added to its row: 16384 (bfloat16) and
// 16906 (float16) differ; and by declaring hardsigmoid's forward values of T (its results are
// not: 0x1.000002p-1 at x = 0x1.02p-23 in bfloat16).
template <storage16 T>
void expect_declared_exact_results_exact() {
  using detail::exact16;
  auto const stride = static_cast<std::uint32_t>(accuracy_stride());
  std::size_t declarations = 0;
  catalog::for_each_row([&]<class Row>() {
    using F = typename Row::functor;
    constexpr exact16 declared_backward = detail::backward_exactness16<F>();
    for (auto const& instance : Row::instances()) {
      F const f = instance.f;
      exact16 declared_forward = detail::forward_exactness16<F>();
      if constexpr (detail::exact_forward_at_run_time<F>) {
        declared_forward = f.exact_forward_results() ? exact16::all : declared_forward;
        if (detail::forward_results_are_values_of<T>(f)) {
          declared_forward = exact16::representable;
        }
      }
      if (declared_forward == exact16::none && declared_backward == exact16::none) {
        continue;
      }
      ++declarations;
      std::int64_t checked = 0;
      std::int64_t differ = 0;
      std::string first;
      auto const expect_same = [&](exact16 declared, float r, double d, float x, float dy) {
        bool const subnormal = (std::bit_cast<std::uint32_t>(r) & 0x7fffffffU) < 0x00800000U;
        if (declared == exact16::none || (declared == exact16::normal && subnormal)) {
          return;
        }
        ++checked;
        T const stored = T::from_float(r);
        T const recomputed = T::from_float(math::round_to_odd(d));
        // Declared values of T: stored as they are, so r must be one.
        bool const not_a_value =
            declared == exact16::representable && !std::isnan(r) && static_cast<float>(stored) != r;
        if (not_a_value || (stored.bits != recomputed.bits &&
                            !(std::isnan(static_cast<float>(stored)) && std::isnan(d)))) {
          if (differ++ == 0) {
            char text[160];
            std::snprintf(text, sizeof text, "x %a dy %a: %a in float, %a in double",
                          static_cast<double>(x), static_cast<double>(dy), static_cast<double>(r),
                          d);
            first = text;
          }
        }
      };
      for (std::uint32_t b = 0; b < 0x10000; b += stride) {
        float const x = static_cast<float>(T{static_cast<std::uint16_t>(b)});
        expect_same(declared_forward, f(x), f(static_cast<double>(x)), x, 0.0f);
        for (std::uint32_t k = 0; k < 0x10000; k += 251 * stride) {
          float const dy = static_cast<float>(T{static_cast<std::uint16_t>(k)});
          expect_same(declared_backward, f.backward(x, dy),
                      f.backward(static_cast<double>(x), static_cast<double>(dy)), x, dy);
          if constexpr (output_differentiable<F, float>) {
            expect_same(declared_backward, f.backward_from_output(x, dy),
                        f.backward_from_output(static_cast<double>(x), static_cast<double>(dy)), x,
                        dy);
          }
        }
      }
      EXPECT_GT(checked, 0) << instance.label;
      EXPECT_EQ(differ, 0) << instance.label << ", first at " << first;
    }
  });
  // relu, relu6, step, identity (representable), squared_relu (normal), hardtanh and hardtanh(-2,3)
  // (backward; forward at run time), hardsigmoid (forward): every instance of their rows.
  EXPECT_GE(declarations, 8U);
}

// check(f, label) for every instance of every catalog row whose functor names lanes that need no
// midpoint test (Names<F>::value); returns how many rows did.
template <class F>
    struct names_exact_lanes_from_output : std::bool_constant < requires(F const& f, float v) {
  f.exact_backward_from_output(v, v);
} > {};
template <class F>
    struct names_correctly_rounded_forward_lanes
    : std::bool_constant < requires(F const& f, float v) {
  f.correctly_rounded_forward16(v);
} > {};
template <template <class> class Names, class Check>
std::size_t for_each_naming_instance(Check const& check) {
  std::size_t rows = 0;
  catalog::for_each_row([&]<class Row>() {
    if constexpr (Names<typename Row::functor>::value) {
      ++rows;
      for (auto const& instance : Row::instances()) {
        check(instance.f, instance.label);
      }
    }
  });
  return rows;
}

// A functor that says per lane which backward_from_output results are exact
// (exact_backward_from_output: elu, celu, and the fast tier's; kernels.hpp tested16 skips their
// midpoint test) is right on every lane it names: the float result is the double result, for
// every 16-bit y and every 251st dy, every instance of the row (alpha = 0.5, 2 and 0.3 among
// them). On [-alpha, 0] some lanes are named (so the declaration is used; an alpha that is not a
// float names none) and not all (a result that rounds is seen); right of 0 the result is dy,
// named or not. Made to fail by declaring every lane exact: elu 3529232 lanes (bfloat16) differ,
// and float16_test fails; by leaving the sum's low part out of sum_times_is_exact: 867959.
template <storage16 T>
void expect_exact_lanes_exact() {
  auto const stride = static_cast<std::uint32_t>(accuracy_stride());
  std::size_t const rows = for_each_naming_instance<names_exact_lanes_from_output>(
      [&](auto const& f, std::string_view label) {
        std::int64_t exact = 0;
        std::int64_t inexact = 0;
        std::int64_t differ = 0;
        for (std::uint32_t b = 0; b < 0x10000; b += stride) {
          float const y = static_cast<float>(T{static_cast<std::uint16_t>(b)});
          for (std::uint32_t k = 0; k < 0x10000; k += 251 * stride) {
            float const dy = static_cast<float>(T{static_cast<std::uint16_t>(k)});
            // Right of 0 the result is dy (exact, and never near a midpoint): named or not, it
            // counts for neither.
            bool const left = y <= 0.0F && y >= -static_cast<float>(f.alpha);
            if (!f.exact_backward_from_output(y, dy)) {
              inexact += left ? 1 : 0;
              continue;
            }
            exact += left ? 1 : 0;
            double const d =
                f.backward_from_output(static_cast<double>(y), static_cast<double>(dy));
            auto const r = static_cast<double>(f.backward_from_output(y, dy));
            differ += (r == d || (std::isnan(r) && std::isnan(d))) ? 0 : 1;
          }
        }
        EXPECT_EQ(differ, 0) << label;
        // An alpha that is not a float (celu(0.3)) names no lane.
        if (static_cast<double>(static_cast<float>(f.alpha)) == f.alpha) {
          EXPECT_GT(exact, 0) << label;
        } else {
          EXPECT_EQ(exact, 0) << label;
        }
        EXPECT_GT(inexact, 0) << label;
      });
  EXPECT_EQ(rows, 4U);  // elu, celu and the fast tier's (the default's from the output)
}

TEST(Storage16Accuracy, ExactLanesOfTheBackwardFromTheOutputAreExactBFloat16) {
  expect_exact_lanes_exact<bfloat16>();
}
TEST(Storage16Accuracy, ExactLanesOfTheBackwardFromTheOutputAreExactFloat16) {
  expect_exact_lanes_exact<float16>();
}

// A functor that names the lanes whose forward's float result rounded once is the correctly
// rounded 16-bit value (correctly_rounded_forward16: hardswish; kernels.hpp tested16 skips their
// midpoint test) is right on every lane it names, against MPFR, for every 16-bit x of every
// instance of the row (as values: the sign of a zero is not a rounding); and it names every x of
// [covered, 3) in magnitude (what makes the skip pay: the benchmarks' inputs lie there). Made to
// fail by naming every lane: 128 bfloat16 and 1 float16 results differ (and float16_test's ties,
// through the kernel).
template <storage16 T>
void expect_correctly_rounded_forward_lanes(float covered) {
  auto const stride = static_cast<std::uint32_t>(accuracy_stride());
  std::size_t const rows = for_each_naming_instance<names_correctly_rounded_forward_lanes>(
      [&](auto const& f, std::string_view label) {
        std::int64_t named = 0;
        std::int64_t unnamed = 0;
        std::int64_t unnamed_covered = 0;
        std::int64_t differ = 0;
        std::uint16_t first = 0;
        reference::values ref;
        for (std::uint32_t b = 0; b < 0x10000; b += stride) {
          auto const bits = static_cast<std::uint16_t>(b);
          float const x = static_cast<float>(T{bits});
          if (!std::isfinite(x)) {
            continue;  // the limits: storage16_scan
          }
          bool const inside = std::fabs(x) < 3.0F;  // x or 0 beyond, exact: named or not
          if (!f.correctly_rounded_forward16(x)) {
            unnamed += inside ? 1 : 0;
            unnamed_covered += inside && std::fabs(x) >= covered ? 1 : 0;
            continue;
          }
          named += inside ? 1 : 0;
          reference::evaluate(f, static_cast<double>(x), ref);
          if (!accuracy::same_value(T::from_float(f(x)),
                                    accuracy::correctly_rounded<T>(ref.forward))) {
            first = differ++ == 0 ? bits : first;
          }
        }
        EXPECT_EQ(differ, 0) << label << ", first at bits 0x" << std::hex << first;
        EXPECT_EQ(unnamed_covered, 0) << label;
        EXPECT_GT(named, 0) << label;
        EXPECT_GT(unnamed, 0) << label;
      });
  EXPECT_EQ(rows, 1U);  // hardswish
}

TEST(Storage16Accuracy, LanesWhoseForwardRoundsCorrectlyDoBFloat16) {
  expect_correctly_rounded_forward_lanes<bfloat16>(0x1p-6F);
}
TEST(Storage16Accuracy, LanesWhoseForwardRoundsCorrectlyDoFloat16) {
  expect_correctly_rounded_forward_lanes<float16>(1.0F);
}

// hardswish's bfloat16 backward twin (detail/fast16.hpp) names the lanes whose float result
// rounded once is the correctly rounded value of dy (2x + 3) / 6 (correctly_rounded_backward16,
// which holds for any float arguments): right on every lane it names, for every 16-bit x of both
// types with every 127th 16-bit dy (dy 117/128 among them, where the true value is often a
// midpoint), against the exact value (dy (2x + 3) is exact in double, and its sixth rounded to odd
// keeps the rounding to 16 bits); and it names every bfloat16 x of [2^-6, 3) in magnitude but -1.5
// with a dy whose product is far above the underflow (the benchmarks' inputs). Made to fail by
// leaving out the product's low part: float16 lanes differ.
template <storage16 T>
void expect_hardswish_backward_lanes_round_correctly() {
  using twin = detail::hardswish_twin<true>;
  auto const stride = static_cast<std::uint32_t>(accuracy_stride());
  std::vector<float> dys;
  for (std::uint32_t k = 0; k < 0x10000; k += 127 * stride) {
    dys.push_back(static_cast<float>(T{static_cast<std::uint16_t>(k)}));
  }
  dys.push_back(117.0F / 128.0F);
  std::int64_t named = 0;
  std::int64_t unnamed = 0;
  std::int64_t unnamed_covered = 0;
  std::int64_t differ = 0;
  for (std::uint32_t b = 0; b < 0x10000; b += stride) {
    float const x = static_cast<float>(T{static_cast<std::uint16_t>(b)});
    if (!(std::fabs(x) < 3.0F)) {
      continue;  // 0, dy or NaN beyond: exact
    }
    for (float const dy : dys) {
      if (!std::isfinite(dy)) {
        continue;
      }
      if (!twin::correctly_rounded_backward16(x, dy)) {
        ++unnamed;
        // (At x = -1.5 the product is 0: exact, and not near a midpoint.)
        bool const covered = std::fabs(x) >= 0x1p-6F && x != -1.5F && std::fabs(dy) >= 0x1p-90F;
        unnamed_covered += covered && std::is_same_v<T, bfloat16> ? 1 : 0;
        continue;
      }
      ++named;
      double const product = static_cast<double>(dy) * (2.0 * static_cast<double>(x) + 3.0);
      T const want = T::from_float(math::round_to_odd(product / 6.0));
      T const got = T::from_float(twin{}.backward(x, dy));
      differ += accuracy::same_value(got, want) ? 0 : 1;
    }
  }
  EXPECT_EQ(differ, 0);
  EXPECT_EQ(unnamed_covered, 0);
  EXPECT_GT(named, 0);
  EXPECT_GT(unnamed, 0);
}

TEST(Storage16Accuracy, HardswishBackwardLanesRoundCorrectlyBFloat16) {
  expect_hardswish_backward_lanes_round_correctly<bfloat16>();
}
TEST(Storage16Accuracy, HardswishBackwardLanesRoundCorrectlyFloat16) {
  expect_hardswish_backward_lanes_round_correctly<float16>();
}

// hardswish's bfloat16 twin names the forward's lanes by |x| >= 2^-7 alone (detail/fast16.hpp):
// every bfloat16 x it names is one that hardswish's own correctly_rounded_forward16 names
// (checked against MPFR above), or beyond 3 in magnitude (x or 0, exact). Made to fail by
// naming from 2^-8: 86 inputs.
TEST(Storage16Accuracy, HardswishTwinNamesOnlyForwardLanesThatRoundCorrectlyBFloat16) {
  std::int64_t named = 0;
  std::int64_t wrong = 0;
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    float const x = static_cast<float>(bfloat16{static_cast<std::uint16_t>(b)});
    if (!std::isfinite(x) || !detail::hardswish_twin<true>::correctly_rounded_forward16(x)) {
      continue;
    }
    ++named;
    wrong += std::fabs(x) >= 3.0F || hardswish{}.correctly_rounded_forward16(x) ? 0 : 1;
  }
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(named, 34560);  // 135 binades of 128, both signs
}

// The run-time declaration is false where a bound is not a float: those forwards are tested
// lane by lane against the midpoints like any other.
TEST(Storage16Accuracy, HardtanhDeclaresItsForwardExactOnlyForFloatBounds) {
  EXPECT_TRUE(hardtanh{}.exact_forward_results());
  EXPECT_TRUE((hardtanh{.min = -2.0, .max = 0.375}.exact_forward_results()));
  EXPECT_FALSE((hardtanh{.min = -0.1, .max = 1.0}.exact_forward_results()));
  EXPECT_FALSE((hardtanh{.min = -1.0, .max = 1e300}.exact_forward_results()));
  EXPECT_FALSE((hardtanh{.min = -(1 + 0x1p-8 + 0x1p-30), .max = 1.0}.exact_forward_results()));
}

TEST(Storage16Accuracy, DeclaredExactResultsAreWhatTheRecomputationGivesBFloat16) {
  expect_declared_exact_results_exact<bfloat16>();
}
TEST(Storage16Accuracy, DeclaredExactResultsAreWhatTheRecomputationGivesFloat16) {
  expect_declared_exact_results_exact<float16>();
}

}  // namespace
}  // namespace nonlin::test
