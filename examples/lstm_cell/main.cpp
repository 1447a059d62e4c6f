// One LSTM step, forward and backward, with the backward pass taken from the saved activations.
//
//   z = [x, h_prev] W + b                      W: (input + hidden) x 4 hidden, blocks i f g o
//   i = sigmoid(z_i)   f = sigmoid(z_f)        input and forget gates
//   g = tanh(z_g)      o = sigmoid(z_o)        candidate cell and output gate
//   c = f * c_prev + i * g                     new cell state
//   h = o * tanh(c)                            new hidden state
//
// The backward pass needs the derivative of every activation. sigmoid and tanh have derivatives
// that are functions of their outputs, sigmoid' = y (1 - y) and tanh' = (1 - y)(1 + y), so the
// step keeps i, f, g, o and tanh(c) (which it needs anyway) and never the pre-activations:
// nonlin::backward_from_output(f, y, dy, dx) computes dx = dy * f'(x) from y = f(x).
//
// The loss is a fixed random read-out of both outputs, L = sum(h * rh) + sum(c * rc), as in the
// middle of a sequence where h goes to the next layer and c to the next step. Every gradient is
// then compared with central differences of L in double (nonlin::check_gradient).

#include <nonlin/nonlin.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <random>
#include <span>
#include <vector>

namespace {

constexpr std::size_t batch = 2, input = 3, hidden = 4;
constexpr std::size_t joined = input + hidden, gates = 4 * hidden;
enum gate : std::size_t { input_gate, forget_gate, candidate, output_gate };

// Everything the step depends on; its gradient has the same shape.
struct tensors {
  std::vector<double> w = std::vector<double>(joined * gates);  // (input + hidden) x 4 hidden
  std::vector<double> b = std::vector<double>(gates);
  std::vector<double> x = std::vector<double>(batch * input);
  std::vector<double> h_prev = std::vector<double>(batch * hidden);
  std::vector<double> c_prev = std::vector<double>(batch * hidden);
};

// What the forward pass saves for the backward pass.
struct saved {
  std::vector<double> xh = std::vector<double>(batch * joined);  // [x, h_prev]
  std::vector<double> act = std::vector<double>(batch * gates);  // i, f, g, o after activation
  std::vector<double> c = std::vector<double>(batch * hidden);
  std::vector<double> tanh_c = std::vector<double>(batch * hidden);
  std::vector<double> h = std::vector<double>(batch * hidden);
};

// The hidden-wide block of gate k in row r of a (batch x 4 hidden) array.
std::span<double> block(std::vector<double>& v, std::size_t r, gate k) {
  return std::span<double>(v).subspan(r * gates + k * hidden, hidden);
}
std::span<double const> block(std::vector<double> const& v, std::size_t r, gate k) {
  return std::span<double const>(v).subspan(r * gates + k * hidden, hidden);
}

saved forward(tensors const& p) {
  saved s;
  std::vector<double> z(batch * gates);
  for (std::size_t r = 0; r < batch; ++r) {
    std::copy_n(&p.x[r * input], input, &s.xh[r * joined]);
    std::copy_n(&p.h_prev[r * hidden], hidden, &s.xh[r * joined + input]);
    for (std::size_t j = 0; j < gates; ++j) {  // z = [x, h_prev] W + b
      double sum = p.b[j];
      for (std::size_t k = 0; k < joined; ++k) {
        sum += s.xh[r * joined + k] * p.w[k * gates + j];
      }
      z[r * gates + j] = sum;
    }
    nonlin::forward(nonlin::sigmoid{}, block(z, r, input_gate), block(s.act, r, input_gate));
    nonlin::forward(nonlin::sigmoid{}, block(z, r, forget_gate), block(s.act, r, forget_gate));
    nonlin::forward(nonlin::tanh{}, block(z, r, candidate), block(s.act, r, candidate));
    nonlin::forward(nonlin::sigmoid{}, block(z, r, output_gate), block(s.act, r, output_gate));
    for (std::size_t j = 0; j < hidden; ++j) {
      std::size_t const n = r * hidden + j;
      s.c[n] = block(s.act, r, forget_gate)[j] * p.c_prev[n] +
               block(s.act, r, input_gate)[j] * block(s.act, r, candidate)[j];
    }
  }
  nonlin::forward(nonlin::tanh{}, s.c, s.tanh_c);
  for (std::size_t n = 0; n < batch * hidden; ++n) {
    s.h[n] = s.act[(n / hidden) * gates + output_gate * hidden + n % hidden] * s.tanh_c[n];
  }
  return s;
}

double loss(saved const& s, std::vector<double> const& rh, std::vector<double> const& rc) {
  double sum = 0;
  for (std::size_t n = 0; n < batch * hidden; ++n) {
    sum += s.h[n] * rh[n] + s.c[n] * rc[n];
  }
  return sum;
}

// dh = dL/dh and dc_in = dL/dc arrive from above; returns dL/d(every tensor).
tensors backward(tensors const& p, saved const& s, std::vector<double> const& dh,
                 std::vector<double> const& dc_in) {
  tensors d;
  // h = o * tanh(c): do = dh * tanh(c), and dh * o flows into tanh(c).
  std::vector<double> d_tanh_c(batch * hidden), dc(batch * hidden), da(batch * gates);
  for (std::size_t n = 0; n < batch * hidden; ++n) {
    d_tanh_c[n] = dh[n] * s.act[(n / hidden) * gates + output_gate * hidden + n % hidden];
  }
  nonlin::backward_from_output(nonlin::tanh{}, s.tanh_c, d_tanh_c, dc);  // (1 - t)(1 + t)
  for (std::size_t r = 0; r < batch; ++r) {
    for (std::size_t j = 0; j < hidden; ++j) {
      std::size_t const n = r * hidden + j;
      dc[n] += dc_in[n];
      // c = f * c_prev + i * g
      block(da, r, input_gate)[j] = dc[n] * block(s.act, r, candidate)[j];
      block(da, r, forget_gate)[j] = dc[n] * p.c_prev[n];
      block(da, r, candidate)[j] = dc[n] * block(s.act, r, input_gate)[j];
      block(da, r, output_gate)[j] = dh[n] * s.tanh_c[n];
      d.c_prev[n] = dc[n] * block(s.act, r, forget_gate)[j];
    }
  }
  // Through the activations, from their saved outputs: dz = da * y (1 - y) or da * (1 - y^2).
  std::vector<double> dz(batch * gates);
  for (std::size_t r = 0; r < batch; ++r) {
    for (gate k : {input_gate, forget_gate, output_gate}) {
      nonlin::backward_from_output(nonlin::sigmoid{}, block(s.act, r, k), block(da, r, k),
                                   block(dz, r, k));
    }
    nonlin::backward_from_output(nonlin::tanh{}, block(s.act, r, candidate),
                                 block(da, r, candidate), block(dz, r, candidate));
  }
  // z = [x, h_prev] W + b: dW = [x, h_prev]^T dz, db = sum over rows, d[x, h_prev] = dz W^T.
  for (std::size_t r = 0; r < batch; ++r) {
    for (std::size_t j = 0; j < gates; ++j) {
      d.b[j] += dz[r * gates + j];
      for (std::size_t k = 0; k < joined; ++k) {
        d.w[k * gates + j] += s.xh[r * joined + k] * dz[r * gates + j];
      }
    }
    for (std::size_t k = 0; k < joined; ++k) {
      double sum = 0;
      for (std::size_t j = 0; j < gates; ++j) {
        sum += dz[r * gates + j] * p.w[k * gates + j];
      }
      (k < input ? d.x[r * input + k] : d.h_prev[r * hidden + k - input]) = sum;
    }
  }
  return d;
}

}  // namespace

int main() {
  std::mt19937 rng(7);
  auto uniform = [&](double lo, double hi) {
    return lo + (hi - lo) * static_cast<double>(rng() >> 5) * 0x1p-27;
  };
  tensors p;
  for (double& v : p.w) v = uniform(-0.8, 0.8);
  for (double& v : p.b) v = uniform(-0.5, 0.5);
  for (double& v : p.x) v = uniform(-1, 1);
  for (double& v : p.h_prev) v = uniform(-0.9, 0.9);
  for (double& v : p.c_prev) v = uniform(-2, 2);
  std::vector<double> rh(batch * hidden), rc(batch * hidden);  // the read-out: dL/dh, dL/dc
  for (double& v : rh) v = uniform(-1, 1);
  for (double& v : rc) v = uniform(-1, 1);

  saved const s = forward(p);
  std::printf("LSTM step: batch %zu, input %zu, hidden %zu; loss L = %.12f\n", batch, input, hidden,
              loss(s, rh, rc));
  std::printf("h[0] =");
  for (std::size_t j = 0; j < hidden; ++j) std::printf(" %+.6f", s.h[j]);
  std::printf("\n");

  // Each tensor against central differences of L, the others held fixed.
  struct entry {
    char const* name;
    std::vector<double> tensors::*member;
  };
  double worst = 0;
  bool ok = true;
  for (entry const e : {entry{"W", &tensors::w}, entry{"b", &tensors::b}, entry{"x", &tensors::x},
                        entry{"h_prev", &tensors::h_prev}, entry{"c_prev", &tensors::c_prev}}) {
    auto loss_at = [&](std::span<double const> v) {
      tensors q = p;
      (q.*e.member).assign(v.begin(), v.end());
      return loss(forward(q), rh, rc);
    };
    auto grad_at = [&](std::span<double const> v, std::span<double> g) {
      tensors q = p;
      (q.*e.member).assign(v.begin(), v.end());
      tensors const d = backward(q, forward(q), rh, rc);
      std::copy((d.*e.member).begin(), (d.*e.member).end(), g.begin());
    };
    nonlin::gradient_check_result const r = nonlin::check_gradient(loss_at, grad_at, p.*e.member);
    std::printf("  dL/d%-7s %3zu entries  max relative error %.2e  (analytic %+.6f at [%zu])\n",
                e.name, r.checked, r.max_error, r.analytic, r.worst_index);
    worst = std::max(worst, r.max_error);
    ok = ok && r.passed;
  }
  std::printf("max relative error: %.2e (tolerance %.0e)\n", worst,
              nonlin::gradient_check_options{}.tolerance);
  std::printf("gradient check: %s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
