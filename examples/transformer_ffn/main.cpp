// The feed-forward block of a transformer, plain and gated, at equal parameter counts.
//
//   plain (GPT-2):  out = act(x W1) W2              W1: D x 4D,  W2: 4D x D        8 D^2
//   gated (GLU):    out = (x V * act(x W)) W2       V, W: D x H, W2: H x D         3 D H
//
// A gated block has three matrices instead of two, so Shazeer (2020, "GLU Variants Improve
// Transformer") shrinks its hidden width to H = 2/3 * 4D = 8D/3: then 3 D H = 8 D^2 and every
// variant costs the same (exactly, when D is a multiple of 3). Biases are omitted, as there.
// The value and gate projections are one D x 2H matrix, so one matmul produces a (tokens, 2H)
// buffer; nonlin::gated_forward_fused splits each row into value and gate, and
// nonlin::gated_backward_fused writes both gradients back in the same layout. Which half is the
// gate is the checkpoint's convention, nonlin::glu_split says it:
//   value_first  [value | gate]: PyTorch's F.glu (first half * sigmoid(second half)), and the
//                GLU paper's a * sigma(b)
//   gate_first   [gate | value]: llama.cpp / ggml (ggml_swiglu = silu(first half) * second
//                half), and Hugging Face's fused gate_up_proj (Phi-3: [gate | up])
// Loading a llama-style checkpoint with the wrong one silently computes silu(up) * gate. The
// example runs SwiGLU both ways, and checks both layouts against the formula written out.
//
// For each variant: forward and backward for a batch of tokens, a check of a few weights and of
// the input gradient against central differences (double, nonlin::check_gradient), and the time
// per token of forward + backward (float).
//
//   example_transformer_ffn [--d-model 96] [--tokens 64] [--repeats 20]

#include <nonlin/nonlin.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <span>
#include <string_view>
#include <vector>

namespace {

// c (n x m) = a (n x k) b (k x m)
template <class T>
void matmul(std::vector<T> const& a, std::vector<T> const& b, std::vector<T>& c, std::size_t n,
            std::size_t k, std::size_t m) {
  c.assign(n * m, T(0));
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t p = 0; p < k; ++p) {
      T const aip = a[i * k + p];
      for (std::size_t j = 0; j < m; ++j) c[i * m + j] += aip * b[p * m + j];
    }
  }
}

// c (k x m) = a^T b, a (n x k), b (n x m): the weight gradient of x W.
template <class T>
void matmul_at_b(std::vector<T> const& a, std::vector<T> const& b, std::vector<T>& c, std::size_t n,
                 std::size_t k, std::size_t m) {
  c.assign(k * m, T(0));
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t p = 0; p < k; ++p) {
      T const aip = a[i * k + p];
      for (std::size_t j = 0; j < m; ++j) c[p * m + j] += aip * b[i * m + j];
    }
  }
}

// c (n x k) = a b^T, a (n x m), b (k x m): the input gradient of x W.
template <class T>
void matmul_a_bt(std::vector<T> const& a, std::vector<T> const& b, std::vector<T>& c, std::size_t n,
                 std::size_t m, std::size_t k) {
  c.assign(n * k, T(0));
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t p = 0; p < k; ++p) {
      T sum = 0;
      for (std::size_t j = 0; j < m; ++j) sum += a[i * m + j] * b[p * m + j];
      c[i * k + p] = sum;
    }
  }
}

// Fills w (fan_in x fan_out) with uniform values of variance 1/fan_in, the same for every T.
template <class T>
void init(std::vector<T>& w, std::size_t fan_in, std::size_t fan_out, std::uint32_t seed) {
  std::mt19937 rng(seed);
  double const limit = std::sqrt(3.0 / static_cast<double>(fan_in));
  w.resize(fan_in * fan_out);
  for (T& v : w) v = static_cast<T>((static_cast<double>(rng()) * 0x1p-31 - 1) * limit);
}

// out = act(x W1) W2
template <class T, class Act>
struct plain_ffn {
  std::size_t d, hidden;
  std::vector<T> w1, w2, dw1, dw2;
  std::vector<T> x, h, a;  // saved by forward
  Act act{};

  plain_ffn(std::size_t d_model, std::uint32_t seed) : d(d_model), hidden(4 * d_model) {
    init(w1, d, hidden, seed);
    init(w2, hidden, d, seed + 1);
  }
  std::size_t parameters() const { return w1.size() + w2.size(); }
  void forward(std::vector<T> const& input, std::vector<T>& out, std::size_t tokens) {
    x = input;
    matmul(x, w1, h, tokens, d, hidden);  // h = x W1
    a.resize(h.size());
    nonlin::forward(act, h, a);             // a = act(h)
    matmul(a, w2, out, tokens, hidden, d);  // out = a W2
  }
  void backward(std::vector<T> const& dout, std::vector<T>& dx, std::size_t tokens) {
    std::vector<T> da, dh(h.size());
    matmul_at_b(a, dout, dw2, tokens, hidden, d);  // dW2 = a^T dout
    matmul_a_bt(dout, w2, da, tokens, d, hidden);  // da = dout W2^T
    nonlin::backward(act, h, da, dh);              // dh = da * act'(h)
    matmul_at_b(x, dh, dw1, tokens, d, hidden);    // dW1 = x^T dh
    matmul_a_bt(dh, w1, dx, tokens, hidden, d);    // dx = dh W1^T
  }
  std::vector<T>* weights(int k) { return k == 0 ? &w1 : &w2; }
  std::vector<T>* gradients(int k) { return k == 0 ? &dw1 : &dw2; }
};

// out = gated(x [V | W]) W2 (or x [W | V], gate_first), hidden = 8D/3 rounded
template <class T, class Gated, nonlin::glu_split layout = nonlin::glu_split::value_first>
struct gated_ffn {
  std::size_t d, hidden;
  std::vector<T> w_in, w2, dw_in, dw2;  // w_in: D x 2H, the halves in `layout` order
  std::vector<T> x, u, a;               // saved by forward
  Gated f{};
  static constexpr nonlin::glu_split split = layout;

  gated_ffn(std::size_t d_model, std::uint32_t seed) : d(d_model), hidden((8 * d_model + 1) / 3) {
    init(w_in, d, 2 * hidden, seed);
    init(w2, hidden, d, seed + 1);
  }
  std::size_t parameters() const { return w_in.size() + w2.size(); }
  void forward(std::vector<T> const& input, std::vector<T>& out, std::size_t tokens) {
    x = input;
    matmul(x, w_in, u, tokens, d, 2 * hidden);  // u = x [V | W], (tokens, 2H)
    a.resize(tokens * hidden);
    nonlin::gated_forward_fused(f, u, a, tokens, split);  // a = value * act(gate)
    matmul(a, w2, out, tokens, hidden, d);                // out = a W2
  }
  void backward(std::vector<T> const& dout, std::vector<T>& dx, std::size_t tokens) {
    std::vector<T> da, du(u.size());
    matmul_at_b(a, dout, dw2, tokens, hidden, d);               // dW2 = a^T dout
    matmul_a_bt(dout, w2, da, tokens, d, hidden);               // da = dout W2^T
    nonlin::gated_backward_fused(f, u, da, du, tokens, split);  // d value, d gate
    matmul_at_b(x, du, dw_in, tokens, d, 2 * hidden);           // d[V | W] = x^T du
    matmul_a_bt(du, w_in, dx, tokens, 2 * hidden, d);           // dx = du [V | W]^T
  }
  std::vector<T>* weights(int k) { return k == 0 ? &w_in : &w2; }
  std::vector<T>* gradients(int k) { return k == 0 ? &dw_in : &dw2; }
};

struct options {
  std::size_t d_model = 96, tokens = 64;
  int repeats = 20;
};

// The loss of the check: L = sum(out * R) for a fixed random R, so dL/dout = R.
struct check_data {
  std::vector<double> x, r;
  check_data(std::size_t tokens, std::size_t d) : x(tokens * d), r(tokens * d) {
    std::mt19937 rng(5);
    for (double& v : x) v = static_cast<double>(rng()) * 0x1p-31 - 1;
    for (double& v : r) v = static_cast<double>(rng()) * 0x1p-31 - 1;
  }
};

struct check_summary {
  bool passed = true;
  double max_error = 0;
};

// Checks three weights of each matrix, and dx along two random directions.
template <class Model>
check_summary check(Model model, std::size_t tokens) {
  check_data const data(tokens, model.d);
  std::vector<double> out, dx;
  auto loss = [&] {
    model.forward(data.x, out, tokens);
    double sum = 0;
    for (std::size_t i = 0; i < out.size(); ++i) sum += out[i] * data.r[i];
    return sum;
  };
  check_summary worst;
  auto merge = [&](nonlin::gradient_check_result const& r) {
    worst.passed = worst.passed && r.passed;
    worst.max_error = std::max(worst.max_error, r.max_error);
  };
  for (int k = 0; k < 2; ++k) {
    std::vector<double>& w = *model.weights(k);
    std::size_t const picks[] = {0, w.size() / 2 + 1, w.size() - 2};  // a few weights
    std::vector<double> chosen;
    for (std::size_t i : picks) chosen.push_back(w[i]);
    auto set = [&](std::span<double const> v) {
      for (std::size_t j = 0; j < 3; ++j) w[picks[j]] = v[j];
    };
    auto loss_of = [&](std::span<double const> v) {
      set(v);
      return loss();
    };
    auto grad_of = [&](std::span<double const> v, std::span<double> g) {
      set(v);
      loss();
      model.backward(data.r, dx, tokens);
      for (std::size_t j = 0; j < 3; ++j) g[j] = (*model.gradients(k))[picks[j]];
    };
    merge(nonlin::check_gradient(loss_of, grad_of, chosen));
    set(chosen);
  }
  // The input gradient, which flows on to the attention block below.
  nonlin::gradient_check_options along;
  along.directions = 2;
  merge(nonlin::check_gradient(
      [&](std::span<double const> v) {
        model.forward(std::vector<double>(v.begin(), v.end()), out, tokens);
        double sum = 0;
        for (std::size_t i = 0; i < out.size(); ++i) sum += out[i] * data.r[i];
        return sum;
      },
      [&](std::span<double const> v, std::span<double> g) {
        model.forward(std::vector<double>(v.begin(), v.end()), out, tokens);
        model.backward(data.r, dx, tokens);
        std::copy(dx.begin(), dx.end(), g.begin());
      },
      data.x, along));
  return worst;
}

// Forward + backward on float, microseconds per token.
template <class Model>
double time_per_token(Model model, options const& opt) {
  std::vector<float> x(opt.tokens * model.d, 0.5f), out, dx;
  std::vector<float> dout(opt.tokens * model.d, 1.0f / static_cast<float>(model.d));
  model.forward(x, out, opt.tokens);  // warm up
  auto const start = std::chrono::steady_clock::now();
  for (int k = 0; k < opt.repeats; ++k) {
    model.forward(x, out, opt.tokens);
    model.backward(dout, dx, opt.tokens);
  }
  std::chrono::duration<double, std::micro> const elapsed =
      std::chrono::steady_clock::now() - start;
  return elapsed.count() / (static_cast<double>(opt.repeats) * static_cast<double>(opt.tokens));
}

struct totals {
  bool ok = true;
  std::size_t first_count = 0;
  bool equal = true;
};

template <template <class> class Model>
void run(char const* name, options const& opt, totals& t) {
  Model<double> const exact(opt.d_model, 42);
  check_summary const r = check(exact, std::min<std::size_t>(opt.tokens, 4));
  double const us = time_per_token(Model<float>(opt.d_model, 42), opt);
  std::printf("%-12s %7zu %11zu %17.3f   %s (max error %.1e)\n", name, exact.hidden,
              exact.parameters(), us, r.passed ? "ok" : "FAILED", r.max_error);
  if (t.first_count == 0) t.first_count = exact.parameters();
  t.equal = t.equal && exact.parameters() == t.first_count;
  t.ok = t.ok && r.passed;
}

template <class T>
using ffn_gelu_tanh = plain_ffn<T, nonlin::gelu_tanh>;
template <class T>
using ffn_gelu_exact = plain_ffn<T, nonlin::gelu_exact>;
template <class T>
using ffn_geglu = gated_ffn<T, nonlin::geglu>;
template <class T>
using ffn_swiglu = gated_ffn<T, nonlin::swiglu>;
template <class T>
using ffn_swiglu_gate_first = gated_ffn<T, nonlin::swiglu, nonlin::glu_split::gate_first>;
template <class T>
using ffn_reglu = gated_ffn<T, nonlin::reglu>;

// The fused layouts against SwiGLU written out, on one row of 2H = 8 known values:
// value_first a_i = u_i silu(u_{H+i}), gate_first a_i = silu(u_i) u_{H+i}, with
// silu(g) = g / (1 + e^-g) in long double; float results within 2 ulp of it.
bool layouts_match_the_formula() {
  constexpr std::size_t half = 4;
  std::vector<float> const u = {0.5f, -1.25f, 2.0f, 0.75f, -0.3f, 1.5f, -2.5f, 4.0f};
  auto silu = [](long double g) { return g / (1.0L + std::exp(-g)); };
  bool ok = true;
  for (nonlin::glu_split layout : {nonlin::glu_split::value_first, nonlin::glu_split::gate_first}) {
    bool const gate_first = layout == nonlin::glu_split::gate_first;
    std::vector<float> a(half);
    nonlin::gated_forward_fused(nonlin::swiglu{}, u, a, 1, layout);
    for (std::size_t i = 0; i < half; ++i) {
      long double const first = u[i];
      long double const second = u[half + i];
      long double const want = gate_first ? silu(first) * second : first * silu(second);
      float const rounded = static_cast<float>(want);
      float const ulp = std::nextafter(std::abs(rounded), INFINITY) - std::abs(rounded);
      bool const close = std::abs(static_cast<long double>(a[i]) - want) <= 2.0L * ulp;
      if (!close) {
        std::printf("  %s a[%zu] = %.9g, formula %.9g\n", gate_first ? "gate_first" : "value_first",
                    i, static_cast<double>(a[i]), static_cast<double>(want));
      }
      ok = ok && close;
    }
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  options opt;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string_view const flag = argv[i];
    long const value = std::strtol(argv[i + 1], nullptr, 10);
    if (flag == "--d-model" && value > 0)
      opt.d_model = static_cast<std::size_t>(value);
    else if (flag == "--tokens" && value > 0)
      opt.tokens = static_cast<std::size_t>(value);
    else if (flag == "--repeats" && value > 0)
      opt.repeats = static_cast<int>(value);
    else
      argc = 0;
  }
  if (argc % 2 == 0) {
    std::fprintf(stderr,
                 "usage: example_transformer_ffn [--d-model N] [--tokens N] "
                 "[--repeats N]\n");
    return 2;
  }

  std::printf("transformer FFN: D = %zu, %zu tokens; plain hidden 4D, gated hidden 8D/3\n",
              opt.d_model, opt.tokens);
  std::printf("%-12s %7s %11s %17s   %s\n", "variant", "hidden", "parameters", "fwd+bwd us/token",
              "gradient check (double)");
  totals t;
  run<ffn_gelu_tanh>("gelu_tanh", opt, t);
  run<ffn_gelu_exact>("gelu_exact", opt, t);
  run<ffn_geglu>("geglu", opt, t);
  run<ffn_swiglu>("swiglu", opt, t);
  run<ffn_swiglu_gate_first>("swiglu g|v", opt, t);
  run<ffn_reglu>("reglu", opt, t);
  if (t.equal) {
    std::printf("parameter counts: equal (%zu per block)\n", t.first_count);
  } else {
    std::printf("parameter counts: differ (D = %zu is not a multiple of 3, so 8D/3 is rounded)\n",
                opt.d_model);
  }
  std::printf("gradient check: %s\n", t.ok ? "ok" : "FAILED");
  bool const layouts = layouts_match_the_formula();
  std::printf("layouts (value_first = PyTorch F.glu, gate_first = llama.cpp/ggml): %s\n",
              layouts ? "ok" : "FAILED");
  return t.ok && layouts ? 0 : 1;
}
