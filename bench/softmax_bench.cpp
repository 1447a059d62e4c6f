// SPDX-License-Identifier: MIT
// softmax / log_softmax throughput over rows of C = 1000 (a classifier) and C = 32000 (a language
// model vocabulary), forward and backward from the output, float, next to a plain std:: loop
// (max, exp, sum, divide; the textbook three passes) and the peers' row kernels (bench/peers/:
// fastmath, eigen, sleef, xsimd, onednn where built), forward and backward from the output
// (softmax dx = y (dy - sum dy y), log_softmax dx = dy - e^y sum dy); every backward row is given
// nonlin's y of the same logits and the same dy.
//
// Names: softmax/<dir>/<function>/float/<variant>/<C>, dir fwd | bwdy, variant nonlin | fast (the
// fast tier) | std | a peer's name.
// Each run normalises 256k elements (262 rows of 1000, or 8 rows of 32000); items/s counts
// elements.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>

#include <nonlin/softmax.hpp>

#include "peer.hpp"
#include "textbook.hpp"

namespace {

// The logits of a row: uniform in [-8, 8) (plain); the same with the second half of every row of
// `cols` masked with -inf (masked: an attention mask; half the terms are 0); uniform in [-96, 96)
// (wide: most terms below float's normal range, many subnormal probabilities). The last two time
// what the rows cost where exp's results underflow, which a microcode assist makes slow on Intel
// cores (math::scale_without_underflow).
enum class spread { plain, masked, wide };

std::vector<float> logits(std::size_t n, std::size_t cols = 0, spread kind = spread::plain) {
  std::vector<float> x(n);
  std::uint32_t state = 12345;
  for (float& v : x) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<float>(state >> 8) / float(1 << 24) * 16.0f - 8.0f;
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (kind == spread::masked && i % cols >= cols / 2) {
      x[i] = -std::numeric_limits<float>::infinity();
    } else if (kind == spread::wide) {
      x[i] *= 12.0f;
    }
  }
  return x;
}

std::size_t rows_for(std::size_t cols) { return (262144 + cols - 1) / cols; }

// The logits as E: float, or rounded to bfloat16.
template <class E>
std::vector<E> logits_as(std::size_t n) {
  std::vector<float> const x = logits(n);
  if constexpr (std::is_same_v<E, float>) {
    return x;
  } else {
    std::vector<E> out(n);
    for (std::size_t i = 0; i < n; ++i) {
      out[i] = E::from_float(x[i]);
    }
    return out;
  }
}

template <class F, class E = float, spread kind = spread::plain>
void forward_nonlin(benchmark::State& state) {
  auto const cols = static_cast<std::size_t>(state.range(0));
  std::size_t const n = rows_for(cols) * cols;
  std::vector<E> x;
  if constexpr (std::is_same_v<E, float>) {
    x = logits(n, cols, kind);
  } else {
    x = logits_as<E>(n);
  }
  std::vector<E> y(n);
  for (auto _ : state) {
    nonlin::forward(F{}, std::span<E const>(x), std::span<E>(y), cols);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n));
}

template <class F>
void backward_nonlin(benchmark::State& state) {
  auto const cols = static_cast<std::size_t>(state.range(0));
  std::size_t const n = rows_for(cols) * cols;
  std::vector<float> const x = logits(n);
  std::vector<float> y(n), dx(n);
  std::vector<float> const dy = logits(n);
  nonlin::forward(F{}, std::span<float const>(x), std::span<float>(y), cols);
  for (auto _ : state) {
    nonlin::backward_from_output(F{}, std::span<float const>(y), std::span<float const>(dy),
                                 std::span<float>(dx), cols);
    benchmark::DoNotOptimize(dx.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n));
}

void softmax_std(benchmark::State& state) {
  auto const cols = static_cast<std::size_t>(state.range(0));
  std::size_t const rows = rows_for(cols);
  std::vector<float> const x = logits(rows * cols);
  std::vector<float> y(rows * cols);
  for (auto _ : state) {
    nonlin::peers::textbook::softmax_rows(x.data(), y.data(), rows, cols);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(rows * cols));
}

void softmax_backward_std(benchmark::State& state) {
  auto const cols = static_cast<std::size_t>(state.range(0));
  std::size_t const rows = rows_for(cols);
  std::vector<float> const y = logits(rows * cols);
  std::vector<float> const dy = logits(rows * cols);
  std::vector<float> dx(rows * cols);
  for (auto _ : state) {
    nonlin::peers::textbook::softmax_backward_rows(y.data(), dy.data(), dx.data(), rows, cols);
    benchmark::DoNotOptimize(dx.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(rows * cols));
}

// nonlin's y = F(logits) of rows x cols, the saved output the backward rows start from.
template <class F>
std::vector<float> saved_output(std::size_t rows, std::size_t cols) {
  std::vector<float> const x = logits(rows * cols);
  std::vector<float> y(rows * cols);
  nonlin::forward(F{}, std::span<float const>(x), std::span<float>(y), cols);
  return y;
}

// Registered before main (static initialisation of this file): every peer's softmax and
// log_softmax, forward and backward from the output, timed like the nonlin rows after one
// untimed call (oneDNN's primitive creation).
bool const peers_registered = [] {
  for (nonlin::peers::peer const& peer : nonlin::peers::all()) {
    for (auto const& [function, kernel, is_log] :
         {std::tuple{"softmax", peer.softmax_backward, false},
          std::tuple{"log_softmax", peer.log_softmax_backward, true}}) {
      if (kernel == nullptr) {
        continue;
      }
      std::string const name = std::string("softmax/bwdy/") + function + "/float/" + peer.name;
      benchmark::RegisterBenchmark(
          name.c_str(),
          [kernel = kernel, is_log = is_log](benchmark::State& state) {
            auto const cols = static_cast<std::size_t>(state.range(0));
            std::size_t const rows = rows_for(cols);
            std::vector<float> const y = is_log ? saved_output<nonlin::log_softmax>(rows, cols)
                                                : saved_output<nonlin::softmax>(rows, cols);
            std::vector<float> const dy = logits(rows * cols);
            std::vector<float> dx(rows * cols);
            kernel(y.data(), dy.data(), dx.data(), rows, cols);
            for (auto _ : state) {
              kernel(y.data(), dy.data(), dx.data(), rows, cols);
              benchmark::DoNotOptimize(dx.data());
              benchmark::ClobberMemory();
            }
            state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(rows * cols));
          })
          ->Arg(1000)
          ->Arg(32000);
    }
    for (auto const& [function, kernel] : {std::pair{"softmax", peer.softmax_bf16},
                                           std::pair{"log_softmax", peer.log_softmax_bf16}}) {
      if (kernel == nullptr) {
        continue;
      }
      std::string const name = std::string("softmax/fwd/") + function + "/bf16/" + peer.name;
      benchmark::RegisterBenchmark(
          name.c_str(),
          [kernel = kernel](benchmark::State& state) {
            auto const cols = static_cast<std::size_t>(state.range(0));
            std::size_t const rows = rows_for(cols);
            std::vector<nonlin::bfloat16> const x = logits_as<nonlin::bfloat16>(rows * cols);
            std::vector<nonlin::bfloat16> y(rows * cols);
            auto const* in = reinterpret_cast<std::uint16_t const*>(x.data());
            auto* out = reinterpret_cast<std::uint16_t*>(y.data());
            kernel(in, out, rows, cols);
            for (auto _ : state) {
              kernel(in, out, rows, cols);
              benchmark::DoNotOptimize(y.data());
              benchmark::ClobberMemory();
            }
            state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(rows * cols));
          })
          ->Arg(1000)
          ->Arg(32000);
    }
    for (auto const& [function, kernel, type, kind] :
         {std::tuple{"softmax", peer.softmax, "float", spread::plain},
          std::tuple{"log_softmax", peer.log_softmax, "float", spread::plain},
          std::tuple{"softmax", peer.softmax, "masked", spread::masked},
          std::tuple{"log_softmax", peer.log_softmax, "masked", spread::masked},
          std::tuple{"softmax", peer.softmax, "wide", spread::wide},
          std::tuple{"log_softmax", peer.log_softmax, "wide", spread::wide}}) {
      if (kernel == nullptr) {
        continue;
      }
      std::string const name =
          std::string("softmax/fwd/") + function + "/" + type + "/" + peer.name;
      auto* registered = benchmark::RegisterBenchmark(
          name.c_str(), [kernel = kernel, kind = kind](benchmark::State& state) {
            auto const cols = static_cast<std::size_t>(state.range(0));
            std::size_t const rows = rows_for(cols);
            std::vector<float> const x = logits(rows * cols, cols, kind);
            std::vector<float> y(rows * cols);
            kernel(x.data(), y.data(), rows, cols);
            for (auto _ : state) {
              kernel(x.data(), y.data(), rows, cols);
              benchmark::DoNotOptimize(y.data());
              benchmark::ClobberMemory();
            }
            state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(rows * cols));
          });
      registered->Arg(1000);
      if (kind == spread::plain) {
        registered->Arg(32000);
      }
    }
  }
  return true;
}();

BENCHMARK_TEMPLATE(forward_nonlin, nonlin::softmax)
    ->Name("softmax/fwd/softmax/float/nonlin")
    ->Arg(1000)
    ->Arg(32000);
BENCHMARK_TEMPLATE(forward_nonlin, nonlin::log_softmax)
    ->Name("softmax/fwd/log_softmax/float/nonlin")
    ->Arg(1000)
    ->Arg(32000);
BENCHMARK(softmax_std)->Name("softmax/fwd/softmax/float/std")->Arg(1000)->Arg(32000);
BENCHMARK_TEMPLATE(forward_nonlin, nonlin::softmax, float, spread::masked)
    ->Name("softmax/fwd/softmax/masked/nonlin")
    ->Arg(1000);
BENCHMARK_TEMPLATE(forward_nonlin, nonlin::log_softmax, float, spread::masked)
    ->Name("softmax/fwd/log_softmax/masked/nonlin")
    ->Arg(1000);
BENCHMARK_TEMPLATE(forward_nonlin, nonlin::softmax, float, spread::wide)
    ->Name("softmax/fwd/softmax/wide/nonlin")
    ->Arg(1000);
BENCHMARK_TEMPLATE(forward_nonlin, nonlin::log_softmax, float, spread::wide)
    ->Name("softmax/fwd/log_softmax/wide/nonlin")
    ->Arg(1000);
BENCHMARK_TEMPLATE(forward_nonlin, nonlin::fast::softmax, float, spread::masked)
    ->Name("softmax/fwd/softmax/masked/fast")
    ->Arg(1000);
BENCHMARK_TEMPLATE(forward_nonlin, nonlin::fast::log_softmax, float, spread::masked)
    ->Name("softmax/fwd/log_softmax/masked/fast")
    ->Arg(1000);
BENCHMARK_TEMPLATE(forward_nonlin, nonlin::fast::softmax, float, spread::wide)
    ->Name("softmax/fwd/softmax/wide/fast")
    ->Arg(1000);
BENCHMARK_TEMPLATE(forward_nonlin, nonlin::fast::log_softmax, float, spread::wide)
    ->Name("softmax/fwd/log_softmax/wide/fast")
    ->Arg(1000);
BENCHMARK_TEMPLATE(forward_nonlin, nonlin::softmax, nonlin::bfloat16)
    ->Name("softmax/fwd/softmax/bf16/nonlin")
    ->Arg(1000)
    ->Arg(32000);
BENCHMARK_TEMPLATE(forward_nonlin, nonlin::log_softmax, nonlin::bfloat16)
    ->Name("softmax/fwd/log_softmax/bf16/nonlin")
    ->Arg(1000)
    ->Arg(32000);
BENCHMARK_TEMPLATE(backward_nonlin, nonlin::softmax)
    ->Name("softmax/bwdy/softmax/float/nonlin")
    ->Arg(1000)
    ->Arg(32000);
BENCHMARK_TEMPLATE(backward_nonlin, nonlin::log_softmax)
    ->Name("softmax/bwdy/log_softmax/float/nonlin")
    ->Arg(1000)
    ->Arg(32000);
BENCHMARK(softmax_backward_std)->Name("softmax/bwdy/softmax/float/std")->Arg(1000)->Arg(32000);
// The fast tier (nonlin::fast::softmax, fast::log_softmax) under the variant "fast".
BENCHMARK_TEMPLATE(forward_nonlin, nonlin::fast::softmax)
    ->Name("softmax/fwd/softmax/float/fast")
    ->Arg(1000)
    ->Arg(32000);
BENCHMARK_TEMPLATE(forward_nonlin, nonlin::fast::log_softmax)
    ->Name("softmax/fwd/log_softmax/float/fast")
    ->Arg(1000)
    ->Arg(32000);
BENCHMARK_TEMPLATE(forward_nonlin, nonlin::fast::softmax, nonlin::bfloat16)
    ->Name("softmax/fwd/softmax/bf16/fast")
    ->Arg(1000)
    ->Arg(32000);
BENCHMARK_TEMPLATE(forward_nonlin, nonlin::fast::log_softmax, nonlin::bfloat16)
    ->Name("softmax/fwd/log_softmax/bf16/fast")
    ->Arg(1000)
    ->Arg(32000);
BENCHMARK_TEMPLATE(backward_nonlin, nonlin::fast::softmax)
    ->Name("softmax/bwdy/softmax/float/fast")
    ->Arg(1000)
    ->Arg(32000);
BENCHMARK_TEMPLATE(backward_nonlin, nonlin::fast::log_softmax)
    ->Name("softmax/bwdy/log_softmax/float/fast")
    ->Arg(1000)
    ->Arg(32000);

}  // namespace
