// SPDX-License-Identifier: MIT
// Does the length of a kernel's dependency chain bind its throughput, or the number of its
// operations? nonlin::sigmoid's batch loop (4096 floats, in L1) timed as it is, with N vmaxps
// appended to its chain (each waits for the one before, which waits for the sigmoid) and with
// the same N vmaxps beside it (a chain of their own on x, joined to the result by one more):
// the same instructions either way. Then the same exp with its quotient formed by one division,
// which leaves five operations at the end of the chain instead of eight (not accurate enough
// to ship: 2.40 ulp, against 1.52): how much the deep operations cost. Cycles from a chain of
// dependent integer adds, as tools/isa_probe/isa_probe.cpp measures them. Needs AVX-512F.
//   g++ -std=c++20 -O3 -DNDEBUG -march=native -falign-loops=64 -Iinclude
//       tools/isa_probe/chain_probe.cpp -o build/chain_probe && build/chain_probe
// The figures it printed, and what they explain, are in docs/design.md ("The machine").

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <nonlin/nonlin.hpp>
#include <vector>
#include <xsimd/xsimd.hpp>

#include "clock.hpp"

namespace {

using batch = xsimd::batch<float>;

using nonlin_probe::clock_hz;
using nonlin_probe::seconds;

// A vmaxps the compiler cannot fold or merge: its result leaves through an empty asm.
batch opaque_max(batch a, batch const& b) {
  a = xsimd::max(a, b);
  asm("" : "+v"(a.data));
  return a;
}

enum class variant { sigmoid, dependent, beside, division };

template <variant V, int N>
__attribute__((noinline)) void run(float const* x, float* y, std::size_t n, float floor) {
  batch const low(floor);
  for (std::size_t i = 0; i < n; i += batch::size) {
    batch const z = batch::load_unaligned(x + i);
    batch s = nonlin::sigmoid{}(z);
    if constexpr (V == variant::division) {
      batch const e = nonlin::math::exp_nonpositive(nonlin::math::neg(nonlin::math::abs(z)));
      s = xsimd::select(z >= batch(0.f), batch(1.f), e) / (batch(1.f) + e);
    }
    if constexpr (V == variant::dependent) {
      for (int k = 0; k <= N; ++k) s = opaque_max(s, low);
    } else if constexpr (V == variant::beside) {
      batch t = z;
      for (int k = 0; k < N; ++k) t = opaque_max(t, low);
      s = xsimd::max(s, t);
    }
    s.store_unaligned(y + i);
  }
}

}  // namespace

int main() {
  std::size_t const n = 4096;
  std::vector<float> x(n), y(n);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = -8.f + 16.f * static_cast<float>(i * 2654435761u % n) / static_cast<float>(n);
  }
  volatile float const floor_source = -1e30f;  // below every result: the maxes change nothing
  float const floor = floor_source;
  double const hz = clock_hz();
  auto cycles = [&](auto kernel) {
    std::vector<double> t;
    for (int r = 0; r < 41; ++r) {
      double const t0 = seconds();
      for (int k = 0; k < 200; ++k) kernel(x.data(), y.data(), n, floor);
      t.push_back((seconds() - t0) * hz / 200 / static_cast<double>(n / batch::size));
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  };
  std::printf("clock %.2f GHz; cycles per 16-float batch, medians of 41\n", hz / 1e9);
  std::printf(
      "| round | sigmoid | +8 dependent | +8 beside | +16 dependent | +16 beside | "
      "division quotient |\n|--:|--:|--:|--:|--:|--:|--:|\n");
  for (int round = 1; round <= 3; ++round) {
    std::printf("| %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", round,
                cycles(run<variant::sigmoid, 0>), cycles(run<variant::dependent, 8>),
                cycles(run<variant::beside, 8>), cycles(run<variant::dependent, 16>),
                cycles(run<variant::beside, 16>), cycles(run<variant::division, 0>));
  }
}
