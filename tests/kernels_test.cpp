// SPDX-License-Identifier: MIT
// Span kernels: every length from 0 to 3 vector widths + 1, unaligned starts, in place, scalar
// and SIMD bit for bit, bad arguments rejected before any write; PReLU.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include <nonlin/nonlin.hpp>

#include "support/functors.hpp"
#include "support/inputs.hpp"

namespace nonlin::test {
namespace {

template <class T>
class Kernels : public ::testing::Test {};
using scalar_types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Kernels, scalar_types);

constexpr std::size_t width_float = xsimd::batch<float>::size;

TYPED_TEST(Kernels, EveryLengthOffsetAndInPlaceMatchesTheScalarCall) {
  using T = TypeParam;
  constexpr std::size_t width = xsimd::batch<T>::size;
  for_each_functor([&](auto const& entry) {
    SCOPED_TRACE(std::string(entry.name));
    auto const& f = entry.f;
    using F = std::remove_cvref_t<decltype(f)>;
    for (std::size_t n = 0; n <= 3 * width + 1; ++n) {
      for (std::size_t offset : {std::size_t{0}, std::size_t{1}, width - 1}) {
        std::vector<T> storage = inputs<T>(n + offset, static_cast<unsigned>(n * 31 + offset));
        std::vector<T> dy_storage = inputs<T>(n + offset, static_cast<unsigned>(n + 7));
        std::span<T const> const x(storage.data() + offset, n);
        std::span<T const> const dy(dy_storage.data() + offset, n);
        std::vector<T> y(n + 1, T(-7));
        std::vector<T> dx(n, T(-7));
        forward(f, x, std::span<T>(y.data(), n));
        backward(f, x, dy, std::span<T>(dx));
        EXPECT_EQ(y[n], T(-7)) << "wrote past the end";
        for (std::size_t i = 0; i < n; ++i) {
          ASSERT_TRUE(same_bits(y[i], f(x[i]))) << "n=" << n << " i=" << i << " x=" << x[i];
          ASSERT_TRUE(same_bits(dx[i], f.backward(x[i], dy[i])))
              << "n=" << n << " i=" << i << " x=" << x[i];
        }
        if constexpr (output_differentiable<F, T>) {
          std::vector<T> dx_out(n);
          backward_from_output(f, std::span<T const>(y.data(), n), dy, std::span<T>(dx_out));
          for (std::size_t i = 0; i < n; ++i) {
            ASSERT_TRUE(same_bits(dx_out[i], f.backward_from_output(y[i], dy[i]))) << i;
          }
        }
        // In place: y aliases x exactly, dx aliases dy exactly.
        std::vector<T> in_place(x.begin(), x.end());
        forward(f, std::span<T const>(in_place), std::span<T>(in_place));
        std::vector<T> grad(dy.begin(), dy.end());
        backward(f, x, std::span<T const>(grad), std::span<T>(grad));
        for (std::size_t i = 0; i < n; ++i) {
          ASSERT_TRUE(same_bits(in_place[i], y[i]));
          ASSERT_TRUE(same_bits(grad[i], dx[i]));
        }
      }
    }
  });
}

// The backward kernels that defer their product tails (kernels.hpp: backward_deferring_tails)
// evaluate four batches without one, then again those of an iteration where a lane needs it: one
// tail lane (an x whose f' is below the normal range, a dy that brings dy f' back into it, where
// dy times the rounded f' differs) at every position of three iterations, the other lanes
// ordinary, each result against the scalar call; default tier and fast tier.
TYPED_TEST(Kernels, DeferredProductTailsInEveryLaneOfAnIteration) {
  using T = TypeParam;
  constexpr bool is_float = std::is_same_v<T, float>;
  constexpr std::size_t n = 12 * xsimd::batch<T>::size + 3;
  T const dy_large = is_float ? T(1e30) : T(1e300);
  auto const check = [&](char const* name, auto const& f, T tail_x) {
    SCOPED_TRACE(name);
    static_assert(detail::defers_product_tails<std::remove_cvref_t<decltype(f)>, xsimd::batch<T>>);
    std::vector<T> x = inputs<T>(n, 5);
    std::vector<T> const dy(n, dy_large);
    ASSERT_NE(f.backward(tail_x, dy_large), dy_large * f.derivative(tail_x)) << "not a tail";
    for (std::size_t at = 0; at < n; ++at) {
      std::vector<T> moved = x;
      moved[at] = tail_x;
      std::vector<T> dx(n);
      backward(f, std::span<T const>(moved), std::span<T const>(dy), std::span<T>(dx));
      for (std::size_t i = 0; i < n; ++i) {
        ASSERT_TRUE(same_bits(dx[i], f.backward(moved[i], dy[i])))
            << "tail at " << at << ", lane " << i << ", x = " << moved[i];
      }
    }
  };
  check("sigmoid", sigmoid{}, is_float ? T(-95) : T(-720));
  check("log_sigmoid", log_sigmoid{}, is_float ? T(95) : T(720));
  check("softplus", softplus{}, is_float ? T(-95) : T(-720));
  check("tanh", nonlin::tanh{}, is_float ? T(48) : T(362));
  check("mish", mish{}, is_float ? T(-95) : T(-720));
  check("gelu_exact", gelu_exact{}, is_float ? T(-13.6) : T(-37.8));
  check("gelu_tanh", gelu_tanh{}, is_float ? T(-11) : T(-22));
  check("fast::sigmoid", fast::sigmoid{}, is_float ? T(-95) : T(-720));
  check("fast::tanh", fast::tanh{}, is_float ? T(48) : T(362));
  check("fast::log_sigmoid", fast::log_sigmoid{}, is_float ? T(95) : T(720));
  check("fast::softplus", fast::softplus{}, is_float ? T(-95) : T(-720));
  check("fast::gelu_exact", fast::gelu_exact{}, is_float ? T(-13.6) : T(-37.8));
  check("fast::gelu_tanh", fast::gelu_tanh{}, is_float ? T(-11) : T(-22));
  check("fast::elu", fast::elu{}, is_float ? T(-95) : T(-720));
  check("fast::selu", fast::selu{}, is_float ? T(-95) : T(-720));
}

// A lane of a batch call equals the scalar call, whatever the other lanes hold.
TYPED_TEST(Kernels, BatchLanesEqualScalarCalls) {
  using T = TypeParam;
  using B = xsimd::batch<T>;
  std::vector<T> const values = inputs<T>(B::size * 301, 99);
  for_each_functor([&](auto const& entry) {
    SCOPED_TRACE(std::string(entry.name));
    auto const& f = entry.f;
    for (std::size_t i = 0; i + B::size <= values.size(); i += B::size) {
      B const x = B::load_unaligned(values.data() + i);
      B const y = f(x);
      B const d = f.derivative(x);
      for (std::size_t k = 0; k < B::size; ++k) {
        ASSERT_TRUE(same_bits(y.get(k), f(values[i + k]))) << values[i + k];
        ASSERT_TRUE(same_bits(d.get(k), f.derivative(values[i + k]))) << values[i + k];
      }
    }
  });
}

template <class T>
void expect_untouched(std::vector<T> const& v) {
  for (T const value : v) {
    ASSERT_TRUE(std::isnan(value)) << "an output was written before the error";
  }
}

TYPED_TEST(Kernels, BadArgumentsThrowBeforeWriting) {
  using T = TypeParam;
  T const nan = std::numeric_limits<T>::quiet_NaN();
  std::vector<T> x(10, T(1));
  std::vector<T> dy(10, T(1));
  std::vector<T> short_out(9, nan);
  try {
    forward(sigmoid{}, x, short_out);
    FAIL() << "no exception";
  } catch (std::invalid_argument const& e) {
    EXPECT_NE(std::string(e.what()).find("x has 10 elements but y has 9"), std::string::npos)
        << e.what();
  }
  expect_untouched(short_out);
  EXPECT_THROW(backward(sigmoid{}, x, std::span<T const>(dy.data(), 9), short_out),
               std::invalid_argument);
  expect_untouched(short_out);
  std::vector<T> out(10, nan);
  EXPECT_THROW(backward(sigmoid{}, std::span<T const>(x.data(), 9), dy, out),
               std::invalid_argument);
  expect_untouched(out);
  EXPECT_THROW(backward_from_output(nonlin::tanh{}, x, std::span<T const>(dy.data(), 3), out),
               std::invalid_argument);
  expect_untouched(out);
  // Partial overlap: y starts one element into x.
  std::vector<T> buffer(11, nan);
  std::span<T const> const first(buffer.data(), 10);
  std::span<T> const shifted(buffer.data() + 1, 10);
  try {
    forward(relu{}, first, shifted);
    FAIL() << "no exception";
  } catch (std::invalid_argument const& e) {
    EXPECT_NE(std::string(e.what()).find("partly overlaps"), std::string::npos) << e.what();
  }
  expect_untouched(buffer);
  // backward_from_output needs alpha > 0 where the output must tell the piece.
  EXPECT_THROW(backward_from_output(leaky_relu{.alpha = -0.5}, x, dy, out), std::invalid_argument);
  EXPECT_THROW(backward_from_output(elu{.alpha = 0.0}, x, dy, out), std::invalid_argument);
  expect_untouched(out);
  // Empty spans are fine.
  std::vector<T> empty;
  EXPECT_NO_THROW(forward(gelu_exact{}, empty, empty));
}

// PReLU over (n, channels, inner), against a plain loop.
TYPED_TEST(Kernels, PreluForwardBackwardAndAlphaGradient) {
  using T = TypeParam;
  for (std::size_t inner : {std::size_t{1}, std::size_t{3}, std::size_t{37}}) {
    for (bool shared : {false, true}) {
      prelu_shape const shape{.n = 3, .channels = 4, .inner = inner};
      std::vector<T> const x = inputs<T>(shape.size(), 5);
      std::vector<T> x_finite(x);
      for (T& v : x_finite) {
        v = std::isfinite(v) && std::abs(v) < T(100) ? v : T(-1.5);
      }
      std::vector<T> dy(shape.size());
      for (std::size_t i = 0; i < dy.size(); ++i) {
        dy[i] = T(0.25) * T(static_cast<int>(i % 9) - 4);
      }
      std::vector<T> const alpha =
          shared ? std::vector<T>{T(0.2)} : std::vector<T>{T(0.1), T(0.2), T(-0.3), T(0.0)};
      std::vector<T> y(shape.size());
      std::vector<T> dx(shape.size());
      std::vector<T> dalpha(alpha.size(), T(123));
      prelu_forward(std::span<T const>(x_finite), std::span<T const>(alpha), std::span<T>(y),
                    shape);
      prelu_backward(std::span<T const>(x_finite), std::span<T const>(alpha),
                     std::span<T const>(dy), std::span<T>(dx), std::span<T>(dalpha), shape);
      std::vector<double> expected_dalpha(alpha.size(), 0.0);
      for (std::size_t i = 0; i < shape.size(); ++i) {
        std::size_t const c = (i / inner) % shape.channels;
        T const a = alpha[shared ? 0 : c];
        T const xi = x_finite[i];
        EXPECT_EQ(y[i], xi > 0 ? xi : a * xi);
        EXPECT_EQ(dx[i], xi > 0 ? dy[i] : a * dy[i]);
        if (xi < 0) {
          expected_dalpha[shared ? 0 : c] += double(dy[i]) * double(xi);
        }
      }
      for (std::size_t c = 0; c < alpha.size(); ++c) {
        EXPECT_NEAR(dalpha[c], expected_dalpha[c], 1e-4 * (1 + std::abs(expected_dalpha[c])));
      }
    }
  }
  // alpha of the wrong length, or x of the wrong size: rejected before any write.
  T const nan = std::numeric_limits<T>::quiet_NaN();
  prelu_shape const shape{.n = 2, .channels = 3, .inner = 2};
  std::vector<T> x(12, T(1));
  std::vector<T> alpha(2, T(0.1));
  std::vector<T> y(12, nan);
  try {
    prelu_forward(std::span<T const>(x), std::span<T const>(alpha), std::span<T>(y), shape);
    FAIL() << "no exception";
  } catch (std::invalid_argument const& e) {
    EXPECT_NE(std::string(e.what()).find("alpha has 2 elements"), std::string::npos) << e.what();
  }
  expect_untouched(y);
  std::vector<T> good_alpha(3, T(0.1));
  std::vector<T> dalpha(3, nan);
  EXPECT_THROW(prelu_backward(std::span<T const>(x.data(), 11), std::span<T const>(good_alpha),
                              std::span<T const>(x), std::span<T>(y), std::span<T>(dalpha), shape),
               std::invalid_argument);
  expect_untouched(y);
  expect_untouched(dalpha);
}

// PReLU on 16-bit arrays: y and dx each the span kernels' rounding of leaky_relu with the
// channel's alpha (itself a 16-bit value), dalpha the float path's compensated sum of the
// widened values rounded once; in place.
template <class T>
class Prelu16 : public ::testing::Test {};
using storage_types = ::testing::Types<bfloat16, float16>;
TYPED_TEST_SUITE(Prelu16, storage_types);

TYPED_TEST(Prelu16, EqualsTheFloatPathRoundedOnce) {
  using T = TypeParam;
  for (std::size_t inner : {std::size_t{1}, std::size_t{5}, std::size_t{37}}) {
    prelu_shape const shape{.n = 2, .channels = 3, .inner = inner};
    std::vector<T> x(shape.size());
    std::vector<T> dy(shape.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      x[i] = T::from_float(static_cast<float>(static_cast<int>(i * 37 % 41) - 20) * 0.137F);
      dy[i] = T::from_float(static_cast<float>(static_cast<int>(i % 9) - 4) * 0.3F);
    }
    std::vector<T> const alpha{T::from_float(0.1F), T::from_float(0.25F), T::from_float(-0.3F)};
    std::vector<T> y(x.size());
    std::vector<T> dx(x.size());
    std::vector<T> dalpha(alpha.size());
    prelu_forward(std::span<T const>(x), std::span<T const>(alpha), std::span<T>(y), shape);
    prelu_backward(std::span<T const>(x), std::span<T const>(alpha), std::span<T const>(dy),
                   std::span<T>(dx), std::span<T>(dalpha), shape);
    // The float path on the widened arrays.
    auto widen = [](std::vector<T> const& v) {
      std::vector<float> out(v.size());
      for (std::size_t i = 0; i < v.size(); ++i) {
        out[i] = static_cast<float>(v[i]);
      }
      return out;
    };
    std::vector<float> const xf = widen(x);
    std::vector<float> const dyf = widen(dy);
    std::vector<float> const af = widen(alpha);
    std::vector<float> dxf(x.size());
    std::vector<float> daf(alpha.size());
    prelu_backward(std::span<float const>(xf), std::span<float const>(af),
                   std::span<float const>(dyf), std::span<float>(dxf), std::span<float>(daf),
                   shape);
    for (std::size_t i = 0; i < x.size(); ++i) {
      leaky_relu const f{.alpha = static_cast<double>(af[(i / inner) % shape.channels])};
      auto const fwd = [f](auto v) -> decltype(f(v)) { return f(v); };
      auto const bwd = [f](auto v, auto d) -> decltype(f.backward(v, d)) {
        return f.backward(v, d);
      };
      ASSERT_EQ(y[i].bits, detail::rounded16<T>(fwd, xf[i]).bits) << i;
      ASSERT_EQ(dx[i].bits, detail::rounded16<T>(bwd, xf[i], dyf[i]).bits) << i;
    }
    for (std::size_t c = 0; c < alpha.size(); ++c) {
      ASSERT_EQ(dalpha[c].bits, T::from_float(daf[c]).bits) << c;
    }
    // In place: dx over dy.
    std::vector<T> grad(dy);
    std::vector<T> dalpha2(alpha.size());
    prelu_backward(std::span<T const>(x), std::span<T const>(alpha), std::span<T const>(grad),
                   std::span<T>(grad), std::span<T>(dalpha2), shape);
    for (std::size_t i = 0; i < x.size(); ++i) {
      ASSERT_EQ(grad[i].bits, dx[i].bits) << i;
    }
  }
}

static_assert(width_float >= 4);

// Which forward kernels interleave their batches (kernels.hpp: elementwise_interleaved): the
// functors whose one batch is a long chain, the gated units of those acts, and no other. (Their
// results are checked with every other functor's above: the same bits as the scalar call.)
static_assert(detail::long_forward_chain<sigmoid> && detail::long_forward_chain<tanh> &&
              detail::long_forward_chain<mish> && detail::long_forward_chain<softplus> &&
              detail::long_forward_chain<log_sigmoid> && detail::long_forward_chain<gelu_exact> &&
              detail::long_forward_chain<fast::gelu_exact> &&
              detail::long_forward_chain<fast::mish> &&
              detail::long_forward_chain<fast::log_sigmoid> &&
              detail::long_forward_chain<fast::elu> && detail::long_forward_chain<geglu> &&
              detail::long_forward_chain<glu> && detail::long_forward_chain<silu> &&
              detail::long_forward_chain<gelu_tanh> && detail::long_forward_chain<swiglu>);
static_assert(!detail::long_forward_chain<swish> && !detail::long_forward_chain<gelu_quick> &&
              !detail::long_forward_chain<elu> && !detail::long_forward_chain<fast::sigmoid> &&
              !detail::long_forward_chain<relu>);

}  // namespace
}  // namespace nonlin::test
