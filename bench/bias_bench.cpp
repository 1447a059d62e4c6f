// SPDX-License-Identifier: MIT
// Bias + activation fused (nonlin::forward_with_bias / backward_with_bias) against the two-pass
// "add the bias, then the activation" with nonlin's own kernels, on (tokens, features) float
// arrays: 4 x 1024 (L1), 64 x 1024 (L2) and 4096 x 1024 (DRAM).
//   bias/<fwd|bwd>/<function>/float/<fused|two_pass>/<elements>
// plus, where oneDNN is found (bench/peers/onednn.cpp, peer::bias) and has the activation as an
// eltwise algorithm, its one-pass form: a binary_add primitive (x as (tokens, 1024), the bias as
// (1, 1024) broadcast) with the activation as an eltwise post-op, on one thread, primitive and
// memory objects created in the benchmark's setup:
//   bias/fwd/<function>/float/onednn/<elements>
// Forward only: oneDNN has no single primitive for the bias + activation backward (dx and the
// bias gradient's column sums), so the bwd rows have no onednn variant. Before an onednn row is
// registered its output is checked against nonlin::forward_with_bias on the same input (relative
// 1e-5 where |y| > 1e-30, or an error below 1e-6 |x + b|: see check_peer_bias); the benchmark
// aborts with a message if it differs.
// The gated units (swiglu, geglu_tanh) over a (tokens, 2H) projection and its 2H bias, fused
// against the bias add then gated_*_fused (elements: those of the projection x).
// Not in the README's tables (bench/report.py reads only fwd/bwd/bwdy rows): quote ratios from
// one run (--benchmark_filter='^bias/').

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include <nonlin/nonlin.hpp>

#include "peer.hpp"
#include "timed.hpp"

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

// Aborts unless the peer's bias + activation forward computes what nonlin::forward_with_bias
// computes on the benchmark's input (run once, before the row is registered, never timed): each
// element within 1e-5 relative where |y| > 1e-30, or within 1e-6 |x + b|. The second bound is for
// activations the peer computes in a cancelling textbook form: oneDNN 2.6's gelu_tanh is
// 0.5 (x + b) (1 + tanh(...)), which in the negative tail loses every digit (0 at x + b = -5.2,
// where y = -5.8e-8; 18% of this input is off by more than 1e-5 relative) with an error that stays
// below 1.5e-7 |x + b|. A missing or misplaced bias or another function is far outside both.
template <class F>
void check_peer_bias(F f, char const* name, nonlin::peers::peer const& peer,
                     nonlin::peers::bias_forward_prepare prepare, std::size_t tokens) {
  std::size_t const n = tokens * features;
  std::vector<float> const x = filled(n, 1), b = filled(features, 3);
  std::vector<float> expected(n), got(n);
  nonlin::forward_with_bias(f, std::span<float const>(x), std::span<float const>(b),
                            std::span<float>(expected), nonlin::prelu_shape{tokens, features, 1});
  prepare(x.data(), b.data(), got.data(), tokens, features)();
  for (std::size_t i = 0; i < n; ++i) {
    double const want = expected[i];
    double const pre = static_cast<double>(x[i] + b[i % features]);
    double const err = std::abs(static_cast<double>(got[i]) - want);
    bool const relative_ok = std::abs(want) <= 1e-30 || err <= 1e-5 * std::abs(want);
    if (!relative_ok && !(err <= 1e-6 * std::abs(pre))) {
      std::fprintf(stderr,
                   "bias_bench: %s's bias + %s forward differs from nonlin::forward_with_bias at "
                   "%zu of %zu x %zu (x + b = %.9g): %.9g, nonlin %.9g\n",
                   peer.name.c_str(), name, i, tokens, features, pre, static_cast<double>(got[i]),
                   want);
      std::abort();
    }
  }
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
          nonlin::bench::timed(state, n, backward ? 3 : 2, sizeof(float), body);
        })->Unit(benchmark::kMicrosecond);
      }
      if (backward) {
        continue;  // no peer has a bias + activation backward
      }
      // Every peer with a bias + activation forward (oneDNN's binary_add + eltwise post-op).
      for (nonlin::peers::peer const& peer : nonlin::peers::all()) {
        nonlin::peers::bias_kernels const* k = peer.find_bias(name);
        if (k == nullptr || k->forward == nullptr) {
          continue;
        }
        auto const prepare = k->forward;
        check_peer_bias(f, name, peer, prepare, tokens);
        std::string const row =
            std::string("bias/fwd/") + name + "/float/" + peer.name + "/" + std::to_string(n);
        benchmark::RegisterBenchmark(row.c_str(), [=](benchmark::State& state) {
          std::vector<float> const x = filled(n, 1), b = filled(features, 3);
          std::vector<float> out(n);
          // Setup, outside the timed loop: primitive and memory objects bound to these arrays.
          std::function<void()> const body =
              prepare(x.data(), b.data(), out.data(), tokens, features);
          nonlin::bench::timed(state, n, backward ? 3 : 2, sizeof(float), body);
        })->Unit(benchmark::kMicrosecond);
      }
    }
  }
}

// The gated units on the (tokens, 2H) projection with its bias of 2H (H = 1024, gate first as in
// llama-style checkpoints): nonlin::gated_*_fused_with_bias against the bias add followed by
// gated_*_fused (and the column sums of dx). No peer has a gated unit.
template <class F>
void add_gated(char const* name, F f) {
  constexpr std::size_t half = features;
  for (std::size_t tokens : {std::size_t{2}, std::size_t{32}, std::size_t{2048}}) {
    std::size_t const n = tokens * 2 * half;
    for (bool backward : {false, true}) {
      for (bool fused : {true, false}) {
        std::string const row = std::string("bias/") + (backward ? "bwd/" : "fwd/") + name +
                                "/float/" + (fused ? "fused/" : "two_pass/") + std::to_string(n);
        benchmark::RegisterBenchmark(row.c_str(), [=](benchmark::State& state) {
          std::vector<float> const x = filled(n, 1), dy = filled(n / 2, 2), b = filled(2 * half, 3);
          std::vector<float> out(backward ? n : n / 2), pre(n), db(2 * half);
          auto const split = nonlin::glu_split::gate_first;
          auto body = [&] {
            if (fused) {
              if (backward) {
                nonlin::gated_backward_fused_with_bias(
                    f, std::span<float const>(x), std::span<float const>(b),
                    std::span<float const>(dy), std::span<float>(out), std::span<float>(db), tokens,
                    split);
              } else {
                nonlin::gated_forward_fused_with_bias(f, std::span<float const>(x),
                                                      std::span<float const>(b),
                                                      std::span<float>(out), tokens, split);
              }
              return;
            }
            for (std::size_t t = 0; t < tokens; ++t) {
              for (std::size_t c = 0; c < 2 * half; ++c) {
                pre[t * 2 * half + c] = x[t * 2 * half + c] + b[c];
              }
            }
            if (backward) {
              nonlin::gated_backward_fused(f, std::span<float const>(pre),
                                           std::span<float const>(dy), std::span<float>(out),
                                           tokens, split);
              std::fill(db.begin(), db.end(), 0.0f);
              for (std::size_t t = 0; t < tokens; ++t) {
                for (std::size_t c = 0; c < 2 * half; ++c) db[c] += out[t * 2 * half + c];
              }
            } else {
              nonlin::gated_forward_fused(f, std::span<float const>(pre), std::span<float>(out),
                                          tokens, split);
            }
          };
          nonlin::bench::timed(state, n, backward ? 3 : 2, sizeof(float), body);
        })->Unit(benchmark::kMicrosecond);
      }
    }
  }
}

[[maybe_unused]] bool const registered = [] {
  add("gelu_tanh", nonlin::gelu_tanh{});
  add("gelu_exact", nonlin::gelu_exact{});
  add("silu", nonlin::silu{});
  add("relu", nonlin::relu{});
  add_gated("swiglu", nonlin::swiglu{});
  add_gated("geglu_tanh", nonlin::geglu_tanh{});
  return true;
}();

}  // namespace
