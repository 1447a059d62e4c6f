// SPDX-License-Identifier: MIT
#pragma once
// The timing loop every nonlin_bench row shares.

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>

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

}  // namespace nonlin::bench
