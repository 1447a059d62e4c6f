// nonlin's functors inside your own SIMD loop: a GEMM epilogue. A tiled matrix product keeps a
// tile of C in xsimd batches (registers); before the tile is stored, bias + activation run on
// those same registers (y = gelu_tanh(x W + b), the Linear -> bias -> GELU of a transformer FFN),
// so C is written once instead of being written, read back by an activation pass and written
// again. This is what "templated functors on xsimd::batch" buys over a span API: the functor
// is the same object the span kernels use (gelu_tanh{}(batch)), and each lane equals the scalar
// call on that lane bit for bit.
//
// Checks: every epilogue output equals gelu_tanh{}(the tile's pre-activation value) as a scalar
// call, bit for bit, and the product agrees with a plain triple loop (in double) to rounding.
// Prints the time of the fused tile loop against "GEMM, then nonlin::forward" (one run, this
// machine; an illustration, not a benchmark).
//
//   example_gemm_epilogue [--m 256] [--k 256] [--n 256] [--repeats 5]

#include <nonlin/nonlin.hpp>

#include <xsimd/xsimd.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <span>
#include <string_view>
#include <vector>

namespace {

using batch = xsimd::batch<float>;
constexpr std::size_t lanes = batch::size;
constexpr std::size_t tile_rows = 4;  // rows of C per tile
constexpr std::size_t tile_cols = 2;  // batches of C per tile row: 4 x 2 accumulators

// c = act(a b + bias) for a (m x k), b (k x n), n a multiple of tile_cols * lanes and m of
// tile_rows. pre (if not null) receives a b + bias, for the check.
template <class Act>
void gemm_bias_act(std::vector<float> const& a, std::vector<float> const& b,
                   std::vector<float> const& bias, std::vector<float>& c, std::size_t m,
                   std::size_t k, std::size_t n, Act const& act, std::vector<float>* pre) {
  for (std::size_t i = 0; i < m; i += tile_rows) {
    for (std::size_t j = 0; j < n; j += tile_cols * lanes) {
      batch acc[tile_rows][tile_cols];
      for (auto& row : acc) {
        for (auto& v : row) v = batch(0.0f);
      }
      for (std::size_t p = 0; p < k; ++p) {
        batch bv[tile_cols];
        for (std::size_t t = 0; t < tile_cols; ++t) {
          bv[t] = batch::load_unaligned(&b[p * n + j + t * lanes]);
        }
        for (std::size_t r = 0; r < tile_rows; ++r) {
          batch const av(a[(i + r) * k + p]);
          for (std::size_t t = 0; t < tile_cols; ++t) acc[r][t] = acc[r][t] + av * bv[t];
        }
      }
      // The epilogue: bias and activation on the registers, then one store.
      for (std::size_t r = 0; r < tile_rows; ++r) {
        for (std::size_t t = 0; t < tile_cols; ++t) {
          std::size_t const at = (i + r) * n + j + t * lanes;
          batch const x = acc[r][t] + batch::load_unaligned(&bias[j + t * lanes]);
          if (pre != nullptr) x.store_unaligned(&(*pre)[at]);
          act(x).store_unaligned(&c[at]);
        }
      }
    }
  }
}

// The same product, then the activation as a separate pass over C (what a span API forces).
template <class Act>
void gemm_then_forward(std::vector<float> const& a, std::vector<float> const& b,
                       std::vector<float> const& bias, std::vector<float>& c, std::size_t m,
                       std::size_t k, std::size_t n, Act const& act) {
  gemm_bias_act(
      a, b, bias, c, m, k, n, [](batch x) { return x; }, nullptr);
  nonlin::forward(act, std::span<float const>(c), std::span<float>(c));
}

bool same_bits(float x, float y) { return std::memcmp(&x, &y, sizeof x) == 0; }

struct options {
  std::size_t m = 256, k = 256, n = 256;
  int repeats = 5;
};

}  // namespace

int main(int argc, char** argv) {
  options opt;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string_view const flag = argv[i];
    long const value = std::strtol(argv[i + 1], nullptr, 10);
    if (flag == "--m" && value > 0)
      opt.m = static_cast<std::size_t>(value);
    else if (flag == "--k" && value > 0)
      opt.k = static_cast<std::size_t>(value);
    else if (flag == "--n" && value > 0)
      opt.n = static_cast<std::size_t>(value);
    else if (flag == "--repeats" && value > 0)
      opt.repeats = static_cast<int>(value);
    else
      argc = 0;
  }
  if (argc % 2 == 0) {
    std::fprintf(stderr, "usage: example_gemm_epilogue [--m N] [--k N] [--n N] [--repeats N]\n");
    return 2;
  }
  // Whole tiles only, to keep the example about the epilogue.
  opt.m = (opt.m + tile_rows - 1) / tile_rows * tile_rows;
  opt.n = (opt.n + tile_cols * lanes - 1) / (tile_cols * lanes) * (tile_cols * lanes);
  std::size_t const m = opt.m, k = opt.k, n = opt.n;

  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  float const scale = 1.0f / std::sqrt(static_cast<float>(k));
  std::vector<float> a(m * k), b(k * n), bias(n), c(m * n), pre(m * n), c2(m * n);
  for (float& v : a) v = normal(rng);
  for (float& v : b) v = normal(rng) * scale;
  for (float& v : bias) v = 0.1f * normal(rng);

  nonlin::gelu_tanh const act{};
  gemm_bias_act(a, b, bias, c, m, k, n, act, &pre);

  // Each output is the scalar functor on the tile's value, bit for bit.
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (!same_bits(c[i], act(pre[i]))) ++mismatches;
  }
  // The product itself against a plain loop in double.
  double worst = 0;
  for (std::size_t i = 0; i < m; i += 7) {
    for (std::size_t j = 0; j < n; ++j) {
      double sum = bias[j];
      double magnitude = std::abs(static_cast<double>(bias[j]));
      for (std::size_t p = 0; p < k; ++p) {
        sum += static_cast<double>(a[i * k + p]) * static_cast<double>(b[p * n + j]);
        magnitude +=
            std::abs(static_cast<double>(a[i * k + p]) * static_cast<double>(b[p * n + j]));
      }
      worst = std::max(worst, std::abs(static_cast<double>(pre[i * n + j]) - sum) / magnitude);
    }
  }
  bool const product_ok = worst <= static_cast<double>(k) * 0x1p-24;

  auto time = [&](auto&& run) {
    run();  // warm up
    auto const start = std::chrono::steady_clock::now();
    for (int r = 0; r < opt.repeats; ++r) run();
    std::chrono::duration<double, std::milli> const elapsed =
        std::chrono::steady_clock::now() - start;
    return elapsed.count() / opt.repeats;
  };
  double const fused_ms = time([&] { gemm_bias_act(a, b, bias, c, m, k, n, act, nullptr); });
  double const two_pass_ms = time([&] { gemm_then_forward(a, b, bias, c2, m, k, n, act); });
  std::size_t differ = 0;
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (!same_bits(c[i], c2[i])) ++differ;
  }

  std::printf(
      "gemm epilogue: C = gelu_tanh(A B + bias), %zu x %zu x %zu, %zu-lane batches, %zux%zu "
      "tiles\n",
      m, k, n, lanes, tile_rows, tile_cols * lanes);
  std::printf("fused epilogue %.3f ms, gemm then nonlin::forward %.3f ms (one run, illustration)\n",
              fused_ms, two_pass_ms);
  std::printf("product vs double loop: max %.2e of the magnitude sum (%s)\n", worst,
              product_ok ? "ok" : "FAILED");
  std::printf("fused and two-pass outputs: %zu of %zu differ\n", differ, c.size());
  bool const ok = mismatches == 0 && differ == 0 && product_ok;
  std::printf("epilogue lanes equal the scalar functor: %s (%zu mismatches)\n",
              ok ? "ok" : "FAILED", mismatches);
  return ok ? 0 : 1;
}
