// SPDX-License-Identifier: MIT
// Bias + activation fused (nonlin::forward_with_bias / backward_with_bias) against the two-pass
// "add the bias, then the activation" with nonlin's own kernels, on (tokens, features) float
// arrays: 4 x 1024 (L1), 64 x 1024 (L2) and 4096 x 1024 (DRAM).
//   bias/<fwd|bwd>/<function>/float/<fused|two_pass>/<elements>
// Not in the README's tables (bench/report.py reads only fwd/bwd/bwdy rows): quote ratios from
// one run (--benchmark_filter='^bias/').

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <nonlin/nonlin.hpp>

namespace {

constexpr std::size_t features = 1024;

std::vector<float> filled(std::size_t n, std::uint64_t state) {
  std::vector<float> v(n);
  for (float& x : v) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    x = static_cast<float>(static_cast<double>(state >> 40) * 0x1p-24 * 8.0 - 4.0);
  }
  return v;
}

template <class F>
void add(char const* name, F f) {
  for (std::size_t tokens : {std::size_t{4}, std::size_t{64}, std::size_t{4096}}) {
    std::size_t const n = tokens * features;
    for (bool backward : {false, true}) {
      for (bool fused : {true, false}) {
        std::string const row = std::string("bias/") + (backward ? "bwd/" : "fwd/") + name +
                                "/float/" + (fused ? "fused/" : "two_pass/") + std::to_string(n);
        benchmark::RegisterBenchmark(row.c_str(), [=](benchmark::State& state) {
          std::vector<float> const x = filled(n, 1), dy = filled(n, 2), b = filled(features, 3);
          std::vector<float> out(n), pre(n), db(features);
          nonlin::prelu_shape const shape{tokens, features, 1};
          auto body = [&] {
            if (fused) {
              if (backward) {
                nonlin::backward_with_bias(f, std::span<float const>(x), std::span<float const>(b),
                                           std::span<float const>(dy), std::span<float>(out),
                                           std::span<float>(db), shape);
              } else {
                nonlin::forward_with_bias(f, std::span<float const>(x), std::span<float const>(b),
                                          std::span<float>(out), shape);
              }
              return;
            }
            // Two passes: pre = x + b (a bias add, as a framework's Linear writes it), then the
            // activation's kernel; backward: dx, then db = the column sums of dx.
            for (std::size_t t = 0; t < tokens; ++t) {
              for (std::size_t c = 0; c < features; ++c) {
                pre[t * features + c] = x[t * features + c] + b[c];
              }
            }
            if (backward) {
              nonlin::backward(f, std::span<float const>(pre), std::span<float const>(dy),
                               std::span<float>(out));
              std::fill(db.begin(), db.end(), 0.0f);
              for (std::size_t t = 0; t < tokens; ++t) {
                for (std::size_t c = 0; c < features; ++c) db[c] += out[t * features + c];
              }
            } else {
              nonlin::forward(f, std::span<float const>(pre), std::span<float>(out));
            }
          };
          body();
          for (auto _ : state) {
            body();
            benchmark::ClobberMemory();
          }
          state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) *
                                  static_cast<std::int64_t>(n));
        })->Unit(benchmark::kMicrosecond);
      }
    }
  }
}

[[maybe_unused]] bool const registered = [] {
  add("gelu_tanh", nonlin::gelu_tanh{});
  add("relu", nonlin::relu{});
  return true;
}();

}  // namespace
