// SPDX-License-Identifier: MIT
// nonlin::dispatch against the direct call at 4K elements (in L1, where a call's fixed cost
// shows most): the dispatched call runs the kernels of the level the CPU has (x86-64-v4 here),
// built by nonlin_add_dispatch; the direct one the kernels of this build (-march=native).
//   disp/<dir>/<function>/float/<direct|dispatched>/4096
// Not in the README's tables (bench/report.py reads only fwd/bwd/bwdy rows); quote ratios from
// one run: tools/bench_compare.py or --benchmark_filter='^disp/'.

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <nonlin/dispatch.hpp>
#include <nonlin/nonlin.hpp>

#include "timed.hpp"

#if NONLIN_DISPATCH_X86

namespace {

constexpr std::size_t n = 4096;

std::vector<float>& buffer(int which) {
  static std::vector<std::vector<float>> buffers =
      nonlin::bench::uniform_arrays(3, n, 0x64697370ULL);
  return buffers[static_cast<std::size_t>(which)];
}

template <class F, bool backward>
void add(char const* name, F f) {
  for (bool dispatched : {false, true}) {
    std::string const row = std::string("disp/") + (backward ? "bwd/" : "fwd/") + name + "/float/" +
                            (dispatched ? "dispatched" : "direct") + "/" + std::to_string(n);
    benchmark::RegisterBenchmark(row.c_str(), [f, dispatched](benchmark::State& state) {
      std::span<float const> const x(buffer(0));
      std::span<float const> const dy(buffer(1));
      std::span<float> const out(buffer(2));
      auto body = [&] {
        if constexpr (backward) {
          if (dispatched) {
            nonlin::dispatch::backward(f, x, dy, out);
          } else {
            nonlin::backward(f, x, dy, out);
          }
        } else {
          if (dispatched) {
            nonlin::dispatch::forward(f, x, out);
          } else {
            nonlin::forward(f, x, out);
          }
        }
      };
      nonlin::bench::timed(state, n, backward ? 3 : 2, sizeof(float), body);
    })->Unit(benchmark::kMicrosecond);
  }
}

[[maybe_unused]] bool const registered = [] {
  nonlin::bench::for_overhead_rows(
      []<class F, bool backward>(char const* name, F f) { add<F, backward>(name, f); });
  return true;
}();

}  // namespace

#endif
