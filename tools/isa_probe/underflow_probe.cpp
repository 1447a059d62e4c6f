// SPDX-License-Identifier: MIT
// What an operation whose result (or, for a multiply, an input) is below float's normal range
// costs, and what it costs nonlin's kernels. Part 1: cycles per instruction of vscalefps,
// vmulps, vfmadd231ps, vdivps with normal operands and results, with a result that underflows to
// 0 or to a subnormal, with a subnormal input; vaddps and vcvtps2pd with a subnormal input
// (eight independent zmm operations a step, so that throughput, not latency, is timed). On Intel
// cores the underflowing ones take a microcode assist. Part 2: nonlin's span kernels (4096
// floats, in L1), cycles per 16-float batch on inputs U(-8, 8) and U(-200, 200), where e^-|x|
// and its products leave the normal range; softmax and log_softmax over rows of 1000 on logits
// U(-8, 8), with the second half of every row -inf (a mask), and U(-96, 96). Cycles from a
// dependent integer-add chain (clock.hpp). Needs AVX-512F.
//   g++ -std=c++20 -O3 -DNDEBUG -march=native -Iinclude tools/isa_probe/underflow_probe.cpp
//       -o build/underflow_probe && build/underflow_probe
// The figures it printed, and what they explain, are in docs/design.md ("Underflow takes a
// microcode assist").

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <limits>
#include <nonlin/nonlin.hpp>
#include <random>
#include <span>
#include <vector>

#include "clock.hpp"

namespace {

using nonlin_probe::clock_hz;
using nonlin_probe::seconds;

// Cycles per operation of op(a, b), eight independent ones a step; a and b pass through an
// empty asm every step so that nothing is hoisted.
template <class Op>
double cycles_per_op(Op op, __m512 a, __m512 b, double hz) {
  constexpr long steps = 200000;
  __m512 r[8];
  double const t0 = seconds();
  for (long i = 0; i < steps; ++i) {
    for (auto& v : r) {
      __m512 x = a;
      asm volatile("" : "+v"(x));
      v = op(x, b);
      asm volatile("" : "+v"(v));
    }
  }
  return (seconds() - t0) * hz / (8.0 * steps);
}

template <class F>
double median_seconds(F f) {
  std::vector<double> t;
  for (int rep = 0; rep < 15; ++rep) {
    double const t0 = seconds();
    for (int k = 0; k < 10; ++k) {
      f();
    }
    t.push_back((seconds() - t0) / 10);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main() {
  double const hz = clock_hz();
  std::printf("clock %.2f GHz\n\n", hz * 1e-9);
  __m512 const normal = _mm512_set1_ps(1.5f);
  __m512 const tiny = _mm512_set1_ps(1e-20f);
  __m512 const subnormal = _mm512_set1_ps(1e-40f);
  auto scalef = [](__m512 x, __m512 n) { return _mm512_scalef_ps(x, n); };
  auto mul = [](__m512 x, __m512 y) { return _mm512_mul_ps(x, y); };
  auto fma = [](__m512 x, __m512 y) { return _mm512_fmadd_ps(x, y, _mm512_setzero_ps()); };
  auto div = [](__m512 x, __m512 y) { return _mm512_div_ps(x, y); };
  auto add = [](__m512 x, __m512 y) { return _mm512_add_ps(x, y); };
  auto widen = [](__m512 x, __m512) {
    return _mm512_castpd_ps(_mm512_cvtps_pd(_mm512_castps512_ps256(x)));
  };
  std::printf(
      "| operation | normal | result 0 from below | result subnormal | input subnormal |\n");
  std::printf("|---|--:|--:|--:|--:|\n");
  std::printf("| vscalefps | %.1f | %.1f | %.1f | %.1f |\n",
              cycles_per_op(scalef, normal, _mm512_set1_ps(-10.0f), hz),
              cycles_per_op(scalef, normal, _mm512_set1_ps(-200.0f), hz),
              cycles_per_op(scalef, normal, _mm512_set1_ps(-130.0f), hz),
              cycles_per_op(scalef, subnormal, _mm512_set1_ps(1.0f), hz));
  std::printf("| vmulps | %.1f | %.1f | %.1f | %.1f |\n", cycles_per_op(mul, normal, tiny, hz),
              cycles_per_op(mul, tiny, _mm512_set1_ps(1e-30f), hz),
              cycles_per_op(mul, tiny, tiny, hz), cycles_per_op(mul, subnormal, normal, hz));
  std::printf("| vfmadd231ps | %.1f | %.1f | %.1f | %.1f |\n", cycles_per_op(fma, normal, tiny, hz),
              cycles_per_op(fma, tiny, _mm512_set1_ps(1e-30f), hz),
              cycles_per_op(fma, tiny, tiny, hz), cycles_per_op(fma, subnormal, normal, hz));
  std::printf("| vdivps | %.1f | %.1f | %.1f | %.1f |\n", cycles_per_op(div, normal, normal, hz),
              cycles_per_op(div, tiny, _mm512_set1_ps(1e30f), hz),
              cycles_per_op(div, tiny, _mm512_set1_ps(1e20f), hz),
              cycles_per_op(div, subnormal, normal, hz));
  std::printf("| vaddps | %.1f | - | - | %.1f |\n", cycles_per_op(add, normal, normal, hz),
              cycles_per_op(add, subnormal, subnormal, hz));
  std::printf("| vcvtps2pd | %.1f | - | - | %.1f |\n\n", cycles_per_op(widen, normal, normal, hz),
              cycles_per_op(widen, subnormal, normal, hz));

  std::size_t const n = 4096;
  std::vector<float> narrow(n);
  std::vector<float> wide(n);
  std::vector<float> const dy(n, 0.75f);
  std::vector<float> y(n);
  std::mt19937 engine(1);
  std::uniform_real_distribution<float> u8(-8.0f, 8.0f);
  std::uniform_real_distribution<float> u200(-200.0f, 200.0f);
  for (std::size_t i = 0; i < n; ++i) {
    narrow[i] = u8(engine);
    wide[i] = u200(engine);
  }
  double const per_batch = hz * 16.0 / static_cast<double>(n);
  std::printf(
      "| kernel (4096 floats) | fwd U(-8, 8) | fwd U(-200, 200) | bwd U(-8, 8) | bwd "
      "U(-200, 200) |\n|---|--:|--:|--:|--:|\n");
  auto row = [&](char const* name, auto f) {
    auto fwd = [&](std::vector<float> const& x) {
      return per_batch * median_seconds([&] {
               nonlin::forward(f, std::span<float const>(x), std::span<float>(y));
             });
    };
    auto bwd = [&](std::vector<float> const& x) {
      return per_batch * median_seconds([&] {
               nonlin::backward(f, std::span<float const>(x), std::span<float const>(dy),
                                std::span<float>(y));
             });
    };
    std::printf("| %s | %.1f | %.1f | %.1f | %.1f |\n", name, fwd(narrow), fwd(wide), bwd(narrow),
                bwd(wide));
  };
  row("sigmoid", nonlin::sigmoid{});
  row("tanh", nonlin::tanh{});
  row("silu", nonlin::silu{});
  row("elu", nonlin::elu{});
  row("softplus", nonlin::softplus{});
  row("gelu_exact", nonlin::gelu_exact{});
  row("gelu_tanh", nonlin::gelu_tanh{});
  row("mish", nonlin::mish{});
  row("fast::sigmoid", nonlin::fast::sigmoid{});
  row("fast::silu", nonlin::fast::silu{});

  std::size_t const cols = 1000;
  std::size_t const rows = 262;
  std::vector<float> logits(rows * cols);
  std::vector<float> out(rows * cols);
  for (float& v : logits) {
    v = u8(engine);
  }
  double const per_row_batch = hz * 16.0 / static_cast<double>(rows * cols);
  auto softmax_rows = [&](auto f) {
    return per_row_batch * median_seconds([&] {
             nonlin::forward(f, std::span<float const>(logits), std::span<float>(out), cols);
           });
  };
  double plain[2] = {softmax_rows(nonlin::softmax{}), softmax_rows(nonlin::log_softmax{})};
  for (std::size_t r = 0; r < rows; ++r) {
    std::fill_n(logits.begin() + static_cast<std::ptrdiff_t>(r * cols + cols / 2), cols / 2,
                -std::numeric_limits<float>::infinity());
  }
  double masked[2] = {softmax_rows(nonlin::softmax{}), softmax_rows(nonlin::log_softmax{})};
  for (float& v : logits) {
    v = 12.0f * u8(engine);
  }
  double spread[2] = {softmax_rows(nonlin::softmax{}), softmax_rows(nonlin::log_softmax{})};
  std::printf("\n| rows of 1000 | U(-8, 8) | half -inf | U(-96, 96) |\n|---|--:|--:|--:|\n");
  std::printf("| softmax | %.1f | %.1f | %.1f |\n", plain[0], masked[0], spread[0]);
  std::printf("| log_softmax | %.1f | %.1f | %.1f |\n", plain[1], masked[1], spread[1]);
  std::printf("\n(cycles per 16-float batch)\n");
}
