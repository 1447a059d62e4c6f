// SPDX-License-Identifier: MIT
// Not a timing: the largest |approximation - gelu_exact| of the two GELU approximations on
// x = -5, -4.99, ..., 5 in double, with nonlin's own double functors, reported as the counter
// max_abs_err (and at_x, where it occurs). Runs one iteration. Documented values:
// gelu_tanh 0.000473235 (at x = +-2.70), gelu_quick 0.020334869 (at x = 2.27).

#include <cmath>

#include <benchmark/benchmark.h>

#include <nonlin/gelu.hpp>
#include <nonlin/silu.hpp>

namespace {

template <class Approx>
void gelu_error(benchmark::State& state) {
  double max_err = 0.0;
  double at = 0.0;
  for (auto _ : state) {
    max_err = 0.0;
    for (int i = -500; i <= 500; ++i) {
      double const x = i * 0.01;  // not an accumulated sum: the grid points are exact decimals
      double const err = std::abs(Approx{}(x)-nonlin::gelu_exact{}(x));
      if (err > max_err) {
        max_err = err;
        at = x;
      }
    }
    benchmark::DoNotOptimize(max_err);
  }
  state.counters["max_abs_err"] = max_err;
  state.counters["at_x"] = at;
}

BENCHMARK(gelu_error<nonlin::gelu_tanh>)->Name("error/gelu_tanh")->Iterations(1);
BENCHMARK(gelu_error<nonlin::gelu_quick>)->Name("error/gelu_quick")->Iterations(1);

}  // namespace
