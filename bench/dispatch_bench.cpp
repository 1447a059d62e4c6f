// SPDX-License-Identifier: MIT
// nonlin::dispatch against the direct call at 4K elements (in L1, where a call's fixed cost
// shows most): the dispatched call runs the kernels of the level the CPU has (x86-64-v4 here),
// built by nonlin_add_dispatch; the direct one the kernels of this build (-march=native). Then
// each lower level, capped: dispatched against its own kernels called directly.
//   disp/<dir>/<function>/float/<direct|dispatched>/4096
//   disp/<dir>/<function>/float/<v3|v2>/<entry|dispatched>/4096
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

// How a row calls the kernels: the build's own (direct), or a level's: through the dispatcher
// (capped at that level by set_level_cap) or its entry called without it ("entry": the kernels a
// -march=x86-64-vN build runs, compiled by nonlin_add_dispatch).
enum class route { direct, dispatched, entry };

template <nonlin::dispatch::level L, class F, bool backward>
void call_entry(F const& f, std::span<float const> x, std::span<float const> dy,
                std::span<float> out) {
  if constexpr (backward) {
    nonlin::dispatch::entry<L, F, float>::backward(f, x, dy, out);
  } else {
    nonlin::dispatch::entry<L, F, float>::forward(f, x, out);
  }
}

template <class F, bool backward>
void call(F const& f, route how, nonlin::dispatch::level l, std::span<float const> x,
          std::span<float const> dy, std::span<float> out) {
  using nonlin::dispatch::level;
  switch (how) {
    case route::direct:
      if constexpr (backward) {
        nonlin::backward(f, x, dy, out);
      } else {
        nonlin::forward(f, x, out);
      }
      return;
    case route::dispatched:
      if constexpr (backward) {
        nonlin::dispatch::backward(f, x, dy, out);
      } else {
        nonlin::dispatch::forward(f, x, out);
      }
      return;
    case route::entry:
      if (l == level::v2) {
        call_entry<level::v2, F, backward>(f, x, dy, out);
      } else if (l == level::v3) {
        call_entry<level::v3, F, backward>(f, x, dy, out);
      } else {
        call_entry<level::v4, F, backward>(f, x, dy, out);
      }
      return;
  }
}

// Rows: .../float/direct (this build, -march=native) and .../float/dispatched (the level the CPU
// has, v4 here): the dispatcher's overhead; .../float/<v3|v2>/<entry|dispatched>: a capped level
// through the dispatcher against that level's kernels called directly.
template <class F, bool backward>
void add(char const* name, F f) {
  using nonlin::dispatch::level;
  struct variant {
    route how;
    level cap;  // none: no cap
  };
  for (variant v : {variant{route::direct, level::none}, variant{route::dispatched, level::none},
                    variant{route::entry, level::v3}, variant{route::dispatched, level::v3},
                    variant{route::entry, level::v2}, variant{route::dispatched, level::v2}}) {
    std::string row = std::string("disp/") + (backward ? "bwd/" : "fwd/") + name + "/float/";
    if (v.cap != level::none) {
      row += v.cap == level::v3 ? "v3/" : "v2/";
    }
    row += v.how == route::direct ? "direct/" : v.how == route::entry ? "entry/" : "dispatched/";
    row += std::to_string(n);
    benchmark::RegisterBenchmark(row.c_str(), [f, v](benchmark::State& state) {
      if (v.cap != level::none && nonlin::dispatch::detected_level() < v.cap) {
        state.SkipWithError("the CPU does not run this level");
        return;
      }
      std::span<float const> const x(buffer(0));
      std::span<float const> const dy(buffer(1));
      std::span<float> const out(buffer(2));
      nonlin::dispatch::set_level_cap(v.cap);
      auto const wanted = v.cap == level::none ? nonlin::dispatch::detected_level() : v.cap;
      if (v.how == route::dispatched && nonlin::dispatch::active_level() != wanted) {
        nonlin::dispatch::set_level_cap(level::none);
        state.SkipWithError("the dispatcher did not choose the level asked for");
        return;
      }
      nonlin::bench::timed(state, n, backward ? 3 : 2, sizeof(float),
                           [&] { call<F, backward>(f, v.how, v.cap, x, dy, out); });
      nonlin::dispatch::set_level_cap(level::none);
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
