// One step of a SwiGLU feed-forward block on bfloat16 tensors, as LLM inference and
// mixed-precision training keep them: weights and activations in bf16, matmuls accumulating in
// float and rounding their output to bf16 (what a bf16 GEMM does), the activation on the bf16
// arrays themselves.
//
//   h = x [W | V]             (tokens, 2H), the gate half first (llama.cpp / Hugging Face layout)
//   a = silu(gate) * value    nonlin::gated_forward_fused(swiglu, h, a, tokens, gate_first)
//   out = a W2                (tokens, D)
//   backward: da = d_out W2^T, then dh = nonlin::gated_backward_fused(swiglu, h, da, ...)
//
// nonlin widens each bf16 value to float, runs the float functor and rounds each result to bf16
// correctly (a result near a rounding midpoint is recomputed in double). The example checks a and
// dh against that rule element by element, counts where merely rounding the float result would
// have differed, and compares out with the same block run in float throughout.
//
//   example_bf16_swiglu [--d-model 64] [--tokens 16]

#include <nonlin/nonlin.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <span>
#include <string_view>
#include <vector>

namespace {

using nonlin::bfloat16;

// c (n x m) = a (n x k) b (k x m), or a b^T with b (m x k): float accumulators, c as C.
template <class C, class A, class B>
std::vector<C> matmul(std::vector<A> const& a, std::vector<B> const& b, std::size_t n,
                      std::size_t k, std::size_t m, bool b_transposed = false) {
  std::vector<C> c(n * m);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < m; ++j) {
      float sum = 0;
      for (std::size_t p = 0; p < k; ++p) {
        sum += static_cast<float>(a[i * k + p]) *
               static_cast<float>(b_transposed ? b[j * k + p] : b[p * m + j]);
      }
      if constexpr (std::is_same_v<C, float>) {
        c[i * m + j] = sum;
      } else {
        c[i * m + j] = C::from_float(sum);
      }
    }
  }
  return c;
}

std::vector<bfloat16> random_bf16(std::size_t n, float scale, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0F, scale);
  std::vector<bfloat16> v(n);
  for (auto& e : v) {
    e = bfloat16::from_float(normal(rng));
  }
  return v;
}

std::vector<float> widened(std::vector<bfloat16> const& v) {
  std::vector<float> out(v.size());
  std::transform(v.begin(), v.end(), out.begin(), [](bfloat16 e) { return float(e); });
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t d = 64;
  std::size_t tokens = 16;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string_view const arg = argv[i];
    if (arg == "--d-model") {
      d = std::strtoul(argv[i + 1], nullptr, 10);
    } else if (arg == "--tokens") {
      tokens = std::strtoul(argv[i + 1], nullptr, 10);
    }
  }
  std::size_t const hidden = 8 * d / 3;  // Shazeer's 2/3 of 4D, at equal parameter count
  std::mt19937 rng(1);
  auto const x = random_bf16(tokens * d, 1.0F, rng);
  auto const w_gate_up = random_bf16(d * 2 * hidden, 1.0F / std::sqrt(float(d)), rng);
  auto const w_down = random_bf16(hidden * d, 1.0F / std::sqrt(float(hidden)), rng);
  auto const d_out = random_bf16(tokens * d, 1.0F, rng);
  nonlin::swiglu const f{};
  auto const split = nonlin::glu_split::gate_first;

  // Forward and backward, bf16 throughout.
  auto const h = matmul<bfloat16>(x, w_gate_up, tokens, d, 2 * hidden);
  std::vector<bfloat16> a(tokens * hidden);
  nonlin::gated_forward_fused(f, h, a, tokens, split);
  auto const out = matmul<bfloat16>(a, w_down, tokens, hidden, d);
  auto const da = matmul<bfloat16>(d_out, w_down, tokens, d, hidden, true);
  std::vector<bfloat16> dh(h.size());
  nonlin::gated_backward_fused(f, h, da, dh, tokens, split);

  // a and dh against the rounding rule, element by element; and how often rounding the float
  // result alone would have given another bf16 value.
  std::size_t mismatches = 0;
  std::size_t float_rounding_differs = 0;
  for (std::size_t t = 0; t < tokens; ++t) {
    for (std::size_t j = 0; j < hidden; ++j) {
      float const gate = float(h[t * 2 * hidden + j]);
      float const value = float(h[t * 2 * hidden + hidden + j]);
      float const dy = float(da[t * hidden + j]);
      auto const fwd = [f](auto v, auto g) -> decltype(f(v, g)) { return f(v, g); };
      bfloat16 const want = nonlin::detail::rounded16<bfloat16>(fwd, value, gate);
      mismatches += a[t * hidden + j].bits != want.bits;
      float_rounding_differs += bfloat16::from_float(f(value, gate)).bits != want.bits;
      auto const g = f.backward(value, gate, dy);
      auto const gd = f.backward(double(value), double(gate), double(dy));
      bfloat16 const want_gate =
          nonlin::detail::rounded16_given<bfloat16>(g.d_gate, [&] { return gd.d_gate; });
      bfloat16 const want_value =
          nonlin::detail::rounded16_given<bfloat16>(g.d_value, [&] { return gd.d_value; });
      mismatches += dh[t * 2 * hidden + j].bits != want_gate.bits;
      mismatches += dh[t * 2 * hidden + hidden + j].bits != want_value.bits;
      float_rounding_differs += bfloat16::from_float(g.d_gate).bits != want_gate.bits;
      float_rounding_differs += bfloat16::from_float(g.d_value).bits != want_value.bits;
    }
  }

  // The same block in float from the same bf16 inputs: out's error is bf16's, ~2^-8 relative.
  auto const hf = matmul<float>(x, w_gate_up, tokens, d, 2 * hidden);
  std::vector<float> af(tokens * hidden);
  nonlin::gated_forward_fused(f, hf, af, tokens, split);
  auto const outf = matmul<float>(af, widened(w_down), tokens, hidden, d);
  double num = 0;
  double den = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    num += std::pow(double(float(out[i])) - outf[i], 2);
    den += std::pow(double(outf[i]), 2);
  }
  double const relative = std::sqrt(num / den);

  std::printf("tokens %zu, d_model %zu, hidden %zu (bf16 weights and activations)\n", tokens, d,
              hidden);
  std::printf("a and dh against the rounding rule: %zu mismatches of %zu\n", mismatches,
              3 * tokens * hidden);
  std::printf("where rounding the float result once would differ: %zu\n", float_rounding_differs);
  std::printf("out, bf16 block vs float block: relative RMS error %.2e (bf16 epsilon 3.9e-03)\n",
              relative);
  bool const ok = mismatches == 0 && relative < 0.02;
  std::printf(ok ? "bf16 swiglu: ok\n" : "bf16 swiglu: FAILED\n");
  return ok ? 0 : 1;
}
