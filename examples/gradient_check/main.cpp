// Checking gradients with nonlin's helper (include/nonlin/gradient_check.hpp): first an
// activation's derivative, then the input and weight gradients of a layer you write yourself,
// and finally a wrong gradient, to see that the check catches it.
//
// The layer is a "learned swish": y = x * sigmoid(w * x) with one learnable slope w per feature
// (w = 1 is SiLU, w = 1.702 quick GELU). For a batch X (rows x features):
//   u = w * x,  s = sigmoid(u),  y = x * s
//   du = dy * x * s (1 - s)              nonlin::backward_from_output(sigmoid, s, dy * x, du)
//   dx = dy * s + du * w                 the gate depends on x too: both terms are needed
//   dw = sum over rows of du * x
// Gradient checks evaluate the loss in double; write the layer as a template and instantiate it
// with double for the check, float for training.

#include <nonlin/nonlin.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <random>
#include <span>
#include <vector>

namespace {

template <class T>
struct learned_swish {
  std::size_t features;
  std::vector<T> w;  // one slope per feature

  struct saved {
    std::vector<T> x, s;  // the input and the sigmoid gate
  };

  std::vector<T> forward(std::vector<T> const& x, saved& keep) const {
    std::vector<T> u(x.size()), y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) u[i] = w[i % features] * x[i];
    keep.x = x;
    keep.s.resize(x.size());
    nonlin::forward(nonlin::sigmoid{}, u, keep.s);  // s = sigmoid(w x)
    for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] * keep.s[i];
    return y;
  }

  // dx and dw from dy. `forget_the_gate` drops the du * w term of dx: a classic mistake.
  void backward(saved const& keep, std::vector<T> const& dy, std::vector<T>& dx, std::vector<T>& dw,
                bool forget_the_gate = false) const {
    std::vector<T> g(dy.size()), du(dy.size());
    for (std::size_t i = 0; i < dy.size(); ++i) g[i] = dy[i] * keep.x[i];
    nonlin::backward_from_output(nonlin::sigmoid{}, keep.s, g, du);  // du = g s (1 - s)
    dx.assign(dy.size(), T(0));
    dw.assign(features, T(0));
    for (std::size_t i = 0; i < dy.size(); ++i) {
      dx[i] = dy[i] * keep.s[i] + (forget_the_gate ? T(0) : du[i] * w[i % features]);
      dw[i % features] += du[i] * keep.x[i];
    }
  }
};

void report(char const* what, nonlin::gradient_check_result const& r) {
  std::printf("  %-34s %-5s max error %.2e over %zu points", what, r.passed ? "pass" : "fail",
              r.max_error, r.checked);
  if (r.skipped > 0) std::printf(" (%zu skipped)", r.skipped);
  std::printf("\n");
}

}  // namespace

int main() {
  bool ok = true;

  // 1. An activation's derivative against central differences on a grid.
  std::vector<double> grid;
  for (int i = -600; i <= 600; ++i) grid.push_back(i / 100.0);
  std::printf("1. derivatives on [-6, 6], step 0.01:\n");
  auto r = nonlin::check_derivative(nonlin::gelu_tanh{}, grid);
  report("gelu_tanh (double)", r);
  ok = ok && r.passed;
  r = nonlin::check_derivative<float>(nonlin::gelu_tanh{}, grid);  // the float derivative
  report("gelu_tanh (float derivative)", r);
  ok = ok && r.passed;
  // At a kink the difference straddles two pieces and disagrees with either one-sided
  // derivative: name the kinks and the points within 4 steps of them are skipped.
  double const kinks[] = {0.0};
  nonlin::gradient_check_options at_kinks;
  at_kinks.kinks = kinks;
  r = nonlin::check_derivative(nonlin::leaky_relu{}, grid, at_kinks);
  report("leaky_relu, kink at 0 skipped", r);
  ok = ok && r.passed;

  // 2. The learned swish layer: input and weight gradients of L = sum(y * R).
  constexpr std::size_t rows = 3, features = 5;
  std::mt19937 rng(11);
  auto uniform = [&](double lo, double hi) {
    return lo + (hi - lo) * static_cast<double>(rng() >> 5) * 0x1p-27;
  };
  learned_swish<double> layer{features, std::vector<double>(features)};
  for (double& v : layer.w) v = uniform(0.5, 2.0);
  std::vector<double> x(rows * features), readout(rows * features);
  for (double& v : x) v = uniform(-3, 3);
  for (double& v : readout) v = uniform(-1, 1);

  auto loss = [&](learned_swish<double> const& l, std::vector<double> const& input) {
    learned_swish<double>::saved keep;
    std::vector<double> const y = l.forward(input, keep);
    double sum = 0;
    for (std::size_t i = 0; i < y.size(); ++i) sum += y[i] * readout[i];
    return sum;
  };
  auto gradients = [&](learned_swish<double> const& l, std::vector<double> const& input,
                       std::vector<double>& dx, std::vector<double>& dw, bool forget) {
    learned_swish<double>::saved keep;
    l.forward(input, keep);
    l.backward(keep, readout, dx, dw, forget);  // dL/dy = R
  };
  // As functions of x (w fixed) and of w (x fixed): what check_gradient takes.
  auto loss_of_x = [&](std::span<double const> v) {
    return loss(layer, std::vector<double>(v.begin(), v.end()));
  };
  auto grad_of_x = [&](bool forget) {
    return [&, forget](std::span<double const> v, std::span<double> g) {
      std::vector<double> dx, dw;
      gradients(layer, std::vector<double>(v.begin(), v.end()), dx, dw, forget);
      std::copy(dx.begin(), dx.end(), g.begin());
    };
  };
  auto loss_of_w = [&](std::span<double const> v) {
    learned_swish<double> const changed{features, std::vector<double>(v.begin(), v.end())};
    return loss(changed, x);
  };
  auto grad_of_w = [&](std::span<double const> v, std::span<double> g) {
    learned_swish<double> const changed{features, std::vector<double>(v.begin(), v.end())};
    std::vector<double> dx, dw;
    gradients(changed, x, dx, dw, false);
    std::copy(dw.begin(), dw.end(), g.begin());
  };

  std::printf("2. learned swish layer, %zu x %zu input, %zu weights:\n", rows, features, features);
  r = nonlin::check_gradient(loss_of_x, grad_of_x(false), x);
  report("dL/dx, every coordinate", r);
  ok = ok && r.passed;
  nonlin::gradient_check_options directional;
  directional.directions = 4;  // 8 loss evaluations whatever the size: for big layers
  r = nonlin::check_gradient(loss_of_x, grad_of_x(false), x, directional);
  report("dL/dx, 4 random directions", r);
  ok = ok && r.passed;
  r = nonlin::check_gradient(loss_of_w, grad_of_w, layer.w);
  report("dL/dw, every coordinate", r);
  ok = ok && r.passed;

  // 3. A wrong gradient: dx without the du * w term, as if the gate did not depend on x.
  std::printf("3. dx = dy * s only (the gate treated as a constant):\n");
  r = nonlin::check_gradient(loss_of_x, grad_of_x(true), x);
  report("dL/dx, wrong", r);
  if (!r.passed) {
    std::printf("wrong gradient caught: x[%zu] = %+.4f, analytic %+.6f, numeric %+.6f\n",
                r.worst_index, r.worst_point, r.analytic, r.numeric);
  } else {
    std::printf("wrong gradient NOT caught\n");
    ok = false;
  }

  std::printf("gradient check: %s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
