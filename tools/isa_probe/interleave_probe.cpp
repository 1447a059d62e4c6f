// SPDX-License-Identifier: MIT
// Which span kernels gain from GCC's first scheduling pass (kernels.hpp:
// elementwise_interleaved, which interleaves the four batches of an iteration), measured in one
// binary: each functor's forward and backward run through detail::elementwise and through
// detail::elementwise_interleaved on the same 4096 inputs (U(-8, 8)), the two alternated, 101
// samples of 20 calls each, medians; a backward that can defer its product tails also that way
// (detail::backward_deferring_tails, interleaved), against the plain one. Two binaries built from
// two commits differ in code layout, which moved unchanged kernels by up to 10% on the Intel Xeon
// of 2026-12-07; one binary holding both forms does not. A functor whose forward gains declares
// `long_forward_chain`.
//   g++ -std=c++20 -O3 -DNDEBUG -march=native -Iinclude tools/isa_probe/interleave_probe.cpp
//       -o build/interleave_probe && build/interleave_probe
// The figures it printed are in docs/design.md ("Interleaving the batches of a long chain").

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <nonlin/nonlin.hpp>
#include <random>
#include <span>
#include <vector>

namespace {

using arch = xsimd::default_arch;
constexpr auto none = nonlin::detail::exact16::none;

template <bool interleaved, class T, class Op, class... In>
__attribute__((noinline)) void kernel(Op const& op, std::span<T> out, In... in) {
  if constexpr (interleaved) {
    nonlin::detail::elementwise_interleaved<arch, none>(op, out, in...);
  } else {
    nonlin::detail::elementwise<arch, none>(op, out, in...);
  }
}

// Seconds for 20 calls of run, median of 101, alternated with other's (also returned).
template <class Run, class Other>
std::pair<double, double> medians(Run const& run, Other const& other) {
  std::vector<double> a;
  std::vector<double> b;
  auto const time = [](auto const& call) {
    auto const start = std::chrono::steady_clock::now();
    for (int r = 0; r < 20; ++r) {
      call();
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  for (int k = 0; k < 101; ++k) {
    if (k % 2 == 0) {
      a.push_back(time(run));
      b.push_back(time(other));
    } else {
      b.push_back(time(other));
      a.push_back(time(run));
    }
  }
  std::ranges::nth_element(a, a.begin() + 50);
  std::ranges::nth_element(b, b.begin() + 50);
  return {a[50], b[50]};
}

template <class T, class F>
void probe(char const* name, F const& f) {
  constexpr std::size_t n = 4096;
  std::vector<T> x(n);
  std::vector<T> dy(n);
  std::vector<T> y(n);
  std::mt19937 engine(1);
  std::uniform_real_distribution<T> uniform(-8, 8);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = uniform(engine);
    dy[i] = uniform(engine);
  }
  std::span<T const> const xs(x);
  std::span<T const> const dys(dy);
  std::span<T> const ys(y);
  auto const forward = [f](auto xb) -> decltype(f(xb)) { return f(xb); };
  auto const backward = [f](auto xb, auto dyb) -> decltype(f.backward(xb, dyb)) {
    return f.backward(xb, dyb);
  };
  auto const fwd =
      medians([&] { kernel<false>(forward, ys, xs); }, [&] { kernel<true>(forward, ys, xs); });
  auto const bwd = medians([&] { kernel<false>(backward, ys, xs, dys); },
                           [&] { kernel<true>(backward, ys, xs, dys); });
  auto const rate = [](double seconds) { return 20.0 * n / seconds / 1e9; };
  std::printf("| %s | %s | %.3f | %.3f | %.3fx | %.3f | %.3f | %.3fx |", name,
              sizeof(T) == 4 ? "float" : "double", rate(fwd.first), rate(fwd.second),
              fwd.first / fwd.second, rate(bwd.first), rate(bwd.second), bwd.first / bwd.second);
  // The backward with its product tails deferred (kernels.hpp: backward_deferring_tails),
  // interleaved, against the plain one.
  if constexpr (nonlin::detail::defers_product_tails<F, xsimd::batch<T, arch>>) {
    nonlin::detail::backward_deferring_tails<F> const deferring{f};
    auto const deferred = medians([&] { kernel<false>(backward, ys, xs, dys); },
                                  [&] { kernel<true>(deferring, ys, xs, dys); });
    std::printf(" %.3f | %.3fx |\n", rate(deferred.second), deferred.first / deferred.second);
  } else {
    std::printf(" - | - |\n");
  }
}

template <class F>
void probe_both(char const* name, F const& f) {
  probe<float>(name, f);
  probe<double>(name, f);
}

}  // namespace

int main() {
  std::printf(
      "| function | type | fwd el/ns | interleaved | ratio | bwd el/ns | interleaved | ratio | "
      "tails deferred, interleaved | ratio |\n"
      "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|\n");
  probe_both("sigmoid", nonlin::sigmoid{});
  probe_both("tanh", nonlin::tanh{});
  probe_both("silu", nonlin::silu{});
  probe_both("swish(1.5)", nonlin::swish{.beta = 1.5});
  probe_both("gelu_quick", nonlin::gelu_quick{});
  probe_both("gelu_tanh", nonlin::gelu_tanh{});
  probe_both("gelu_exact", nonlin::gelu_exact{});
  probe_both("mish", nonlin::mish{});
  probe_both("softplus", nonlin::softplus{});
  probe_both("log_sigmoid", nonlin::log_sigmoid{});
  probe_both("elu", nonlin::elu{});
  probe_both("selu", nonlin::selu{});
  probe_both("celu", nonlin::celu{});
  probe_both("softsign", nonlin::softsign{});
  probe_both("hardswish", nonlin::hardswish{});
  probe_both("hardsigmoid", nonlin::hardsigmoid{});
  probe_both("relu", nonlin::relu{});
  probe_both("leaky_relu", nonlin::leaky_relu{});
  probe_both("hardtanh", nonlin::hardtanh{});
  probe_both("fast::sigmoid", nonlin::fast::sigmoid{});
  probe_both("fast::tanh", nonlin::fast::tanh{});
  probe_both("fast::silu", nonlin::fast::silu{});
  probe_both("fast::gelu_tanh", nonlin::fast::gelu_tanh{});
  probe_both("fast::gelu_exact", nonlin::fast::gelu_exact{});
  probe_both("fast::mish", nonlin::fast::mish{});
  probe_both("fast::softplus", nonlin::fast::softplus{});
  probe_both("fast::log_sigmoid", nonlin::fast::log_sigmoid{});
  probe_both("fast::elu", nonlin::fast::elu{});
  probe_both("fast::selu", nonlin::fast::selu{});
  probe_both("fast::celu", nonlin::fast::celu{});
}
