// SPDX-License-Identifier: MIT
#pragma once
// The timing loop every nonlin_bench row shares.

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include <nonlin/nonlin.hpp>

namespace nonlin::bench {

// One untimed call first: first touch of a prefix and any one-time setup of a peer (oneDNN
// creates its primitives on the first call for a size) stay out of the measurement. Items: n per
// call; bytes: n elements of elem_bytes in each of `arrays` arrays.
template <class Body>
void timed(benchmark::State& state, std::size_t n, std::size_t arrays, std::size_t elem_bytes,
           Body const& body) {
  body();
  for (auto _ : state) {
    body();
    benchmark::ClobberMemory();
  }
  auto const items = static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(n);
  state.SetItemsProcessed(items);
  state.SetBytesProcessed(items * static_cast<std::int64_t>(arrays * elem_bytes));
}

// `count` arrays of n floats uniform in [-8, 8), from one 64-bit LCG seeded with `seed`: the same
// values on every run.
inline std::vector<std::vector<float>> uniform_arrays(std::size_t count, std::size_t n,
                                                      std::uint64_t seed) {
  std::vector<std::vector<float>> arrays(count, std::vector<float>(n));
  std::uint64_t state = seed;
  for (auto& a : arrays) {
    for (float& x : a) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      x = static_cast<float>(static_cast<double>(state >> 40) * 0x1p-24 * 16.0 - 8.0);
    }
  }
  return arrays;
}

// The rows the overhead benchmarks (parallel_bench, dispatch_bench) measure: the cheapest kernel,
// two transcendental forwards and a backward; add.template operator()<F, backward>(name, f).
template <class Add>
void for_overhead_rows(Add const& add) {
  add.template operator()<nonlin::relu, false>("relu", nonlin::relu{});
  add.template operator()<nonlin::sigmoid, false>("sigmoid", nonlin::sigmoid{});
  add.template operator()<nonlin::gelu_tanh, false>("gelu_tanh", nonlin::gelu_tanh{});
  add.template operator()<nonlin::silu, true>("silu", nonlin::silu{});
}

}  // namespace nonlin::bench
