// SPDX-License-Identifier: MIT
// nonlin::parallel at 16M elements on 1 and 2 threads (this machine has 2 cores): the scaling of
// the threaded driver against itself, beside the serial span kernel in the same run.
//   par/<dir>/<function>/float/<serial|threads1|threads2>/16777216
// Not in the README's tables (bench/report.py reads only fwd/bwd/bwdy rows); quote ratios from
// one run: tools/bench_compare.py or --benchmark_filter='^par/'.

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <nonlin/nonlin.hpp>
#include <nonlin/parallel.hpp>

#include "timed.hpp"

namespace {

constexpr std::size_t n = std::size_t{1} << 24;

std::vector<float>& buffer(int which) {
  static std::vector<std::vector<float>> buffers =
      nonlin::bench::uniform_arrays(3, n, 0x70617261ULL);
  return buffers[static_cast<std::size_t>(which)];
}

template <class F, bool backward>
void add(char const* name, F f) {
  for (int threads : {0, 1, 2}) {
    std::string const variant = threads == 0 ? "serial" : "threads" + std::to_string(threads);
    std::string const row = std::string("par/") + (backward ? "bwd/" : "fwd/") + name + "/float/" +
                            variant + "/" + std::to_string(n);
    benchmark::RegisterBenchmark(
        row.c_str(),
        [f, threads](benchmark::State& state) {
          std::span<float const> const x(buffer(0));
          std::span<float const> const dy(buffer(1));
          std::span<float> const out(buffer(2));
          nonlin::parallel::options<> const o{.tasks = static_cast<std::size_t>(threads)};
          auto body = [&] {
            if constexpr (backward) {
              if (threads == 0) {
                nonlin::backward(f, x, dy, out);
              } else {
                nonlin::parallel::backward(f, x, dy, out, o);
              }
            } else {
              if (threads == 0) {
                nonlin::forward(f, x, out);
              } else {
                nonlin::parallel::forward(f, x, out, o);
              }
            }
          };
          nonlin::bench::timed(state, n, backward ? 3 : 2, sizeof(float), body);
        })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
}

[[maybe_unused]] bool const registered = [] {
  nonlin::bench::for_overhead_rows(
      []<class F, bool backward>(char const* name, F f) { add<F, backward>(name, f); });
  return true;
}();

}  // namespace
